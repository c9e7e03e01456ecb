package command

import (
	"context"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
	"github.com/cairndb/cairn/internal/session"
)

// updateStmt is one parsed update statement.
type updateStmt struct {
	where  exec.WriteFilter
	hint   bson.Value
	upd    *query.Update
	sort   *query.Sort
	upsert bool
	multi  bool
}

// updateResult is the outcome of one statement.
type updateResult struct {
	matched, modified int
	upserted          bson.Value // zero if nothing was upserted
	// before/after are the documents of the last match (for findAndModify).
	before, after bson.Doc
	// score is the last match's $text score (for findAndModify's
	// {$meta: "textScore"} projection).
	score float64
}

func parseUpdateStmt(c *Ctx, a args, st bson.Doc) (*updateStmt, error) {
	s := &updateStmt{}
	var q bson.Doc
	var u, collation, hint bson.Value
	var arrayFilters []bson.Doc
	var constants bson.Doc
	// The statement's shape was checked by checkStatements.
	it := st.Iter()
	for it.Next() {
		e := it.Element()
		switch e.Key {
		case "q":
			q = e.Value.Document()
		case "u":
			u = e.Value
		case "upsert":
			s.upsert = e.Value.Truthy()
		case "multi":
			s.multi = e.Value.Truthy()
		case "collation":
			collation = e.Value
		case "arrayFilters":
			ait := e.Value.Document().Iter()
			for ait.Next() {
				if ait.Element().Value.Type != bson.TypeDocument {
					return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'update.updates.arrayFilters.%s' is the wrong type '%s', expected type 'object'", ait.Element().Key, ait.Element().Value.Type)
				}
				arrayFilters = append(arrayFilters, ait.Element().Value.Document())
			}
		case "hint":
			hint = e.Value
		case "c":
			constants = e.Value.Document()
		}
	}
	return s, s.compile(c, a, q, u, collation, hint, arrayFilters, constants)
}

// compile parses one statement; constants is its c (variables for an
// update pipeline, beside the command's let).
func (s *updateStmt) compile(c *Ctx, a args, q bson.Doc, u, collation, hint bson.Value, arrayFilters []bson.Doc, constants bson.Doc) error {
	name, _ := c.collectionArg()
	opts, err := c.queryOptionsFor(a, collation, name)
	if err != nil {
		return err
	}
	if constants != nil {
		if u.Type != bson.TypeArray {
			return mongoerr.New(mongoerr.ConstantsRequirePipelineUpdate, "Constant values may only be specified for pipeline updates")
		}
		var b bson.Builder
		it := opts.Let.Iter()
		for it.Next() {
			if _, shadowed := constants.Lookup(it.Element().Key); !shadowed {
				b.AppendElement(it.Element())
			}
		}
		ci := constants.Iter()
		for ci.Next() {
			b.AppendElement(ci.Element())
		}
		opts.Let = b.Finish()
	}
	if s.where, err = exec.CompileWriteFilter(q, opts); err != nil {
		return err
	}
	if s.upd, err = query.ParseUpdate(u, arrayFilters, opts); err != nil {
		return err
	}
	if s.multi && s.upd.IsReplacement() {
		return mongoerr.New(mongoerr.FailedToParse, "multi update is not supported for replacement-style update")
	}
	if hint.Type != 0 {
		coll, _ := c.collectionArg()
		if err := checkHint(c, coll, hint); err != nil {
			return err
		}
		s.hint = hint
	}
	return nil
}

// apply runs the statement in tx against coll (created on upsert if nil).
func (s *updateStmt) apply(c *Ctx, tx *exec.Tx, db, name string, coll *catalog.Collection) (updateResult, *catalog.Collection, error) {
	var res updateResult
	var ms []exec.Match
	var w *exec.CollWriter
	var err error
	if coll != nil {
		if w, err = c.writer(tx, coll); err != nil {
			return res, coll, err
		}
		limit := 1
		if s.multi {
			limit = 0
		}
		if ms, err = c.Env.SelectDocs(c, tx, coll, w.Data, &s.where, s.hint, s.sort, limit); err != nil {
			return res, coll, err
		}
	}
	for i := range ms {
		m := &ms[i]
		// Each document's update checks for killOp and maxTimeMS as it
		// goes (large operators) and before it starts: an interruption
		// fails the command, whose transaction then writes nothing.
		if err := c.Err(); err != nil {
			return res, coll, ctxErr(err)
		}
		if c.Env.state.updateHook != nil {
			c.Env.state.updateHook(c)
		}
		out, changed, err := s.upd.ApplyContext(c, nil, m.Doc, &m.Md, false)
		if err != nil {
			return res, coll, err
		}
		res.matched++
		res.before, res.after, res.score = m.Doc, out, m.Md.TextScore
		if !changed {
			continue
		}
		if len(out) > MaxBSONObjectSize {
			return res, coll, mongoerr.New(mongoerr.UpdateResultTooLarge, "Resulting document after update is larger than %d", MaxBSONObjectSize)
		}
		if err := checkStored(out); err != nil {
			return res, coll, err
		}
		write := w.Update // operators and pipelines: a $v: 2 diff in the oplog
		if s.upd.IsReplacement() {
			write = w.Replace
		}
		if err := write(m.Key, m.Doc, out); err != nil {
			return res, coll, err
		}
		res.modified++
	}
	if w != nil {
		coll = w.Coll // indexes may have become multikey
	}
	if f := writeFiguresOf(c); f != nil {
		f.NMatched.Add(int64(res.matched))
		f.NModified.Add(int64(res.modified))
	}
	if res.matched > 0 || !s.upsert {
		return res, coll, nil
	}
	doc, err := s.upsertDoc(c)
	if err != nil {
		return res, coll, err
	}
	if coll == nil {
		if coll, err = exec.CollectionForWrite(tx, db, name, true, c.Env.Oplog); err != nil {
			return res, coll, err
		}
		if w, err = c.writer(tx, coll); err != nil {
			return res, coll, err
		}
	}
	doc, id, err := w.Insert(doc)
	if err != nil {
		return res, coll, err
	}
	coll = w.Coll
	res.upserted = id
	res.after = doc
	if f := writeFiguresOf(c); f != nil {
		f.NUpserted.Add(1)
	}
	return res, coll, nil
}

