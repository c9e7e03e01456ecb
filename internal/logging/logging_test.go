package logging

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"testing"
)

func TestMongodShape(t *testing.T) {
	var buf bytes.Buffer
	ring := NewRing(2)
	log := slog.New(NewHandler(&buf, slog.LevelInfo, ring))
	log.Info("Connection accepted", "c", "NETWORK", "id", 22943, "ctx", "listener", "remote", "127.0.0.1:5000", "n", 3)
	log.Debug("hidden")
	log.Warn("careful", "error", errors.New("boom"))
	lines := bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n"))
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2 (debug is below the level): %s", len(lines), buf.String())
	}
	var first struct {
		T    map[string]string `json:"t"`
		S, C string
		ID   int64 `json:"id"`
		Ctx  string
		Msg  string
		Attr map[string]any
	}
	if err := json.Unmarshal(lines[0], &first); err != nil {
		t.Fatalf("not JSON: %v: %s", err, lines[0])
	}
	if first.S != "I" || first.C != "NETWORK" || first.ID != 22943 || first.Ctx != "listener" || first.Msg != "Connection accepted" ||
		first.Attr["remote"] != "127.0.0.1:5000" || first.Attr["n"] != float64(3) || first.T["$date"] == "" {
		t.Fatalf("line = %+v", first)
	}
	// mongod's alignment: spaces after the commas of s, c and id.
	for i, want := range []string{
		`"s":"I",  "c":"NETWORK",  "id":22943,   "ctx":"listener","msg":"Connection accepted","attr":{`,
		`"s":"W",  "c":"-",        "id":0,       "ctx":"-","msg":"careful","attr":{`,
	} {
		if !bytes.Contains(lines[i], []byte(want)) {
			t.Errorf("line %d = %s, want it to contain %s", i+1, lines[i], want)
		}
	}
	var second map[string]any
	json.Unmarshal(lines[1], &second)
	if second["s"] != "W" || second["attr"].(map[string]any)["error"] != "boom" {
		t.Fatalf("warning line = %v", second)
	}
	// The ring keeps the last lines for getLog.
	log.Info("third")
	got, total := ring.Lines()
	if total != 3 || len(got) != 2 || !bytes.Contains([]byte(got[1]), []byte("third")) {
		t.Fatalf("ring = %d lines of %d: %v", len(got), total, got)
	}
}
