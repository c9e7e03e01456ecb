package repl

import (
	"testing"
	"time"
)

func TestClockNext(t *testing.T) {
	wall := time.Unix(1000, 0)
	c := NewClock(func() time.Time { return wall }, 0)
	steps := []struct {
		wall time.Time
		want Timestamp
	}{
		{time.Unix(1000, 0), MakeTimestamp(1000, 1)},
		{time.Unix(1000, 5e8), MakeTimestamp(1000, 2)},
		{time.Unix(1002, 0), MakeTimestamp(1002, 1)},
		{time.Unix(990, 0), MakeTimestamp(1002, 2)}, // the wall clock went back
		{time.Unix(1003, 0), MakeTimestamp(1003, 1)},
	}
	for i, s := range steps {
		wall = s.wall
		if got := c.Next(); got != s.want {
			t.Fatalf("step %d: Next() = %v, want %v", i, got, s.want)
		}
	}
	if got := c.Now(); got != MakeTimestamp(1003, 1) {
		t.Fatalf("Now() = %v", got)
	}
}

func TestClockObserveAndRecovery(t *testing.T) {
	wall := time.Unix(1000, 0)
	// Recovered from an oplog whose last entry is later than the wall clock.
	c := NewClock(func() time.Time { return wall }, MakeTimestamp(2000, 7))
	if got := c.Next(); got != MakeTimestamp(2000, 8) {
		t.Fatalf("after recovery Next() = %v", got)
	}
	c.Observe(MakeTimestamp(1500, 1)) // earlier: ignored
	c.Observe(MakeTimestamp(3000, 4))
	if got := c.Next(); got != MakeTimestamp(3000, 5) {
		t.Fatalf("after Observe Next() = %v", got)
	}
	if ts := MakeTimestamp(7, 9); ts.T() != 7 || ts.I() != 9 {
		t.Fatalf("T/I of %v", ts)
	}
}
