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
