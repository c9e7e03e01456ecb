package kv

// Tree watches. A reader that waits for new data in a tree (a tailable
// cursor's getMore awaiting inserts into a capped collection) registers a
// watch, reads the current snapshot, and, when it finds nothing new, waits
// on the watch's channel: the first commit published after the
// registration that changed (or created) the tree closes it. Registering
// before reading means no commit can slip between the read and the wait. A
// commit checks for watches with one atomic load, so writers pay nothing
// while no one watches. Watches of one tree share a channel, counted so
// that the last Cancel forgets it (a dropped tree's watchers are not woken:
// they wait for their timeout or their cancellation).

import (
	"sync"
	"sync/atomic"
)

// watches are the trees being waited on.
type watches struct {
	n  atomic.Int64 // number of entries in m: publish's cheap test
	mu sync.Mutex
	m  map[string]*watchEntry
}

// watchEntry is the channel the watches of one tree share.
type watchEntry struct {
	ch   chan struct{}
	refs int
}

// TreeWatch waits for commits that change one tree.
type TreeWatch struct {
	db   *DB
	name string
	e    *watchEntry
}

// WatchTree registers a watch on tree name: C is closed by the next commit
// that changes it. Cancel the watch when done.
func (db *DB) WatchTree(name string) *TreeWatch {
	w := &TreeWatch{db: db, name: name}
	w.e = db.watches.register(name)
	return w
}

// C is closed once a commit has changed the tree since the watch was
// (re)armed.
func (w *TreeWatch) C() <-chan struct{} { return w.e.ch }

// Rearm registers the watch again (after C was closed, or to start over):
// the next commit that changes the tree closes the new C.
func (w *TreeWatch) Rearm() {
	w.db.watches.release(w.name, w.e)
	w.e = w.db.watches.register(w.name)
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
	if ws.m == nil {
		ws.m = make(map[string]*watchEntry)
	}
	e, ok := ws.m[name]
	if !ok {
		e = &watchEntry{ch: make(chan struct{})}
		ws.m[name] = e
		ws.n.Store(int64(len(ws.m)))
	}
	e.refs++
	return e
}

// release drops one reference to e; the last one of an entry still
// registered forgets it.
func (ws *watches) release(name string, e *watchEntry) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	e.refs--
	if e.refs == 0 && ws.m[name] == e {
		delete(ws.m, name)
		ws.n.Store(int64(len(ws.m)))
	}
}

// notify closes the channels of the changed trees (under the writer lock,
// as the commit is published).
func (ws *watches) notify(changed func(yield func(name string))) {
	if ws.n.Load() == 0 {
		return
	}
	ws.mu.Lock()
	defer ws.mu.Unlock()
	changed(func(name string) {
		if e, ok := ws.m[name]; ok {
			close(e.ch)
			delete(ws.m, name)
		}
	})
	ws.n.Store(int64(len(ws.m)))
}
