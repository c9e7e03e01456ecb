package command

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/session"
	"github.com/cairndb/cairn/kv"
	"github.com/cairndb/cairn/kv/vfs"
)

// memEnv is a server environment over a fresh in-memory engine (no
// durability), with a cursor table and a silent logger; the engine is
// closed when the test ends.
func memEnv(t *testing.T) *Env {
	t.Helper()
	db, err := kv.Open("/db", &kv.Options{FS: vfs.NewMem(), Durability: kv.NoSync, JournalSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &Env{Engine: exec.Engine{KV: db}, Cursors: exec.NewCursors(0), Sessions: session.New(session.Options{}), Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Started: time.Now()}
}
