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

func findAndModify(c *Ctx) error {
	a := newArgs(c)
	if err := a.Check("query", "sort", "remove", "update", "new", "fields", "upsert", "bypassDocumentValidation",
		"collation", "arrayFilters", "hint", "let"); err != nil {
		return err
	}
	name, err := c.CollectionArg()
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
	cancel, err := withMaxTime(c)
	if err != nil {
		return err
	}
	defer cancel()
	remove, _, err := a.Boolean("remove")
	if err != nil {
		return err
	}
	returnNew, _, err := a.Boolean("new")
	if err != nil {
		return err
	}
	upsert, _, err := a.Boolean("upsert")
	if err != nil {
		return err
	}
	u, hasUpdate := a.Lookup("update")
	if remove && hasUpdate {
		return mongoerr.New(mongoerr.FailedToParse, "Cannot specify both an update and remove=true")
	}
	if !remove && !hasUpdate {
		return mongoerr.New(mongoerr.FailedToParse, "Either an update or remove=true must be specified")
	}
	if remove && upsert {
		return mongoerr.New(mongoerr.FailedToParse, "Cannot specify both upsert=true and remove=true ")
	}
	if remove && returnNew {
		return mongoerr.New(mongoerr.FailedToParse, "Cannot specify both new=true and remove=true; 'remove' always returns the deleted document")
	}
	if hasUpdate && u.Type != bson.TypeDocument && u.Type != bson.TypeArray {
		return mongoerr.New(mongoerr.FailedToParse, "Update argument must be either an object or an array")
	}
	collation, _ := c.Body.Lookup("collation")
	opts, err := queryOptionsFor(c, a, collation, name)
	if err != nil {
		return err
	}
	q, _, err := a.Doc("query")
	if err != nil {
		return err
	}
	st := &exec.UpdateStmt{Upsert: upsert}
	if st.Where, err = exec.CompileWriteFilter(orEmptyDoc(q), opts); err != nil {
		return err
	}
	if s, ok, err := a.Doc("sort"); err != nil {
		return err
	} else if ok && s.Len() > 0 {
		if st.Sort, err = query.ParseSort(s, opts); err != nil {
			return err
		}
		if st.Sort.HasMeta() && st.Where.Text == nil {
			return mongoerr.New(mongoerr.TextScoreUnavailable, "query requires text score metadata, but it is not available")
		}
	}
	var proj *query.Projection
	if f, ok, err := a.Doc("fields"); err != nil {
		return err
	} else if ok && f.Len() > 0 {
		if proj, err = query.ParseProjection(f, opts); err != nil {
			return err
		}
	}
	if hasUpdate {
		var arrayFilters []bson.Doc
		if af, ok, err := a.Array("arrayFilters"); err != nil {
			return err
		} else if ok {
			it := af.Iter()
			for it.Next() {
				if it.Element().Value.Type != bson.TypeDocument {
					return mongoerr.New(mongoerr.TypeMismatch, "BSON field 'findAndModify.arrayFilters.%s' is the wrong type '%s', expected type 'object'", it.Element().Key, it.Element().Value.Type)
				}
				arrayFilters = append(arrayFilters, it.Element().Value.Document())
			}
		}
		if st.Upd, err = query.ParseUpdate(u, arrayFilters, opts); err != nil {
			return err
		}
	}
	if v, ok := a.Lookup("hint"); ok {
		if err := checkHint(c, name, v); err != nil {
			return err
		}
		st.Hint = v
	}
	var res exec.UpdateResult
	var value bson.Doc
	var rs *dispatch.RetryState
	retried := false
	err = c.WriteTx(wc.durability(), func(tx *exec.Tx) error {
		if rs, err = c.BeginRetryable(tx, 1); err != nil {
			return err
		}
		if rec, ok, err := rs.Executed(0); err != nil {
			return err
		} else if ok {
			retried = true
			res, value, err = retriedFindAndModify(rs, rec)
			return err
		}
		rs.Start(0)
		if c.Stmt != nil {
			c.Stmt.RetryImage = session.PostImage
			if remove || !returnNew {
				c.Stmt.RetryImage = session.PreImage
			}
		}
		if res, value, err = c.Env.FindAndModify(c, tx, c.DB, name, remove, returnNew, st); err != nil {
			rs.Abandon()
			return err
		}
		return finishFindAndModify(rs, remove, returnNew, res, value)
	})
	if err != nil {
		return err
	}
	return findAndModifyReply(c, wc, remove, proj, st, res, value, rs, retried)
}

