package command

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/kv"
)

// writeError is one entry of a write command's writeErrors.
type writeError struct {
	index int
	err   *mongoerr.Error
}

func appendWriteErrors(r *bson.Builder, errs []writeError) {
	if len(errs) == 0 {
		return
	}
	r.StartArray("writeErrors")
	for i, we := range errs {
		r.StartDocument(bson.Index(i))
		r.AppendInt32("index", int32(we.index))
		r.AppendInt32("code", we.err.Code)
		if we.err.Extra != nil {
			appendExtra(r, we.err.Extra)
		}
		r.AppendString("errmsg", we.err.Message)
		r.End()
	}
	r.End()
}

// writeBatchCheck validates the statement count of a write command.
func writeBatchCheck(cmd, field string, n int) error {
	if n == 0 {
		return mongoerr.New(mongoerr.InvalidLength, "Write batch sizes must be between 1 and %d. Got %d operations.", MaxWriteBatchSize, n)
	}
	if n > MaxWriteBatchSize {
		return mongoerr.New(mongoerr.InvalidLength, "Write batch sizes must be between 1 and %d. Got %d operations.", MaxWriteBatchSize, n)
	}
	return nil
}

// isFatal reports errors that end a write command as a whole (engine
// failures) rather than one statement.
func isFatal(err error) bool {
	_, ok := err.(*mongoerr.Error)
	return !ok
}

func insert(c *Ctx) error {
	a := newArgs(c)
	if err := a.check("documents", "ordered", "bypassDocumentValidation"); err != nil {
		return err
	}
	name, err := c.collectionArg()
	if err != nil {
		return err
	}
	if err := catalog.ValidateCollectionName(c.DB, name); err != nil {
		return err
	}
	wc, err := parseWriteConcern(c)
	if err != nil {
		return err
	}
	ordered := true
	if v, ok, err := a.boolean("ordered"); err != nil {
		return err
	} else if ok {
		ordered = v
	}
	docs, ok, err := c.docs("documents")
	if err != nil {
		return err
	}
	if !ok {
		return mongoerr.New(40414, "BSON field 'insert.documents' is missing but a required field")
	}
	if err := writeBatchCheck("insert", "documents", len(docs)); err != nil {
		return err
	}
	var errs []writeError
	n := 0
	err = c.writeTx(wc.durability(), func(tx *kv.Tx) error {
		coll, err := collectionForWrite(tx, c.DB, name, true)
		if err != nil {
			return err
		}
		w, err := c.writer(tx, coll)
		if err != nil {
			return err
		}
		for i, d := range docs {
			if _, _, err := w.insert(d); err != nil {
				if isFatal(err) {
					return err
				}
				errs = append(errs, writeError{index: i, err: mongoerr.As(err)})
				if ordered {
					break
				}
				continue
			}
			n++
		}
		return nil
	})
	if err != nil {
		return err
	}
	c.Env.Stats.Insert.Add(int64(n))
	c.Unacknowledged = wc.unacknowledged()
	c.Reply.AppendInt32("n", int32(n))
	appendWriteErrors(c.Reply, errs)
	return nil
}
