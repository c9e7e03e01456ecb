package exec

import (
	"fmt"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/index"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/oplog"
	"github.com/cairndb/cairn/internal/repl"
	"github.com/cairndb/cairn/kv"
)

// CollWriter applies document writes to one collection inside a write
// transaction. Every write path (insert, update, delete, findAndModify,
// upserts, $out and $merge) goes through it, so that secondary indexes stay
// in step with the documents.
type CollWriter struct {
	tx      *kv.Tx
	Coll    *catalog.Collection
	Data    *kv.Tree
	Indexes []*index.Tree
	// pos maps indexes[i] to its position in coll.Indexes.
	pos []int
	key []byte
	// capped holds a capped collection's figures once read (capped.go).
	capped *catalog.CappedFigures
	// bypass skips document validation (bypassDocumentValidation).
	Bypass bool
	// figs receives the index keys written and removed (slow-operation
	// lines); nil when no command is listening.
	Figs *WriteFigures
	// c, if set, is the command writing: its context interrupts the
	// write, and its log receives the warning of a document failing a
	// validator whose validationAction is "warn".
	C WriteOwner
	// Oplog, when set (replica-set mode), receives an entry for each
	// write, in the write's transaction (nil: nothing is logged, at the
	// cost of one comparison per write).
	Oplog *oplog.Log
}

// WriteOwner is the command a writer writes for (the command layer's Ctx).
type WriteOwner interface {
	Err() error
	WarnInvalid(ns string, doc, extra bson.Doc)
}

// OpenWriter prepares writes to coll in tx.
func OpenWriter(tx *kv.Tx, coll *catalog.Collection) (*CollWriter, error) {
	if _, _, isView := coll.View(); isView {
		return nil, ErrOnView(coll.Namespace())
	}
	t, err := DataTree(tx, coll)
	if err != nil {
		return nil, err
	}
	w := &CollWriter{tx: tx, Coll: coll, Data: t}
	for i, ix := range coll.Indexes {
		if ix.IsID() && !coll.Capped {
			continue // the data tree is the _id index
		}
		spec, err := index.ParseCached(ix.Spec)
		if err != nil {
			return nil, fmt.Errorf("index %s of %s: %w", ix.Name, coll.Namespace(), err)
		}
		if spec.IsID() && !spec.Unique {
			// A capped collection's _id index tree: unique, as every
			// _id index (catalog/capped.go).
			u := *spec
			u.Unique = true
			spec = &u
		}
		var x *index.Tree
		if ix.Ready {
			x, err = index.Open(tx, coll.IndexTree(ix.Name), coll.Namespace(), spec)
		} else {
			// Being built: record the changes for the build (indexbuild.go).
			x, err = index.OpenBuilding(tx, coll.SideTree(ix.Name), coll.Namespace(), spec)
		}
		if err != nil {
			return nil, err
		}
		w.Indexes = append(w.Indexes, x)
		w.pos = append(w.pos, i)
	}
	return w, nil
}

// interrupted answers Interrupted (11601) or MaxTimeMSExpired (50) once
// the writing command has been killed or has run out of time; writers
// check it before each document and before writing its index entries, so
// that a long multi-document write stops (and, failing its command, is
// rolled back). Writers without a command (TTL) are not interrupted.
func (w *CollWriter) interrupted() error {
	if w.C == nil {
		return nil
	}
	if err := w.C.Err(); err != nil {
		return mongoerr.FromContext(err)
	}
	return nil
}

// markMultikey records in the catalog that index i became multikey.
func (w *CollWriter) markMultikey(i int, multikey bool) error {
	p := w.pos[i]
	if !multikey || w.Coll.Indexes[p].Multikey {
		return nil
	}
	c := *w.Coll
	c.Indexes = append([]catalog.Index(nil), w.Coll.Indexes...)
	c.Indexes[p].Multikey = true
	if err := catalog.Put(w.tx, &c); err != nil {
		return err
	}
	w.Coll = &c
	return nil
}

// noteNumTypes records in the catalog the numeric types doc adds to
// index i's key fields (internal/index/numtypes.go): once per new type,
// so almost every write only looks.
func (w *CollWriter) noteNumTypes(i int, doc bson.Doc) error {
	p := w.pos[i]
	cur := w.Coll.Indexes[p].NumTypes
	if cur == nil || index.NumTypesSaturated(cur) {
		return nil
	}
	spec := w.Indexes[i].Spec
	if !spec.Applies(doc) {
		return nil
	}
	var scratch [8]byte
	grown := append(scratch[:0], cur...)
	if !spec.AddNumTypes(doc, grown) {
		return nil
	}
	c := *w.Coll
	c.Indexes = append([]catalog.Index(nil), w.Coll.Indexes...)
	c.Indexes[p].NumTypes = append([]byte(nil), grown...)
	if err := catalog.Put(w.tx, &c); err != nil {
		return err
	}
	w.Coll = &c
	return nil
}

// mergeNumTypes is the union of two indexes' numeric type sets (nil:
// untracked wins, as the index cannot be trusted for types).
func mergeNumTypes(a, b []byte) []byte {
	if a == nil || b == nil || len(a) != len(b) {
		return nil
	}
	out := append([]byte(nil), a...)
	for i, t := range b {
		out[i] |= t
	}
	return out
}

