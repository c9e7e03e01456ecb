package expr

import (
	"strings"
	"testing"
)

// caseless compares strings ignoring ASCII case (a stand-in for a
// strength-2 collation).
type caseless struct{}

func (caseless) CompareStrings(a, b string) int {
	return strings.Compare(strings.ToLower(a), strings.ToLower(b))
}

func TestCollation(t *testing.T) {
	for _, c := range []struct{ expr, want string }{
		{`{"$eq": ["abc", "ABC"]}`, `bool true`},
		{`{"$cmp": ["b", "A"]}`, `int 1`},
		{`{"$in": ["X", ["x"]]}`, `bool true`},
		{`{"$setUnion": [["a", "A", "b"]]}`, `array ["a","b"]`},
		{`{"$indexOfArray": [["a", "B"], "b"]}`, `int 1`},
		{`{"$max": ["a", "B"]}`, `string "B"`},
		{`{"$sortArray": {"input": ["b", "A", "c"], "sortBy": 1}}`, `array ["A","b","c"]`},
	} {
		got, err := evalJSON(t, c.expr, "", &Options{Collation: caseless{}})
		if err != nil || got != c.want {
			t.Errorf("%s: got %s, %v; want %s", c.expr, got, err, c.want)
		}
	}
	// binary comparison without a collation
	got, _ := evalJSON(t, `{"$eq": ["abc", "ABC"]}`, "", nil)
	if got != "bool false" {
		t.Errorf("binary $eq: %s", got)
	}
}

func TestNowAndEnvReuse(t *testing.T) {
	opts := &Options{}
	x, err := Parse(value(t, `{"$gt": ["$$NOW", {"$date": "2000-01-01T00:00:00Z"}]}`), opts)
	if err != nil {
		t.Fatal(err)
	}
	env := NewEnv(opts)
	v, err := Eval(x, nil, env)
	if err != nil || !v.Boolean() {
		t.Fatalf("$$NOW: %v %v", v, err)
	}
	// results from EvalKeep survive later evaluations until Reset
	a, _ := Parse(value(t, `{"$concat": ["$s", "1"]}`), opts)
	b, _ := Parse(value(t, `{"$concat": ["$s", "2"]}`), opts)
	d := doc(t, `{"s": "x"}`)
	env.Reset()
	va, _ := EvalKeep(a, d, env)
	vb, _ := EvalKeep(b, d, env)
	if va.StringValue() != "x1" || vb.StringValue() != "x2" {
		t.Fatalf("EvalKeep: %v %v", va, vb)
	}
	if p, ok := FieldPath(mustParse(t, `"$a.b"`)); !ok || p != "a.b" {
		t.Fatalf("FieldPath: %q %v", p, ok)
	}
	if v, ok := Constant(mustParse(t, `{"$add": [1, 2]}`)); !ok || v.Int32() != 3 {
		t.Fatalf("constant folding: %v %v", v, ok)
	}
}

func mustParse(t *testing.T, js string) Expr {
	t.Helper()
	x, err := Parse(value(t, js), nil)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func TestParseObject(t *testing.T) {
	x, err := ParseObject(doc(t, `{"total": {"$add": ["$a", 1]}, "sub": {"x": "$b"}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err := Eval(x, doc(t, `{"a": 1, "b": 2}`), NewEnv(nil))
	if err != nil || show(t, v) != `object {"total":2,"sub":{"x":2}}` {
		t.Fatalf("got %s, %v", show(t, v), err)
	}
	if _, err := ParseObject(doc(t, `{"$add": [1]}`), nil); errCode(err) != 16410 {
		t.Fatalf("operator as field name: %v", err)
	}
}
