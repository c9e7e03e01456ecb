package expr

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cairndb/cairn/bson"
)

// limitDoc is the input of the memory-limit tests: strings of 3 KB to
// 600 KiB, arrays of 100 distinct 3,000-byte strings, documents of 1,000
// fields of 300 bytes, and a CSV line of 1,000 fields.
func limitDoc() bson.Doc {
	var b bson.Builder
	for _, n := range []int{3000, 65536, 300 << 10, 600 << 10} {
		b.AppendString(fmt.Sprintf("s%d", n), strings.Repeat("x", n))
	}
	for _, p := range []string{"a", "b", "c", "d"} {
		b.StartArray("arr" + p)
		for i := range 100 {
			b.AppendString(bson.Index(i), fmt.Sprintf("%s%04d", p, i)+strings.Repeat("x", 2995))
		}
		b.End()
	}
	for _, p := range []string{"a", "b", "c"} {
		b.StartDocument("obj" + p)
		for i := range 1000 {
			b.AppendString(fmt.Sprintf("%s%d", p, i), strings.Repeat("y", 300))
		}
		b.End()
	}
	b.AppendString("csv", strings.Repeat(strings.Repeat("a", 100)+",", 1000))
	return b.Finish()
}

// withLimits lowers the expression and accumulator memory limits to 1 MiB
// for the test.
func withLimits(t *testing.T) {
	oldArena, oldAcc := maxArena, maxAccumulatorBytes
	maxArena, maxAccumulatorBytes = 1<<20, 1<<20
	t.Cleanup(func() { maxArena, maxAccumulatorBytes = oldArena, oldAcc })
}

