package command

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
	"github.com/cairndb/cairn/internal/session"
)

func findAndModify(c *Ctx) error {
	a := newArgs(c)
	if err := a.check("query", "sort", "remove", "update", "new", "fields", "upsert", "bypassDocumentValidation",
		"collation", "arrayFilters", "hint", "let"); err != nil {
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
	cancel, err := withMaxTime(c)
	if err != nil {
		return err
	}
	defer cancel()
	remove, _, err := a.boolean("remove")
	if err != nil {
		return err
	}
	returnNew, _, err := a.boolean("new")
	if err != nil {
		return err
	}
	upsert, _, err := a.boolean("upsert")
	if err != nil {
		return err
	}
	u, hasUpdate := a.lookup("update")
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
	opts, err := c.queryOptionsFor(a, collation, name)
	if err != nil {
		return err
	}
	q, _, err := a.doc("query")
	if err != nil {
		return err
	}
	st := &updateStmt{upsert: upsert}
	if st.where, err = exec.CompileWriteFilter(orEmptyDoc(q), opts); err != nil {
		return err
	}
	if s, ok, err := a.doc("sort"); err != nil {
		return err
	} else if ok && s.Len() > 0 {
		if st.sort, err = query.ParseSort(s, opts); err != nil {
			return err
		}
		if st.sort.HasMeta() && st.where.Text == nil {
			return mongoerr.New(mongoerr.TextScoreUnavailable, "query requires text score metadata, but it is not available")
		}
	}
	var proj *query.Projection
	if f, ok, err := a.doc("fields"); err != nil {
		return err
	} else if ok && f.Len() > 0 {
		if proj, err = query.ParseProjection(f, opts); err != nil {
			return err
		}
	}
	if hasUpdate {
		var arrayFilters []bson.Doc
		if af, ok, err := a.array("arrayFilters"); err != nil {
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
		if st.upd, err = query.ParseUpdate(u, arrayFilters, opts); err != nil {
			return err
		}
	}
	if v, ok := a.lookup("hint"); ok {
		if err := checkHint(c, name, v); err != nil {
			return err
		}
		st.hint = v
	}
	var res updateResult
	var value bson.Doc
	var rs *retryState
	retried := false
	err = c.writeTx(wc.durability(), func(tx *exec.Tx) error {
		if rs, err = c.beginRetryable(tx, 1); err != nil {
			return err
		}
		if rec, ok, err := rs.executed(0); err != nil {
			return err
		} else if ok {
			retried = true
			res, value, err = retriedFindAndModify(rs, rec)
			return err
		}
		rs.start(0)
		if err := findAndModifyTx(c, tx, name, remove, returnNew, st, &res, &value); err != nil {
			rs.abandon()
			return err
		}
		return finishFindAndModify(rs, remove, returnNew, res, value)
	})
	if err != nil {
		return err
	}
	return findAndModifyReply(c, wc, remove, proj, st, res, value, rs, retried)
}

// findAndModifyTx runs a findAndModify in tx, leaving its outcome in res
// and the document it answers in value.
func findAndModifyTx(c *Ctx, tx *exec.Tx, name string, remove, returnNew bool, st *updateStmt, resp *updateResult, valuep *bson.Doc) error {
	var res updateResult
	var value bson.Doc
	defer func() { *resp, *valuep = res, value }()
	coll, err := catalog.Get(tx, c.DB, name)
	if err != nil {
		return err
	}
	if remove {
		if coll == nil {
			return nil
		}
		w, err := c.writer(tx, coll)
		if err != nil {
			return err
		}
		ms, err := c.Env.SelectDocs(c, tx, coll, w.Data, &st.where, st.hint, st.sort, 1)
		if err != nil || len(ms) == 0 {
			return err
		}
		if err := w.Remove(ms[0].Key, ms[0].Doc); err != nil {
			return err
		}
		if f := writeFiguresOf(c); f != nil {
			f.Ndeleted.Add(1)
		}
		res.matched = 1
		value, res.score = ms[0].Doc, ms[0].Md.TextScore
		return nil
	}
	res, _, err = st.apply(c, tx, c.DB, name, coll)
	if err != nil {
		return err
	}
	if returnNew {
		value = res.after
	} else {
		value = res.before
	}
	return nil
}

// findAndModifyReply answers a findAndModify (retried: from its
// recorded result).
func findAndModifyReply(c *Ctx, wc writeConcern, remove bool, proj *query.Projection, st *updateStmt, res updateResult, value bson.Doc, rs *retryState, retried bool) error {
	var err error
	if remove {
		c.Env.Stats.Delete.Add(1)
		c.Env.Stats.DocsDeleted.Add(int64(res.matched))
	} else {
		c.Env.Stats.Update.Add(1)
		c.Env.Stats.DocsUpdated.Add(int64(res.matched))
	}
	r := c.Reply
	r.StartDocument("lastErrorObject")
	n := res.matched
	if res.upserted.Type != 0 {
		n = 1
	}
	r.AppendInt32("n", int32(n))
	if !remove {
		r.AppendBool("updatedExisting", res.matched > 0)
		if res.upserted.Type != 0 {
			r.AppendValue("upserted", res.upserted)
		}
	}
	r.End()
	if value == nil {
		r.AppendNull("value")
	} else {
		if proj != nil {
			var md query.MatchDetails
			st.where.Filter.MatchDetails(value, &md)
			md.TextScore = res.score
			if value, err = proj.Apply(nil, value, &md); err != nil {
				return err
			}
		}
		r.AppendDocument("value", value)
	}
	if retried {
		r.AppendInt32("retriedStmtId", rs.retried[0])
	}
	c.Unacknowledged = wc.unacknowledged()
	return nil
}

// finishFindAndModify records a retryable findAndModify that wrote, with
// the image its value is, in config.image_collection.
func finishFindAndModify(rs *retryState, remove, returnNew bool, res updateResult, value bson.Doc) error {
	if rs == nil {
		return nil
	}
	if !remove && res.modified == 0 && res.upserted.Type == 0 || remove && res.matched == 0 {
		rs.abandon() // wrote nothing: a retry runs it again, as mongod's
		return nil
	}
	rec := session.StmtResult{N: int32(res.matched), UpdatedExisting: !remove && res.matched > 0}
	if res.upserted.Type != 0 {
		rec.N = 1
		rec.Upserted = copyValue(res.upserted)
	}
	switch {
	case value == nil:
	case remove || !returnNew:
		rec.Image = session.PreImage
	default:
		rec.Image = session.PostImage
	}
	if err := rs.done(0, rec); err != nil {
		return err
	}
	if rec.Image != "" {
		if err := rs.txn.PutImage(rec.Image, value, rs.txn.LastOpTime); err != nil {
			return err
		}
	}
	return rs.finish()
}

// retriedFindAndModify rebuilds the outcome of an executed findAndModify
// from its record and image.
func retriedFindAndModify(rs *retryState, rec session.StmtResult) (updateResult, bson.Doc, error) {
	res := updateResult{matched: int(rec.N)}
	if rec.Upserted.Type != 0 {
		res.matched = 0
		res.upserted = rec.Upserted
	}
	if rec.Image == "" {
		return res, nil, nil
	}
	img, err := rs.txn.Image(rec.Image)
	return res, img, err
}
