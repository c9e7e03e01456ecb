package kv

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cairndb/cairn/kv/vfs"
)

// TestDurableMark: a commit's mark is reported by DurableMark only once
// the journal's fdatasync covering it has returned — never while the
// commit is merely visible — and each advance closes the channel loaded
// before it. The journal's fdatasync is held at a gate (a fault-injecting
// file system) so that the commit is published but not durable. Covers a
// Lazy commit made durable by the flusher, a Sync commit, a concurrent
// transaction's commit, a checkpoint's journal switch and a commit too big
// for the journal (made durable by its own checkpoint).
func TestDurableMark(t *testing.T) {
	fault := vfs.NewFault(vfs.NewMem())
	opts := memOpts(fault)
	opts.CommitInterval = time.Millisecond
	db := mustOpen(t, fault, opts)
	defer db.Close()
	if err := db.Update(context.Background(), func(tx *Tx) error {
		_, err := tx.CreateTree("t")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if m := db.DurableMark(); m != 0 {
		t.Fatalf("DurableMark %d before any marked commit", m)
	}

	entered := make(chan struct{}, 16)
	var gate chan struct{} // made by each gated case
	hold := func(on bool) {
		if !on {
			fault.SetSyncError(nil)
			return
		}
		fault.SetSyncError(func(name string) error {
			if strings.Contains(name, "journal") {
				entered <- struct{}{}
				<-gate
			}
			return nil
		})
	}
	wait := func(ch <-chan struct{}, what string) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no advance", what)
		}
	}
	write := func(tx *Tx, k string, mark uint64) error {
		tr, err := tx.Tree("t")
		if err != nil {
			return err
		}
		tx.SetMark(mark)
		tx.SetMark(mark - 1) // smaller: ignored
		return tr.Put([]byte(k), []byte("v"))
	}
	visible := func(k string) bool {
		tx, err := db.BeginRead()
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		tr, err := tx.Tree("t")
		if err != nil {
			t.Fatal(err)
		}
		v, err := tr.Get([]byte(k))
		return err == nil && v != nil
	}

	tests := []struct {
		name   string
		mark   uint64
		commit func(k string, mark uint64) error
		gated  bool // the commit's durability waits for a journal fdatasync
	}{
		{"lazy", 5, func(k string, mark uint64) error {
			tx, err := db.BeginWrite(context.Background())
			if err != nil {
				return err
			}
			if err := write(tx, k, mark); err != nil {
				return err
			}
			return tx.CommitWith(Lazy)
		}, true},
		{"sync", 7, func(k string, mark uint64) error {
			return db.Update(context.Background(), func(tx *Tx) error { return write(tx, k, mark) })
		}, true},
		{"concurrent", 9, func(k string, mark uint64) error {
			tx, err := db.BeginConcurrent(context.Background())
			if err != nil {
				return err
			}
			if err := write(tx, k, mark); err != nil {
				tx.Rollback()
				return err
			}
			return tx.CommitWith(Sync)
		}, true},
		{"checkpoint", 11, func(k string, mark uint64) error {
			tx, err := db.BeginWrite(context.Background())
			if err != nil {
				return err
			}
			if err := write(tx, k, mark); err != nil {
				return err
			}
			if err := tx.CommitWith(NoSync); err != nil {
				return err
			}
			return db.Checkpoint(context.Background())
		}, true},
		{"too big for the journal", 13, func(k string, mark uint64) error {
			return db.Update(context.Background(), func(tx *Tx) error {
				tr, err := tx.Tree("t")
				if err != nil {
					return err
				}
				tx.SetMark(mark)
				big := make([]byte, 1024)
				for i := 0; i < 400; i++ { // 400 KiB > the 256 KiB journal
					if err := tr.Put([]byte(k+"/"+string(rune('a'+i%26))+string(rune(i))), big); err != nil {
						return err
					}
				}
				return tr.Put([]byte(k), []byte("v"))
			})
		}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := db.DurableMark()
			ch := db.DurableChanged()
			if !tc.gated {
				if err := tc.commit(tc.name, tc.mark); err != nil {
					t.Fatal(err)
				}
				wait(ch, tc.name)
				if m := db.DurableMark(); m != tc.mark {
					t.Fatalf("DurableMark %d after the commit, want %d", m, tc.mark)
				}
				return
			}
			gate = make(chan struct{})
			hold(true)
			released := false
			release := func() {
				if !released {
					released = true
					hold(false)
					close(gate)
				}
			}
			defer release() // also on failure: Close must not wait for the gate
			done := make(chan error, 1)
			go func() { done <- tc.commit(tc.name, tc.mark) }()
			<-entered // the journal's fdatasync has begun and is held
			for !visible(tc.name) {
				time.Sleep(time.Millisecond) // the commit publishes before it syncs
			}
			if m := db.DurableMark(); m != before {
				t.Fatalf("DurableMark %d while the commit's fdatasync is held, want %d", m, before)
			}
			select {
			case <-ch:
				t.Fatal("DurableChanged closed before the fdatasync returned")
			default:
			}
			release()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			wait(ch, tc.name)
			if m := db.DurableMark(); m != tc.mark {
				t.Fatalf("DurableMark %d after the fdatasync, want %d", m, tc.mark)
			}
		})
	}
}
