package command

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/dispatch"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
	"github.com/cairndb/cairn/internal/session"
)

func parseUpdateStmt(c *Ctx, a args, st bson.Doc) (*exec.UpdateStmt, error) {
	s := &exec.UpdateStmt{}
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
			s.Upsert = e.Value.Truthy()
		case "multi":
			s.Multi = e.Value.Truthy()
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
	return s, compileUpdate(c, a, s, q, u, collation, hint, arrayFilters, constants)
}

// compileUpdate parses one statement into s; constants is its c
// (variables for an update pipeline, beside the command's let).
func compileUpdate(c *Ctx, a args, s *exec.UpdateStmt, q bson.Doc, u, collation, hint bson.Value, arrayFilters []bson.Doc, constants bson.Doc) error {
	opts, err := stmtOptions(c, a, u, collation, constants)
	if err != nil {
		return err
	}
	if s.Where, err = exec.CompileWriteFilter(q, opts); err != nil {
		return err
	}
	if s.Upd, err = query.ParseUpdate(u, arrayFilters, opts); err != nil {
		return err
	}
	if s.Multi && s.Upd.IsReplacement() {
		return mongoerr.New(mongoerr.FailedToParse, "multi update is not supported for replacement-style update")
	}
	if hint.Type != 0 {
		coll, _ := c.CollectionArg()
		if err := checkHint(c, coll, hint); err != nil {
			return err
		}
		s.Hint = hint
	}
	return nil
}

// checkUpdatePipelines parses the pipeline of every statement whose u is
// one before any statement runs: as in mongod, which parses update
// pipelines with the command, an invalid one fails the command (ok: 0)
// rather than being a statement's write error.
func checkUpdatePipelines(c *Ctx, a args, stmts []bson.Doc) error {
	for _, st := range stmts {
		u, _ := st.Lookup("u")
		if u.Type != bson.TypeArray {
			continue
		}
		collation, _ := st.Lookup("collation")
		var constants bson.Doc
		if cv, ok := st.Lookup("c"); ok && cv.Type == bson.TypeDocument {
			constants = cv.Document()
		}
		opts, err := stmtOptions(c, a, u, collation, constants)
		if err != nil {
			continue // the statement's own error, reported when it runs
		}
		if _, err := query.ParseUpdate(u, nil, opts); err != nil {
			return err
		}
	}
	return nil
}

// stmtOptions are one update statement's query options: its collation and
// the command's let with the statement's constants c (variables for an
// update pipeline).
func stmtOptions(c *Ctx, a args, u, collation bson.Value, constants bson.Doc) (*query.Options, error) {
	name, _ := c.CollectionArg()
	opts, err := queryOptionsFor(c, a, collation, name)
	if err != nil {
		return nil, err
	}
	if constants != nil {
		if u.Type != bson.TypeArray {
			return nil, mongoerr.New(mongoerr.ConstantsRequirePipelineUpdate, "Constant values may only be specified for pipeline updates")
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
	return opts, nil
}

func update(c *Ctx) error {
	w, err := parseWriteCmd(c, "updates", updateStmtFields, "bypassDocumentValidation", "let", "stmtIds")
	if err != nil {
		return err
	}
	defer w.cancel()
	a := newArgs(c)
	stmts := w.stmts
	if err := checkUpdatePipelines(c, a, stmts); err != nil {
		return err
	}
	type upserted struct {
		index int
		id    bson.Value
	}
	var ups []upserted
	var errs []writeError
	var rs *dispatch.RetryState
	n, nModified := 0, 0
	err = c.WriteTx(w.wc.durability(), func(tx *exec.Tx) error {
		n, nModified, ups = 0, 0, nil // from scratch when retried (WriteTx)
		if rs, err = c.BeginRetryable(tx, len(w.stmts)); err != nil {
			return err
		}
		coll, err := catalog.Get(tx, c.DB, w.name)
		if err != nil {
			return err
		}
		errs, err = w.run(func(i int, raw bson.Doc) (err error) {
			if res, ok, err := rs.Executed(i); err != nil {
				return fatal(err)
			} else if ok {
				n += int(res.N)
				nModified += int(res.NModified)
				if res.Upserted.Type != 0 {
					ups = append(ups, upserted{i, copyValue(res.Upserted)})
				}
				return nil
			}
			sc := dispatch.BeginStatement(c)
			defer func() { sc.End("update", w.name, raw, err) }()
			st, err := parseUpdateStmt(c, a, raw)
			if err != nil {
				return err
			}
			if rs != nil && st.Multi {
				return mongoerr.New(mongoerr.InvalidOptions, "Cannot use (or request) retryable writes with multi=true")
			}
			rs.Start(i)
			sc.C.Stmt = c.Stmt // the statement's copy of c writes it
			if h := c.Env.State.UpdateHook; h != nil {
				st.Hook = func() { h(sc.C) }
			}
			var res exec.UpdateResult
			if ts, err := exec.TimeseriesOfCollection(tx, coll); err != nil {
				return err
			} else if ts != nil {
				res, err = timeseriesUpdate(sc.C, tx, ts, raw, st)
				if err != nil {
					rs.Abandon()
					return err
				}
			} else if res, coll, err = c.Env.ApplyUpdate(sc.C, tx, c.DB, w.name, coll, st); err != nil {
				rs.Abandon()
				return err
			}
			n += res.Matched
			nModified += res.Modified
			rec := session.StmtResult{N: int32(res.Matched), NModified: int32(res.Modified)}
			if res.Upserted.Type != 0 {
				n++
				rec.N++
				rec.Upserted = copyValue(res.Upserted)
				ups = append(ups, upserted{i, rec.Upserted})
			}
			if res.Modified == 0 && res.Upserted.Type == 0 {
				rs.Abandon() // wrote nothing: a retry runs it again, as mongod's
				return nil
			}
			return fatal(rs.Done(i, rec))
		})
		if err != nil {
			return err
		}
		return rs.Finish()
	})
	if err != nil {
		return err
	}
	if c.Txn != nil && len(errs) > 0 {
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
	rs.AppendRetried(r)
	appendWriteErrors(c, errs)
	return nil
}
