package kv

// Tree watches. A reader that waits for new data in a tree (a tailable
// cursor's getMore awaiting inserts into a capped collection, a change
// stream's getMore awaiting oplog entries) registers a watch, reads the
// current snapshot, and, when it finds nothing new, waits on the watch's
// channel: the first commit published after the registration (or the last
// Rearm) that changed (or created) the tree closes it. Watches of one tree
// share an entry, counted so that the last Cancel forgets it (a dropped
// tree's watchers are not woken: they wait for their timeout or their
// cancellation).
//
// The commit path takes no lock of the watchers'. A commit checks for
// watches with one atomic load (writers pay nothing while no one
// watches), finds a changed tree's entry in a sync.Map, swaps a fresh
// channel into it and closes the old one: one close wakes every waiter of
// the tree. Register and Cancel serialize among themselves on a mutex the
// writer never takes; Rearm takes none (it loads the entry's current
// channel, the entry being kept alive by the watch's reference).
//
// No commit slips between a reader's read and its wait: the reader stores
// its registration (or loads the channel, on Rearm) before it loads the
// current snapshot, and the writer publishes the snapshot before it looks
// for registrations and swaps the channel. Both are sequentially
// consistent atomics, so either the reader's snapshot holds the commit or
// the commit closes the channel the reader holds. A channel loaded just
// before a swap is closed by it: a spurious wake-up at worst.

import (
	"sync"
	"sync/atomic"
)

// watches are the trees being waited on.
type watches struct {
	n  atomic.Int64 // number of entries in m: publish's cheap test
	mu sync.Mutex   // serializes register and release (never the writer)
	m  sync.Map     // tree name → *watchEntry
}

// watchEntry is the channel the watches of one tree share.
type watchEntry struct {
	ch   atomic.Pointer[chan struct{}]
	refs int // under watches.mu
}

func newWatchEntry() *watchEntry {
	e := &watchEntry{}
	ch := make(chan struct{})
	e.ch.Store(&ch)
	return e
}

// TreeWatch waits for commits that change one tree.
type TreeWatch struct {
	db   *DB
	name string
	e    *watchEntry // nil once cancelled
	// shared is e, never cleared: Current reads it concurrently with
	// Cancel.
	shared *watchEntry
	c      chan struct{}
}

// WatchTree registers a watch on tree name: C is closed by the next commit
// that changes it. Cancel the watch when done.
func (db *DB) WatchTree(name string) *TreeWatch {
	w := &TreeWatch{db: db, name: name}
	w.e = db.watches.register(name)
	w.shared = w.e
	w.c = *w.e.ch.Load()
	return w
}

// C is closed once a commit has changed the tree since the watch was
// (re)armed.
func (w *TreeWatch) C() <-chan struct{} { return w.c }

// Rearm arms the watch again (after C was closed, or to start over): the
// next commit that changes the tree closes the new C. It takes no lock.
func (w *TreeWatch) Rearm() {
	w.c = *w.e.ch.Load()
}

// Current returns the channel the next commit that changes the tree
// closes, without arming w: unlike C and Rearm it is safe for concurrent
// use, so one long-lived watch can serve many waiters (a change stream
// hub's), each loading the channel before it reads and waiting on it
// after. It takes no lock. Once the watch is cancelled the channel it
// returns may never be closed.
func (w *TreeWatch) Current() <-chan struct{} {
	return *w.shared.ch.Load()
}

// Cancel ends the watch.
func (w *TreeWatch) Cancel() {
	if w.e != nil {
		w.db.watches.release(w.name, w.e)
		w.e = nil
	}
}

func (ws *watches) register(name string) *watchEntry {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	var e *watchEntry
	if v, ok := ws.m.Load(name); ok {
		e = v.(*watchEntry)
	} else {
		e = newWatchEntry()
		ws.m.Store(name, e)
		ws.n.Add(1)
	}
	e.refs++
	return e
}

// release drops one reference to e; the last one forgets the entry.
func (ws *watches) release(name string, e *watchEntry) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	e.refs--
	if e.refs == 0 {
		ws.m.Delete(name)
		ws.n.Add(-1)
	}
}

// notify closes the channels of the changed trees, as the commit is
// published (under the writer lock, taking no other lock).
func (ws *watches) notify(changed func(yield func(name string))) {
	if ws.n.Load() == 0 {
		return
	}
	changed(func(name string) {
		v, ok := ws.m.Load(name)
		if !ok {
			return
		}
		e := v.(*watchEntry)
		ch := make(chan struct{})
		close(*e.ch.Swap(&ch))
	})
}
