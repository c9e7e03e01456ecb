package exec

// Writes to capped collections (catalog/capped.go describes their layout).
// An insert takes the next record id from the collection's figures (for
// local.oplog.rs, the entry's ts), writes the document and its index
// entries, and, when the collection is then over its size or its maximum
// document count, removes the oldest documents — the data tree's first
// keys — in the same transaction, through Remove so that their index
// entries go too. kv has one writer at a time, so record ids are given in
// commit order and the capping of concurrent inserts never interleaves.
// As mongod, the document just inserted is never removed by its own
// capping, and an update may change a document's size (mongod 6.0+): the
// collection is then brought back under its size by the next insert.

import (
	"fmt"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// cappedFigures reads the figures once per writer.
func (w *CollWriter) cappedFigures() (*catalog.CappedFigures, error) {
	if w.capped == nil {
		f, err := catalog.ReadCappedFigures(w.tx, w.Coll)
		if err != nil {
			return nil, err
		}
		w.capped = f
	}
	return w.capped, nil
}

// noteCappedSize adds delta to the capped collection's data size.
func (w *CollWriter) noteCappedSize(delta int64) error {
	f, err := w.cappedFigures()
	if err != nil {
		return err
	}
	if !f.Tracked() {
		return nil
	}
	f.Size += delta
	return f.Write()
}

// insertCapped is Insert for a capped collection.
func (w *CollWriter) insertCapped(doc bson.Doc) (bson.Doc, bson.Value, error) {
	f, err := w.cappedFigures()
	if err != nil {
		return nil, bson.Value{}, err
	}
	var id bson.Value
	var rid uint64
	if w.Coll.IsOplog() {
		if doc, rid, err = prepareOplogInsert(doc); err != nil {
			return nil, bson.Value{}, err
		}
		id, _ = doc.Lookup("_id")
	} else {
		if doc, id, err = PrepareInsert(doc); err != nil {
			return nil, bson.Value{}, err
		}
		rid = f.Next
	}
	if f.Tracked() && w.Coll.CappedSize > 0 && int64(len(doc)) > w.Coll.CappedSize {
		return nil, bson.Value{}, mongoerr.New(mongoerr.BadValue, "object to insert exceeds cappedMaxSize")
	}
	w.key = catalog.AppendRecordKey(w.key[:0], rid)
	if old, err := w.Data.Get(w.key); err != nil {
		return nil, bson.Value{}, fmt.Errorf("insert into %s: %w", w.Coll.Namespace(), err)
	} else if old != nil {
		ts, _ := doc.Lookup("ts")
		return nil, bson.Value{}, mongoerr.New(mongoerr.DuplicateKey, "E11000 duplicate key error collection: %s: an entry with ts %s exists", w.Coll.Namespace(), ts.String())
	}
	if err := w.validate(nil, doc); err != nil {
		return nil, bson.Value{}, err
	}
	added, _, err := w.applyIndexes(nil, doc, w.key)
	if err != nil {
		return nil, bson.Value{}, err
	}
	if err := w.Data.Put(w.key, doc); err != nil {
		return nil, bson.Value{}, fmt.Errorf("insert into %s: %w", w.Coll.Namespace(), err)
	}
	if w.Figs != nil {
		w.Figs.keysInserted.Add(int64(added))
	}
	if f.Tracked() {
		f.Next = max(f.Next, rid+1)
		f.Size += int64(len(doc))
		if err := w.capTo(f, w.key); err != nil {
			return nil, bson.Value{}, err
		}
		if err := f.Write(); err != nil {
			return nil, bson.Value{}, err
		}
	}
	return doc, id, nil
}

// capTo removes the oldest documents while the collection is over its size
// or its maximum count, never the one just inserted (under key).
func (w *CollWriter) capTo(f *catalog.CappedFigures, inserted []byte) error {
	over := func() bool {
		return (w.Coll.CappedSize > 0 && f.Size > w.Coll.CappedSize) ||
			(w.Coll.CappedMax > 0 && w.Data.Len() > w.Coll.CappedMax)
	}
	for over() {
		k, v := w.Data.Cursor().First()
		if k == nil || string(k) == string(inserted) {
			return nil
		}
		key := append([]byte(nil), k...)
		old := append(bson.Doc(nil), v...)
		// Remove updates the figures' size (noteCappedSize).
		if err := w.Remove(key, old); err != nil {
			return fmt.Errorf("capping %s: %w", w.Coll.Namespace(), err)
		}
	}
	return nil
}

// prepareOplogInsert checks a document inserted into local.oplog.rs: its
// record id is its ts, which must be a Timestamp (mongod's
// record_id_helpers); it gets no _id.
func prepareOplogInsert(doc bson.Doc) (bson.Doc, uint64, error) {
	if len(doc) > MaxBSONObjectSize {
		return nil, 0, mongoerr.New(mongoerr.BadValue, "object to insert too large. size in bytes: %d, max size: %d", len(doc), MaxBSONObjectSize)
	}
	if err := bson.Validate(doc, bson.MaxDepth); err != nil {
		return nil, 0, mongoerr.New(mongoerr.InvalidBSON, "invalid document: %v", err)
	}
	ts, ok := doc.Lookup("ts")
	if !ok {
		return nil, 0, mongoerr.New(mongoerr.BadValue, "no ts field")
	}
	if ts.Type != bson.TypeTimestamp {
		return nil, 0, mongoerr.New(mongoerr.BadValue, "ts must be a Timestamp")
	}
	t, i := ts.Timestamp()
	if t > 1<<31-1 {
		return nil, 0, mongoerr.New(mongoerr.BadValue, "ts secs too high")
	}
	if i > 1<<31-1 {
		return nil, 0, mongoerr.New(mongoerr.BadValue, "ts inc too high")
	}
	rid := uint64(t)<<32 | uint64(i)
	if rid == 0 {
		return nil, 0, mongoerr.New(mongoerr.BadValue, "ts too low")
	}
	return doc, rid, nil
}
