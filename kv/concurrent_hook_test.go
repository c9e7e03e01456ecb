package kv

import (
	"context"
	"errors"
	"testing"
)

// TestConcurrentOnCommitAndLend: an OnCommit hook writes in the replay
// transaction, atomically with the concurrent transaction's writes, and
// its error fails the commit; a lent transaction survives the Rollback and
// Commit of the code it is lent to.
func TestConcurrentOnCommitAndLend(t *testing.T) {
	db := openConcDB(t, nil)
	if err := db.Update(context.Background(), func(tx *Tx) error {
		for _, n := range []string{"a", "log"} {
			if _, err := tx.CreateTree(n); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	for _, tc := range []struct {
		name    string
		hookErr error
		want    string
	}{
		{"hook writes", nil, "v1"},
		{"hook fails", boom, "<nil>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tx, err := db.BeginConcurrent(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			key := "k-" + tc.name
			mustPut(t, tx, "a", key, "v1")
			tx.Lend(true)
			if err := tx.Rollback(); !errors.Is(err, ErrTxManaged) {
				t.Fatalf("Rollback of a lent transaction: %v, want ErrTxManaged", err)
			}
			if err := tx.Commit(); !errors.Is(err, ErrTxManaged) {
				t.Fatalf("Commit of a lent transaction: %v, want ErrTxManaged", err)
			}
			if got := getStr(t, tx, "a", key); got != "v1" {
				t.Fatalf("lent transaction lost its write: %q", got)
			}
			tx.Lend(false)
			ran := 0
			tx.OnCommit(func(wt *Tx) error {
				ran++
				if wt.Concurrent() {
					t.Error("the hook runs in the replay (ordinary) transaction")
				}
				// The replay is already applied: the hook sees it.
				if got := getStr(t, wt, "a", key); got != "v1" {
					t.Errorf("hook sees %q, want the replayed write", got)
				}
				mustPut(t, wt, "log", key, "entry")
				return tc.hookErr
			})
			err = tx.Commit()
			if !errors.Is(err, tc.hookErr) || (tc.hookErr == nil) != (err == nil) {
				t.Fatalf("Commit: %v, want %v", err, tc.hookErr)
			}
			if ran != 1 {
				t.Fatalf("hook ran %d times", ran)
			}
			r, _ := db.BeginRead()
			defer r.Rollback()
			if got := getStr(t, r, "a", key); got != tc.want {
				t.Fatalf("data: %q, want %q", got, tc.want)
			}
			wantLog := "entry"
			if tc.hookErr != nil {
				wantLog = "<nil>"
			}
			if got := getStr(t, r, "log", key); got != wantLog {
				t.Fatalf("log: %q, want %q", got, wantLog)
			}
			// The writer lock was released either way.
			w, err := db.BeginWrite(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			w.Rollback()
		})
	}
}
