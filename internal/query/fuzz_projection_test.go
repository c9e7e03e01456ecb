package query

import (
	"testing"

	"github.com/cairndb/cairn/bson"
)

// FuzzParseProjection compiles arbitrary projections (with an optional
// filter, for the positional operator) and applies them to the seed
// documents: an error must carry a code, and nothing may panic.
func FuzzParseProjection(f *testing.F) {
	for _, s := range []string{
		`{"p": {"a": 1, "b.c": 1}}`,
		`{"p": {"a": 0, "_id": 0}}`,
		`{"p": {"a.$": 1}, "f": {"a": {"$gt": 1}}}`,
		`{"p": {"a": {"$elemMatch": {"b": 4}}}}`,
		`{"p": {"a": {"$slice": [1, 2]}, "b": {"$slice": -1}}}`,
		`{"p": {"x": {"$concat": ["$b", "!"]}, "y": "$a", "z": {"$literal": 1}}}`,
		`{"p": {"s": {"$meta": "textScore"}}}`,
		`{"p": {"a": {"b": 1, "c": {"$add": [1, "$_id"]}}}}`,
		`{"p": {"a": 1, "a.b": 1}}`,
		`{"p": {"$a": 1}}`,
	} {
		f.Add([]byte(d(f, s)))
	}
	docs := fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, spec []byte) {
		if !validDoc(spec) {
			return
		}
		pv, ok := bson.Doc(spec).Lookup("p")
		if !ok || pv.Type != bson.TypeDocument {
			return
		}
		var flt *Filter
		if fv, ok := bson.Doc(spec).Lookup("f"); ok && fv.Type == bson.TypeDocument {
			var err error
			if flt, err = ParseFilter(fv.Document(), nil); err != nil {
				return
			}
		}
		p, err := ParseProjection(pv.Document(), nil)
		if err != nil {
			if errCode(err) == 0 {
				t.Fatalf("error without a code: %v", err)
			}
			return
		}
		for _, doc := range append(docs, bson.Doc(spec)) {
			var md MatchDetails
			if flt != nil {
				flt.MatchDetails(doc, &md)
			}
			out, err := p.Apply(nil, doc, &md)
			if err != nil {
				if errCode(err) == 0 {
					t.Fatalf("apply error without a code: %v", err)
				}
				continue
			}
			if err := bson.Validate(out, bson.MaxDepth+2); err != nil {
				t.Fatalf("projection of %s produced invalid BSON: %v", doc, err)
			}
		}
	})
}
