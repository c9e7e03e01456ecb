package changestream

import (
	"context"
	"encoding/binary"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/repl"
	"github.com/cairndb/cairn/kv"
	"github.com/cairndb/cairn/kv/vfs"
)

// waitClosed fails the test unless ch is closed within 10 s (a bound on
// a wake-up that must come, not a speed assertion).
func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: no wake-up", what)
	}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// TestStreamWaitsForJournal: an insert whose commit is published but
// whose journal fdatasync is held (a fault-injecting file system blocks
// it) is not returned by a stream, nor does the stream's post-batch token
// pass it, and its wake-up channel stays open; once the fdatasync
// returns, the channel closes and the next batch returns the event. With
// and without a hub, for a Sync commit and a Lazy one (w: 1, made durable
// by the journal's flusher).
func TestStreamWaitsForJournal(t *testing.T) {
	for _, tc := range []struct {
		name string
		hub  bool
		d    kv.Durability
	}{
		{"sync", false, kv.Sync},
		{"sync, hub", true, kv.Sync},
		{"lazy, hub", true, kv.Lazy},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fault := vfs.NewFault(vfs.NewMem())
			h := newHarnessFS(t, fault)
			var hub *Hub
			if tc.hub {
				hub = NewHub(h.db, h.log, HubOptions{})
			}
			s, err := Open(h.db, h.log, hub, Scope{DB: "db", Coll: "c"}, &Spec{FullDocument: FullDefault, FullDocumentBeforeChange: BeforeOff}, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			entered, gate := make(chan struct{}, 64), make(chan struct{})
			fault.SetSyncError(func(name string) error {
				if strings.Contains(name, "journal") {
					entered <- struct{}{}
					<-gate
				}
				return nil
			})
			released := false
			release := func() {
				if !released {
					released = true
					fault.SetSyncError(nil)
					close(gate)
				}
			}
			defer release() // also on failure: the cleanup's Close must not wait for the gate
			done := make(chan error, 1)
			go func() {
				tx, err := h.db.BeginWrite(context.Background())
				if err != nil {
					done <- err
					return
				}
				defer tx.Rollback()
				c, err := exec.CollectionForWrite(tx, "db", "c", true, h.log)
				if err == nil {
					var w *exec.CollWriter
					if w, err = exec.OpenWriter(tx, c); err == nil {
						w.Oplog, w.C = h.log, owner{}
						_, _, err = w.Insert(js(t, `{"_id": 1}`))
					}
				}
				if err == nil {
					err = tx.CommitWith(tc.d)
				}
				done <- err
			}()
			<-entered // the commit's journal fdatasync has begun and is held
			var ts repl.Timestamp
			for ts == 0 { // the commit is published before it syncs
				ts = lastEntry(t, h)
				time.Sleep(time.Millisecond)
			}
			ch := s.Changed()
			if evs := drain(t, s); len(evs) != 0 {
				t.Fatalf("events before the write is journaled: %v", opTypes(evs))
			}
			if pb, _ := DecodeToken(s.PostBatchResumeToken()); pb.TS > ts {
				t.Fatalf("post-batch token at %v passed the unjournaled entry at %v", pb.TS, ts)
			}
			if isClosed(ch) {
				t.Fatal("woken before the write is journaled")
			}
			release()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			waitClosed(t, ch, "after the fdatasync")
			if got := opTypes(drain(t, s)); len(got) != 1 || got[0] != "insert 1" {
				t.Fatalf("events after the fdatasync: %v", got)
			}
			if pb, _ := DecodeToken(s.PostBatchResumeToken()); pb.TS < ts {
				t.Fatalf("post-batch token at %v before the returned event at %v", pb.TS, ts)
			}
		})
	}
}

// lastEntry is the ts of the oplog's last entry in a new snapshot (0:
// none).
func lastEntry(t *testing.T, h *harness) repl.Timestamp {
	t.Helper()
	tx, err := h.db.BeginRead()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	tr, err := tx.Tree(h.log.TreeName())
	if err != nil {
		t.Fatal(err)
	}
	k, _ := tr.Cursor().Last()
	if k == nil {
		return 0
	}
	return repl.Timestamp(binary.BigEndian.Uint64(k))
}

// pointSource is a commit point moved by hand (a Raft commit point's
// stand-in).
type pointSource struct {
	mu sync.Mutex
	ts repl.Timestamp
	ch chan struct{}
}

func (p *pointSource) point() (repl.Timestamp, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ts, p.ch
}

func (p *pointSource) advance(ts repl.Timestamp) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ts = ts
	close(p.ch)
	p.ch = make(chan struct{})
}

// TestStreamCommitPoint: with the hub's commit point (on a set of
// several members, Raft's) behind the journaled entries, a stream returns
// the events up to it and no further, its post-batch token stops just
// past it, and its advance wakes the stream, whose next batch returns the
// rest in order.
func TestStreamCommitPoint(t *testing.T) {
	h := newHarness(t)
	src := &pointSource{ch: make(chan struct{})}
	hub := NewHub(h.db, h.log, HubOptions{CommitPoint: src.point})
	s, err := Open(h.db, h.log, hub, Scope{DB: "db", Coll: "c"}, &Spec{FullDocument: FullDefault, FullDocumentBeforeChange: BeforeOff}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var ts []repl.Timestamp
	for i := range 3 {
		h.write("c", func(_ *kv.Tx, w *exec.CollWriter) error {
			var b bson.Builder
			b.AppendInt32("_id", int32(i))
			_, _, err := w.Insert(b.Finish())
			return err
		})
		ts = append(ts, lastEntry(t, h))
	}
	ch := s.Changed()
	if evs := drain(t, s); len(evs) != 0 {
		t.Fatalf("events before the commit point reached them: %v", opTypes(evs))
	}
	src.advance(ts[0])
	waitClosed(t, ch, "commit point at the first write")
	ch = s.Changed()
	if got := opTypes(drain(t, s)); len(got) != 1 || got[0] != "insert 0" {
		t.Fatalf("events up to the first write: %v", got)
	}
	if pb, _ := DecodeToken(s.PostBatchResumeToken()); pb.TS != ts[0]+1 || pb.Type != highWaterMark {
		t.Fatalf("post-batch token %+v, want the high-water mark %v", pb, ts[0]+1)
	}
	if isClosed(ch) {
		t.Fatal("woken without an advance")
	}
	src.advance(ts[2])
	waitClosed(t, ch, "commit point at the last write")
	if got := opTypes(drain(t, s)); len(got) != 2 || got[0] != "insert 1" || got[1] != "insert 2" {
		t.Fatalf("events after the advance: %v", got)
	}
}
