package command

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/dispatch"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/query"
)

// The express path of find: a find whose filter is only {_id: <scalar>}
// (the shape of YCSB's reads and of most drivers' findOne by id), with no
// sort, skip, hint, collation or time limit and at most a plain projection
// (whole top-level fields kept or dropped: query.PlainProjection, the
// shape of YCSB's {_id: 0, field0: 1, …}), is answered by one snapshot,
// one catalog lookup and one point read, without parsing a filter or
// planning, as mongod's IDHACK path does. Anything else, and a
// view or a collection with a default collation, takes the general path,
// which returns the same answer (TestFindExpressMatchesGeneral).

// expressFind answers the find if it has the express shape and reports
// whether it did.
func expressFind(c *Ctx) (bool, error) {
	if c.Explain != nil || c.SnapAt != 0 {
		return false, nil
	}
	var name string
	var id bson.Value
	var proj query.PlainProjection
	proj.Reset()
	it := c.Body.Iter()
	first := true
	for it.Next() {
		e := it.Element()
		if first {
			first = false
			if e.Value.Type != bson.TypeString || e.Value.StringValue() == "" {
				return false, nil
			}
			name = e.Value.StringValue()
			continue
		}
		switch e.Key {
		case "filter":
			if e.Value.Type != bson.TypeDocument {
				return false, nil
			}
			f := e.Value.Document().Iter()
			if !f.Next() || f.Element().Key != "_id" || !expressID(f.Element().Value.Type) {
				return false, nil
			}
			id = f.Element().Value
			if f.Next() {
				return false, nil
			}
		case "limit", "batchSize":
			// Only ever one document: any positive count returns it.
			if t := e.Value.Type; t != bson.TypeInt32 && t != bson.TypeInt64 {
				return false, nil
			}
			if n, _ := e.Value.AsInt64(); n <= 0 {
				return false, nil
			}
		case "projection":
			if e.Value.Type != bson.TypeDocument || !query.ParsePlainProjection(e.Value.Document(), &proj) {
				return false, nil
			}
		case "singleBatch":
			if e.Value.Type != bson.TypeBoolean {
				return false, nil
			}
		case "$db", "lsid", "$clusterTime", "$readPreference", "comment", "apiVersion", "$client":
		default:
			return false, nil
		}
	}
	if id.Type == 0 {
		return false, nil
	}
	tx, err := c.Snapshot() // ended by Dispatch
	if err != nil {
		return false, err
	}
	coll, err := catalog.Get(tx, c.DB, name)
	if err != nil {
		return false, err
	}
	if coll != nil {
		if _, _, view := coll.View(); view {
			return false, nil
		}
		if _, ok := coll.Options.Lookup("collation"); ok {
			return false, nil
		}
		if coll.Capped {
			return false, nil // found through its _id index (exec.LookupID)
		}
	}
	c.Env.Stats.Query.Add(1)
	r := c.Reply
	r.StartDocument("cursor")
	r.StartArray("firstBatch")
	if coll != nil {
		t, err := exec.DataTree(tx, coll)
		if err != nil {
			return true, err
		}
		var kb [64]byte
		val, err := t.Get(exec.DocKey(kb[:0], id))
		if err != nil {
			return true, err
		}
		var n int64
		if val != nil {
			proj.AppendTo(r, "0", bson.Doc(val))
			c.Env.Stats.DocsReturned.Add(1)
			n = 1
		}
		// The slow-operation log's figures, as mongod reports IDHACK:
		// a point lookup.
		dispatch.NoteExamined(c, "IDHACK", n, n)
		dispatch.NoteReturned(c, n)
	}
	r.End()
	r.AppendInt64("id", 0)
	r.AppendString("ns", c.DB+"."+name)
	r.End()
	return true, nil
}

// expressID reports whether an _id of this type is found by its key alone:
// scalars whose equality is exactly key equality (documents may hold
// operators, arrays and regexes match differently).
func expressID(t bson.Type) bool {
	switch t {
	case bson.TypeString, bson.TypeObjectID, bson.TypeInt32, bson.TypeInt64, bson.TypeDouble,
		bson.TypeBinary, bson.TypeBoolean, bson.TypeDateTime, bson.TypeDecimal128, bson.TypeTimestamp:
		return true
	}
	return false
}
