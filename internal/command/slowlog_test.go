package command

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/exec"
)

func TestLoggedCommand(t *testing.T) {
	var b bson.Builder
	b.AppendString("createUser", "u")
	b.AppendString("pwd", "hunter2")
	b.AppendString("$db", "admin")
	if got := string(loggedCommand(b.Finish())); got != `{"createUser":"u","pwd":"xxx","$db":"admin"}` {
		t.Errorf("createUser logged as %s", got)
	}
	b.Reset(nil)
	b.AppendInt32("saslStart", 1)
	b.AppendBinary("payload", 0, []byte("n,,n=u,r=abc"))
	if got := string(loggedCommand(b.Finish())); strings.Contains(got, "abc") || !strings.Contains(got, `"payload":"xxx"`) {
		t.Errorf("saslStart logged as %s", got)
	}
	b.Reset(nil)
	b.AppendString("find", strings.Repeat("c", 2*maxLoggedCommandBytes))
	if got := string(loggedCommand(b.Finish())); len(got) > maxLoggedCommandBytes+100 || !strings.Contains(got, `"size":`) || !strings.Contains(got, `"truncated":`) {
		t.Errorf("a long command is logged as %d bytes: %.100s", len(got), got)
	}
}

// A large insert is cut as BSON before it is marshalled: the line keeps
// the first documents and the command's size.
func TestLoggedCommandLargeInsert(t *testing.T) {
	var b bson.Builder
	b.AppendString("insert", "c")
	b.StartArray("documents")
	for i := range 1000 {
		b.StartDocument(bson.Index(i))
		b.AppendInt32("_id", int32(i))
		b.AppendString("s", strings.Repeat("x", 1000))
		b.End()
	}
	b.End()
	b.AppendString("$db", "d")
	body := b.Finish()
	var got struct {
		Truncated string
		Size      int
	}
	if err := json.Unmarshal(loggedCommand(body), &got); err != nil {
		t.Fatal(err)
	}
	if got.Size != len(body) || len(got.Truncated) > maxLoggedCommandBytes || !strings.HasPrefix(got.Truncated, `{"insert":"c","documents":[{"_id":0,"s":"xxx`) {
		t.Fatalf("size %d (want %d), %d bytes: %.80s", got.Size, len(body), len(got.Truncated), got.Truncated)
	}
}

func TestPlanSummary(t *testing.T) {
	var key bson.Builder
	key.AppendInt32("a", 1)
	key.AppendInt32("b", -1)
	key.AppendString("t", "text")
	if got := exec.KeyPatternText(key.Finish()); got != `{ a: 1, b: -1, t: "text" }` {
		t.Errorf("key pattern %s", got)
	}
	if exec.PlanSummary(nil, true) != "IDHACK" || exec.PlanSummary(nil, false) != "COLLSCAN" {
		t.Error("IDHACK / COLLSCAN")
	}
}
