package command

import (
	"context"
	"fmt"
	"sync"
	"testing"

	dbson "go.mongodb.org/mongo-driver/v2/bson"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/exec"
)

// cmdRunner runs commands against env in db.
type cmdRunner struct {
	t   *testing.T
	env *Env
}

func (r cmdRunner) runCtx(cx context.Context, db string, body dbson.D) bson.Doc {
	r.t.Helper()
	raw, err := dbson.Marshal(append(body, dbson.E{Key: "$db", Value: db}))
	if err != nil {
		r.t.Fatal(err)
	}
	c := &Ctx{Context: cx, Env: r.env, DB: db, Body: bson.Doc(raw), Reply: &bson.Builder{}}
	return bson.Doc(append([]byte(nil), Dispatch(c)...))
}

func (r cmdRunner) run(db string, body dbson.D) bson.Doc {
	r.t.Helper()
	return r.runCtx(context.Background(), db, body)
}

// must runs a command that must succeed.
func (r cmdRunner) must(db string, body dbson.D) bson.Doc {
	r.t.Helper()
	out := r.run(db, body)
	if !ok(out) {
		r.t.Fatalf("%v: %s", body, out.String())
	}
	return out
}

func errCode(r bson.Doc) int32 {
	v, _ := r.Lookup("code")
	n, _ := v.AsInt64()
	return int32(n)
}

// batch returns a cursor reply's documents and id.
func batch(t *testing.T, r bson.Doc) ([]bson.Doc, int64) {
	t.Helper()
	cur, ok := r.Lookup("cursor")
	if !ok {
		t.Fatalf("no cursor: %s", r.String())
	}
	var docs []bson.Doc
	for _, f := range []string{"firstBatch", "nextBatch"} {
		if b, ok := cur.Document().Lookup(f); ok {
			it := b.Document().Iter()
			for it.Next() {
				docs = append(docs, it.Element().Value.Document())
			}
		}
	}
	id, _ := cur.Document().Lookup("id")
	return docs, id.Int64()
}

// field returns a document's integer field.
func field(d bson.Doc, name string) int64 {
	v, _ := d.Lookup(name)
	n, _ := v.AsInt64()
	return n
}

func fields(docs []bson.Doc, name string) []int64 {
	out := make([]int64, len(docs))
	for i, d := range docs {
		out[i] = field(d, name)
	}
	return out
}

func TestCappedCreateOptions(t *testing.T) {
	r := cmdRunner{t, memEnv(t)}
	cases := []struct {
		name string
		db   string
		opts dbson.D
		code int32
	}{
		{"no size", "t", dbson.D{{Key: "capped", Value: true}}, 72},
		{"no size with max", "t", dbson.D{{Key: "capped", Value: true}, {Key: "max", Value: 5}}, 72},
		{"size without capped", "t", dbson.D{{Key: "size", Value: 1000}}, 72},
		{"max without capped", "t", dbson.D{{Key: "capped", Value: false}, {Key: "max", Value: 3}}, 72},
		{"zero size", "t", dbson.D{{Key: "capped", Value: true}, {Key: "size", Value: 0}}, 51024},
		{"size over 1 PB", "t", dbson.D{{Key: "capped", Value: true}, {Key: "size", Value: int64(1<<50 + 1)}}, 2},
		{"size a string", "t", dbson.D{{Key: "capped", Value: true}, {Key: "size", Value: "big"}}, 14},
		{"capped a string", "t", dbson.D{{Key: "capped", Value: "yes"}, {Key: "size", Value: 10}}, 14},
		{"max too big", "t", dbson.D{{Key: "capped", Value: true}, {Key: "size", Value: 4096}, {Key: "max", Value: int64(1 << 31)}}, 2},
		{"no _id index outside local", "t", dbson.D{{Key: "capped", Value: true}, {Key: "size", Value: 4096}, {Key: "autoIndexId", Value: false}}, 50001},
		{"ok", "t", dbson.D{{Key: "capped", Value: true}, {Key: "size", Value: 1000}, {Key: "max", Value: 7}}, 0},
		{"no _id index in local", "local", dbson.D{{Key: "capped", Value: true}, {Key: "size", Value: 4096}, {Key: "autoIndexId", Value: false}}, 0},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := r.run(tc.db, append(dbson.D{{Key: "create", Value: fmt.Sprintf("c%d", i)}}, tc.opts...))
			if errCode(out) != tc.code {
				t.Fatalf("code %d, want %d: %s", errCode(out), tc.code, out.String())
			}
		})
	}
	// The size is rounded up to 256 bytes, as mongod 7.0.
	st := r.must("t", dbson.D{{Key: "collStats", Value: "c10"}})
	if v, _ := st.Lookup("capped"); !v.Boolean() || field(st, "maxSize") != 1024 || field(st, "max") != 7 {
		t.Fatalf("collStats: %s", st.String())
	}
	lc := r.must("t", dbson.D{{Key: "listCollections", Value: 1}, {Key: "filter", Value: dbson.D{{Key: "name", Value: "c10"}}}})
	docs, _ := batch(t, lc)
	if len(docs) != 1 {
		t.Fatalf("listCollections: %s", lc.String())
	}
	o, _ := docs[0].Lookup("options")
	if field(o.Document(), "size") != 1024 || field(o.Document(), "max") != 7 {
		t.Fatalf("options: %s", o.String())
	}
	// The local collection without an _id index takes inserts and finds
	// them by _id with a scan.
	r.must("local", dbson.D{{Key: "insert", Value: "c11"}, {Key: "documents", Value: dbson.A{dbson.D{{Key: "_id", Value: 1}}, dbson.D{{Key: "_id", Value: 1}}}}})
	docs, _ = batch(t, r.must("local", dbson.D{{Key: "find", Value: "c11"}, {Key: "filter", Value: dbson.D{{Key: "_id", Value: 1}}}}))
	if len(docs) != 2 {
		t.Fatalf("found %d documents by _id without an _id index, want 2", len(docs))
	}
}

