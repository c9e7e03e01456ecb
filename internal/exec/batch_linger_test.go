package exec

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/cairndb/cairn/bson"
)

// lingerSource is an awaitData source with its own wake-up channel (as a
// change stream): advance adds documents and closes the channel; it asks
// to linger for d once a read brings at least min documents.
type lingerSource struct {
	mu      sync.Mutex
	ch      chan struct{}
	pending []bson.Doc
	d       time.Duration
	minN    int64
	asked   []int64 // the n of each Linger call
	woken   []bool  // and its woken
}

func newLingerSource(d time.Duration, minN int64) *lingerSource {
	return &lingerSource{ch: make(chan struct{}), d: d, minN: minN}
}

func (s *lingerSource) advance(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		var b bson.Builder
		b.AppendInt32("_id", int32(len(s.pending)))
		s.pending = append(s.pending, b.Finish())
	}
	close(s.ch)
	s.ch = make(chan struct{})
}

func (s *lingerSource) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ch
}

func (s *lingerSource) Fill(_ context.Context, emit func(bson.Doc) bool) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.pending) > 0 && emit(s.pending[0]) {
		s.pending = s.pending[1:]
	}
	return false, nil
}

func (s *lingerSource) Close() {}

func (s *lingerSource) Linger(n int64, woken bool) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked = append(s.asked, n)
	s.woken = append(s.woken, woken)
	if n < s.minN {
		return 0
	}
	return s.d
}

// TestAwaitLinger: a woken getMore whose read brought enough documents
// keeps reading at each advance until its source's linger time is over;
// one that brought fewer answers at once; killCursors or the command's
// end during the linger answers what the batch holds, without an error.
func TestAwaitLinger(t *testing.T) {
	const linger = 400 * time.Millisecond
	tests := []struct {
		name     string
		advances []int // documents per advance, 20 ms apart, the first once the getMore waits
		minN     int64
		end      string // "", "kill" or "cancel": during the linger
		want     int64
		lingers  bool
	}{
		{"several advances in one batch", []int{2, 3, 1}, 2, "", 6, true},
		{"a lone document is answered at once", []int{1, 5}, 2, "", 1, false},
		{"killed while lingering", []int{3, 0}, 2, "kill", 3, true},
		{"cancelled while lingering", []int{3, 0}, 2, "cancel", 3, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := newLingerSource(linger, tc.minN)
			cs := NewCursors(0)
			cur := &Cursor{Src: src, Tailable: true, AwaitData: true}
			cur.NewKilled()
			cs.Add(cur)
			waiting := make(chan struct{})
			var once sync.Once
			cs.AwaitHook = func(*Cursor) { once.Do(func() { close(waiting) }) }
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				<-waiting
				for i, n := range tc.advances {
					if i > 0 {
						time.Sleep(20 * time.Millisecond)
					}
					src.advance(n)
				}
				switch tc.end {
				case "kill":
					cur.markKilled()
				case "cancel":
					cancel()
				}
			}()
			var e Engine
			var r bson.Builder
			start := time.Now()
			n, _, err := e.FillBatch(ctx, cs, &r, &Batch{Cur: cur, Src: src, Opt: BatchOptions{Tailable: true, AwaitData: true, Await: 10 * time.Second}})
			elapsed := time.Since(start)
			if err != nil {
				t.Fatalf("FillBatch: %v", err)
			}
			if n != tc.want {
				t.Errorf("batch of %d documents, want %d", n, tc.want)
			}
			switch {
			case tc.lingers && tc.end == "" && elapsed < linger:
				t.Errorf("answered after %v, before the linger of %v was over", elapsed, linger)
			case !tc.lingers && elapsed >= linger:
				t.Errorf("answered after %v: lingered", elapsed)
			case tc.end != "" && elapsed >= linger:
				t.Errorf("answered after %v: the %s did not end the linger", elapsed, tc.end)
			}
			if len(src.asked) != 1 || src.asked[0] != int64(tc.advances[0]) || !src.woken[0] {
				t.Errorf("Linger asked with %v (woken %v), want once with %d, woken", src.asked, src.woken, tc.advances[0])
			}
		})
	}
}

// TestAwaitLingerImmediate: a getMore whose first read finds documents
// waiting lingers too when its source asks (a change stream behind its
// writers), and reads once more before it answers; one that finds fewer
// answers at once, and so does one whose batch is already full, without
// asking the source.
func TestAwaitLingerImmediate(t *testing.T) {
	const linger = 300 * time.Millisecond
	tests := []struct {
		name      string
		pending   int // documents waiting before the getMore
		later     int // documents added 30 ms into it
		batchSize int64
		await     time.Duration // 0: 10 s
		want      int64
		lingers   bool
		asked     bool
	}{
		{"waiting documents linger", 3, 2, 0, 0, 5, true, true},
		{"a lone waiting document is answered at once", 1, 2, 0, 0, 1, false, true},
		{"a full batch is answered at once", 3, 2, 3, 0, 3, false, false},
		{"the await time bounds the linger", 3, 2, 0, 100 * time.Millisecond, 5, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := newLingerSource(linger, 2)
			src.advance(tc.pending)
			cs := NewCursors(0)
			cur := &Cursor{Src: src, Tailable: true, AwaitData: true}
			cur.NewKilled()
			cs.Add(cur)
			done := make(chan struct{})
			defer close(done)
			go func() {
				select {
				case <-time.After(30 * time.Millisecond):
					src.advance(tc.later)
				case <-done:
				}
			}()
			var e Engine
			var r bson.Builder
			start := time.Now()
			await := tc.await
			if await == 0 {
				await = 10 * time.Second
			}
			n, _, err := e.FillBatch(context.Background(), cs, &r, &Batch{Cur: cur, Src: src, Opt: BatchOptions{Tailable: true, AwaitData: true, Await: await, BatchSize: tc.batchSize}})
			elapsed := time.Since(start)
			if err != nil {
				t.Fatalf("FillBatch: %v", err)
			}
			if n != tc.want {
				t.Errorf("batch of %d documents, want %d", n, tc.want)
			}
			if tc.lingers && elapsed < linger {
				t.Errorf("answered after %v, before the linger of %v was over", elapsed, linger)
			}
			if !tc.lingers && elapsed >= linger {
				t.Errorf("answered after %v: lingered", elapsed)
			}
			src.mu.Lock()
			asked, woken := src.asked, src.woken
			src.mu.Unlock()
			if tc.asked && (len(asked) != 1 || asked[0] != int64(tc.pending) || woken[0]) {
				t.Errorf("Linger asked with %v (woken %v), want once with %d, not woken", asked, woken, tc.pending)
			}
			if !tc.asked && len(asked) != 0 {
				t.Errorf("Linger asked with %v for a full batch", asked)
			}
		})
	}
}
