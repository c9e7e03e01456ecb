package command

import (
	"sort"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/js"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// mapReduce, as mongod 4.4+ runs it: the input is an aggregation of the
// source collection or view ($match query, $sort, $limit), map is called
// with this bound to each document and emit(key, value) collects the
// pairs, reduce(key, values) is called once per key (also for a key with a
// single value, as 4.4+), finalize(key, value) on its result, and the
// results, sorted by key, are answered inline ({results: [...]}) or
// written to out ({result: name} or {result: {db, collection}}):
// replace (the collection's contents are replaced, through $out), merge
// (each result replaces the document with its _id, through $merge) or
// reduce (a result whose _id exists is reduced with the existing value,
// reduce(key, [existing, new]), then merged).
//
// Memory: the emitted pairs are held in memory, at most
// maxMapReduceBytes of keys and values (ExceededMemoryLimit, 146, past
// it), where mongod spills them to disk. jsMode and verbose are accepted
// and ignored, as 4.4+ ignores them.

// maxMapReduceBytes bounds the emitted keys and values one mapReduce
// holds.
var maxMapReduceBytes = 100 << 20 // a variable so tests can lower it

type mrGroup struct {
	key    bson.Value
	values []bson.Value
}

type mrOut struct {
	inline     bool
	mode       string // replace, merge, reduce
	db, coll   string
	dbExplicit bool
}

func mapReduceCmd(c *Ctx) error {
	a := newArgs(c)
	if err := a.check("map", "reduce", "out", "query", "sort", "limit", "finalize", "scope", "jsMode", "verbose",
		"bypassDocumentValidation", "collation", "readConcern", "writeConcern"); err != nil {
		return err
	}
	name, err := c.collectionArg()
	if err != nil {
		return err
	}
	code := func(field string, required bool) (string, error) {
		v, ok := a.lookup(field)
		if !ok {
			if required {
				return "", mongoerr.New(mongoerr.IDLFailedToParse, "BSON field 'mapReduce.%s' is missing but a required field", field)
			}
			return "", nil
		}
		if v.Type != bson.TypeString && v.Type != bson.TypeJavaScript {
			return "", a.wrongTypes(field, v, "javascript, string")
		}
		return v.StringValue(), nil
	}
	mapSrc, err := code("map", true)
	if err != nil {
		return err
	}
	reduceSrc, err := code("reduce", true)
	if err != nil {
		return err
	}
	finalizeSrc, err := code("finalize", false)
	if err != nil {
		return err
	}
	out, err := parseMROut(c, a)
	if err != nil {
		return err
	}
	for _, f := range []string{"jsMode", "verbose", "bypassDocumentValidation"} {
		if _, _, err := a.boolean(f); err != nil {
			return err
		}
	}
	scope, _, err := a.doc("scope")
	if err != nil {
		return err
	}
	cancel, err := withMaxTime(c)
	if err != nil {
		return err
	}
	defer cancel()
	scripts := c.scripts()
	if !scripts.Enabled() {
		return mongoerr.New(mongoerr.MapReduceScriptingDisabled, "Cannot run server-side javascript without the javascript engine enabled")
	}
	sess, err := scripts.Session()
	if err != nil {
		return err
	}
	defer sess.Close()
	if scope != nil {
		if err := sess.SetGlobals(scope); err != nil {
			return err
		}
	}
	groups, err := mrMap(c, a, name, sess, mapSrc)
	if err != nil {
		return err
	}
	results, err := mrReduce(groups, sess, reduceSrc, finalizeSrc)
	if err != nil {
		return err
	}
	if out.inline {
		r := c.Reply
		r.StartArray("results")
		for i, d := range results {
			r.AppendDocument(bson.Index(i), d)
		}
		r.End()
		return nil
	}
	if err := mrWrite(c, out, results, sess, reduceSrc); err != nil {
		return err
	}
	if out.dbExplicit {
		c.Reply.StartDocument("result")
		c.Reply.AppendString("db", out.db)
		c.Reply.AppendString("collection", out.coll)
		c.Reply.End()
	} else {
		c.Reply.AppendString("result", out.coll)
	}
	return nil
}

func parseMROut(c *Ctx, a args) (mrOut, error) {
	v, ok := a.lookup("out")
	if !ok {
		return mrOut{}, mongoerr.New(mongoerr.IDLFailedToParse, "BSON field 'mapReduce.out' is missing but a required field")
	}
	o := mrOut{mode: "replace", db: c.DB}
	switch v.Type {
	case bson.TypeString:
		o.coll = v.StringValue()
	case bson.TypeDocument:
		it := v.Document().Iter()
		modes := 0
		for it.Next() {
			e := it.Element()
			switch e.Key {
			case "inline":
				o.inline = true
				modes++
			case "replace", "merge", "reduce":
				if e.Value.Type != bson.TypeString {
					return o, a.wrongType("out."+e.Key, e.Value, "string")
				}
				o.mode, o.coll = e.Key, e.Value.StringValue()
				modes++
			case "db":
				if e.Value.Type != bson.TypeString {
					return o, a.wrongType("out.db", e.Value, "string")
				}
				o.db, o.dbExplicit = e.Value.StringValue(), true
			case "nonAtomic":
				// 4.4+: accepted for merge and reduce (always non-atomic).
			case "sharded":
				return o, mongoerr.New(mongoerr.InvalidOptions, "sharded field value must be true, got %s", e.Value.String())
			default:
				return o, mongoerr.New(mongoerr.BadValue, "'out' has unknown field: %s", e.Key)
			}
		}
		if modes != 1 {
			return o, mongoerr.New(mongoerr.BadValue, "'out' must specify exactly one of inline, replace, merge or reduce")
		}
	default:
		return o, mongoerr.New(mongoerr.BadValue, "'out' must be either a string or an object")
	}
	if !o.inline && o.coll == "" {
		return o, mongoerr.New(mongoerr.InvalidNamespace, "Invalid 'out' collection name")
	}
	return o, nil
}

// mrMap reads the input and calls map for each document, grouping the
// emitted pairs by key.
func mrMap(c *Ctx, a args, name string, sess *js.Session, mapSrc string) ([]*mrGroup, error) {
	b := bson.NewBuilder(nil)
	b.AppendString("aggregate", name)
	b.StartArray("pipeline")
	i := 0
	stage := func(op string, v bson.Value) {
		b.StartDocument(bson.Index(i))
		b.AppendValue(op, v)
		b.End()
		i++
	}
	if v, ok := a.lookup("query"); ok {
		if v.Type != bson.TypeDocument {
			return nil, a.wrongType("query", v, "object")
		}
		stage("$match", v)
	}
	if v, ok := a.lookup("sort"); ok {
		if v.Type != bson.TypeDocument {
			return nil, a.wrongType("sort", v, "object")
		}
		if v.Document().Len() > 0 {
			stage("$sort", v)
		}
	}
	if n, ok, err := a.integer("limit"); err != nil {
		return nil, err
	} else if ok && n > 0 {
		b.StartDocument(bson.Index(i))
		b.AppendInt64("$limit", n)
		b.End()
	}
	b.End()
	b.StartDocument("cursor")
	b.End()
	if v, ok := a.lookup("collation"); ok {
		b.AppendValue("collation", v)
	}
	sub := *c
	sub.Name, sub.Body = "aggregate", b.Finish()
	docs, err := runAggregate(&sub)
	if err != nil {
		return nil, err
	}
	mapFn, err := sess.Compile(mapSrc)
	if err != nil {
		return nil, err
	}
	byKey := map[string]*mrGroup{}
	var order []*mrGroup
	held := 0
	var kbuf []byte
	if err := sess.SetEmit(func(k, v bson.Value) error {
		if held += len(k.Data) + len(v.Data); held > maxMapReduceBytes {
			return mongoerr.New(mongoerr.ExceededMemoryLimit, "mapReduce's emitted keys and values exceeded %d bytes", maxMapReduceBytes)
		}
		kbuf = bson.AppendKey(kbuf[:0], k, false)
		g := byKey[string(kbuf)]
		if g == nil {
			g = &mrGroup{key: k}
			byKey[string(kbuf)] = g
			order = append(order, g)
		}
		g.values = append(g.values, v)
		return nil
	}); err != nil {
		return nil, err
	}
	for _, d := range docs {
		if _, err := mapFn.Call(d); err != nil {
			return nil, err
		}
	}
	sort.SliceStable(order, func(i, j int) bool { return bson.Compare(order[i].key, order[j].key) < 0 })
	return order, nil
}

// mrReduce reduces and finalizes each key's values into {_id, value}.
func mrReduce(groups []*mrGroup, sess *js.Session, reduceSrc, finalizeSrc string) ([]bson.Doc, error) {
	reduceFn, err := sess.Compile(reduceSrc)
	if err != nil {
		return nil, err
	}
	var finalizeFn *js.Func
	if finalizeSrc != "" {
		if finalizeFn, err = sess.Compile(finalizeSrc); err != nil {
			return nil, err
		}
	}
	out := make([]bson.Doc, 0, len(groups))
	for _, g := range groups {
		v, err := reduceFn.Call(nil, g.key, arrayOf(g.values))
		if err != nil {
			return nil, err
		}
		if finalizeFn != nil {
			if v, err = finalizeFn.Call(nil, g.key, v); err != nil {
				return nil, err
			}
		}
		out = append(out, mrDoc(g.key, v))
	}
	return out, nil
}

func arrayOf(vals []bson.Value) bson.Value {
	b := bson.NewBuilder(nil)
	for i, v := range vals {
		b.AppendValue(bson.Index(i), v)
	}
	return bson.Value{Type: bson.TypeArray, Data: b.Finish()}
}

func mrDoc(key, value bson.Value) bson.Doc {
	b := bson.NewBuilder(nil)
	b.AppendValue("_id", key)
	if value.Type == 0 {
		value = bson.Value{Type: bson.TypeUndefined}
	}
	b.AppendValue("value", value)
	return b.Finish()
}

// mrWrite writes the results to the out collection through an
// aggregation of $documents into $out (replace) or $merge (merge,
// reduce).
func mrWrite(c *Ctx, out mrOut, results []bson.Doc, sess *js.Session, reduceSrc string) error {
	if out.mode == "reduce" && len(results) > 0 {
		var err error
		if results, err = mrReduceExisting(c, out, results, sess, reduceSrc); err != nil {
			return err
		}
	}
	b := bson.NewBuilder(nil)
	b.AppendInt32("aggregate", 1)
	b.StartArray("pipeline")
	b.StartDocument("0")
	b.StartArray("$documents")
	for i, d := range results {
		b.AppendDocument(bson.Index(i), d)
	}
	b.End()
	b.End()
	b.StartDocument("1")
	if out.mode == "replace" {
		b.StartDocument("$out")
		b.AppendString("db", out.db)
		b.AppendString("coll", out.coll)
		b.End()
	} else {
		b.StartDocument("$merge")
		b.StartDocument("into")
		b.AppendString("db", out.db)
		b.AppendString("coll", out.coll)
		b.End()
		b.AppendString("on", "_id")
		b.AppendString("whenMatched", "replace")
		b.AppendString("whenNotMatched", "insert")
		b.End()
	}
	b.End()
	b.End()
	b.StartDocument("cursor")
	b.End()
	sub := *c
	sub.Name, sub.Body = "aggregate", b.Finish()
	_, err := runAggregate(&sub)
	return err
}

// mrReduceExisting reduces each result whose _id is already in the out
// collection with the existing document's value.
func mrReduceExisting(c *Ctx, out mrOut, results []bson.Doc, sess *js.Session, reduceSrc string) ([]bson.Doc, error) {
	b := bson.NewBuilder(nil)
	b.AppendString("aggregate", out.coll)
	b.StartArray("pipeline")
	b.StartDocument("0")
	b.StartDocument("$match")
	b.StartDocument("_id")
	b.StartArray("$in")
	for i, d := range results {
		id, _ := d.Lookup("_id")
		b.AppendValue(bson.Index(i), id)
	}
	b.End()
	b.End()
	b.End()
	b.End()
	b.End()
	b.StartDocument("cursor")
	b.End()
	sub := *c
	sub.Name, sub.DB, sub.Body = "aggregate", out.db, b.Finish()
	existing, err := runAggregate(&sub)
	if err != nil {
		return nil, err
	}
	if len(existing) == 0 {
		return results, nil
	}
	old := map[string]bson.Value{}
	var kbuf []byte
	for _, d := range existing {
		id, _ := d.Lookup("_id")
		v, _ := d.Lookup("value")
		kbuf = bson.AppendKey(kbuf[:0], id, false)
		old[string(kbuf)] = v
	}
	reduceFn, err := sess.Compile(reduceSrc)
	if err != nil {
		return nil, err
	}
	for i, d := range results {
		id, _ := d.Lookup("_id")
		kbuf = bson.AppendKey(kbuf[:0], id, false)
		prev, ok := old[string(kbuf)]
		if !ok {
			continue
		}
		if prev.Type == 0 {
			prev = bson.Value{Type: bson.TypeNull}
		}
		v, _ := d.Lookup("value")
		nv, err := reduceFn.Call(nil, id, arrayOf([]bson.Value{prev, v}))
		if err != nil {
			return nil, err
		}
		results[i] = mrDoc(id, nv)
	}
	return results, nil
}
