package command

import (
	"context"
	"testing"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/exec"
)

type countingSource struct{ closed int }

func (s *countingSource) Fill(context.Context, func(bson.Doc) bool) (bool, error) { return true, nil }
func (s *countingSource) Close()                                                  { s.closed++ }

func TestCursorReaper(t *testing.T) {
	cs := exec.NewCursors(10 * time.Minute)
	idle, busy, pinned := &countingSource{}, &countingSource{}, &countingSource{}
	ci := &exec.Cursor{NS: "db.c", Src: idle}
	cb := &exec.Cursor{NS: "db.c", Src: busy}
	cp := &exec.Cursor{NS: "db.c", Src: pinned, NoTimeout: true}
	for _, c := range []*exec.Cursor{ci, cb, cp} {
		cs.Add(c)
	}
	now := time.Now()
	if n := cs.Reap(now.Add(9 * time.Minute)); n != 0 {
		t.Fatalf("reaped %d cursors before the timeout", n)
	}
	cb.Mu.Lock() // a getMore is running on it
	if n := cs.Reap(now.Add(11 * time.Minute)); n != 1 {
		t.Fatalf("reaped %d cursors, want 1 (idle only)", n)
	}
	cb.Mu.Unlock()
	if idle.closed != 1 || busy.closed != 0 || pinned.closed != 0 {
		t.Fatalf("closed: idle %d busy %d pinned %d", idle.closed, busy.closed, pinned.closed)
	}
	if cs.Get(ci.ID) != nil || cs.Get(cb.ID) == nil || cs.Get(cp.ID) == nil {
		t.Fatal("wrong cursors left in the table")
	}
	if n := cs.Reap(now.Add(12 * time.Minute)); n != 1 || busy.closed != 1 {
		t.Fatalf("second reap: %d, busy closed %d", n, busy.closed)
	}
	cs.KillAll()
	if pinned.closed != 1 || cs.Len() != 0 {
		t.Fatalf("KillAll left %d cursors, pinned closed %d", cs.Len(), pinned.closed)
	}
}

func TestCursorIDsAreUniqueAndPositive(t *testing.T) {
	cs := exec.NewCursors(0)
	seen := map[int64]bool{}
	for i := 0; i < 1000; i++ {
		c := &exec.Cursor{Src: &countingSource{}}
		cs.Add(c)
		if c.ID <= 0 || seen[c.ID] {
			t.Fatalf("cursor id %d (seen %v)", c.ID, seen[c.ID])
		}
		seen[c.ID] = true
	}
}

// TestCursorReapWhileInUse: the reaper reads a cursor's LastUsed only under
// the cursor's lock, which a getMore holds while it writes it (-race
// reports the old unlocked read).
func TestCursorReapWhileInUse(t *testing.T) {
	cs := exec.NewCursors(time.Hour)
	c := &exec.Cursor{NS: "db.c", Src: &countingSource{}}
	cs.Add(c)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 2000 {
			c.Mu.Lock()
			c.LastUsed = time.Now()
			c.Mu.Unlock()
		}
	}()
	for range 2000 {
		cs.Reap(time.Now())
	}
	<-done
	if cs.Get(c.ID) == nil {
		t.Fatal("a cursor in use within its timeout was reaped")
	}
}
