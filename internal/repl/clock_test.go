package repl

import (
	"sync"
	"sync/atomic"
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

// Stamps taken and observed from many goroutines at once are all distinct,
// and each goroutine's stamps increase: the clock is one atomic word, and
// a stamp lost between a load and a compare-and-swap would be handed out
// twice.
func TestClockConcurrent(t *testing.T) {
	var wall atomic.Int64
	wall.Store(1000)
	c := NewClock(func() time.Time { return time.Unix(wall.Load(), 0) }, 0)
	const workers, each = 8, 5000
	stamps := make([][]Timestamp, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				switch {
				case w == 0 && i%100 == 0:
					wall.Add(1) // the seconds move while others stamp
				case w == 1 && i%50 == 0:
					c.Observe(c.Now() + 3) // a gossiped time a little ahead
				}
				stamps[w] = append(stamps[w], c.Next())
			}
		}()
	}
	wg.Wait()
	seen := make(map[Timestamp]bool, workers*each)
	var max Timestamp
	for w, s := range stamps {
		for i, ts := range s {
			if i > 0 && ts <= s[i-1] {
				t.Fatalf("worker %d: stamp %d %v after %v", w, i, ts, s[i-1])
			}
			if seen[ts] {
				t.Fatalf("stamp %v handed out twice", ts)
			}
			seen[ts] = true
			if ts > max {
				max = ts
			}
		}
	}
	if c.Now() < max {
		t.Fatalf("Now() = %v, below the largest stamp %v", c.Now(), max)
	}
}
