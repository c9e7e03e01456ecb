package oplog_test

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/oplog"
	"github.com/cairndb/cairn/kv"
	"github.com/cairndb/cairn/kv/vfs"
)

// ack is an acknowledged write: the insert of id, the update of id that
// set n, or the delete of id.
type ack struct {
	op byte
	id int32
	n  int32
}

// TestCrashOplogMatchesData simulates power losses (kv/vfs's Crash, with
// unsynced writes kept or torn at random) under concurrent writers, each
// committing inserts, updates and deletes (some several to a transaction)
// with Sync durability. After every crash, replaying the oplog from its
// start must give exactly the data (every entry's change is in the data,
// and no change is without its entry), and every acknowledged write must
// have exactly its entry.
func TestCrashOplogMatchesData(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 21))
	mem := vfs.NewMem()
	var acked []ack
	nextID := int32(0)
	for round := range 6 {
		db := openKV(t, mem, kv.Sync)
		l := openLog(t, db, 1<<30, nil)
		verify(t, seed, round, db, acked)
		var mu sync.Mutex
		var wg sync.WaitGroup
		crashAfter := 40 + rng.IntN(120)
		done := make(chan struct{})
		for w := range 4 {
			wr := rand.New(rand.NewPCG(seed+uint64(round), uint64(w)))
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-done:
						return
					default:
					}
					var mine []ack
					err := write(db, l, kv.Sync, nil, func(cw *exec.CollWriter) error {
						mine = mine[:0]
						for range 1 + wr.IntN(3) {
							mu.Lock()
							live := liveIDs(acked)
							id := nextID
							nextID++
							mu.Unlock()
							switch k := wr.IntN(10); {
							case k < 5 || len(live) == 0:
								if _, _, err := cw.Insert(doc("_id", int(id), "n", 0, "pad", "0123456789012345678901234567890123456789")); err != nil {
									return err
								}
								mine = append(mine, ack{'i', id, 0})
							default:
								victim := live[wr.IntN(len(live))]
								key := exec.DocKey(nil, bson.Value{Type: bson.TypeInt32, Data: i32(victim)})
								old, err := cw.Data.Get(key)
								if err != nil || old == nil {
									return fmt.Errorf("no doc %d (in flight elsewhere)", victim)
								}
								old = append(bson.Doc(nil), old...)
								if k < 8 {
									updated := doc("_id", int(victim), "n", int(id), "pad", "0123456789012345678901234567890123456789")
									if err := cw.Update(key, old, updated); err != nil {
										return err
									}
									mine = append(mine, ack{'u', victim, id})
								} else {
									if err := cw.Remove(key, old); err != nil {
										return err
									}
									mine = append(mine, ack{'d', victim, 0})
								}
							}
						}
						return nil
					})
					if err == nil {
						mu.Lock()
						acked = append(acked, mine...)
						n := len(acked)
						mu.Unlock()
						if n >= crashAfter {
							select {
							case <-done:
							default:
								close(done)
							}
						}
					}
				}
			}()
		}
		<-done
		// Crash while the writers are still committing.
		mem.Crash(vfs.CrashOptions{KeepUnsynced: rng.Float64() * 0.7, Tear: rng.IntN(2) == 0, Rand: rng})
		wg.Wait()
		db.Close() // fails: the handles are dead
		crashAfter = len(acked) + 40 + rng.IntN(120)
	}
	db := openKV(t, mem, kv.Sync)
	defer db.Close()
	verify(t, seed, 6, db, acked)
}

func i32(n int32) []byte { return bson.Doc(doc("x", int(n)))[4+1+2 : 4+1+2+4] }

// liveIDs returns the ids inserted and not deleted by acknowledged writes.
func liveIDs(acked []ack) []int32 {
	live := map[int32]bool{}
	for _, a := range acked {
		switch a.op {
		case 'i':
			live[a.id] = true
		case 'd':
			delete(live, a.id)
		}
	}
	out := make([]int32, 0, len(live))
	for id := range live {
		out = append(out, id)
	}
	return out
}

// verify replays the oplog and compares it with the data and with the
// acknowledged writes.
func verify(t *testing.T, seed uint64, round int, db *kv.DB, acked []ack) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("seed %d round %d: %s", seed, round, fmt.Sprintf(format, args...))
	}
	replayed := map[int32]bson.Doc{}
	seen := map[ack]int{}
	for _, e := range entries(t, db) {
		op, _ := e.Lookup("op")
		if op.StringValue() == "c" {
			continue
		}
		id, _ := e.LookupPath("o2", "_id")
		o, _ := e.Lookup("o")
		switch op.StringValue() {
		case "i":
			replayed[id.Int32()] = o.Document()
			seen[ack{'i', id.Int32(), 0}]++
		case "u":
			next := o.Document()
			if d, ok := next.Lookup("diff"); ok {
				var err error
				if next, err = oplog.ApplyDiff(replayed[id.Int32()], d.Document()); err != nil {
					fail("applying %s: %v", e.String(), err)
				}
			}
			replayed[id.Int32()] = next
			n, _ := next.Lookup("n")
			seen[ack{'u', id.Int32(), n.Int32()}]++
		case "d":
			did, _ := o.Document().Lookup("_id")
			delete(replayed, did.Int32())
			seen[ack{'d', did.Int32(), 0}]++
		}
	}
	for _, a := range acked {
		if seen[a] != 1 {
			fail("acknowledged %c of %d (n %d) has %d entries", a.op, a.id, a.n, seen[a])
		}
	}
	err := db.View(func(tx *kv.Tx) error {
		coll, err := catalog.Get(tx, "db", "c")
		if err != nil || coll == nil {
			if len(replayed) > 0 {
				fail("no collection, but the oplog has %d documents", len(replayed))
			}
			return err
		}
		data, err := exec.DataTree(tx, coll)
		if err != nil {
			return err
		}
		n := 0
		cur := data.Cursor()
		for k, v := cur.First(); k != nil; k, v = cur.Next() {
			n++
			id, _ := bson.Doc(v).Lookup("_id")
			if want := replayed[id.Int32()]; string(want) != string(v) {
				fail("document %d is %s, the oplog gives %s", id.Int32(), bson.Doc(v).String(), want.String())
			}
		}
		if n != len(replayed) {
			fail("%d documents in the data, %d from the oplog", n, len(replayed))
		}
		return cur.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
}
