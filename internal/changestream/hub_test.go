package changestream

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/kv"
)

// hubWrites writes n rounds of an insert, an update and a delete to db.c
// (and an insert to db.other, which collection streams do not see).
func hubWrites(t *testing.T, h *harness, from, n int) {
	t.Helper()
	for i := from; i < from+n; i++ {
		h.write("c", func(tx *kv.Tx, w *exec.CollWriter) error {
			doc := js(t, fmt.Sprintf(`{"_id": %d, "a": 1}`, i))
			if _, _, err := w.Insert(doc); err != nil {
				return err
			}
			key, old, err := exec.LookupID(tx, w.Coll, w.Data, nil, doc.Values()[0])
			if err != nil || old == nil {
				return fmt.Errorf("lookup %d: %v", i, err)
			}
			old = append(bson.Doc(nil), old...)
			upd := js(t, fmt.Sprintf(`{"_id": %d, "a": 2}`, i))
			if err := w.Update(key, old, upd); err != nil {
				return err
			}
			if i%3 == 0 {
				return w.Remove(key, upd)
			}
			return nil
		})
		h.write("other", func(_ *kv.Tx, w *exec.CollWriter) error {
			_, _, err := w.Insert(js(t, fmt.Sprintf(`{"_id": %d}`, i)))
			return err
		})
	}
}

// TestHubSharesEvents: streams with a hub return byte for byte the events
// of the same streams without one, for each kind of spec (default,
// showExpandedEvents, updateLookup, a database stream), while the hub
// builds each shared event once however many streams read it, and a tiny
// cache (2 slots, a few hundred bytes) changes no result.
func TestHubSharesEvents(t *testing.T) {
	specs := []struct {
		name  string
		scope Scope
		spec  Spec
	}{
		{"default", Scope{DB: "db", Coll: "c"}, Spec{FullDocument: FullDefault, FullDocumentBeforeChange: BeforeOff}},
		{"expanded", Scope{DB: "db", Coll: "c"}, Spec{FullDocument: FullDefault, FullDocumentBeforeChange: BeforeOff, ShowExpandedEvents: true}},
		{"updateLookup", Scope{DB: "db", Coll: "c"}, Spec{FullDocument: FullUpdateLookup, FullDocumentBeforeChange: BeforeOff}},
		{"database", Scope{DB: "db"}, Spec{FullDocument: FullDefault, FullDocumentBeforeChange: BeforeOff}},
	}
	for _, opts := range []HubOptions{{}, {Slots: 2, MaxBytes: 600}} {
		t.Run(fmt.Sprintf("slots=%d", opts.Slots), func(t *testing.T) {
			h := newHarness(t)
			hub := NewHub(h.db, h.log, opts)
			const copies = 5
			type pair struct {
				name      string
				plain     *Stream
				shared    []*Stream
				gotPlain  []bson.Doc
				gotShared [][]bson.Doc
			}
			var pairs []*pair
			for _, sp := range specs {
				p := &pair{name: sp.name, gotShared: make([][]bson.Doc, copies)}
				spec := sp.spec
				var err error
				if p.plain, err = Open(h.db, h.log, nil, sp.scope, &spec, nil, nil); err != nil {
					t.Fatal(err)
				}
				for range copies {
					s, err := Open(h.db, h.log, hub, sp.scope, &spec, nil, nil)
					if err != nil {
						t.Fatal(err)
					}
					p.shared = append(p.shared, s)
				}
				pairs = append(pairs, p)
			}
			for round := range 3 {
				hubWrites(t, h, round*10, 10)
				for _, p := range pairs {
					p.gotPlain = append(p.gotPlain, drain(t, p.plain)...)
					for i, s := range p.shared {
						p.gotShared[i] = append(p.gotShared[i], drain(t, s)...)
					}
				}
			}
			for _, p := range pairs {
				if len(p.gotPlain) == 0 {
					t.Fatalf("%s: no events", p.name)
				}
				for i := range p.shared {
					if len(p.gotShared[i]) != len(p.gotPlain) {
						t.Fatalf("%s copy %d: %d events, want %d", p.name, i, len(p.gotShared[i]), len(p.gotPlain))
					}
					for j := range p.gotPlain {
						if string(p.gotShared[i][j]) != string(p.gotPlain[j]) {
							t.Fatalf("%s copy %d event %d:\n got %s\nwant %s", p.name, i, j, str(t, p.gotShared[i][j]), str(t, p.gotPlain[j]))
						}
					}
					if string(p.shared[i].PostBatchResumeToken()) != string(p.plain.PostBatchResumeToken()) {
						t.Errorf("%s copy %d: postBatchResumeToken %s, want %s", p.name, i, str(t, p.shared[i].PostBatchResumeToken()), str(t, p.plain.PostBatchResumeToken()))
					}
				}
			}
			// The shared variants: default and database streams share the
			// non-expanded events (the database stream's are a superset),
			// expanded its own; updateLookup builds its own.
			events := len(pairs[3].gotPlain) + len(pairs[1].gotPlain)
			if opts.Slots == 0 {
				if b := hub.Builds.Load(); b != int64(events) {
					t.Errorf("hub built %d shared events, want %d (once each)", b, events)
				}
				if hub.Hits.Load() == 0 {
					t.Error("no cache hits")
				}
			} else if hub.CachedBytes() > 600 {
				t.Errorf("cache holds %d bytes, bound 600", hub.CachedBytes())
			}
			for _, p := range pairs {
				p.plain.Close()
				for _, s := range p.shared {
					s.Close()
					s.Close() // idempotent
				}
			}
			for _, p := range pairs {
				for _, s := range p.shared {
					if s.Changed() != nil {
						t.Error("a closed stream still has a wake-up channel")
					}
				}
			}
		})
	}
}

