package server

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dbson "go.mongodb.org/mongo-driver/v2/bson"

	"github.com/cairndb/cairn/internal/wire"
	"github.com/cairndb/cairn/kv"
	"github.com/cairndb/cairn/kv/vfs"
)

// newTestServer runs an in-process server on an in-memory file system.
func newTestServer(t testing.TB) *Server { return newTestServerWith(t, nil) }

// newTestServerWith is newTestServer with options changed by edit.
func newTestServerWith(t testing.TB, edit func(*Options)) *Server {
	t.Helper()
	opts := Options{DBPath: "/db", KV: &kv.Options{FS: vfs.NewMem(), Durability: kv.NoSync, JournalSize: 1 << 20},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if edit != nil {
		edit(&opts)
	}
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Shutdown(context.Background()) })
	return s
}

// pipeConn serves one in-memory connection and returns the client end.
func pipeConn(s *Server) net.Conn {
	client, srv := net.Pipe()
	c := s.newConn(srv)
	s.mu.Lock()
	if s.closing.Load() {
		// As Serve: no connection once Shutdown has begun (its Wait may
		// already be running).
		s.mu.Unlock()
		srv.Close()
		return client
	}
	s.conns[c] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		c.serve()
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
	}()
	return client
}

func pingMsg(id int32) []byte {
	body, _ := dbson.Marshal(dbson.D{{Key: "ping", Value: 1}, {Key: "$db", Value: "admin"}})
	return wire.AppendMsg(nil, id, 0, 0, body)
}

// FuzzServeConn feeds arbitrary bytes to a connection: whatever arrives, the
// server must neither panic nor stop serving other connections.
func FuzzServeConn(f *testing.F) {
	f.Add(pingMsg(1))
	ins, _ := dbson.Marshal(dbson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: dbson.A{dbson.D{{Key: "a", Value: 1}}}}, {Key: "$db", Value: "t"}})
	f.Add(wire.AppendMsg(nil, 2, 0, 0, ins))
	find, _ := dbson.Marshal(dbson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: dbson.D{{Key: "a", Value: dbson.D{{Key: "$gt", Value: 0}}}}}, {Key: "$db", Value: "t"}})
	f.Add(wire.AppendMsg(nil, 3, 0, 0, find))
	f.Add([]byte{0xff, 0xff, 0xff, 0x7f})
	s := newTestServer(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		c := pipeConn(s)
		defer c.Close()
		done := make(chan struct{})
		go func() {
			io.Copy(io.Discard, c)
			close(done)
		}()
		c.SetWriteDeadline(time.Now().Add(2 * time.Second))
		c.Write(data)
		c.Close()
		<-done
		// Another client is still served.
		other := pipeConn(s)
		defer other.Close()
		other.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := other.Write(pingMsg(9)); err != nil {
			t.Fatalf("server stopped serving: %v", err)
		}
		r := wire.NewReader(other, 0)
		m, err := r.ReadMessage()
		if err != nil || m.Msg == nil || !bytes.Contains(m.Msg.Body, []byte("ok")) {
			t.Fatalf("ping after fuzz input: %v", err)
		}
	})
}

// FuzzCommand frames arbitrary command bodies correctly, so that mutations
// reach BSON validation and every command's argument parsing.
func FuzzCommand(f *testing.F) {
	seeds := []dbson.D{
		{{Key: "ping", Value: 1}, {Key: "$db", Value: "admin"}},
		{{Key: "insert", Value: "c"}, {Key: "documents", Value: dbson.A{dbson.D{{Key: "_id", Value: 1}, {Key: "a", Value: dbson.A{1, "x"}}}}}, {Key: "$db", Value: "t"}},
		{{Key: "find", Value: "c"}, {Key: "filter", Value: dbson.D{{Key: "a", Value: dbson.D{{Key: "$in", Value: dbson.A{1, 2}}}}}}, {Key: "sort", Value: dbson.D{{Key: "a", Value: -1}}}, {Key: "projection", Value: dbson.D{{Key: "a", Value: 1}}}, {Key: "$db", Value: "t"}},
		{{Key: "update", Value: "c"}, {Key: "updates", Value: dbson.A{dbson.D{{Key: "q", Value: dbson.D{}}, {Key: "u", Value: dbson.D{{Key: "$inc", Value: dbson.D{{Key: "a.0", Value: 1}}}}}, {Key: "multi", Value: true}}}}, {Key: "$db", Value: "t"}},
		{{Key: "delete", Value: "c"}, {Key: "deletes", Value: dbson.A{dbson.D{{Key: "q", Value: dbson.D{{Key: "a", Value: 1}}}, {Key: "limit", Value: 0}}}}, {Key: "$db", Value: "t"}},
		{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: dbson.A{dbson.D{{Key: "$group", Value: dbson.D{{Key: "_id", Value: "$a"}, {Key: "n", Value: dbson.D{{Key: "$sum", Value: 1}}}}}}}}, {Key: "cursor", Value: dbson.D{}}, {Key: "$db", Value: "t"}},
		{{Key: "findAndModify", Value: "c"}, {Key: "query", Value: dbson.D{}}, {Key: "update", Value: dbson.D{{Key: "$set", Value: dbson.D{{Key: "b", Value: 1}}}}}, {Key: "upsert", Value: true}, {Key: "$db", Value: "t"}},
		{{Key: "distinct", Value: "c"}, {Key: "key", Value: "a"}, {Key: "$db", Value: "t"}},
		{{Key: "hello", Value: 1}, {Key: "compression", Value: dbson.A{"zstd"}}, {Key: "$db", Value: "admin"}},
	}
	// The shapes of issue 19's torture run: duplicate _id fields, a huge
	// $addToSet $each, a document of many distinct words under a text
	// index, keys past 64 KiB, view cycles and deep chains, a $lookup into
	// another database.
	seeds = append(seeds, fuzzHardeningSeeds()...)
	for _, d := range seeds {
		b, _ := dbson.Marshal(d)
		f.Add(b)
	}
	s := newTestServer(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		c := pipeConn(s)
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		r := wire.NewReader(c, 0)
		for i, msg := range [][]byte{wire.AppendMsg(nil, 1, 0, 0, body), pingMsg(2)} {
			if _, err := c.Write(msg); err != nil {
				t.Fatalf("write %d: %v", i, err)
			}
			if _, err := r.ReadMessage(); err != nil {
				t.Fatalf("reply %d: %v", i, err)
			}
		}
	})
}

