package agg

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

const sales = `[
 {"_id":1,"item":"a","price":10,"qty":2,"day":1},
 {"_id":2,"item":"b","price":20,"qty":1,"day":1},
 {"_id":3,"item":"a","price":10,"qty":5,"day":2},
 {"_id":4,"item":"c","price":5.5,"qty":10,"day":2},
 {"_id":5,"item":"b","price":20,"qty":null,"day":3}
]`

func TestGroup(t *testing.T) {
	runCases(t, []pipeCase{
		{name: "sum avg", input: sales,
			pipeline: `[{"$group":{"_id":"$item","total":{"$sum":{"$multiply":["$price","$qty"]}},"avgQty":{"$avg":"$qty"},"n":{"$count":{}}}},{"$sort":{"_id":1}}]`,
			want:     `[{"_id":"a","total":70,"avgQty":3.5,"n":2},{"_id":"b","total":20,"avgQty":1.0,"n":2},{"_id":"c","total":55.0,"avgQty":10.0,"n":1}]`},
		{name: "null id", input: sales, pipeline: `[{"$group":{"_id":null,"max":{"$max":"$price"},"min":{"$min":"$qty"}}}]`,
			want: `[{"_id":null,"max":20,"min":1}]`},
		{name: "missing id is null", input: sales, pipeline: `[{"$group":{"_id":"$nope","n":{"$sum":1}}}]`,
			want: `[{"_id":null,"n":5}]`},
		{name: "compound id", input: sales, pipeline: `[{"$group":{"_id":{"i":"$item","d":"$day"},"q":{"$push":"$qty"}}},{"$sort":{"_id.d":1,"_id.i":1}}]`,
			want: `[{"_id":{"i":"a","d":1},"q":[2]},{"_id":{"i":"b","d":1},"q":[1]},{"_id":{"i":"a","d":2},"q":[5]},{"_id":{"i":"c","d":2},"q":[10]},{"_id":{"i":"b","d":3},"q":[null]}]`},
		{name: "numeric ids equal", input: `[{"_id":1,"k":1},{"_id":2,"k":1.0},{"_id":3,"k":{"$numberLong":"1"}}]`,
			pipeline: `[{"$group":{"_id":"$k","n":{"$sum":1}}}]`, want: `[{"_id":1,"n":3}]`},
		{name: "first last addToSet", input: sales, pipeline: `[{"$sort":{"_id":1}},{"$group":{"_id":"$day","f":{"$first":"$item"},"l":{"$last":"$item"},"s":{"$addToSet":"$price"}}},{"$sort":{"_id":1}}]`,
			want: `[{"_id":1,"f":"a","l":"b","s":[10,20]},{"_id":2,"f":"a","l":"c","s":[10,5.5]},{"_id":3,"f":"b","l":"b","s":[20]}]`},
		{name: "topN", input: sales, pipeline: `[{"$group":{"_id":null,"top":{"$topN":{"n":2,"sortBy":{"qty":-1},"output":"$_id"}}}}]`,
			want: `[{"_id":null,"top":[4,3]}]`},
		{name: "empty input", input: `[]`, pipeline: `[{"$group":{"_id":null,"n":{"$sum":1}}}]`, want: `[]`},
		{name: "no id", input: sales, pipeline: `[{"$group":{"n":{"$sum":1}}}]`, code: 15955},
		{name: "bad accumulator", input: sales, pipeline: `[{"$group":{"_id":null,"n":{"$bogus":1}}}]`, code: 15952},
		{name: "not accumulator object", input: sales, pipeline: `[{"$group":{"_id":null,"n":1}}]`, code: 40234},
		{name: "dotted name", input: sales, pipeline: `[{"$group":{"_id":null,"a.b":{"$sum":1}}}]`, code: 40235},
		{name: "operator name", input: sales, pipeline: `[{"$group":{"_id":null,"$a":{"$sum":1}}}]`, code: 40236},
		{name: "group not object", input: sales, pipeline: `[{"$group":1}]`, code: 15947},
		{name: "sortByCount", input: sales, pipeline: `[{"$sortByCount":"$item"},{"$match":{"count":{"$gt":1}}},{"$sort":{"_id":1}}]`,
			want: `[{"_id":"a","count":2},{"_id":"b","count":2}]`},
		{name: "sortByCount order", input: `[{"k":1},{"k":2},{"k":2}]`, pipeline: `[{"$sortByCount":"$k"}]`,
			want: `[{"_id":2,"count":2},{"_id":1,"count":1}]`},
		{name: "sortByCount bad", input: sales, pipeline: `[{"$sortByCount":"item"}]`, code: 40148},
	})
}