// TestHubConcurrentStreams: 16 streams of one hub read concurrently,
// each waiting on the hub's shared channel (loaded before each read),
// while a writer commits; each receives every event in order, none
// misses a wake-up. Bounded: 200 commits, 10 s per wait.
func TestHubConcurrentStreams(t *testing.T) {
	h := newHarness(t)
	hub := NewHub(h.db, h.log, HubOptions{Slots: 64})
	const streams, commits = 16, 200
	var wg sync.WaitGroup
	errs := make(chan error, streams)
	for i := range streams {
		s, err := Open(h.db, h.log, hub, Scope{DB: "db", Coll: "c"}, &Spec{FullDocument: FullDefault, FullDocumentBeforeChange: BeforeOff}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer s.Close()
			next := int32(0)
			for next < commits {
				ch := s.Changed()
				if ch == nil {
					errs <- fmt.Errorf("stream %d: no shared channel", i)
					return
				}
				_, err := s.Fill(context.Background(), func(d bson.Doc) bool {
					k, _ := d.Lookup("documentKey")
					id, _ := k.Document().Lookup("_id")
					if id.Int32() != next {
						errs <- fmt.Errorf("stream %d: event for _id %d, want %d", i, id.Int32(), next)
					}
					next++
					return true
				})
				if err != nil {
					errs <- err
					return
				}
				if next >= commits {
					return
				}
				select {
				case <-ch:
				case <-time.After(10 * time.Second):
					errs <- fmt.Errorf("stream %d missed a wake-up at %d of %d", i, next, commits)
					return
				}
			}
		}()
	}
	for i := range commits {
		h.write("c", func(_ *kv.Tx, w *exec.CollWriter) error {
			var b bson.Builder
			b.AppendInt32("_id", int32(i))
			_, _, err := w.Insert(b.Finish())
			return err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// BenchmarkFill100 measures the server's work per event per stream: 100
// collection streams each read every event of a committed insert (one
// Fill each, as 100 woken getMores), with and without the hub. ns/op is
// per event per stream.
func BenchmarkFill100(b *testing.B) {
	for _, shared := range []bool{false, true} {
		b.Run(fmt.Sprintf("hub=%v", shared), func(b *testing.B) {
			h := newHarness(&testing.T{})
			var hub *Hub
			if shared {
				hub = NewHub(h.db, h.log, HubOptions{})
			}
			const n = 100
			streams := make([]*Stream, n)
			for i := range streams {
				s, err := Open(h.db, h.log, hub, Scope{DB: "db", Coll: "c"}, &Spec{FullDocument: FullDefault, FullDocumentBeforeChange: BeforeOff}, nil, nil)
				if err != nil {
					b.Fatal(err)
				}
				streams[i] = s
			}
			var buf []byte
			emit := func(d bson.Doc) bool { buf = append(buf[:0], d...); return true }
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i += n {
				b.StopTimer()
				tx, _ := h.db.BeginWrite(context.Background())
				c, _ := exec.CollectionForWrite(tx, "db", "c", true, h.log)
				w, _ := exec.OpenWriter(tx, c)
				w.Oplog, w.C = h.log, owner{}
				var d bson.Builder
				d.AppendInt64("_id", int64(i))
				d.AppendString("name", "a document of a few fields")
				d.AppendInt64("n", int64(i))
				if _, _, err := w.Insert(d.Finish()); err != nil {
					b.Fatal(err)
				}
				if err := tx.CommitWith(kv.Sync); err != nil { // durable: streams see it
					b.Fatal(err)
				}
				b.StartTimer()
				for _, s := range streams {
					if _, err := s.Fill(context.Background(), emit); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
