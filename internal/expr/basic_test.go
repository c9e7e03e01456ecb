package expr

import "testing"

func TestPathsAndLiterals(t *testing.T) {
	runCases(t, []evalCase{
		{expr: `"$a"`, doc: `{"a": 1}`, want: `int 1`},
		{expr: `"$a.b"`, doc: `{"a": {"b": "x"}}`, want: `string "x"`},
		{expr: `"$a.b"`, doc: `{"a": [{"b": 1}, {"c": 2}, 3, [{"b": 4}], {"b": [5]}]}`, want: `array [1,[5]]`},
		{expr: `"$a.b.c"`, doc: `{"a": [{"b": [{"c": 1}, {"c": 2}]}, {"b": {"c": 3}}]}`, want: `array [[1,2],3]`},
		{expr: `"$a"`, doc: `{}`, want: `missing`},
		{expr: `"$a.b"`, doc: `{"a": 5}`, want: `missing`},
		{expr: `"$$ROOT"`, doc: `{"a": 5}`, want: `object {"a":5}`},
		{expr: `"$$CURRENT.a"`, doc: `{"a": 5}`, want: `int 5`},
		{expr: `"$$REMOVE"`, want: `missing`},
		{expr: `"abc"`, want: `string "abc"`},
		{expr: `{"$literal": "$a"}`, want: `string "$a"`},
		{expr: `{"x": "$a", "y": {"z": "$b"}, "m": "$missing"}`, doc: `{"a": 1, "b": 2}`, want: `object {"x":1,"y":{"z":2}}`},
		{expr: `["$a", "$missing", 3]`, doc: `{"a": 1}`, want: `array [1,null,3]`},
		{expr: `{}`, want: `object {}`},
		{expr: `"$"`, code: 16872},
		{expr: `"$$"`, code: 16869},
		{expr: `"$$x"`, code: 17276, msg: "Use of undefined variable: x"},
		{expr: `"$a..b"`, code: 15998},
		{expr: `{"$foo": 1}`, code: 168, msg: "Unrecognized expression '$foo'"},
		{expr: `{"$add": [1], "b": 2}`, code: 15983},
		{expr: `{"a": 1, "$b": 2}`, code: 16410},
		{expr: `{"a.b": 1}`, code: 16412},
		{expr: `"$$CLUSTER_TIME"`, code: 51144},
		{expr: `{"$cond": [false, "$$CLUSTER_TIME", 1]}`, want: `int 1`},
	})
}

func TestLet(t *testing.T) {
	runCases(t, []evalCase{
		{expr: `{"$let": {"vars": {"x": "$a", "y": 2}, "in": {"$multiply": ["$$x", "$$y"]}}}`, doc: `{"a": 3}`, want: `int 6`},
		{expr: `{"$let": {"vars": {"x": {"b": 1}}, "in": "$$x.b"}}`, want: `int 1`},
		{expr: `{"$let": {"vars": {"x": 1}, "in": {"$let": {"vars": {"x": 2}, "in": "$$x"}}}}`, want: `int 2`},
		{expr: `{"$let": {"vars": {"X": 1}, "in": "$$X"}}`, code: 16867},
		{expr: `{"$let": {"vars": {"x": 1}}}`, code: 16877},
		{expr: `{"$let": {"in": 1}}`, code: 16876},
		{expr: `{"$let": {"vars": {"x": 1}, "in": 1, "z": 1}}`, code: 16875},
		{expr: `{"$let": {"vars": {"x": 1}, "in": "$$y"}}`, code: 17276},
		{expr: `{"$let": {"vars": {"CURRENT": "$a"}, "in": "$b"}}`, doc: `{"a": {"b": 5}, "b": 1}`, want: `int 5`},
		{expr: `{"$let": {"vars": {"CURRENT": "$a"}, "in": "$$ROOT.b"}}`, doc: `{"a": {"b": 5}, "b": 1}`, want: `int 1`},
	})
}

func TestCommandLet(t *testing.T) {
	opts := &Options{Let: doc(t, `{"lim": 5, "twice": {"$multiply": ["$$lim", 2]}}`)}
	got, err := evalJSON(t, `{"$add": ["$$lim", "$$twice", "$a"]}`, `{"a": 1}`, opts)
	if err != nil || got != "int 16" {
		t.Fatalf("got %s, %v", got, err)
	}
	_, err = Parse(value(t, `1`), &Options{Let: doc(t, `{"x": "$a"}`)})
	if errCode(err) != 4890500 {
		t.Fatalf("field path in let: %v", err)
	}
}

func TestMatches(t *testing.T) {
	x := mustParse(t, `{"$gt": ["$a", 1]}`)
	env := NewEnv(nil)
	for _, c := range []struct {
		doc  string
		want bool
	}{{`{"a": 2}`, true}, {`{"a": 1}`, false}, {`{}`, false}} {
		got, err := Matches(x, doc(t, c.doc), env)
		if err != nil || got != c.want {
			t.Errorf("%s: %v %v", c.doc, got, err)
		}
	}
}
