package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// progress draws a progress bar for a long job on stderr: a bar and a
// percentage when the job's size is known, the number of documents and
// the rate. On a terminal it redraws one line every 200 ms; otherwise it
// prints a line every 10 s, like MongoDB's tools.
type progress struct {
	out      io.Writer
	label    string
	total    int64         // units of work (bytes, documents), or <= 0 when unknown
	done     *atomic.Int64 // units done so far
	count    *atomic.Int64 // documents so far
	start    time.Time
	tty      bool
	stop     chan struct{}
	finished sync.WaitGroup
	mu       sync.Mutex
}

// startProgress starts drawing; finish stops it. The bar's fill is
// done/total (total <= 0: no bar); count is the documents handled. With
// enabled false it draws nothing.
func startProgress(out io.Writer, enabled bool, label string, total int64, done, count *atomic.Int64) *progress {
	p := &progress{out: out, label: label, total: total, done: done, count: count, start: time.Now(), stop: make(chan struct{})}
	if !enabled {
		return p
	}
	if f, ok := out.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	every := 10 * time.Second
	if p.tty {
		every = 200 * time.Millisecond
	}
	p.finished.Add(1)
	go func() {
		defer p.finished.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				p.draw(false)
			case <-p.stop:
				p.draw(true)
				return
			}
		}
	}()
	return p
}

func (p *progress) finish() {
	select {
	case <-p.stop:
		return
	default:
	}
	close(p.stop)
	p.finished.Wait()
}

func (p *progress) draw(last bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	elapsed := time.Since(p.start)
	n := p.count.Load()
	rate := float64(n) / max(elapsed.Seconds(), 1e-3)
	var line string
	if p.total > 0 {
		frac := min(float64(p.done.Load())/float64(p.total), 1)
		const width = 24
		filled := int(frac * width)
		line = fmt.Sprintf("[%s%s] %s  %5.1f%%  %d docs  %.0f docs/s  %s", strings.Repeat("#", filled), strings.Repeat(".", width-filled),
			p.label, frac*100, n, rate, elapsed.Truncate(time.Second))
	} else {
		line = fmt.Sprintf("%s  %d docs  %.0f docs/s  %s", p.label, n, rate, elapsed.Truncate(time.Second))
	}
	switch {
	case p.tty && last:
		fmt.Fprintf(p.out, "\r%s\x1b[K\n", line)
	case p.tty:
		fmt.Fprintf(p.out, "\r%s\x1b[K", line)
	default:
		fmt.Fprintln(p.out, line)
	}
}
