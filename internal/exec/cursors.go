// The cursor registry. A Cursor is what a find, aggregate or listing
// leaves open for getMore: its Source (which holds no transaction between
// batches), the read snapshot of the command that opened it, and who may
// continue it. Cursors maps ids to cursors; batches are filled from them
// (batch.go; getMore holds the cursor's Mu), and the reaper closes idle
// ones.

package exec

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/auth"
	"github.com/cairndb/cairn/kv"
)

// DefaultCursorTimeout is how long an idle cursor lives (MongoDB's
// cursorTimeoutMillis default).
const DefaultCursorTimeout = 10 * time.Minute

// Source produces a cursor's documents in batches. Fill calls emit for each
// next document until emit returns false (the batch is full: that document
// was not taken and must be offered again by the next Fill) or the source is
// exhausted, which it reports. Documents passed to emit are valid only
// during the call. A source holds no transaction between calls, so an idle
// cursor pins no snapshot.
type Source interface {
	Fill(ctx context.Context, emit func(bson.Doc) bool) (exhausted bool, err error)
	Close()
}

// Cursor is an open server-side cursor.
type Cursor struct {
	ID   int64
	NS   string
	Lsid []byte // the session id's raw value, if any
	// Owner is the user authenticated on the connection that opened the
	// cursor (nil: none, or access control off); only that user may
	// continue it.
	Owner *auth.UserName
	// Origin is what the command that opened the cursor needed: every
	// getMore checks the owner still has it.
	Origin []auth.Need
	Src    Source
	// Snap is the read snapshot of the command that opened the cursor:
	// every getMore reads it (internal/command's storage.go). Close ends it.
	Snap *kv.Tx
	// AtClusterTime is the cluster time of a snapshot read's snapshot
	// (readConcern snapshot outside a transaction; 0: none): every batch
	// reports it.
	AtClusterTime uint64
	Limit         int64 // 0 = none; documents still allowed
	NoTimeout     bool
	// Tailable cursors (a capped collection's, tailable.go) have no Snap:
	// each batch reads current data. AwaitData ones wait in getMore for a
	// commit to Watch (their collection's data tree) when they have
	// nothing to return; Killed wakes that wait when the cursor is killed.
	Tailable, AwaitData bool
	Watch               string
	killed              chan struct{}
	killOnce            sync.Once
	// Mu serialises the batches of the cursor (one getMore at a time) with
	// Close; LastUsed is when the last batch was served (the reaper's clock).
	Mu       sync.Mutex
	LastUsed time.Time
}

// Cursors holds the open cursors of a server.
type Cursors struct {
	mu      sync.Mutex
	m       map[int64]*Cursor
	timeout atomic.Int64 // nanoseconds (cursorTimeoutMillis)
	// opened and timedOut count cursors opened and reaped idle since start
	// (serverStatus metrics.cursor.totalOpened and timedOut).
	opened, timedOut atomic.Int64
	// AwaitHook, when set (by tests, before the server serves), runs as
	// an awaitData getMore starts waiting (batch.go).
	AwaitHook func(cur *Cursor)
}

// NewCursors returns an empty cursor table whose idle cursors expire after
// timeout (0: MongoDB's default of 10 minutes).
func NewCursors(timeout time.Duration) *Cursors {
	if timeout <= 0 {
		timeout = DefaultCursorTimeout
	}
	cs := &Cursors{m: make(map[int64]*Cursor)}
	cs.timeout.Store(int64(timeout))
	return cs
}

// Timeout is how long an idle cursor lives.
func (cs *Cursors) Timeout() time.Duration { return time.Duration(cs.timeout.Load()) }

// SetTimeout changes how long idle cursors live (setParameter
// cursorTimeoutMillis); the next reap applies it to every cursor.
func (cs *Cursors) SetTimeout(d time.Duration) { cs.timeout.Store(int64(d)) }

// Add registers c under a new random positive id, which it sets in c.ID.
func (cs *Cursors) Add(c *Cursor) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for {
		var b [8]byte
		_, _ = rand.Read(b[:])
		id := int64(binary.LittleEndian.Uint64(b[:]) &^ (1 << 63))
		if _, dup := cs.m[id]; id != 0 && !dup {
			c.ID = id
			break
		}
	}
	c.LastUsed = time.Now()
	cs.m[c.ID] = c
	cs.opened.Add(1)
}

// Get returns cursor id (nil: none).
func (cs *Cursors) Get(id int64) *Cursor {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.m[id]
}

// Remove forgets cursor id and returns it (nil: none) without closing it.
func (cs *Cursors) Remove(id int64) *Cursor {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	c := cs.m[id]
	delete(cs.m, id)
	return c
}

// NewKilled gives the cursor the channel Killed answers (before Add).
func (cur *Cursor) NewKilled() { cur.killed = make(chan struct{}) }

