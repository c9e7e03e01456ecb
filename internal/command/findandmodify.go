package command

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
	"github.com/cairndb/cairn/kv"
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
	err = c.writeTx(wc.durability(), func(tx *kv.Tx) error {
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
	})
	if err != nil {
		return err
	}
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
	c.Unacknowledged = wc.unacknowledged()
	return nil
}
