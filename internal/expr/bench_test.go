package expr

import (
	"testing"

	"github.com/cairndb/cairn/bson"
)

func benchSetup(tb testing.TB, exprJS string) (Expr, bson.Doc, *Env) {
	x, err := Parse(value(tb, exprJS), nil)
	if err != nil {
		tb.Fatal(err)
	}
	d := doc(tb, `{"_id": 1, "name": "abc", "a": {"b": 42, "c": [1, 2, 3]}, "price": 12.5, "qty": 7, "tax": 0.2}`)
	return x, d, NewEnv(nil)
}

const (
	benchCompare = `{"$gt": ["$a.b", 40]}`
	benchArith   = `{"$multiply": [{"$add": ["$price", {"$multiply": ["$price", "$tax"]}]}, {"$subtract": ["$qty", 1]}]}`
)

func BenchmarkFieldPathCompare(b *testing.B) {
	x, d, env := benchSetup(b, benchCompare)
	b.ReportAllocs()
	for b.Loop() {
		if v, err := Eval(x, d, env); err != nil || !v.Boolean() {
			b.Fatal(v, err)
		}
	}
}

func BenchmarkArithmetic(b *testing.B) {
	x, d, env := benchSetup(b, benchArith)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Eval(x, d, env); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMapFilter(b *testing.B) {
	x, d, env := benchSetup(b, `{"$map": {"input": {"$filter": {"input": "$a.c", "cond": {"$gte": ["$$this", 2]}}}, "in": {"$multiply": ["$$this", 2]}}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Eval(x, d, env); err != nil {
			b.Fatal(err)
		}
	}
}

func TestNoAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts")
	}
	for _, js := range []string{benchCompare, benchArith,
		`{"$cond": [{"$and": [{"$eq": ["$name", "abc"]}, {"$lt": ["$qty", 10]}]}, "$a.b", 0]}`,
		`{"$concat": ["$name", "-", "$name"]}`,
		`{"$map": {"input": "$a.c", "in": {"$add": ["$$this", 1]}}}`,
		`{"$dateToString": {"date": {"$add": [{"$date": "2020-01-01T00:00:00Z"}, {"$multiply": ["$qty", 86400000]}]}, "format": "%Y-%m-%d %H:%M"}}`,
		`{"$year": {"$add": [{"$date": "2020-01-01T00:00:00Z"}, "$qty"]}}`,
		`{"$substrBytes": ["$name", 0, 2]}`,
		`{"$concat": ["$name", "|", {"$toString": "$qty"}]}`,
	} {
		x, d, env := benchSetup(t, js)
		if _, err := Eval(x, d, env); err != nil {
			t.Fatal(err)
		}
		n := testing.AllocsPerRun(100, func() { _, _ = Eval(x, d, env) })
		if n != 0 {
			t.Errorf("%s: %.1f allocations per Eval", js, n)
		}
	}
}

func BenchmarkAccumulators(b *testing.B) {
	d := doc(b, `{"_id": 1, "UserID": {"$numberLong": "435090932899640449"}, "ResolutionWidth": 1368, "URL": "http://example.com/x"}`)
	for _, c := range []struct{ name, op, arg string }{
		{"sum1", "$sum", `1`},
		{"sumField", "$sum", `"$ResolutionWidth"`},
		{"avgToDecimal", "$avg", `{"$toDecimal": "$UserID"}`},
		{"avgStrLen", "$avg", `{"$strLenBytes": "$URL"}`},
		{"min", "$min", `"$URL"`},
	} {
		b.Run(c.name, func(b *testing.B) {
			acc, err := NewAccumulator(c.op, value(b, c.arg), nil)
			if err != nil {
				b.Fatal(err)
			}
			env := NewEnv(nil)
			b.ReportAllocs()
			for b.Loop() {
				if err := acc.Add(d, env); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
