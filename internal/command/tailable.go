package command

// Tailable cursors (exec/tailable.go has the scan). find with tailable: true
// on a capped collection opens a cursor that stays open at the end of the
// data; its batches read current data, not the snapshot of the find (a
// tailable cursor keeps none), so each getMore sees what was inserted
// since. With awaitData: true a getMore that finds nothing waits — up to its
// maxTimeMS (drivers send maxAwaitTimeMS there; 1 second by default, as
// mongod) — for a commit that changes the collection's data tree (a kv tree
// watch, registered before each read so no commit slips between the read
// and the wait), then reads again (exec/batch.go). The wait ends early,
// with the command's error, when the command is killed, its client
// disconnects or the server shuts down (the command's context), and with
// CursorKilled when killCursors kills the cursor. It never polls.

import (
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/dispatch"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// tailOptions are find's tailable options.
type tailOptions struct {
	tailable, awaitData bool
}

// parseTailable reads tailable, awaitData and oplogReplay (accepted: a
// no-op since mongod 4.4, which seeks the oplog's ts range by itself, as
// Cairn does) and applies mongod's rules between them.
func parseTailable(c *Ctx, a args, spec *exec.FindSpec, singleBatch bool) (tailOptions, error) {
	var t tailOptions
	var err error
	if t.tailable, _, err = a.Boolean("tailable"); err != nil {
		return t, err
	}
	if t.awaitData, _, err = a.Boolean("awaitData"); err != nil {
		return t, err
	}
	if _, _, err = a.Boolean("oplogReplay"); err != nil {
		return t, err
	}
	if t.awaitData && !t.tailable {
		return t, mongoerr.New(mongoerr.FailedToParse, "Cannot set 'awaitData' without also setting 'tailable'")
	}
	if !t.tailable {
		return t, nil
	}
	if spec.SortDoc.Len() > 0 && (spec.Sort.Natural() != 1 || spec.SortDoc.Len() != 1) {
		return t, mongoerr.New(mongoerr.BadValue, "cannot use tailable option with a sort other than {$natural: 1}")
	}
	if singleBatch {
		return t, mongoerr.New(mongoerr.BadValue, "cannot use tailable option with the 'singleBatch' option")
	}
	if spec.Text != nil || spec.Near != nil {
		return t, mongoerr.New(mongoerr.BadValue, "error processing query: tailable cursors need a collection scan: $text and $near cannot be used")
	}
	if spec.Hint.Type != 0 && exec.NaturalHint(spec.Hint) == 0 && !(spec.Hint.Type == bson.TypeDocument && spec.Hint.Document().Len() == 0) {
		return t, mongoerr.New(mongoerr.BadValue, "error processing query: a tailable cursor scans the collection: it takes no index hint")
	}
	return t, nil
}

// findTailable answers a tailable find.
func findTailable(c *Ctx, spec *exec.FindSpec, t tailOptions, batchSize int64, batchSet bool) error {
	tx, coll, err := c.SnapshotCollection(spec.Coll)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	ns := c.DB + "." + spec.Coll
	scan := &exec.ScanSource{Env: &c.Env.Engine, Spec: spec, Skip: spec.Skip, Tailable: true}
	opt := batchOptions{batchSize: batchSize, firstBatch: true, empty: batchSet && batchSize == 0, tailable: true, awaitData: t.awaitData}
	if coll == nil {
		// No collection: an empty answer and no cursor, as mongod.
		return writeBatch(c, nil, &exec.SliceSource{}, ns, 0, opt, true)
	}
	if !coll.Capped {
		return mongoerr.New(mongoerr.BadValue, "error processing query: tailable cursor requested on non capped collection")
	}
	data, err := exec.DataTree(tx, coll)
	if err != nil {
		return err
	}
	opt.watch = coll.DataTree()
	// mongod keeps no tailable cursor on an empty collection (SERVER-13955).
	return writeBatch(c, nil, scan, ns, spec.Limit, opt, data.Len() == 0)
}

// awaitTime is a getMore's wait for an awaitData cursor (0: it does not
// wait), from its maxTimeMS. For other cursors mongod refuses maxTimeMS on
// getMore; Cairn applies it as the getMore's time limit (the Go driver's
// RunCommand adds it to every command under a client timeout), which the
// caller does.
func awaitTime(a args, cur *exec.Cursor) (time.Duration, error) {
	v, ok := a.Lookup("maxTimeMS")
	if !ok || v.Type == bson.TypeNull {
		if cur.AwaitData {
			return exec.DefaultAwaitTime, nil
		}
		return 0, nil
	}
	ms, err := dispatch.NumberArg(v)
	if err != nil || ms < 0 || ms > 2147483647 {
		return 0, mongoerr.New(mongoerr.BadValue, "%s value for maxTimeMS is out of range [0, 2147483647]", v.String())
	}
	if !cur.AwaitData {
		return 0, nil
	}
	return time.Duration(ms) * time.Millisecond, nil
}
