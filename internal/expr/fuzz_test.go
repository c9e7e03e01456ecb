package expr

import (
	"testing"

	"github.com/cairndb/cairn/bson"
)

// fuzzSeeds are expressions seeding FuzzParseEval.
var fuzzSeeds = []string{
	`{"$add": ["$a", 1, {"$multiply": ["$b.c", 2.5]}]}`,
	`{"$cond": [{"$gt": ["$a", 1]}, "$b", {"$literal": "$x"}]}`,
	`{"$map": {"input": {"$range": [0, 10]}, "in": {"$pow": ["$$this", 3]}}}`,
	`{"$reduce": {"input": "$arr", "initialValue": [], "in": {"$concatArrays": ["$$value", ["$$this"]]}}}`,
	`{"$let": {"vars": {"x": "$a"}, "in": {"$filter": {"input": "$arr", "cond": {"$eq": ["$$this", "$$x"]}}}}}`,
	`{"$dateToString": {"date": "$d", "format": "%Y-%m-%d %H:%M:%S %z", "timezone": "Europe/Paris"}}`,
	`{"$dateTrunc": {"date": "$d", "unit": "week", "binSize": 3}}`,
	`{"$regexFindAll": {"input": "$s", "regex": "(a|b)*", "options": "i"}}`,
	`{"$convert": {"input": "$s", "to": "decimal", "onError": null}}`,
	`{"$round": [{"$divide": [{"$toDecimal": "$a"}, 3]}, 2]}`,
	`{"$sortArray": {"input": "$arr", "sortBy": {"x": -1}}}`,
	`{"$zip": {"inputs": ["$arr", "$arr"], "useLongestLength": true}}`,
	`{"$setUnion": ["$arr", [1, 2, 3]]}`,
	`{"$substrCP": ["$s", 1, 2]}`,
	`{"$switch": {"branches": [{"case": "$a", "then": 1}], "default": {"$objectToArray": "$$ROOT"}}}`,
	`{"$mergeObjects": ["$$ROOT", {"z": {"$dateAdd": {"startDate": "$d", "unit": "month", "amount": "$a"}}}]}`,
}

var fuzzDocs = []string{
	`{"a": 3, "b": {"c": 4}, "s": "abcab", "arr": [1, "x", {"x": 2}, [3]], "d": {"$date": "2021-05-01T10:00:00Z"}}`,
	`{"a": {"$numberDecimal": "1E+6000"}, "s": "", "arr": [], "d": null}`,
	`{"a": -2147483648, "arr": [{"$numberLong": "9223372036854775807"}, 1e308]}`,
}

func FuzzParseEval(f *testing.F) {
	for _, s := range fuzzSeeds {
		for _, d := range fuzzDocs {
			f.Add([]byte(doc(f, `{"e": `+s+`}`)), []byte(doc(f, d)))
		}
	}
	oldWork, oldArena := maxWork, maxArena
	maxWork, maxArena = 200_000, 16<<20
	defer func() { maxWork, maxArena = oldWork, oldArena }()
	f.Fuzz(func(t *testing.T, exprBytes, docBytes []byte) {
		if bson.Validate(exprBytes, 50) != nil || bson.Validate(docBytes, 50) != nil {
			return
		}
		ev, ok := bson.Doc(exprBytes).Lookup("e")
		if !ok {
			return
		}
		opts := &Options{}
		x, err := Parse(ev, opts)
		if err != nil {
			if errCode(err) == 0 {
				t.Fatalf("parse error without a code: %v", err)
			}
			return
		}
		env := NewEnv(opts)
		for i := 0; i < 2; i++ { // twice: the second run reuses the arena
			v, err := Eval(x, bson.Doc(docBytes), env)
			if err != nil {
				if errCode(err) == 0 {
					t.Fatalf("eval error without a code: %v", err)
				}
				return
			}
			if v.Type != 0 {
				var b bson.Builder
				b.AppendValue("v", v)
				if err := bson.Validate(b.Finish(), 200); err != nil {
					t.Fatalf("invalid result %v: %v", v, err)
				}
			}
		}
		_, _ = ParseObject(bson.Doc(exprBytes), opts)
	})
}

// FuzzLookup checks the in-place field lookup against bson.Doc.Lookup.
func FuzzLookup(f *testing.F) {
	for _, d := range fuzzDocs {
		f.Add([]byte(doc(f, d)), "a")
		f.Add([]byte(doc(f, d)), "arr")
	}
	f.Fuzz(func(t *testing.T, d []byte, key string) {
		if bson.Validate(d, 50) != nil {
			return
		}
		want, wok := bson.Doc(d).Lookup(key)
		got, gok := lookup(d, key)
		if wok != gok || want.Type != got.Type || string(want.Data) != string(got.Data) {
			t.Fatalf("lookup(%q) = %v %v, want %v %v", key, got, gok, want, wok)
		}
	})
}
