package command

import (
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/changestream"
	"github.com/cairndb/cairn/internal/dispatch"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// batchOptions bound one batch of a cursor reply (exec.BatchOptions has
// their meaning).
type batchOptions struct {
	batchSize           int64
	firstBatch, empty   bool
	tailable, awaitData bool
	watch               string
	await               time.Duration
}

// writeBatch fills one batch from src into the reply as
// cursor: {firstBatch|nextBatch: [...], id, ns}, keeping or closing the
// cursor (exec/batch.go). cur is nil for a new (first) batch; the cursor
// is then registered if documents remain. limit is the number of
// documents the cursor may still return (0 = unlimited); singleBatch
// closes after the first batch.
func writeBatch(c *Ctx, cur *exec.Cursor, src exec.Source, ns string, limit int64, opt batchOptions, singleBatch bool) error {
	r := c.Reply
	r.StartDocument("cursor")
	eo := exec.BatchOptions{BatchSize: opt.batchSize, FirstBatch: opt.firstBatch, Empty: opt.empty,
		Tailable: opt.tailable, AwaitData: opt.awaitData, Watch: opt.watch, Await: opt.await}
	b := &exec.Batch{Cur: cur, Src: src, Limit: limit, Opt: eo, Release: c.ReleaseSnapshot, Wakeups: &c.Env.Stats.AwaitWakeups}
	n, exhausted, err := c.Env.FillBatch(c, c.Env.Cursors, r, b)
	if err != nil {
		return err
	}
	if pb, ok := src.(postBatchResumer); ok {
		r.AppendDocument("postBatchResumeToken", pb.PostBatchResumeToken())
	}
	c.Env.Stats.DocsReturned.Add(n)
	dispatch.NoteReturned(c, n)
	var nc *exec.Cursor
	if cur == nil {
		nc = newCursor(c)
	}
	id, err := c.Env.Cursors.FinishBatch(b, n, exhausted || singleBatch, ns, nc, &c.Snap)
	if err != nil {
		return err
	}
	r.AppendInt64("id", id)
	r.AppendString("ns", ns)
	if at := dispatch.SnapReadTime(c, cur); at != 0 {
		r.AppendTimestamp("atClusterTime", at.T(), at.I())
	}
	r.End()
	return nil
}

// newCursor is the cursor a first batch opens, with what only the
// command knows: its owner, its origin's privileges, its session, its
// snapshot read's time and noCursorTimeout.
func newCursor(c *Ctx) *exec.Cursor {
	nc := &exec.Cursor{Owner: dispatch.CursorOwner(c), Origin: dispatch.CursorOrigin(c), AtClusterTime: uint64(c.SnapAt)}
	if lsid, ok := c.Body.Lookup("lsid"); ok && lsid.Type == bson.TypeDocument {
		if idv, ok := lsid.Document().Lookup("id"); ok && idv.Type == bson.TypeBinary {
			nc.Lsid = append([]byte(nil), idv.Data...)
		}
	}
	if v, ok := c.Body.Lookup("noCursorTimeout"); ok && v.Truthy() {
		nc.NoTimeout = true
	}
	return nc
}

func getMore(c *Ctx) error {
	a := newArgs(c)
	if err := a.Check("collection", "batchSize", "maxTimeMS", "term", "lastKnownCommittedOpTime", "comment"); err != nil {
		return err
	}
	first := a.First()
	if first.Type != bson.TypeInt64 {
		return a.WrongType("getMore", first, "long")
	}
	coll, ok, err := a.Str("collection")
	if err != nil {
		return err
	}
	if !ok {
		return mongoerr.New(mongoerr.IDLFailedToParse, "BSON field 'getMore.collection' is missing but a required field")
	}
	batchSize, _, err := a.Integer("batchSize")
	if err != nil {
		return err
	}
	if batchSize < 0 {
		return mongoerr.New(mongoerr.BadValue, "Batch size for getMore must be non-negative, but received: %d", batchSize)
	}
	id := first.Int64()
	cur := c.Env.Cursors.Get(id)
	if cur == nil {
		return mongoerr.New(mongoerr.CursorNotFound, "cursor id %d not found", id)
	}
	if err := dispatch.MayContinueCursor(c, cur); err != nil {
		return err
	}
	ns := c.DB + "." + coll
	if cur.NS != ns {
		return mongoerr.New(mongoerr.Unauthorized, "Requested getMore on namespace '%s', but cursor belongs to a different namespace %s", ns, cur.NS)
	}
	if !cur.Mu.TryLock() {
		return mongoerr.New(mongoerr.CursorInUse, "cursor id %d is already in use", id)
	}
	defer cur.Mu.Unlock()
	_, stream := cur.Src.(postBatchResumer)
	if err := c.FailGetMore(cur.NS); err != nil {
		if stream {
			err = changestream.ResumableLabel(err)
		}
		// As mongod, a getMore that fails after checking its cursor out
		// destroys the cursor.
		if c.Env.Cursors.Remove(id) != nil {
			cur.Close()
		}
		return err
	}
	await, err := awaitTime(a, cur)
	if err != nil {
		return err
	}
	if !cur.AwaitData {
		cancel, err := withMaxTime(c)
		if err != nil {
			return err
		}
		defer cancel()
	}
	c.Env.Stats.GetMore.Add(1)
	// The batch reads the snapshot the cursor was opened on.
	if cur.Snap != nil {
		if c.Txn == nil {
			c.ReleaseSnapshot()
		}
		if err = c.Snap.Resume(cur.Snap); err != nil {
			return err
		}
	}
	err = writeBatch(c, cur, cur.Src, cur.NS, cur.Limit, batchOptions{batchSize: batchSize, await: await}, false)
	if err != nil && stream {
		err = changestream.ResumableLabel(err)
	}
	return err
}

func killCursors(c *Ctx) error {
	a := newArgs(c)
	if err := a.Check("cursors"); err != nil {
		return err
	}
	coll, err := c.CollectionArg()
	if err != nil {
		return err
	}
	ids, ok, err := a.Array("cursors")
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
		if cur := c.Env.Cursors.Get(id); cur != nil && !dispatch.MayKillCursor(c.Env, c.Conn, cur) {
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
