package agg

import (
	"testing"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/query"
)

func TestIndexFilter(t *testing.T) {
	for _, tc := range []struct{ pipeline, let, want string }{
		{`[{"$match": {"$expr": {"$eq": ["$g", "$$v"]}}}]`, `{"v": 5}`, `{"g": 5}`},
		{`[{"$match": {"$expr": {"$eq": ["$$v", "$a.b"]}}}]`, `{"v": "x"}`, `{"a.b": "x"}`},
		{`[{"$match": {"k": 1, "$expr": {"$and": [{"$eq": ["$g", 7]}, {"$gt": ["$h", 1]}, {"$eq": ["$i", "$$v"]}]}}}]`, `{"v": 2.5}`,
			`{"k": 1, "g": 7, "i": 2.5}`},
		{`[{"$match": {"$expr": {"$eq": ["$g", "$h"]}}}]`, ``, ``},
		{`[{"$match": {"$expr": {"$eq": ["$g", "$$ROOT"]}}}]`, ``, ``},
		{`[{"$match": {"$expr": {"$eq": ["$g", "$$v"]}}}]`, `{"v": [1, 2]}`, ``},
		{`[{"$match": {"$expr": {"$eq": ["$g", "$$v"]}}}]`, `{"v": null}`, ``},
		{`[{"$match": {"$expr": {"$eq": ["$g", {"$add": [1, 2]}]}}}]`, ``, ``},
		{`[{"$project": {"g": 1}}, {"$match": {"g": 1}}]`, ``, ``},
		{`[{"$match": {"g": {"$gt": 1}}}]`, ``, `{"g": {"$gt": 1}}`},
	} {
		c := &Context{DB: "test", Coll: "c", Query: &query.Options{}}
		if tc.let != "" {
			l, err := bson.UnmarshalExtJSON([]byte(tc.let), false)
			if err != nil {
				t.Fatal(err)
			}
			withVars(c, l)
		}
		p, err := Parse(c, parseJSONArray(t, tc.pipeline))
		if err != nil {
			t.Fatalf("%s: %v", tc.pipeline, err)
		}
		got := ""
		if f := p.IndexFilter(); f != nil {
			j, _ := f.MarshalExtJSON(false)
			got = string(j)
		}
		want := ""
		if tc.want != "" {
			w, _ := bson.UnmarshalExtJSON([]byte(tc.want), false)
			j, _ := w.MarshalExtJSON(false)
			want = string(j)
		}
		if got != want {
			t.Errorf("%s with %s: IndexFilter %s, want %s", tc.pipeline, tc.let, got, want)
		}
	}
}

// filteredCatalog records the filters $lookup asks it to serve.
type filteredCatalog struct {
	memCatalog
	filters []string
}

func (f *filteredCatalog) ScanFiltered(db, coll string, filter bson.Doc) (Iterator, error) {
	j, _ := filter.MarshalExtJSON(false)
	f.filters = append(f.filters, string(j))
	return f.Scan(db, coll)
}

func TestLookupAsksForIndexedScan(t *testing.T) {
	foreign := `[{"_id": 1, "g": 1}, {"_id": 2, "g": [1, 2]}, {"_id": 3, "g": 2}, {"_id": 4}, {"_id": 5, "g": 1.0}]`
	run := func(cat Catalog) string {
		ctx := &Context{DB: "test", Coll: "c", Catalog: cat}
		p, err := Parse(ctx, parseJSONArray(t, `[{"$lookup": {"from": "f", "let": {"v": "$x"},
			"pipeline": [{"$match": {"$expr": {"$eq": ["$g", "$$v"]}}}, {"$project": {"_id": 1}}], "as": "m"}}]`))
		if err != nil {
			t.Fatal(err)
		}
		it, err := p.Run(&SliceIterator{Docs: parseJSONArray(t, `[{"_id": "a", "x": 1}, {"_id": "b", "x": 2}, {"_id": "c"}]`)})
		if err != nil {
			t.Fatal(err)
		}
		docs, err := Drain(it)
		if err != nil {
			t.Fatal(err)
		}
		return canonical(t, docs)
	}
	plain := &memCatalog{colls: map[string][]bson.Doc{"f": parseJSONArray(t, foreign)}}
	filtered := &filteredCatalog{memCatalog: memCatalog{colls: map[string][]bson.Doc{"f": parseJSONArray(t, foreign)}}}
	want, got := run(plain), run(filtered)
	if got != want {
		t.Fatalf("with filtered scans %s\nwithout            %s", got, want)
	}
	if w := `{"_id":"a","x":{"$numberInt":"1"},"m":[{"_id":{"$numberInt":"1"}},{"_id":{"$numberInt":"5"}}]}`; len(got) < len(w) || got[1:1+len(w)] != w {
		t.Fatalf("unexpected answer %s", got)
	}
	if len(filtered.filters) != 2 || filtered.filters[0] != `{"g":1}` || filtered.filters[1] != `{"g":2}` {
		t.Fatalf("filters asked for: %v", filtered.filters)
	}
}
