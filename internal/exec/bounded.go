package exec

import (
	"context"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/kv"
)

// AppendBounded inserts doc into db.coll (creating the collection) and
// removes its oldest documents (the first keys: ObjectIds in insertion
// order) while it holds more than max bytes, in one write transaction
// committed lazily: the database profiler's system.profile (opctx). size
// is the bytes the collection holds, -1 when not counted yet (it is then
// read once); the new size is returned.
func (e *Engine) AppendBounded(db, coll string, doc bson.Doc, size, max int64) (int64, error) {
	tx, err := e.KV.BeginWrite(context.Background())
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	c, err := CollectionForWrite(tx, db, coll, true, nil)
	if err != nil {
		return 0, err
	}
	w, err := OpenWriter(tx, c)
	if err != nil {
		return 0, err
	}
	if size < 0 {
		size = 0
		cur := w.Data.Cursor()
		for k, v := cur.First(); k != nil; k, v = cur.Next() {
			size += int64(len(v))
		}
		if err := cur.Err(); err != nil {
			return 0, err
		}
	}
	stored, _, err := w.Insert(doc)
	if err != nil {
		return 0, err
	}
	size += int64(len(stored))
	for size > max {
		cur := w.Data.Cursor()
		k, v := cur.First()
		if k == nil {
			break
		}
		size -= int64(len(v))
		old := bson.Doc(append([]byte(nil), v...))
		if err := w.Remove(append([]byte(nil), k...), old); err != nil {
			return 0, err
		}
	}
	if err := tx.CommitWith(kv.Lazy); err != nil {
		return 0, err
	}
	return size, nil
}