// TestCappedOrderAndMax: the oldest documents go first, whatever their _id;
// $natural runs both ways; _id finds, _id sorts and duplicate _ids go
// through the _id index.
func TestCappedOrderAndMax(t *testing.T) {
	r := cmdRunner{t, memEnv(t)}
	r.must("t", dbson.D{{Key: "create", Value: "c"}, {Key: "capped", Value: true}, {Key: "size", Value: 1 << 20}, {Key: "max", Value: 5}})
	for i := 0; i < 20; i++ {
		r.must("t", dbson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: dbson.A{dbson.D{{Key: "_id", Value: 100 - i}, {Key: "seq", Value: i}}}}})
	}
	find := func(extra ...dbson.E) []int64 {
		t.Helper()
		docs, _ := batch(t, r.must("t", append(dbson.D{{Key: "find", Value: "c"}}, extra...)))
		return fields(docs, "seq")
	}
	cases := []struct {
		name string
		opts []dbson.E
		want []int64
	}{
		{"natural order", nil, []int64{15, 16, 17, 18, 19}},
		{"$natural: 1", []dbson.E{{Key: "sort", Value: dbson.D{{Key: "$natural", Value: 1}}}}, []int64{15, 16, 17, 18, 19}},
		{"$natural: -1", []dbson.E{{Key: "sort", Value: dbson.D{{Key: "$natural", Value: -1}}}}, []int64{19, 18, 17, 16, 15}},
		{"hint $natural: -1", []dbson.E{{Key: "hint", Value: dbson.D{{Key: "$natural", Value: -1}}}}, []int64{19, 18, 17, 16, 15}},
		{"sort _id", []dbson.E{{Key: "sort", Value: dbson.D{{Key: "_id", Value: 1}}}}, []int64{19, 18, 17, 16, 15}},
		{"sort _id desc", []dbson.E{{Key: "sort", Value: dbson.D{{Key: "_id", Value: -1}}}}, []int64{15, 16, 17, 18, 19}},
		{"_id point", []dbson.E{{Key: "filter", Value: dbson.D{{Key: "_id", Value: 83}}}}, []int64{17}},
		{"_id removed", []dbson.E{{Key: "filter", Value: dbson.D{{Key: "_id", Value: 100}}}}, []int64{}},
		// An _id range is read through the _id index, in _id order.
		{"_id range", []dbson.E{{Key: "filter", Value: dbson.D{{Key: "_id", Value: dbson.D{{Key: "$gte", Value: 83}}}}}}, []int64{17, 16, 15}},
		{"hint _id", []dbson.E{{Key: "filter", Value: dbson.D{{Key: "_id", Value: dbson.D{{Key: "$lte", Value: 82}}}}}, {Key: "hint", Value: "_id_"}}, []int64{19, 18}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := find(tc.opts...); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
	if out := r.run("t", dbson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: dbson.A{dbson.D{{Key: "_id", Value: 83}}}}}); !hasWriteError(out, 11000) {
		t.Fatalf("duplicate _id: %s", out.String())
	}
	// Deletes are allowed, and updates may change a document's size
	// (mongod 6.0+).
	r.must("t", dbson.D{{Key: "delete", Value: "c"}, {Key: "deletes", Value: dbson.A{dbson.D{{Key: "q", Value: dbson.D{{Key: "_id", Value: 84}}}, {Key: "limit", Value: 1}}}}})
	up := r.must("t", dbson.D{{Key: "update", Value: "c"}, {Key: "updates", Value: dbson.A{dbson.D{{Key: "q", Value: dbson.D{{Key: "_id", Value: 83}}}, {Key: "u", Value: dbson.D{{Key: "$set", Value: dbson.D{{Key: "grown", Value: "a longer document"}}}}}}}}})
	if field(up, "nModified") != 1 {
		t.Fatalf("update: %s", up.String())
	}
	if got := find(); fmt.Sprint(got) != "[15 17 18 19]" {
		t.Fatalf("after delete: %v", got)
	}
	checkValid(t, r, "t", "c")
}

