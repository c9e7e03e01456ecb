package kv

// Tree watches. A reader that waits for new data in a tree (a tailable
// cursor's getMore awaiting inserts into a capped collection) registers a
// watch, reads the current snapshot, and, when it finds nothing new, waits
// on the watch's channel: the first commit published after the
// registration that changed (or created, or dropped) the tree closes it.
// Registering before reading means no commit can slip between the read and
// the wait. A commit checks for watches with one atomic load, so writers pay
// nothing while no one watches.

import (
	"sync"
	"sync/atomic"
)

// watches are the trees being waited on.
type watches struct {
	n  atomic.Int64 // number of entries in m: publish's cheap test
	mu sync.Mutex
	m  map[string]chan struct{}
}

// TreeWatch waits for commits that change one tree.
type TreeWatch struct {
	db   *DB
	name string
	ch   chan struct{}
}

// WatchTree registers a watch on tree name: C is closed by the next commit
// that changes it. Cancel the watch when done.
func (db *DB) WatchTree(name string) *TreeWatch {
	w := &TreeWatch{db: db, name: name}
	w.ch = db.watches.register(name)
	return w
}

// C is closed once a commit has changed the tree since the watch was
// (re)armed.
func (w *TreeWatch) C() <-chan struct{} { return w.ch }

// Rearm registers the watch again after C was closed: the next commit that
// changes the tree closes the new C.
func (w *TreeWatch) Rearm() { w.ch = w.db.watches.register(w.name) }

// Cancel ends the watch. (A channel no one waits on is dropped by the next
// commit to its tree; Cancel does not remove it, as other watches may
// share it.)
func (w *TreeWatch) Cancel() {}

func (ws *watches) register(name string) chan struct{} {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.m == nil {
		ws.m = make(map[string]chan struct{})
	}
	ch, ok := ws.m[name]
	if !ok {
		ch = make(chan struct{})
		ws.m[name] = ch
		ws.setLen()
	}
	return ch
}

// notify closes the channels of the changed trees (under the writer lock,
// as the commit is published).
func (ws *watches) notify(changed func(yield func(name string))) {
	if !ws.has() {
		return
	}
	ws.mu.Lock()
	defer ws.mu.Unlock()
	changed(func(name string) {
		if ch, ok := ws.m[name]; ok {
			close(ch)
			delete(ws.m, name)
		}
	})
	ws.setLen()
}

func (ws *watches) has() bool { return ws.n.Load() > 0 }

func (ws *watches) setLen() { ws.n.Store(int64(len(ws.m))) }
