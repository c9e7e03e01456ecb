package command

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/auth"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/kv"
)

// defaultCursorTimeout is how long an idle cursor lives (MongoDB's
// cursorTimeoutMillis default).
const defaultCursorTimeout = 10 * time.Minute

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
	// origin is what the command that opened the cursor needed: every
	// getMore checks the owner still has it.
	origin []need
	src    Source
	// snap is the read snapshot of the command that opened the cursor:
	// every getMore reads it (storage.go). close ends it.
	snap      *kv.Tx
	limit     int64 // 0 = none; documents still allowed
	noTimeout bool
	mu        sync.Mutex
	lastUsed  time.Time
}

// Cursors holds the open cursors of a server.
type Cursors struct {
	mu      sync.Mutex
	m       map[int64]*Cursor
	timeout time.Duration
	// opened and timedOut count cursors opened and reaped idle since start
	// (serverStatus metrics.cursor.totalOpened and timedOut).
	opened, timedOut atomic.Int64
}

// NewCursors returns an empty cursor table whose idle cursors expire after
// timeout (0: MongoDB's default of 10 minutes).
func NewCursors(timeout time.Duration) *Cursors {
	if timeout <= 0 {
		timeout = defaultCursorTimeout
	}
	return &Cursors{m: make(map[int64]*Cursor), timeout: timeout}
}

func (cs *Cursors) add(c *Cursor) {
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
	c.lastUsed = time.Now()
	cs.m[c.ID] = c
	cs.opened.Add(1)
}

func (cs *Cursors) get(id int64) *Cursor {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.m[id]
}

func (cs *Cursors) remove(id int64) *Cursor {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	c := cs.m[id]
	delete(cs.m, id)
	return c
}

// close closes the cursor's source and ends its snapshot.
func (cur *Cursor) close() {
	cur.src.Close()
	if cur.snap != nil {
		cur.snap.Rollback()
		cur.snap = nil
	}
}

// Kill closes and forgets cursor id (killCursors, OP_KILL_CURSORS); it
// reports whether the cursor existed.
func (cs *Cursors) Kill(id int64) bool {
	cur := cs.remove(id)
	if cur == nil {
		return false
	}
	cur.mu.Lock()
	cur.close()
	cur.mu.Unlock()
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
		if c.noTimeout {
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
		c.close()
	}
}

// KillAll closes every cursor.
func (cs *Cursors) KillAll() {
	cs.mu.Lock()
	all := cs.m
	cs.m = make(map[int64]*Cursor)
	cs.mu.Unlock()
	for _, c := range all {
		c.close()
	}
}

