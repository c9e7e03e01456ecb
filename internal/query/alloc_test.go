package query

import "testing"

func TestMatchDoesNotAllocate(t *testing.T) {
	doc := d(t, `{"_id": 1, "name": "x", "a": {"b": 5, "c": [1, 2, 3]}, "n": 42, "tags": ["p", "q"]}`)
	for _, spec := range []string{
		`{"n": 42}`,
		`{"a.b": {"$gte": 1, "$lt": 10}}`,
		`{"a.c": 2}`,
		`{"tags": {"$in": ["q", "z"]}}`,
		`{"name": "x", "n": {"$ne": 3}, "missing": null}`,
		`{"$or": [{"n": 1}, {"a.b": 5}]}`,
		`{"n": {"$in": [1, 2, 3, 4, 5, 6, 7, 8, 9, 42]}}`,
	} {
		f, err := ParseFilter(d(t, spec), nil)
		if err != nil {
			t.Fatal(err)
		}
		if !f.Match(doc) {
			t.Fatalf("%s should match", spec)
		}
		if n := testing.AllocsPerRun(100, func() { f.Match(doc) }); n != 0 {
			t.Errorf("Match(%s) allocates %v times", spec, n)
		}
	}
}

func BenchmarkMatchDotted(b *testing.B) {
	doc := d(b, `{"_id": 1, "name": "x", "a": {"b": 5, "c": [1, 2, 3]}, "n": 42}`)
	f, _ := ParseFilter(d(b, `{"a.b": {"$gte": 1, "$lt": 10}, "n": 42}`), nil)
	b.ReportAllocs()
	for b.Loop() {
		f.Match(doc)
	}
}

func BenchmarkUpdateSetInc(b *testing.B) {
	doc := d(b, `{"_id": 1, "name": "x", "a": {"b": 5, "c": [1, 2, 3]}, "n": 42, "tags": ["p", "q"]}`)
	u, err := ParseUpdate(val(b, `{"$set": {"a.b": 6, "name": "y"}, "$inc": {"n": 1}}`), nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := u.Apply(buf, doc, nil, false); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkProjectInclusion(b *testing.B) {
	doc := d(b, `{"_id": 1, "name": "x", "a": {"b": 5, "c": [1, 2, 3]}, "n": 42, "tags": ["p", "q"]}`)
	p, err := ParseProjection(d(b, `{"name": 1, "a.b": 1}`), nil)
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Apply(buf, doc, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSortKey(b *testing.B) {
	doc := d(b, `{"_id": 1, "name": "x", "a": {"b": 5, "c": [1, 2, 3]}, "n": 42}`)
	s, _ := ParseSort(d(b, `{"a.c": -1, "name": 1}`), nil)
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	for b.Loop() {
		buf = s.Key(buf[:0], doc)
	}
}
