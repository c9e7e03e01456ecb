package replset

import (
	"testing"
	"time"

	"github.com/cairndb/cairn/internal/repl"
	"github.com/cairndb/cairn/kv"
	"github.com/cairndb/cairn/kv/vfs"
)

// TestSnapHistory: the retained snapshots are found at or before a time,
// one per distinct time, bounded in number and age.
func TestSnapHistory(t *testing.T) {
	db, err := kv.Open("/db", &kv.Options{FS: vfs.NewMem(), Durability: kv.NoSync, JournalSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	read := func() *kv.Tx {
		tx, err := db.BeginRead()
		if err != nil {
			t.Fatal(err)
		}
		return tx
	}
	var h SnapHistory
	defer h.CloseAll()
	now, window := time.Now(), time.Minute
	ts := func(s uint32) repl.Timestamp { return repl.MakeTimestamp(s, 1) }
	h.keep(ts(10), read(), now, window)
	h.keep(ts(20), read(), now, window)
	h.keep(ts(20), read(), now, window) // the same time again: kept once
	if h.Len() != 2 {
		t.Fatalf("%d snapshots, want 2", h.Len())
	}
	cases := []struct {
		at   repl.Timestamp
		want repl.Timestamp // 0: none
	}{{ts(5), 0}, {ts(10), ts(10)}, {ts(15), ts(10)}, {ts(20), ts(20)}, {ts(99), ts(20)}}
	for _, tc := range cases {
		tx, got, err := h.at(tc.at, now, window)
		if err != nil {
			t.Fatal(err)
		}
		if (tx == nil) != (tc.want == 0) || got != tc.want {
			t.Fatalf("at %v: %v (tx %v), want %v", tc.at, got, tx != nil, tc.want)
		}
		if tx != nil {
			tx.Rollback()
		}
	}
	for i := range maxSnapHistory + 5 {
		h.keep(ts(uint32(100+i)), read(), now, window)
	}
	if h.Len() != maxSnapHistory {
		t.Fatalf("%d snapshots, want the bound %d", h.Len(), maxSnapHistory)
	}
	if tx, _, _ := h.at(ts(10), now, window); tx != nil {
		t.Fatal("the oldest snapshot survived the bound")
	}
	h.Prune(now.Add(2*window), window)
	if h.Len() != 0 {
		t.Fatalf("%d snapshots after the window, want 0", h.Len())
	}
	var s State
	if s.SnapWindow() != defaultSnapWindow {
		t.Fatalf("default window %v", s.SnapWindow())
	}
	s.SnapWindowSecs.Store(1) // minSnapshotHistoryWindowInSeconds 0
	if s.SnapWindow() != 0 {
		t.Fatalf("window %v, want 0", s.SnapWindow())
	}
}