func hasWriteError(r bson.Doc, want int32) bool {
	we, ok := r.Lookup("writeErrors")
	if !ok {
		return false
	}
	it := we.Document().Iter()
	for it.Next() {
		if errCode(it.Element().Value.Document()) == want {
			return true
		}
	}
	return false
}

func checkValid(t *testing.T, r cmdRunner, db, coll string) {
	t.Helper()
	v := r.must(db, dbson.D{{Key: "validate", Value: coll}})
	if ok, _ := v.Lookup("valid"); !ok.Boolean() {
		t.Fatalf("validate: %s", v.String())
	}
}

// TestCappedSize: the collection stays within its size, removing the
// oldest documents; a document larger than the collection is refused.
func TestCappedSize(t *testing.T) {
	r := cmdRunner{t, memEnv(t)}
	r.must("t", dbson.D{{Key: "create", Value: "c"}, {Key: "capped", Value: true}, {Key: "size", Value: 4096}})
	pad := string(make([]byte, 900))
	for i := 0; i < 30; i++ {
		r.must("t", dbson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: dbson.A{dbson.D{{Key: "seq", Value: i}, {Key: "pad", Value: pad}}}}})
	}
	st := r.must("t", dbson.D{{Key: "collStats", Value: "c"}})
	if field(st, "size") > 4096 || field(st, "count") != 4 {
		t.Fatalf("collStats: size %d count %d", field(st, "size"), field(st, "count"))
	}
	docs, _ := batch(t, r.must("t", dbson.D{{Key: "find", Value: "c"}}))
	if got := fields(docs, "seq"); fmt.Sprint(got) != "[26 27 28 29]" {
		t.Fatalf("survivors %v", got)
	}
	big := string(make([]byte, 5000))
	if out := r.run("t", dbson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: dbson.A{dbson.D{{Key: "pad", Value: big}}}}}); !hasWriteError(out, 2) {
		t.Fatalf("a document over the size: %s", out.String())
	}
	// TTL indexes are refused on capped collections, as mongod.
	out := r.run("t", dbson.D{{Key: "createIndexes", Value: "c"}, {Key: "indexes", Value: dbson.A{dbson.D{{Key: "key", Value: dbson.D{{Key: "at", Value: 1}}}, {Key: "name", Value: "at"}, {Key: "expireAfterSeconds", Value: 60}}}}})
	if errCode(out) != 67 {
		t.Fatalf("TTL index: %s", out.String())
	}
	r.must("t", dbson.D{{Key: "createIndexes", Value: "c"}, {Key: "indexes", Value: dbson.A{dbson.D{{Key: "key", Value: dbson.D{{Key: "seq", Value: 1}}}, {Key: "name", Value: "seq"}}}}})
	docs, _ = batch(t, r.must("t", dbson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: dbson.D{{Key: "seq", Value: 28}}}}))
	if len(docs) != 1 {
		t.Fatalf("find through a secondary index: %d documents", len(docs))
	}
	checkValid(t, r, "t", "c")
}