// upsertDoc builds the document an upsert inserts: the equality fields of
// the filter, then the update applied as an insert (or the replacement with
// the filter's _id).
func (s *updateStmt) upsertDoc(ctx context.Context) (bson.Doc, error) {
	var b bson.Builder
	if err := s.where.Filter.UpsertSeed(&b); err != nil {
		return nil, err
	}
	seed := b.Finish()
	if s.upd.IsReplacement() {
		out, _, err := s.upd.ApplyContext(ctx, nil, seed, nil, true)
		if err != nil {
			return nil, err
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
	out, _, err := s.upd.ApplyContext(ctx, nil, seed, nil, true)
	return out, err
}

// checkStored validates a document produced by an update before it is
// stored (nesting depth).
func checkStored(d bson.Doc) error {
	if err := bson.Validate(d, bson.MaxDepth); err != nil {
		return mongoerr.New(mongoerr.Overflow, "Document exceeds maximum nesting depth of %d", bson.MaxDepth)
	}
	return nil
}

func update(c *Ctx) error {
	w, err := parseWriteCmd(c, "updates", updateStmtFields, "bypassDocumentValidation", "let", "stmtIds")
	if err != nil {
		return err
	}
	defer w.cancel()
	a := newArgs(c)
	stmts := w.stmts
	type upserted struct {
		index int
		id    bson.Value
	}
	var ups []upserted
	var errs []writeError
	var rs *retryState
	n, nModified := 0, 0
	err = c.writeTx(w.wc.durability(), func(tx *exec.Tx) error {
		n, nModified, ups = 0, 0, nil // from scratch when retried (writeTx)
		if rs, err = c.beginRetryable(tx, len(w.stmts)); err != nil {
			return err
		}
		coll, err := catalog.Get(tx, c.DB, w.name)
		if err != nil {
			return err
		}
		errs, err = w.run(func(i int, raw bson.Doc) (err error) {
			if res, ok, err := rs.executed(i); err != nil {
				return fatal(err)
			} else if ok {
				n += int(res.N)
				nModified += int(res.NModified)
				if res.Upserted.Type != 0 {
					ups = append(ups, upserted{i, copyValue(res.Upserted)})
				}
				return nil
			}
			sc := beginStatement(c)
			defer func() { sc.end("update", w.name, raw, err) }()
			st, err := parseUpdateStmt(c, a, raw)
			if err != nil {
				return err
			}
			if rs != nil && st.multi {
				return mongoerr.New(mongoerr.InvalidOptions, "Cannot use (or request) retryable writes with multi=true")
			}
			rs.start(i)
			var res updateResult
			if res, coll, err = st.apply(sc.c, tx, c.DB, w.name, coll); err != nil {
				rs.abandon()
				return err
			}
			n += res.matched
			nModified += res.modified
			rec := session.StmtResult{N: int32(res.matched), NModified: int32(res.modified)}
			if res.upserted.Type != 0 {
				n++
				rec.N++
				rec.Upserted = copyValue(res.upserted)
				ups = append(ups, upserted{i, rec.Upserted})
			}
			if res.modified == 0 && res.upserted.Type == 0 {
				rs.abandon() // wrote nothing: a retry runs it again, as mongod's
				return nil
			}
			return fatal(rs.done(i, rec))
		})
		if err != nil {
			return err
		}
		return rs.finish()
	})
	if err != nil {
		return err
	}
	if c.txn != nil && len(errs) > 0 {
		return errs[0].err // in a transaction a statement's error fails the command
	}
	c.Env.Stats.Update.Add(int64(len(stmts)))
	c.Env.Stats.DocsUpdated.Add(int64(n - len(ups)))
	c.Unacknowledged = w.wc.unacknowledged()
	r := c.Reply
	r.AppendInt32("n", int32(n))
	r.AppendInt32("nModified", int32(nModified))
	if len(ups) > 0 {
		r.StartArray("upserted")
		for i, u := range ups {
			r.StartDocument(bson.Index(i))
			r.AppendInt32("index", int32(u.index))
			r.AppendValue("_id", u.id)
			r.End()
		}
		r.End()
	}
	rs.appendRetried(r)
	appendWriteErrors(c, errs)
	return nil
}