// Insert validates doc as an insert does (size, nesting, _id rules; _id
// generated and moved first), stores it and returns the stored document
// and its _id. A duplicate _id is DuplicateKey.
func (w *CollWriter) Insert(doc bson.Doc) (bson.Doc, bson.Value, error) {
	if err := w.interrupted(); err != nil {
		return nil, bson.Value{}, err
	}
	if w.Coll.Capped {
		return w.insertCapped(doc)
	}
	doc, id, err := PrepareInsert(doc)
	if err != nil {
		return nil, bson.Value{}, err
	}
	w.key = DocKey(w.key[:0], id)
	old, err := w.Data.Get(w.key)
	if err != nil {
		return nil, bson.Value{}, fmt.Errorf("insert into %s: %w", w.Coll.Namespace(), err)
	}
	if old != nil {
		return nil, bson.Value{}, DuplicateKey(w.Coll.Namespace(), id)
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
		w.Figs.keysInserted.Add(int64(added) + 1) // and the _id index's key
	}
	if w.Oplog != nil {
		if err := w.Oplog.Insert(w.tx, w.Coll, doc, id, w.stmt()); err != nil {
			return nil, bson.Value{}, err
		}
	}
	return doc, id, nil
}

// stmt returns the retryable statement the owner is writing, if any.
func (w *CollWriter) stmt() *repl.Stmt {
	if sw, ok := w.C.(repl.StmtWriter); ok {
		return sw.WriteStmt()
	}
	return nil
}

// Replace stores updated (same _id) in place of old under key: a
// replacement (a replacement-style update, $merge's replace), logged as
// the whole new document.
func (w *CollWriter) Replace(key []byte, old, updated bson.Doc) error {
	return w.replace(key, old, updated, false)
}

// Update stores updated (same _id) in place of old under key: an update
// with operators or a pipeline, logged as the $v: 2 diff of old into
// updated.
func (w *CollWriter) Update(key []byte, old, updated bson.Doc) error {
	return w.replace(key, old, updated, true)
}

func (w *CollWriter) replace(key []byte, old, updated bson.Doc, diff bool) error {
	if err := w.interrupted(); err != nil {
		return err
	}
	if err := w.validate(old, updated); err != nil {
		return err
	}
	added, removed, err := w.applyIndexes(old, updated, key)
	if err != nil {
		return err
	}
	// Logged once every check has passed, and before the data tree
	// changes: old may be a view of the page the Put rewrites.
	if w.Oplog != nil {
		if diff {
			err = w.Oplog.Update(w.tx, w.Coll, old, updated, w.stmt())
		} else {
			err = w.Oplog.Replace(w.tx, w.Coll, old, updated, w.stmt())
		}
		if err != nil {
			return err
		}
	}
	if err := w.Data.Put(key, updated); err != nil {
		return fmt.Errorf("update in %s: %w", w.Coll.Namespace(), err)
	}
	if w.Coll.Capped {
		if err := w.noteCappedSize(int64(len(updated)) - int64(len(old))); err != nil {
			return err
		}
	}
	if w.Figs != nil {
		w.Figs.keysInserted.Add(int64(added))
		w.Figs.keysDeleted.Add(int64(removed))
	}
	return nil
}

// Remove deletes the document old stored under key.
func (w *CollWriter) Remove(key []byte, old bson.Doc) error {
	if err := w.interrupted(); err != nil {
		return err
	}
	_, removed, err := w.applyIndexes(old, nil, key)
	if err != nil {
		return err
	}
	if w.Oplog != nil { // before the delete: old may be a view of its page
		id, _ := old.Lookup("_id")
		if err := w.Oplog.Delete(w.tx, w.Coll, old, id, w.stmt()); err != nil {
			return err
		}
	}
	if _, err := w.Data.Delete(key); err != nil {
		return fmt.Errorf("delete from %s: %w", w.Coll.Namespace(), err)
	}
	if w.Coll.Capped {
		if err := w.noteCappedSize(-int64(len(old))); err != nil {
			return err
		}
	}
	if w.Figs != nil {
		if !w.Coll.Capped {
			removed++ // and the _id index's key (the data tree's)
		}
		w.Figs.keysDeleted.Add(int64(removed))
	}
	return nil
}

// applyIndexes moves every index from old to updated (nil for an insert or
// a delete) and returns the number of entries added and removed. All
// changes are computed and checked first, so a write refused by one index
// (duplicate key, parallel arrays) changes none.
func (w *CollWriter) applyIndexes(old, updated bson.Doc, key []byte) (added, removed int, err error) {
	if len(w.Indexes) == 0 {
		return 0, 0, nil
	}
	changes := make([]*index.Change, len(w.Indexes))
	for i, x := range w.Indexes {
		ch, err := x.Prepare(old, updated, key)
		if err != nil {
			return 0, 0, err
		}
		changes[i] = ch
	}
	// Computing the entries of a large array can take a while: look
	// again before writing any.
	if err := w.interrupted(); err != nil {
		return 0, 0, err
	}
	for i, ch := range changes {
		if err := ch.Apply(); err != nil {
			return 0, 0, err
		}
		if err := w.markMultikey(i, ch.Multikey); err != nil {
			return 0, 0, err
		}
		if updated != nil {
			if err := w.noteNumTypes(i, updated); err != nil {
				return 0, 0, err
			}
		}
		a, r := ch.Counts()
		added += a
		removed += r
	}
	return added, removed, nil
}