// TestExpressionMemoryLimit: every builder of strings, arrays and
// documents counts what it builds against the evaluation's limit and
// fails with ExceededMemoryLimit (146) before building past it; just
// under the limit the same expressions succeed. (The limit is 1 MiB here;
// the values are in KiB.) $toString builds at most a number's or a date's
// few bytes and returns a string as it is.
func TestExpressionMemoryLimit(t *testing.T) {
	withLimits(t)
	doc := limitDoc()
	cases := []struct {
		name, under, over string
	}{
		{"$replaceAll", // 64 KiB × 8 = 512 | × 32 = 2,048
			`{"$replaceAll": {"input": "$s65536", "find": "x", "replacement": "12345678"}}`,
			`{"$replaceAll": {"input": "$s65536", "find": "x", "replacement": "12345678901234567890123456789012"}}`},
		{"$replaceAll of the empty string", // a replacement before each of 64 Ki characters
			`{"$replaceAll": {"input": "$s65536", "find": "", "replacement": "1234567"}}`,
			`{"$replaceAll": {"input": "$s65536", "find": "", "replacement": "1234567890123456789012345678901"}}`},
		{"$replaceOne", // 600 + 300 | 600 + 600
			`{"$replaceOne": {"input": "$s614400", "find": "x", "replacement": "$s307200"}}`,
			`{"$replaceOne": {"input": "$s614400", "find": "x", "replacement": "$s614400"}}`},
		{"$concat", // 600 | 1,200
			`{"$concat": ["$s307200", "$s307200"]}`,
			`{"$concat": ["$s614400", "$s614400"]}`},
		{"$concatArrays", // 600 | 1,200
			`{"$concatArrays": ["$arra", "$arrb"]}`,
			`{"$concatArrays": ["$arra", "$arrb", "$arrc", "$arrd"]}`},
		{"$range", // 50,000 elements, 540 | 150,000, 1,600
			`{"$range": [0, 50000]}`,
			`{"$range": [0, 150000]}`},
		{"$reduce building a string", // 450 (34 MB of intermediate strings) | 1,200
			`{"$reduce": {"input": {"$range": [0, 150]}, "initialValue": "", "in": {"$concat": ["$$value", "$s3000"]}}}`,
			`{"$reduce": {"input": {"$range": [0, 400]}, "initialValue": "", "in": {"$concat": ["$$value", "$s3000"]}}}`},
		{"$reduce building an array", // 3,000 elements (50 MB of intermediate arrays) | 40,000 of 3 KB
			`{"$reduce": {"input": {"$range": [0, 3000]}, "initialValue": [], "in": {"$concatArrays": ["$$value", ["$$this"]]}}}`,
			`{"$reduce": {"input": {"$range": [0, 400]}, "initialValue": [], "in": {"$concatArrays": ["$$value", ["$s3000"]]}}}`},
		{"$zip", // 100 rows of 3 KB defaults, twice | 400
			`{"$zip": {"inputs": [{"$range": [0, 100]}, []], "useLongestLength": true, "defaults": [0, "$s3000"]}}`,
			`{"$zip": {"inputs": [{"$range": [0, 400]}, []], "useLongestLength": true, "defaults": [0, "$s3000"]}}`},
		{"$map", // 200 × 3 KB | 400
			`{"$map": {"input": {"$range": [0, 200]}, "in": "$s3000"}}`,
			`{"$map": {"input": {"$range": [0, 400]}, "in": "$s3000"}}`},
		{"$split", // 1,000 pieces of 100 bytes | 300 Ki empty strings
			`{"$split": ["$csv", ","]}`,
			`{"$split": ["$s307200", "x"]}`},
		{"$substrBytes", // 600 | 600 of a 600 built
			`{"$substrBytes": ["$s614400", 0, 614400]}`,
			`{"$substrBytes": [{"$concat": ["$s307200", "$s307200"]}, 0, 614400]}`},
		{"$substrCP",
			`{"$substrCP": ["$s614400", 0, 614400]}`,
			`{"$substrCP": [{"$concat": ["$s307200", "$s307200"]}, 0, 614400]}`},
		{"$toUpper",
			`{"$toUpper": "$s614400"}`,
			`{"$toUpper": {"$concat": ["$s307200", "$s307200"]}}`},
		{"$setUnion", // 600 | 1,200
			`{"$setUnion": ["$arra", "$arrb"]}`,
			`{"$setUnion": ["$arra", "$arrb", "$arrc", "$arrd"]}`},
		{"$mergeObjects", // 620 | 930 and the 1,000 of its $objectToArray
			`{"$mergeObjects": ["$obja", "$objb"]}`,
			`{"$objectToArray": {"$mergeObjects": ["$obja", "$objb", "$objc"]}}`},
		{"$objectToArray",
			`{"$objectToArray": "$obja"}`,
			`{"$arrayToObject": {"$objectToArray": {"$mergeObjects": ["$obja", "$objb", "$objc"]}}}`},
		{"$regexFindAll", // 3,000 matches | 64 Ki
			`{"$regexFindAll": {"input": "$s3000", "regex": "x"}}`,
			`{"$regexFindAll": {"input": "$s65536", "regex": "x"}}`},
	}
	env := NewEnv(nil)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, x := range []struct {
				js   string
				over bool
			}{{tc.under, false}, {tc.over, true}} {
				e, err := Parse(value(t, x.js), nil)
				if err != nil {
					t.Fatalf("%s: %v", x.js, err)
				}
				v, err := Eval(e, doc, env)
				switch {
				case x.over && errCode(err) != 146:
					t.Errorf("%s: %d bytes, %v; want ExceededMemoryLimit (146)", x.js, len(v.Data), err)
				case !x.over && err != nil:
					t.Errorf("%s: %v", x.js, err)
				case !x.over && v.Type == bson.TypeNull:
					t.Errorf("%s: null", x.js)
				}
				if x.over && cap(env.arena) > 2*maxArena {
					t.Errorf("%s: the arena grew to %d bytes", x.js, cap(env.arena))
				}
			}
		})
	}
}

// TestAccumulatorMemoryLimit: $push, $addToSet and $mergeObjects count
// the values they keep and fail with 146 past their limit (100 MiB, as
// mongod's; 1 MiB here).
func TestAccumulatorMemoryLimit(t *testing.T) {
	withLimits(t)
	docs := func(n int) []bson.Doc {
		out := make([]bson.Doc, n)
		for i := range out {
			var b bson.Builder
			s := fmt.Sprintf("%05d", i) + strings.Repeat("z", 2995)
			b.AppendString("v", s)
			b.StartDocument("o")
			b.AppendString(fmt.Sprintf("f%d", i), s)
			b.End()
			out[i] = b.Finish()
		}
		return out
	}
	cases := []struct{ op, arg string }{
		{"$push", `"$v"`},
		{"$addToSet", `"$v"`},
		{"$mergeObjects", `"$o"`},
	}
	for _, tc := range cases {
		t.Run(tc.op, func(t *testing.T) {
			for _, x := range []struct {
				n    int
				over bool
			}{{300, false}, {400, true}} { // 900 KB | 1,200
				acc, err := NewAccumulator(tc.op, value(t, tc.arg), nil)
				if err != nil {
					t.Fatal(err)
				}
				env := NewEnv(nil)
				var last error
				for _, d := range docs(x.n) {
					if last = acc.Add(d, env); last != nil {
						break
					}
				}
				if x.over != (errCode(last) == 146) || !x.over && last != nil {
					t.Errorf("%s over %d documents: %v (over the limit: %v)", tc.op, x.n, last, x.over)
				}
			}
		})
	}
}