// TestCappedConcurrentWriters: 8 writers insert into a capped collection
// of 50; the survivors are the 50 newest in record order, the _id index
// agrees (validate), and record ids are dense.
func TestCappedConcurrentWriters(t *testing.T) {
	env := memEnv(t)
	r := cmdRunner{t, env}
	r.must("t", dbson.D{{Key: "create", Value: "c"}, {Key: "capped", Value: true}, {Key: "size", Value: 1 << 20}, {Key: "max", Value: 50}})
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 40; i++ {
				out := r.run("t", dbson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: dbson.A{
					dbson.D{{Key: "_id", Value: fmt.Sprintf("w%d-%d", w, i)}, {Key: "w", Value: w}, {Key: "i", Value: i}},
					dbson.D{{Key: "_id", Value: fmt.Sprintf("w%d-%d-b", w, i)}, {Key: "w", Value: w}, {Key: "i", Value: i}},
				}}})
				if !ok(out) || field(out, "n") != 2 {
					t.Errorf("insert: %s", out.String())
				}
			}
		}(w)
	}
	wg.Wait()
	tx, err := env.KV.BeginRead()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	coll, err := catalog.Get(tx, "t", "c")
	if err != nil {
		t.Fatal(err)
	}
	data, err := exec.DataTree(tx, coll)
	if err != nil {
		t.Fatal(err)
	}
	var rids []uint64
	var ids []string
	cur := data.Cursor()
	for k, v := cur.First(); k != nil; k, v = cur.Next() {
		rid, _ := catalog.RecordID(k)
		rids = append(rids, rid)
		id, _ := bson.Doc(v).Lookup("_id")
		ids = append(ids, id.StringValue())
	}
	total := uint64(8 * 40 * 2)
	if len(rids) != 50 || rids[0] != total-49 || rids[49] != total {
		t.Fatalf("record ids %v, want %d..%d", rids, total-49, total)
	}
	for i := 1; i < len(rids); i++ {
		if rids[i] != rids[i-1]+1 {
			t.Fatalf("record ids not dense: %v", rids)
		}
	}
	// Each insert command's two documents are adjacent, in order.
	for i := 0; i+1 < len(ids); i++ {
		if ids[i]+"-b" == ids[i+1] {
			continue
		}
		if i > 0 && ids[i-1]+"-b" == ids[i] {
			continue
		}
		t.Fatalf("documents of one insert not adjacent at %d: %v", i, ids)
	}
	checkValid(t, r, "t", "c")
}

func TestConvertAndCloneToCapped(t *testing.T) {
	r := cmdRunner{t, memEnv(t)}
	var docs dbson.A
	for i := 0; i < 10; i++ {
		docs = append(docs, dbson.D{{Key: "_id", Value: 10 - i}, {Key: "seq", Value: i}})
	}
	r.must("t", dbson.D{{Key: "insert", Value: "n"}, {Key: "documents", Value: docs}})
	r.must("t", dbson.D{{Key: "createIndexes", Value: "n"}, {Key: "indexes", Value: dbson.A{dbson.D{{Key: "key", Value: dbson.D{{Key: "seq", Value: 1}}}, {Key: "name", Value: "seq"}}}}})
	cases := []struct {
		name string
		cmd  dbson.D
		code int32
	}{
		{"missing source", dbson.D{{Key: "convertToCapped", Value: "nope"}, {Key: "size", Value: 4096}}, 26},
		{"no size", dbson.D{{Key: "convertToCapped", Value: "n"}}, 40414},
		{"bad size", dbson.D{{Key: "convertToCapped", Value: "n"}, {Key: "size", Value: 5308156746568725891247.0}}, 2},
		{"clone missing source", dbson.D{{Key: "cloneCollectionAsCapped", Value: "nope"}, {Key: "toCollection", Value: "x"}, {Key: "size", Value: 4096}}, 26},
		{"clone onto existing", dbson.D{{Key: "cloneCollectionAsCapped", Value: "n"}, {Key: "toCollection", Value: "n"}, {Key: "size", Value: 4096}}, 48},
		{"clone", dbson.D{{Key: "cloneCollectionAsCapped", Value: "n"}, {Key: "toCollection", Value: "k"}, {Key: "size", Value: 1 << 20}}, 0},
		{"convert", dbson.D{{Key: "convertToCapped", Value: "n"}, {Key: "size", Value: 1 << 20}}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if out := r.run("t", tc.cmd); errCode(out) != tc.code {
				t.Fatalf("code %d, want %d: %s", errCode(out), tc.code, out.String())
			}
		})
	}
	for _, name := range []string{"n", "k"} {
		st := r.must("t", dbson.D{{Key: "collStats", Value: name}})
		if v, _ := st.Lookup("capped"); !v.Boolean() || field(st, "count") != 10 {
			t.Fatalf("%s: %s", name, st.String())
		}
		got, _ := batch(t, r.must("t", dbson.D{{Key: "find", Value: name}}))
		// The source's order (the _id order of n) is the insertion order.
		if s := fmt.Sprint(fields(got, "seq")); s != "[9 8 7 6 5 4 3 2 1 0]" {
			t.Fatalf("%s order %s", name, s)
		}
		checkValid(t, r, "t", name)
	}
	// convertToCapped keeps only the _id index, as mongod.
	ix, _ := batch(t, r.must("t", dbson.D{{Key: "listIndexes", Value: "n"}}))
	if len(ix) != 1 {
		t.Fatalf("indexes after convertToCapped: %d", len(ix))
	}
}
