package command

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/dispatch"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/session"
)

func deleteCmd(c *Ctx) error {
	w, err := parseWriteCmd(c, "deletes", deleteStmtFields, "let", "stmtIds")
	if err != nil {
		return err
	}
	defer w.cancel()
	a := newArgs(c)
	var errs []writeError
	var rs *dispatch.RetryState
	n, stmts := 0, 0
	err = c.WriteTx(w.wc.durability(), func(tx *exec.Tx) error {
		n, stmts = 0, 0 // from scratch when retried (WriteTx)
		if rs, err = c.BeginRetryable(tx, len(w.stmts)); err != nil {
			return err
		}
		coll, err := catalog.Get(tx, c.DB, w.name)
		if err != nil {
			return err
		}
		errs, err = w.run(func(i int, st bson.Doc) error {
			stmts++
			if res, ok, err := rs.Executed(i); err != nil {
				return fatal(err)
			} else if ok {
				n += int(res.N)
				return nil
			}
			if rs != nil {
				if l, _ := st.Lookup("limit"); !l.Truthy() {
					return mongoerr.New(mongoerr.InvalidOptions, "Cannot use (or request) retryable writes with limit=0")
				}
			}
			sc := dispatch.BeginStatement(c)
			rs.Start(i)
			sc.C.Stmt = c.Stmt // the statement's copy of c writes it
			k, err := deleteOne(sc.C, a, tx, coll, st)
			sc.Stats.Writes().Ndeleted.Add(int64(k))
			sc.End("remove", w.name, st, err)
			n += k
			if err != nil || k == 0 {
				rs.Abandon()
				return err
			}
			return fatal(rs.Done(i, session.StmtResult{N: int32(k)}))
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
	c.Env.Stats.Delete.Add(int64(stmts))
	c.Env.Stats.DocsDeleted.Add(int64(n))
	c.Unacknowledged = w.wc.unacknowledged()
	c.Reply.AppendInt32("n", int32(n))
	rs.AppendRetried(c.Reply)
	appendWriteErrors(c, errs)
	return nil
}

// deleteOne runs one delete statement {q, limit, collation, hint}.
func deleteOne(c *Ctx, a args, tx *exec.Tx, coll *catalog.Collection, st bson.Doc) (int, error) {
	var q bson.Doc
	limit := int64(-1)
	var collation, hint bson.Value
	// The statement's shape was checked by checkStatements.
	it := st.Iter()
	for it.Next() {
		e := it.Element()
		switch e.Key {
		case "q":
			q = e.Value.Document()
		case "limit":
			limit, _ = dispatch.NumberArg(e.Value)
		case "collation":
			collation = e.Value
		case "hint":
			if coll != nil {
				if err := checkHint(c, coll.Name, e.Value); err != nil {
					return 0, err
				}
			}
			hint = e.Value
		}
	}
	if limit > 1 {
		return 0, mongoerr.New(mongoerr.FailedToParse, "The limit field in delete objects must be 0 or 1. Got %d", limit)
	}
	opts, err := parseQueryOptions(a, collation)
	if err != nil {
		return 0, err
	}
	opts.Scripts = scripts(c)
	if coll != nil && !given(collation) {
		if opts.Collation, err = exec.CollectionCollation(coll); err != nil {
			return 0, err
		}
	}
	where, err := exec.CompileWriteFilter(q, opts)
	if err != nil {
		return 0, err
	}
	if coll == nil {
		return 0, nil
	}
	if ts, err := exec.TimeseriesOfCollection(tx, coll); err != nil || ts != nil {
		if err != nil {
			return 0, err
		}
		return c.Env.DeleteMeasurements(c, tx, ts, q, &where, int(limit))
	}
	w, err := c.Writer(tx, coll)
	if err != nil {
		return 0, err
	}
	ms, err := c.Env.SelectDocs(c, tx, coll, w.Data, &where, hint, nil, int(limit))
	if err != nil {
		return 0, err
	}
	for _, m := range ms {
		// w.remove checks for killOp and maxTimeMS before each document.
		if err := w.Remove(m.Key, m.Doc); err != nil {
			return 0, err
		}
	}
	return len(ms), nil
}