// Reap closes cursors idle for longer than the timeout and returns how many.
func (cs *Cursors) Reap(now time.Time) int {
	cs.mu.Lock()
	var victims []*Cursor
	for k, c := range cs.m {
		if !c.noTimeout && now.Sub(c.lastUsed) > cs.timeout && c.mu.TryLock() {
			victims = append(victims, c)
			delete(cs.m, k)
		}
	}
	cs.mu.Unlock()
	for _, c := range victims {
		c.close()
		c.mu.Unlock()
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

// batchOptions bound one batch of a cursor reply.
type batchOptions struct {
	batchSize int64 // 0 = no count limit
	// firstBatch selects the field name and MongoDB's default of 101
	// documents for the first batch when batchSize is absent.
	firstBatch bool
	// empty is an explicit batchSize of 0: the first batch holds nothing
	// and the cursor is opened for getMore.
	empty bool
}

// maxBatchBytes bounds the documents of one reply, leaving room for the
// reply's own fields within the 16 MiB a BSON object may have.
const maxBatchBytes = MaxBSONObjectSize - 16*1024

// writeBatch fills one batch from src into the reply as
// cursor: {firstBatch|nextBatch: [...], id, ns}, keeping or closing the
// cursor. cur is nil for a new (first) batch; the cursor is then registered
// if documents remain. limit is the number of documents the cursor may
// still return (0 = unlimited); singleBatch closes after the first batch.
func writeBatch(c *Ctx, cur *Cursor, src Source, ns string, limit int64, opt batchOptions, singleBatch bool) error {
	r := c.Reply
	r.StartDocument("cursor")
	field := "nextBatch"
	if opt.firstBatch {
		field = "firstBatch"
	}
	r.StartArray(field)
	var n, bytes int64
	maxDocs := opt.batchSize
	if maxDocs <= 0 && opt.firstBatch {
		maxDocs = 101
	}
	if limit > 0 && (maxDocs <= 0 || limit < maxDocs) {
		maxDocs = limit
	}
	// emit refuses (and the source keeps for the next batch) a document
	// that would overflow the batch.
	exhausted, err := src.Fill(c, func(d bson.Doc) bool {
		if opt.empty || (maxDocs > 0 && n >= maxDocs) {
			return false
		}
		if n > 0 && bytes+int64(len(d)) > maxBatchBytes {
			return false
		}
		r.AppendDocument(bson.Index(int(n)), d)
		n++
		bytes += int64(len(d))
		return true
	})
	if err != nil {
		if cur != nil {
			c.Env.Cursors.remove(cur.ID)
			cur.close()
		} else {
			src.Close()
		}
		return err
	}
	r.End()
	c.Env.Stats.DocsReturned.Add(n)
	noteReturned(c, n)
	limited := limit > 0
	if limited {
		limit -= n
	}
	done := exhausted || singleBatch || (limited && limit <= 0)
	var id int64
	switch {
	case done:
		if cur != nil {
			c.Env.Cursors.remove(cur.ID)
			cur.close()
		} else {
			src.Close()
		}
	case cur != nil:
		cur.limit = limit
		cur.lastUsed = time.Now()
		id = cur.ID
	default:
		nc := &Cursor{NS: ns, src: src, limit: limit, Owner: cursorOwner(c), origin: cursorOrigin(c)}
		if c.snap != nil {
			if nc.snap, err = c.snap.Clone(); err != nil {
				src.Close()
				return err
			}
		}
		if lsid, ok := c.Body.Lookup("lsid"); ok && lsid.Type == bson.TypeDocument {
			if idv, ok := lsid.Document().Lookup("id"); ok && idv.Type == bson.TypeBinary {
				nc.Lsid = append([]byte(nil), idv.Data...)
			}
		}
		if v, ok := c.Body.Lookup("noCursorTimeout"); ok && v.Truthy() {
			nc.noTimeout = true
		}
		c.Env.Cursors.add(nc)
		id = nc.ID
	}
	r.AppendInt64("id", id)
	r.AppendString("ns", ns)
	r.End()
	return nil
}

func getMore(c *Ctx) error {
	a := newArgs(c)
	if err := a.check("collection", "batchSize", "maxTimeMS", "term", "lastKnownCommittedOpTime", "comment"); err != nil {
		return err
	}
	first := a.first()
	if first.Type != bson.TypeInt64 {
		return a.wrongType("getMore", first, "long")
	}
	coll, ok, err := a.str("collection")
	if err != nil {
		return err
	}
	if !ok {
		return mongoerr.New(mongoerr.IDLFailedToParse, "BSON field 'getMore.collection' is missing but a required field")
	}
	batchSize, _, err := a.integer("batchSize")
	if err != nil {
		return err
	}
	if batchSize < 0 {
		return mongoerr.New(mongoerr.BadValue, "Batch size for getMore must be non-negative, but received: %d", batchSize)
	}
	id := first.Int64()
	cur := c.Env.Cursors.get(id)
	if cur == nil {
		return mongoerr.New(mongoerr.CursorNotFound, "cursor id %d not found", id)
	}
	if err := mayContinueCursor(c, cur); err != nil {
		return err
	}
	ns := c.DB + "." + coll
	if cur.NS != ns {
		return mongoerr.New(mongoerr.Unauthorized, "Requested getMore on namespace '%s', but cursor belongs to a different namespace %s", ns, cur.NS)
	}
	if !cur.mu.TryLock() {
		return mongoerr.New(mongoerr.CursorInUse, "cursor id %d is already in use", id)
	}
	defer cur.mu.Unlock()
	c.Env.Stats.GetMore.Add(1)
	// The batch reads the snapshot the cursor was opened on.
	if cur.snap != nil {
		c.releaseSnapshot()
		if c.snap, err = cur.snap.Clone(); err != nil {
			return err
		}
	}
	return writeBatch(c, cur, cur.src, cur.NS, cur.limit, batchOptions{batchSize: batchSize}, false)
}

func killCursors(c *Ctx) error {
	a := newArgs(c)
	if err := a.check("cursors"); err != nil {
		return err
	}
	coll, err := c.collectionArg()
	if err != nil {
		return err
	}
	ids, ok, err := a.array("cursors")
	if err != nil {
		return err
	}
	if !ok {
		return mongoerr.New(mongoerr.IDLFailedToParse, "BSON field 'killCursors.cursors' is missing but a required field")
	}
	var list []int64
	it := ids.Iter()
	for it.Next() {
		v := it.Element().Value
		if v.Type != bson.TypeInt64 {
			return mongoerr.New(mongoerr.TypeMismatch, "BSON field 'killCursors.cursors.%s' is the wrong type '%s', expected type 'long'", it.Element().Key, v.Type)
		}
		list = append(list, v.Int64())
	}
	// As mongod, every cursor is checked before any is killed: one the
	// caller may not kill fails the whole command (unknown ids are no
	// authorization issue: they are reported in cursorsNotFound).
	for _, id := range list {
		if cur := c.Env.Cursors.get(id); cur != nil && !mayKillCursor(c.Env, c.Conn, cur) {
			return mongoerr.New(mongoerr.Unauthorized, "not authorized to kill cursor on %s", c.DB+"."+coll)
		}
	}
	var killed, notFound []int64
	for _, id := range list {
		if c.Env.Cursors.Kill(id) {
			killed = append(killed, id)
		} else {
			notFound = append(notFound, id)
		}
	}
	appendIDs := func(key string, ids []int64) {
		c.Reply.StartArray(key)
		for i, id := range ids {
			c.Reply.AppendInt64(bson.Index(i), id)
		}
		c.Reply.End()
	}
	appendIDs("cursorsKilled", killed)
	appendIDs("cursorsNotFound", notFound)
	appendIDs("cursorsAlive", nil)
	appendIDs("cursorsUnknown", nil)
	return nil
}