// Killed is closed once the cursor has been killed (nil: the cursor never
// waits).
func (cur *Cursor) Killed() <-chan struct{} { return cur.killed }

// markKilled wakes a getMore waiting on the cursor.
func (cur *Cursor) markKilled() {
	if cur.killed != nil {
		cur.killOnce.Do(func() { close(cur.killed) })
	}
}

// Close closes the cursor's source and ends its snapshot.
func (cur *Cursor) Close() {
	cur.Src.Close()
	if cur.Snap != nil && !cur.Snap.Concurrent() { // a transaction's: its own
		cur.Snap.Rollback()
		cur.Snap = nil
	}
}

// Kill closes and forgets cursor id (killCursors, OP_KILL_CURSORS); it
// reports whether the cursor existed.
func (cs *Cursors) Kill(id int64) bool {
	cur := cs.Remove(id)
	if cur == nil {
		return false
	}
	cur.markKilled() // a getMore awaiting data holds Mu: wake it
	cur.Mu.Lock()
	cur.Close()
	cur.Mu.Unlock()
	return true
}

// CursorCounts are serverStatus's metrics.cursor figures.
type CursorCounts struct {
	// Open and NoTimeout count the open cursors, and those of them that
	// never time out.
	Open, NoTimeout int
	// TotalOpened and TimedOut count cursors opened and reaped idle since
	// the server started.
	TotalOpened, TimedOut int64
}

// Counts returns the cursor figures.
func (cs *Cursors) Counts() CursorCounts {
	cs.mu.Lock()
	n := CursorCounts{Open: len(cs.m), TotalOpened: cs.opened.Load(), TimedOut: cs.timedOut.Load()}
	for _, c := range cs.m {
		if c.NoTimeout {
			n.NoTimeout++
		}
	}
	cs.mu.Unlock()
	return n
}

// Len returns the number of open cursors.
func (cs *Cursors) Len() int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return len(cs.m)
}

// KillSession closes the cursors opened under the session id.
func (cs *Cursors) KillSession(id bson.Value) {
	cs.mu.Lock()
	var victims []*Cursor
	for k, c := range cs.m {
		if c.Lsid != nil && bson.Equal(bson.Value{Type: bson.TypeBinary, Data: c.Lsid}, id) {
			victims = append(victims, c)
			delete(cs.m, k)
		}
	}
	cs.mu.Unlock()
	for _, c := range victims {
		c.markKilled()
		c.Close()
	}
}

// KillWhere closes the cursors opened under a session whose id (the raw
// value of lsid.id) match accepts, and returns how many.
func (cs *Cursors) KillWhere(match func(lsid []byte) bool) int {
	cs.mu.Lock()
	var victims []*Cursor
	for k, c := range cs.m {
		if c.Lsid != nil && match(c.Lsid) {
			victims = append(victims, c)
			delete(cs.m, k)
		}
	}
	cs.mu.Unlock()
	for _, c := range victims {
		c.Mu.Lock()
		c.Close()
		c.Mu.Unlock()
	}
	return len(victims)
}

// KillTxn closes the cursors opened in the multi-document transaction
// whose kv transaction is tx (it ended: committed or aborted, as mongod
// kills a transaction's cursors), and returns how many.
func (cs *Cursors) KillTxn(tx *kv.Tx) int {
	cs.mu.Lock()
	var victims []*Cursor
	for k, c := range cs.m {
		if c.Snap == tx {
			victims = append(victims, c)
			delete(cs.m, k)
		}
	}
	cs.mu.Unlock()
	for _, c := range victims {
		c.markKilled()
		c.Mu.Lock()
		c.Close()
		c.Mu.Unlock()
	}
	return len(victims)
}

// KillAll closes every cursor.
func (cs *Cursors) KillAll() {
	cs.mu.Lock()
	all := cs.m
	cs.m = make(map[int64]*Cursor)
	cs.mu.Unlock()
	for _, c := range all {
		c.markKilled()
		c.Close()
	}
}

// Reap closes cursors idle for longer than the timeout and returns how many.
func (cs *Cursors) Reap(now time.Time) int {
	cs.mu.Lock()
	var victims []*Cursor
	for k, c := range cs.m {
		// LastUsed is written under the cursor's lock (getMore): read it
		// only once holding that lock; a cursor in use is not idle.
		if c.NoTimeout || !c.Mu.TryLock() {
			continue
		}
		if now.Sub(c.LastUsed) > cs.Timeout() {
			victims = append(victims, c)
			delete(cs.m, k)
		} else {
			c.Mu.Unlock()
		}
	}
	cs.mu.Unlock()
	for _, c := range victims {
		c.Close()
		c.Mu.Unlock()
	}
	cs.timedOut.Add(int64(len(victims)))
	return len(victims)
}

// RunReaper reaps idle cursors every interval until ctx ends.
func (cs *Cursors) RunReaper(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			cs.Reap(now)
		}
	}
}
