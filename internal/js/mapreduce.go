package js

// mapReduce's engine, as mongod 4.4+ runs it. The command layer reads the
// input through an aggregation of the source collection or view
// (MapReduceInput: $match query, $sort, $limit); Run calls map with this
// bound to each document, and emit(key, value) collects the pairs grouped
// by key; reduce(key, values) is called once per key (also for a key with
// a single value, as 4.4+), finalize(key, value) on its result, and the
// results, sorted by key, are {_id: key, value} documents. They are
// answered inline or written through another aggregation
// (MapReduceOutput): replace (the collection's contents are replaced,
// through $out), merge (each result replaces the document with its _id,
// through $merge) or reduce (a result whose _id exists is first reduced
// with the existing value, reduce(key, [existing, new]), by
// ReduceExisting over the documents MapReduceExisting selects, then
// merged).
//
// Memory: the emitted pairs are held in memory, at most MaxBytes of keys
// and values (ExceededMemoryLimit, 146, past it), where mongod spills them
// to disk (docs/compatibility.md).

import (
	"sort"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// DefaultMapReduceMaxBytes is MapReduce.MaxBytes' default: 100 MiB of
// emitted keys and values.
const DefaultMapReduceMaxBytes = 100 << 20

// MapReduce is one mapReduce command's JavaScript: its functions' sources,
// compiled in Session.
type MapReduce struct {
	Session *Session
	// Map and Reduce are required; Finalize may be empty.
	Map, Reduce, Finalize string
	// MaxBytes bounds the emitted keys and values held (0:
	// DefaultMapReduceMaxBytes).
	MaxBytes int
}

type mrGroup struct {
	key    bson.Value
	values []bson.Value
}

// Run maps each document of the input, reduces and finalizes each key's
// values, and returns the {_id, value} results sorted by key.
func (m *MapReduce) Run(input []bson.Doc) ([]bson.Doc, error) {
	groups, err := m.mapDocs(input)
	if err != nil {
		return nil, err
	}
	return m.reduce(groups)
}

// mapDocs calls map for each document, grouping the emitted pairs by key.
func (m *MapReduce) mapDocs(input []bson.Doc) ([]*mrGroup, error) {
	mapFn, err := m.Session.Compile(m.Map)
	if err != nil {
		return nil, err
	}
	limit := m.MaxBytes
	if limit <= 0 {
		limit = DefaultMapReduceMaxBytes
	}
	byKey := map[string]*mrGroup{}
	var order []*mrGroup
	held := 0
	var kbuf []byte
	if err := m.Session.SetEmit(func(k, v bson.Value) error {
		if held += len(k.Data) + len(v.Data); held > limit {
			return mongoerr.New(mongoerr.ExceededMemoryLimit, "mapReduce's emitted keys and values exceeded %d bytes", limit)
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
	for _, d := range input {
		if _, err := mapFn.Call(d); err != nil {
			return nil, err
		}
	}
	sort.SliceStable(order, func(i, j int) bool { return bson.Compare(order[i].key, order[j].key) < 0 })
	return order, nil
}

// reduce reduces and finalizes each key's values into {_id, value}.
func (m *MapReduce) reduce(groups []*mrGroup) ([]bson.Doc, error) {
	reduceFn, err := m.Session.Compile(m.Reduce)
	if err != nil {
		return nil, err
	}
	var finalizeFn *Func
	if m.Finalize != "" {
		if finalizeFn, err = m.Session.Compile(m.Finalize); err != nil {
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

// ReduceExisting reduces each result whose _id is among the existing
// documents of the out collection with that document's value, in place
// (out: {reduce}).
func (m *MapReduce) ReduceExisting(results, existing []bson.Doc) ([]bson.Doc, error) {
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
	reduceFn, err := m.Session.Compile(m.Reduce)
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
