package agg

import (
	"errors"
	"strings"
	"testing"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
)

// memCatalog is an in-memory Catalog for tests.
type memCatalog struct {
	colls map[string][]bson.Doc
}

func (m *memCatalog) Scan(db, coll string) (Iterator, error) {
	return &SliceIterator{Docs: append([]bson.Doc(nil), m.colls[coll]...)}, nil
}

func (m *memCatalog) Out(spec *OutSpec, in Iterator) error {
	docs, err := Drain(in)
	if err != nil {
		return err
	}
	m.colls[spec.Coll] = docs
	return nil
}

func (m *memCatalog) Merge(spec *MergeSpec, in Iterator) error {
	for {
		d, err := in.Next()
		if err != nil || d == nil {
			return err
		}
		id, _ := d.Lookup("_id")
		target := m.colls[spec.Coll]
		idx := -1
		for i, t := range target {
			if tid, _ := t.Lookup("_id"); bson.Equal(tid, id) {
				idx = i
			}
		}
		var existing bson.Doc
		if idx >= 0 {
			existing = target[idx]
		}
		out, act, err := spec.Resolve(existing, cloneDoc(d))
		if err != nil {
			return err
		}
		switch act {
		case MergeInsert:
			if existing != nil {
				return mongoerr.New(mongoerr.DuplicateKey, "E11000 duplicate key")
			}
			m.colls[spec.Coll] = append(target, out)
		case MergeReplace:
			target[idx] = out
		}
	}
}

func (m *memCatalog) CollStats(db, coll string, spec bson.Doc) (bson.Doc, error) {
	var b bson.Builder
	b.AppendString("ns", db+"."+coll)
	b.AppendInt64("count", int64(len(m.colls[coll])))
	return b.Finish(), nil
}

func (m *memCatalog) IndexStats(db, coll string) ([]bson.Doc, error) {
	var b bson.Builder
	b.AppendString("name", "_id_")
	return []bson.Doc{b.Finish()}, nil
}

func (m *memCatalog) LocalSessions(bson.Doc) ([]bson.Doc, error) { return nil, nil }

func parseJSONArray(t testing.TB, s string) []bson.Doc {
	t.Helper()
	if s == "" {
		return nil
	}
	d, err := bson.UnmarshalExtJSON([]byte(`{"a":`+s+`}`), false)
	if err != nil {
		t.Fatalf("bad JSON %s: %v", s, err)
	}
	v, _ := d.Lookup("a")
	var out []bson.Doc
	it := v.Document().Iter()
	for it.Next() {
		out = append(out, it.Element().Value.Document())
	}
	return out
}

func canonical(t testing.TB, docs []bson.Doc) string {
	t.Helper()
	var parts []string
	for _, d := range docs {
		j, err := d.MarshalExtJSON(true)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, string(j))
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// runPipeline runs pipeline (JSON) over input (JSON) with colls as other
// collections.
func runPipeline(t testing.TB, input, pipeline string, colls map[string]string, let string, allowDisk bool) ([]bson.Doc, *memCatalog, error) {
	t.Helper()
	cat := &memCatalog{colls: map[string][]bson.Doc{}}
	for name, docs := range colls {
		cat.colls[name] = parseJSONArray(t, docs)
	}
	ctx := &Context{DB: "test", Coll: "c", Catalog: cat, AllowDiskUse: allowDisk, TempDir: t.TempDir()}
	if let != "" {
		l, err := bson.UnmarshalExtJSON([]byte(let), false)
		if err != nil {
			t.Fatal(err)
		}
		ctx.Query = &query.Options{Let: l}
	}
	p, err := Parse(ctx, parseJSONArray(t, pipeline))
	if err != nil {
		return nil, cat, err
	}
	it, err := p.Run(&SliceIterator{Docs: parseJSONArray(t, input)})
	if err != nil {
		return nil, cat, err
	}
	docs, err := Drain(it)
	return docs, cat, err
}

type pipeCase struct {
	name     string
	input    string
	pipeline string
	want     string // JSON array; ignored when code != 0
	code     int32
	colls    map[string]string
	let      string
}

func runCases(t *testing.T, cases []pipeCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := runPipeline(t, tc.input, tc.pipeline, tc.colls, tc.let, false)
			if tc.code != 0 {
				var me *mongoerr.Error
				if !errors.As(err, &me) || me.Code != tc.code {
					t.Fatalf("want error code %d, got %v (docs %s)", tc.code, err, canonical(t, got))
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if g, w := canonical(t, got), canonical(t, parseJSONArray(t, tc.want)); g != w {
				t.Fatalf("\n got %s\nwant %s", g, w)
			}
		})
	}
}

func errCode(err error) int32 {
	var me *mongoerr.Error
	if errors.As(err, &me) {
		return me.Code
	}
	return 0
}

// runSerial runs p over docs (a copy of the slice) on the row path and
// drains it: its documents and the error the run ends with (a pipeline
// that does not start fails the test).
func runSerial(t testing.TB, p *Pipeline, docs []bson.Doc) ([]bson.Doc, error) {
	t.Helper()
	it, err := p.Run(&SliceIterator{Docs: append([]bson.Doc(nil), docs...)})
	if err != nil {
		t.Fatal(err)
	}
	return Drain(it)
}