// findAndModifyReply answers a findAndModify (retried: from its
// recorded result).
func findAndModifyReply(c *Ctx, wc writeConcern, remove bool, proj *query.Projection, st *exec.UpdateStmt, res exec.UpdateResult, value bson.Doc, rs *dispatch.RetryState, retried bool) error {
	var err error
	if remove {
		c.Env.Stats.Delete.Add(1)
		c.Env.Stats.DocsDeleted.Add(int64(res.Matched))
	} else {
		c.Env.Stats.Update.Add(1)
		c.Env.Stats.DocsUpdated.Add(int64(res.Matched))
	}
	r := c.Reply
	r.StartDocument("lastErrorObject")
	n := res.Matched
	if res.Upserted.Type != 0 {
		n = 1
	}
	r.AppendInt32("n", int32(n))
	if !remove {
		r.AppendBool("updatedExisting", res.Matched > 0)
		if res.Upserted.Type != 0 {
			r.AppendValue("upserted", res.Upserted)
		}
	}
	r.End()
	if value == nil {
		r.AppendNull("value")
	} else {
		if proj != nil {
			var md query.MatchDetails
			st.Where.Filter.MatchDetails(value, &md)
			md.TextScore = res.Score
			if value, err = proj.Apply(nil, value, &md); err != nil {
				return err
			}
		}
		r.AppendDocument("value", value)
	}
	if retried {
		r.AppendInt32("retriedStmtId", rs.Retried[0])
	}
	c.Unacknowledged = wc.unacknowledged()
	return nil
}

// finishFindAndModify records a retryable findAndModify that wrote, with
// the image its value is, in config.image_collection.
func finishFindAndModify(rs *dispatch.RetryState, remove, returnNew bool, res exec.UpdateResult, value bson.Doc) error {
	if rs == nil {
		return nil
	}
	if !remove && res.Modified == 0 && res.Upserted.Type == 0 || remove && res.Matched == 0 {
		rs.Abandon() // wrote nothing: a retry runs it again, as mongod's
		return nil
	}
	rec := session.StmtResult{N: int32(res.Matched), UpdatedExisting: !remove && res.Matched > 0}
	if res.Upserted.Type != 0 {
		rec.N = 1
		rec.Upserted = copyValue(res.Upserted)
	}
	switch {
	case value == nil:
	case remove || !returnNew:
		rec.Image = session.PreImage
	default:
		rec.Image = session.PostImage
	}
	if err := rs.Done(0, rec); err != nil {
		return err
	}
	if rec.Image != "" {
		if err := rs.Txn.PutImage(rec.Image, value, rs.Txn.LastOpTime); err != nil {
			return err
		}
	}
	return rs.Finish()
}

// retriedFindAndModify rebuilds the outcome of an executed findAndModify
// from its record and image.
func retriedFindAndModify(rs *dispatch.RetryState, rec session.StmtResult) (exec.UpdateResult, bson.Doc, error) {
	res := exec.UpdateResult{Matched: int(rec.N)}
	if rec.Upserted.Type != 0 {
		res.Matched = 0
		res.Upserted = rec.Upserted
	}
	if rec.Image == "" {
		return res, nil, nil
	}
	img, err := rs.Txn.Image(rec.Image)
	return res, img, err
}
