package exec

// Update and findAndModify statements, run in the write transaction their
// command gives: the documents are selected by the planner (SelectDocs),
// changed through the command's collection writer (which maintains the
// indexes, the validator and the oplog), and an upsert that matched
// nothing inserts the document its filter and update describe.

import (
	"context"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
)

// WriteCmd is what a write statement needs of the command running it: its
// context (killOp, maxTimeMS), its collection writers (which honour
// bypassDocumentValidation and add to its write figures) and those
// figures (nil: none kept).
type WriteCmd interface {
	context.Context
	Writer(tx *Tx, coll *catalog.Collection) (*CollWriter, error)
	WriteFigures() *WriteFigures
}

// UpdateStmt is one parsed update statement.
type UpdateStmt struct {
	Where WriteFilter
	Hint  bson.Value
	Upd   *query.Update
	Sort  *query.Sort
	// Upsert inserts a document when none matches; Multi updates every
	// match (else the first).
	Upsert, Multi bool
	// Hook, when set (by tests), runs before each document is updated.
	Hook func()
}

// UpdateResult is the outcome of one statement.
type UpdateResult struct {
	Matched, Modified int
	// Upserted is the inserted document's _id (zero if nothing was
	// upserted).
	Upserted bson.Value
	// Before and After are the documents of the last match (for
	// findAndModify).
	Before, After bson.Doc
	// Score is the last match's $text score (for findAndModify's
	// {$meta: "textScore"} projection).
	Score float64
}

// ApplyUpdate runs s in tx against db.name, whose catalog entry is coll
// (nil: none; created on upsert), and returns the entry as it is after the
// statement (indexes may have become multikey).
func (e *Engine) ApplyUpdate(c WriteCmd, tx *Tx, db, name string, coll *catalog.Collection, s *UpdateStmt) (UpdateResult, *catalog.Collection, error) {
	var res UpdateResult
	var ms []Match
	var w *CollWriter
	var err error
	if coll != nil {
		if w, err = c.Writer(tx, coll); err != nil {
			return res, coll, err
		}
		limit := 1
		if s.Multi {
			limit = 0
		}
		if ms, err = e.SelectDocs(c, tx, coll, w.Data, &s.Where, s.Hint, s.Sort, limit); err != nil {
			return res, coll, err
		}
	}
	for i := range ms {
		m := &ms[i]
		// Each document's update checks for killOp and maxTimeMS as it
		// goes (large operators) and before it starts: an interruption
		// fails the command, whose transaction then writes nothing.
		if err := c.Err(); err != nil {
			return res, coll, mongoerr.FromContext(err)
		}
		if s.Hook != nil {
			s.Hook()
		}
		out, changed, err := s.Upd.ApplyContext(c, nil, m.Doc, &m.Md, false)
		if err != nil {
			return res, coll, err
		}
		res.Matched++
		res.Before, res.After, res.Score = m.Doc, out, m.Md.TextScore
		if !changed {
			continue
		}
		if len(out) > MaxBSONObjectSize {
			return res, coll, mongoerr.New(mongoerr.UpdateResultTooLarge, "Resulting document after update is larger than %d", MaxBSONObjectSize)
		}
		if err := bson.Validate(out, bson.MaxDepth); err != nil {
			return res, coll, mongoerr.New(mongoerr.Overflow, "Document exceeds maximum nesting depth of %d", bson.MaxDepth)
		}
		write := w.Update // operators and pipelines: a $v: 2 diff in the oplog
		if s.Upd.IsReplacement() {
			write = w.Replace
		}
		if err := write(m.Key, m.Doc, out); err != nil {
			return res, coll, err
		}
		res.Modified++
	}
	if w != nil {
		coll = w.Coll
	}
	f := c.WriteFigures()
	if f != nil {
		f.NMatched.Add(int64(res.Matched))
		f.NModified.Add(int64(res.Modified))
	}
	if res.Matched > 0 || !s.Upsert {
		return res, coll, nil
	}
	doc, err := s.upsertDoc(c)
	if err != nil {
		return res, coll, err
	}
	if coll == nil {
		if coll, err = CollectionForWrite(tx, db, name, true, e.Oplog); err != nil {
			return res, coll, err
		}
		if w, err = c.Writer(tx, coll); err != nil {
			return res, coll, err
		}
	}
	doc, id, err := w.Insert(doc)
	if err != nil {
		return res, coll, err
	}
	coll = w.Coll
	res.Upserted = id
	res.After = doc
	if f != nil {
		f.NUpserted.Add(1)
	}
	return res, coll, nil
}

// upsertDoc builds the document an upsert inserts: the equality fields of
// the filter, then the update applied as an insert (or the replacement with
// the filter's _id).
func (s *UpdateStmt) upsertDoc(ctx context.Context) (bson.Doc, error) {
	var b bson.Builder
	if err := s.Where.Filter.UpsertSeed(&b); err != nil {
		return nil, err
	}
	seed := b.Finish()
	out, _, err := s.Upd.ApplyContext(ctx, nil, seed, nil, true)
	if err != nil || !s.Upd.IsReplacement() {
		return out, err
	}
	if _, ok := out.Lookup("_id"); !ok {
		if id, ok := seed.Lookup("_id"); ok {
			var nb bson.Builder
			nb.AppendValue("_id", id)
			it := out.Iter()
			for it.Next() {
				nb.AppendElement(it.Element())
			}
			out = nb.Finish()
		}
	}
	return out, nil
}

// FindAndModify runs a findAndModify of db.name in tx: it removes
// (remove) or updates (s.Upd) the first document s selects, and returns
// the outcome and the document it answers (the new one with returnNew,
// else the old one; nil: none).
func (e *Engine) FindAndModify(c WriteCmd, tx *Tx, db, name string, remove, returnNew bool, s *UpdateStmt) (UpdateResult, bson.Doc, error) {
	var res UpdateResult
	coll, err := catalog.Get(tx, db, name)
	if err != nil {
		return res, nil, err
	}
	if !remove {
		res, _, err = e.ApplyUpdate(c, tx, db, name, coll, s)
		if err != nil || returnNew {
			return res, res.After, err
		}
		return res, res.Before, nil
	}
	if coll == nil {
		return res, nil, nil
	}
	w, err := c.Writer(tx, coll)
	if err != nil {
		return res, nil, err
	}
	ms, err := e.SelectDocs(c, tx, coll, w.Data, &s.Where, s.Hint, s.Sort, 1)
	if err != nil || len(ms) == 0 {
		return res, nil, err
	}
	if err := w.Remove(ms[0].Key, ms[0].Doc); err != nil {
		return res, nil, err
	}
	if f := c.WriteFigures(); f != nil {
		f.Ndeleted.Add(1)
	}
	res.Matched = 1
	res.Score = ms[0].Md.TextScore
	return res, ms[0].Doc, nil
}
