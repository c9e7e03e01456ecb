package query

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cairndb/cairn/bson"
)

var fuzzDocs = []string{
	`{"_id": 1, "a": 1, "b": "x"}`,
	`{"_id": 2, "a": [1, [2, 3], {"b": 4}], "c": null}`,
	`{"_id": 3, "a": {"b": [{"c": 1}, {"c": [5, 6]}]}, "d": {"$numberDecimal": "1.5"}}`,
	`{"_id": 4, "a": [], "b": {"$binary": {"base64": "AQID", "subType": "00"}}}`,
	`{"_id": 5, "0": {"1": [7]}, "a": {"$numberDouble": "NaN"}}`,
	`{"_id": 6, "loc": {"type": "Polygon", "coordinates": [[[0, 0], [2, 0], [2, 2], [0, 0]]]}, "b": [[1, 1], {"type": "Point", "coordinates": [1, 2]}], "p": [0.5, 1], "q": {"x": 1, "y": 1}}`,
}

func fuzzSeeds(t testing.TB) []bson.Doc {
	var out []bson.Doc
	for _, s := range fuzzDocs {
		out = append(out, d(t, s))
	}
	return out
}

// validDoc reports whether b is well-formed BSON to use as a spec.
func validDoc(b []byte) bool {
	return bson.Validate(b, bson.MaxDepth) == nil
}

func FuzzParseFilter(f *testing.F) {
	for _, s := range []string{
		`{"a": 1}`, `{"a.b": {"$gt": 1, "$lt": [1]}}`, `{"$or": [{"a": null}, {"b": {"$exists": false}}]}`,
		`{"a": {"$elemMatch": {"b": {"$in": [1, {"$regularExpression": {"pattern": "x", "options": "i"}}]}}}}`,
		`{"a": {"$all": [[1], 2]}, "b": {"$size": 0}, "c": {"$type": ["number", "array"]}}`,
		`{"a": {"$not": {"$mod": [3, 1]}}, "b": {"$bitsAnySet": [1, 64]}, "a.0.1": {"$ne": 2}}`,
		`{"$nor": [{"a": {"$elemMatch": {"$gte": 2}}}], "b": {"$regex": "^x", "$options": "mx"}}`,
		`{"loc": {"$geoWithin": {"$geometry": {"type": "Polygon", "coordinates": [[[0, 0], [3, 0], [3, 3], [0, 0]]]}}}, "b": {"$geoIntersects": {"$geometry": {"type": "LineString", "coordinates": [[0, 0], [1, 1]]}}}}`,
		`{"loc": {"$geoWithin": {"$centerSphere": [[1, 2], 0.1]}}, "p": {"$within": {"$polygon": [[0, 0], [1, 5], [2, 0]]}}, "q": {"$geoWithin": {"$box": [[0, 0], [1, 1]]}}}`,
		`{"$jsonSchema": {"required": ["a"], "properties": {"a": {"bsonType": ["int", "array"], "minimum": 1, "items": [{"enum": [1, "x"]}], "additionalItems": false}}, "patternProperties": {"^b": {"pattern": "y", "maxLength": 3}}, "additionalProperties": {"anyOf": [{"uniqueItems": true}, {"not": {"minProperties": 1}}]}, "dependencies": {"a": ["c"]}}}`,
	} {
		f.Add([]byte(d(f, s)))
	}
	docs := fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, spec []byte) {
		if !validDoc(spec) {
			return
		}
		flt, err := ParseFilter(bson.Doc(spec), nil)
		if err != nil {
			if errCode(err) == 0 {
				t.Fatalf("error without a code: %v", err)
			}
			return
		}
		for _, doc := range append(docs, bson.Doc(spec)) {
			var md MatchDetails
			flt.MatchDetails(doc, &md)
			var b bson.Builder
			_ = flt.UpsertSeed(&b)
			flt.IDEquality()
		}
	})
}

func FuzzParseUpdate(f *testing.F) {
	for _, s := range []string{
		`{"u": {"$set": {"a.b": 1, "c.0": [1]}, "$unset": {"d": 1}}}`,
		`{"u": {"$inc": {"a": 1}, "$mul": {"x.y": 2.5}, "$min": {"b": 0}, "$max": {"c": "z"}}}`,
		`{"u": {"$push": {"a": {"$each": [3, 1], "$sort": 1, "$slice": -2, "$position": 0}}, "$addToSet": {"b": {"$each": [1]}}}}`,
		`{"u": {"$pull": {"a": {"$gt": 1}}, "$pullAll": {"b": [1]}, "$pop": {"c": -1}, "$bit": {"d": {"and": 5}}}}`,
		`{"u": {"$rename": {"a": "z"}, "$currentDate": {"t": {"$type": "timestamp"}}, "$setOnInsert": {"n": 1}}}`,
		`{"u": {"$set": {"a.$[].b": 1, "a.$": 2}}}`,
		`{"u": {"x": 1, "y": {"$z": 1}}}`,
		`{"u": [{"$set": {"a": 1}}]}`,
		`{"u": {"$set": {"a": 1, "a": 2}, "$inc": {"a": 1}}}`,
		`{"u": {"_id": 1, "_id": 2}}`,
	} {
		f.Add([]byte(d(f, s)), true)
	}
	// A huge $addToSet/$pullAll: linear, not quadratic (issue 19).
	var each strings.Builder
	for i := range 20000 {
		if i > 0 {
			each.WriteByte(',')
		}
		fmt.Fprintf(&each, "%d", i%15000)
	}
	f.Add([]byte(d(f, `{"u": {"$addToSet": {"a": {"$each": [`+each.String()+`]}}, "$pullAll": {"b": [`+each.String()+`]}}}`)), true)
	docs := fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, spec []byte, upsert bool) {
		if !validDoc(spec) {
			return
		}
		u, ok := bson.Doc(spec).Lookup("u")
		if !ok {
			return
		}
		var filters []bson.Doc
		if af, ok := bson.Doc(spec).Lookup("f"); ok && af.Type == bson.TypeArray {
			it := bson.Doc(af.Data).Iter()
			for it.Next() {
				if v := it.Element().Value; v.Type == bson.TypeDocument {
					filters = append(filters, bson.Doc(v.Data))
				}
			}
		}
		upd, err := ParseUpdate(u, filters, nil)
		if err != nil {
			if errCode(err) == 0 {
				t.Fatalf("error without a code: %v", err)
			}
			return
		}
		for _, doc := range docs {
			out, _, err := upd.Apply(nil, doc, &MatchDetails{HasKey: true, ElemMatchKey: "1"}, upsert)
			if err != nil {
				if errCode(err) == 0 {
					t.Fatalf("error without a code: %v", err)
				}
				continue
			}
			if verr := bson.Validate(out, bson.MaxDepth+10); verr != nil {
				t.Fatalf("update produced invalid BSON: %v", verr)
			}
		}
	})
}