// TestTempDirEmptiedAtStart: spill files a previous run left under the
// data directory's _tmp are removed when the server opens it.
func TestTempDirEmptiedAtStart(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "_tmp", "cairn-sort-1", "run-1")
	if err := os.MkdirAll(filepath.Dir(junk), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(junk, []byte("stale"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{DBPath: dir, KV: &kv.Options{JournalSize: 1 << 20}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(context.Background())
	if _, err := os.Stat(junk); !os.IsNotExist(err) {
		t.Fatalf("stale spill file survived: %v", err)
	}
	if s.Env().TempDir != filepath.Join(dir, "_tmp") {
		t.Fatalf("TempDir = %q", s.Env().TempDir)
	}
}

func fuzzHardeningSeeds() []dbson.D {
	each := make(dbson.A, 5000)
	words := make([]byte, 0, 5000*8)
	for i := range each {
		each[i] = i % 4000
		words = fmt.Appendf(words, "w%x ", i)
	}
	big := strings.Repeat("k", 70<<10)
	return []dbson.D{
		{{Key: "insert", Value: "d"}, {Key: "documents", Value: dbson.A{dbson.D{{Key: "_id", Value: 1}, {Key: "_id", Value: 2}}}}, {Key: "$db", Value: "t"}},
		{{Key: "update", Value: "d"}, {Key: "updates", Value: dbson.A{dbson.D{{Key: "q", Value: dbson.D{}},
			{Key: "u", Value: dbson.D{{Key: "_id", Value: 1}, {Key: "_id", Value: 3}}}, {Key: "upsert", Value: true}}}}, {Key: "$db", Value: "t"}},
		{{Key: "update", Value: "c"}, {Key: "updates", Value: dbson.A{dbson.D{{Key: "q", Value: dbson.D{}},
			{Key: "u", Value: dbson.D{{Key: "$addToSet", Value: dbson.D{{Key: "s", Value: dbson.D{{Key: "$each", Value: each}}}}}}}, {Key: "upsert", Value: true}}}}, {Key: "$db", Value: "t"}},
		{{Key: "createIndexes", Value: "x"}, {Key: "indexes", Value: dbson.A{dbson.D{{Key: "key", Value: dbson.D{{Key: "t", Value: "text"}}}, {Key: "name", Value: "t"}}}}, {Key: "$db", Value: "t"}},
		{{Key: "insert", Value: "x"}, {Key: "documents", Value: dbson.A{dbson.D{{Key: "t", Value: string(words)}}}}, {Key: "$db", Value: "t"}},
		{{Key: "insert", Value: "k"}, {Key: "documents", Value: dbson.A{dbson.D{{Key: "_id", Value: big}, {Key: "a", Value: big}}}}, {Key: "$db", Value: "t"}},
		{{Key: "createIndexes", Value: "k"}, {Key: "indexes", Value: dbson.A{dbson.D{{Key: "key", Value: dbson.D{{Key: "a", Value: 1}, {Key: "b", Value: 1}}}, {Key: "name", Value: "ab"}}}}, {Key: "$db", Value: "t"}},
		{{Key: "create", Value: "v1"}, {Key: "viewOn", Value: "v2"}, {Key: "pipeline", Value: dbson.A{}}, {Key: "$db", Value: "t"}},
		{{Key: "create", Value: "v2"}, {Key: "viewOn", Value: "v1"}, {Key: "pipeline", Value: dbson.A{}}, {Key: "$db", Value: "t"}},
		{{Key: "create", Value: "v3"}, {Key: "viewOn", Value: "c"}, {Key: "pipeline", Value: dbson.A{dbson.D{{Key: "$lookup", Value: dbson.D{
			{Key: "from", Value: "v3"}, {Key: "localField", Value: "a"}, {Key: "foreignField", Value: "a"}, {Key: "as", Value: "j"}}}}}}, {Key: "$db", Value: "t"}},
		{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: dbson.A{dbson.D{{Key: "$lookup", Value: dbson.D{
			{Key: "from", Value: dbson.D{{Key: "db", Value: "other"}, {Key: "coll", Value: "s"}}}, {Key: "pipeline", Value: dbson.A{dbson.D{{Key: "$unionWith", Value: "s2"}}}}, {Key: "as", Value: "x"}}}}}},
			{Key: "cursor", Value: dbson.D{}}, {Key: "$db", Value: "t"}},
		{{Key: "find", Value: "c"}, {Key: "sort", Value: func() dbson.D {
			var d dbson.D
			for i := range 33 {
				d = append(d, dbson.E{Key: fmt.Sprintf("k%d", i), Value: 1})
			}
			return d
		}()}, {Key: "$db", Value: "t"}},
	}
}
