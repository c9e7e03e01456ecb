package opctx

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cairndb/cairn/bson"
)

func TestLoggedCommand(t *testing.T) {
	var b bson.Builder
	b.AppendString("createUser", "u")
	b.AppendString("pwd", "hunter2")
	b.AppendString("$db", "admin")
	if got := string(LoggedCommand(b.Finish())); got != `{"createUser":"u","pwd":"xxx","$db":"admin"}` {
		t.Errorf("createUser logged as %s", got)
	}
	b.Reset(nil)
	b.AppendInt32("saslStart", 1)
	b.AppendBinary("payload", 0, []byte("n,,n=u,r=abc"))
	if got := string(LoggedCommand(b.Finish())); strings.Contains(got, "abc") || !strings.Contains(got, `"payload":"xxx"`) {
		t.Errorf("saslStart logged as %s", got)
	}
	b.Reset(nil)
	b.AppendString("find", strings.Repeat("c", 2*MaxLoggedCommandBytes))
	if got := string(LoggedCommand(b.Finish())); len(got) > MaxLoggedCommandBytes+100 || !strings.Contains(got, `"size":`) || !strings.Contains(got, `"truncated":`) {
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
	if err := json.Unmarshal(LoggedCommand(body), &got); err != nil {
		t.Fatal(err)
	}
	if got.Size != len(body) || len(got.Truncated) > MaxLoggedCommandBytes || !strings.HasPrefix(got.Truncated, `{"insert":"c","documents":[{"_id":0,"s":"xxx`) {
		t.Fatalf("size %d (want %d), %d bytes: %.80s", got.Size, len(body), len(got.Truncated), got.Truncated)
	}
}

func TestRedacted(t *testing.T) {
	var b bson.Builder
	b.AppendString("createUser", "u")
	b.AppendString("pwd", "hunter2")
	b.AppendString("$db", "admin")
	got := Redacted("createUser", b.Finish()).String()
	if strings.Contains(got, "hunter2") || !strings.Contains(got, `pwd: "xxx"`) {
		t.Errorf("Redacted = %s", got)
	}
}