// bigInput makes n documents with distinct keys and some padding.
func bigInput(n, pad int) []bson.Doc {
	docs := make([]bson.Doc, n)
	p := strings.Repeat("x", pad)
	for i := range docs {
		var b bson.Builder
		b.AppendInt32("_id", int32(i))
		b.AppendInt32("k", int32((i*7919)%n))
		b.AppendString("p", p)
		docs[i] = b.Finish()
	}
	return docs
}

func TestMemoryLimitAndSpill(t *testing.T) {
	for _, tc := range []struct {
		name, pipeline string
	}{
		{"sort", `[{"$sort":{"k":-1}}]`},
		{"group", `[{"$group":{"_id":"$k","p":{"$push":"$p"}}},{"$sort":{"_id":-1}}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stages := parseJSONArray(t, tc.pipeline)
			input := bigInput(3000, 100)
			ctx := &Context{DB: "d", Coll: "c", MemoryLimit: 64 * 1024, TempDir: t.TempDir()}
			p, err := Parse(ctx, stages)
			if err != nil {
				t.Fatal(err)
			}
			it, err := p.Run(&SliceIterator{Docs: append([]bson.Doc(nil), input...)})
			if err != nil {
				t.Fatal(err)
			}
			_, err = Drain(it)
			var me *mongoerr.Error
			if !errors.As(err, &me) || me.Code != 292 {
				t.Fatalf("want 292, got %v", err)
			}
			ctx = &Context{DB: "d", Coll: "c", MemoryLimit: 64 * 1024, TempDir: t.TempDir(), AllowDiskUse: true}
			if p, err = Parse(ctx, stages); err != nil {
				t.Fatal(err)
			}
			if it, err = p.Run(&SliceIterator{Docs: append([]bson.Doc(nil), input...)}); err != nil {
				t.Fatal(err)
			}
			docs, err := Drain(it)
			if err != nil {
				t.Fatal(err)
			}
			if len(docs) != 3000 {
				t.Fatalf("got %d docs", len(docs))
			}
			for i, d := range docs {
				key := "k"
				if tc.name == "group" {
					key = "_id"
				}
				v, _ := d.Lookup(key)
				if int(v.Int32()) != 2999-i {
					t.Fatalf("doc %d: %s", i, d.String())
				}
			}
		})
	}
}

func TestGroupSpillKeepsGroupsWhole(t *testing.T) {
	// Many documents per key, more keys than fit: every group's count must
	// be complete and appear exactly once.
	var docs []bson.Doc
	for i := 0; i < 4000; i++ {
		var b bson.Builder
		b.AppendString("k", fmt.Sprintf("key-%04d", i%500))
		docs = append(docs, b.Finish())
	}
	ctx := &Context{DB: "d", Coll: "c", MemoryLimit: 8 * 1024, AllowDiskUse: true, TempDir: t.TempDir()}
	p, err := Parse(ctx, parseJSONArray(t, `[{"$group":{"_id":"$k","n":{"$sum":1}}}]`))
	if err != nil {
		t.Fatal(err)
	}
	it, _ := p.Run(&SliceIterator{Docs: docs})
	out, err := Drain(it)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, d := range out {
		id, _ := d.Lookup("_id")
		n, _ := d.Lookup("n")
		if seen[id.StringValue()] || n.Int32() != 8 {
			t.Fatalf("bad group %s", d.String())
		}
		seen[id.StringValue()] = true
	}
	if len(seen) != 500 {
		t.Fatalf("got %d groups", len(seen))
	}
}

// TestGroupManyGroupsKeepValues checks that groups sharing allocation
// blocks (keys, _id values, accumulators, $first values) keep their own
// values: more groups than a block holds, values longer than a shared
// block takes, numeric-equivalent keys of three types, against results
// computed here.
func TestGroupManyGroupsKeepValues(t *testing.T) {
	const groups = 1300
	var parts []string
	for i := 0; i < 2*groups; i++ {
		k := i % groups
		var key string
		switch (i / groups) % 2 {
		case 0:
			key = fmt.Sprintf("%d", k)
		default:
			key = fmt.Sprintf(`{"$numberLong": "%d"}`, k)
		}
		if k%5 == 0 && i >= groups {
			key = fmt.Sprintf("%d.0", k)
		}
		s := strings.Repeat(string(rune('a'+i%26)), 1+(i*37)%9000)
		parts = append(parts, fmt.Sprintf(`{"k": %s, "s": %q, "v": %d}`, key, s, i))
	}
	docs := parseJSONArray(t, "["+strings.Join(parts, ",")+"]")
	got, err := runBoth(t, docs, `[{"$group": {"_id": "$k", "f": {"$first": "$s"}, "l": {"$last": "$s"},
		"sum": {"$sum": "$v"}, "avg": {"$avg": "$v"}, "mn": {"$min": "$s"}, "n": {"$sum": 1}}},
		{"$project": {"f": {"$strLenBytes": "$f"}, "f0": {"$substrBytes": ["$f", 0, 1]}, "l": {"$strLenBytes": "$l"},
			"sum": 1, "avg": 1, "mn": {"$strLenBytes": "$mn"}, "n": 1}},
		{"$sort": {"_id": 1}}]`, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	slen := func(i int) int { return 1 + (i*37)%9000 }
	for k := 0; k < groups; k++ {
		i, j := k, k+groups
		mn := slen(i) // "a".."z" repeated: the smaller letter wins, then the shorter
		if ci, cj := i%26, j%26; cj < ci || cj == ci && slen(j) < slen(i) {
			mn = slen(j)
		}
		want = append(want, fmt.Sprintf(`{"_id": %d, "sum": %d, "avg": %d.0, "n": 2, "f": %d, "f0": %q, "l": %d, "mn": %d}`,
			k, i+j, (i+j)/2, slen(i), string(rune('a'+i%26)), slen(j), mn))
	}
	if w := canonical(t, parseJSONArray(t, "["+strings.Join(want, ",")+"]")); got != w {
		t.Fatalf("got  %.600s\nwant %.600s", got, w)
	}
}

// TestSumFamilies: $sum accumulators of one field plus constants, summed
// together as a family, answer as each does alone (a lone accumulator is
// no family): types (int32, widening past int32's range, int64), missing
// and null values, and inputs that end the shortcut mid-stream (doubles,
// large longs, decimals, strings, arrays on the path).
func TestSumFamilies(t *testing.T) {
	ks := []string{"0", "1", "10", `{"$numberLong": "3"}`, "-7"}
	accs := func(only int) string {
		var parts []string
		for i, k := range ks {
			if only < 0 || only == i {
				parts = append(parts, fmt.Sprintf(`"s%d": {"$sum": {"$add": ["$a.x", %s]}}`, i, k))
			}
		}
		return strings.Join(parts, ", ")
	}
	for name, values := range map[string][]string{
		"int32":        {"1", "2", "3", "-4"},
		"near-max":     {"2147483640", "5", "2147483647"},
		"near-min":     {"-2147483648", "-3"},
		"long":         {`{"$numberLong": "5"}`, "6"},
		"missing-null": {"1", "MISSING", "null", "2"},
		"double":       {"1", "2", "2.5", "3"},
		"big-long":     {"1", `{"$numberLong": "9000000000000"}`, "2"},
		"decimal":      {"1", `{"$numberDecimal": "1.5"}`},
		"string":       {"1", `"x"`},
		"array":        {"1", "ARRAY"},
		"none":         {"MISSING", "null"},
	} {
		var docs []string
		for i := 0; i < 40; i++ {
			v := values[i%len(values)]
			a := fmt.Sprintf(`{"x": %s}`, v)
			switch v {
			case "MISSING":
				a = `{}`
			case "ARRAY":
				a = `[{"x": 1}]`
			}
			docs = append(docs, fmt.Sprintf(`{"_id": %d, "g": %d, "a": %s}`, i, i%3, a))
		}
		input := parseJSONArray(t, "["+strings.Join(docs, ",")+"]")
		run := func(only int) (map[string]string, error) {
			pl := fmt.Sprintf(`[{"$group": {"_id": "$g", %s}}, {"$sort": {"_id": 1}}]`, accs(only))
			out, err := runBoth(t, input, pl, 0, true)
			if err != nil {
				return nil, err
			}
			got := map[string]string{}
			for _, d := range parseJSONArray(t, out) {
				id, _ := d.Lookup("_id")
				it := d.Iter()
				for it.Next() {
					e := it.Element()
					if e.Key != "_id" {
						got[fmt.Sprint(id.Int32(), e.Key)] = fmt.Sprintf("%v %s", e.Value.Type, e.Value.String())
					}
				}
			}
			return got, nil
		}
		all, errAll := run(-1)
		want := map[string]string{}
		var errOne error
		for i := range ks {
			one, err := run(i)
			if err != nil {
				errOne = err
				break
			}
			for k, v := range one {
				want[k] = v
			}
		}
		if errCode(errAll) != errCode(errOne) || (errAll == nil) != (errOne == nil) {
			t.Fatalf("%s: family error %v, alone %v", name, errAll, errOne)
		}
		if errAll == nil && fmt.Sprint(all) != fmt.Sprint(want) {
			t.Errorf("%s:\nfamily %v\nalone  %v", name, all, want)
		}
	}
}
