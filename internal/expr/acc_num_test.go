package expr

import "testing"

// TestNumericFastPath runs $sum and $avg whose argument takes the numeric
// fast path (a field path, a constant, an $add of them) over values of
// every kind, and checks each result against the expected one and against
// the general evaluation (the fast path switched off).
func TestNumericFastPath(t *testing.T) {
	mixed := []string{
		`{"x": 1}`, `{"x": {"$numberLong": "2"}}`, `{"x": 2.5}`, `{"x": null}`, `{}`, `{"x": "s"}`,
		`{"x": [1, 2]}`, `{"x": {"$date": "1970-01-01T00:00:00.010Z"}}`, `{"x": true}`,
	}
	nums := mixed[:5] // $add fails on strings, arrays and booleans
	cases := []struct {
		op, arg string
		docs    []string
		want    string
		fast    bool // the argument compiles to the fast path
	}{
		{"$sum", `"$x"`, mixed, `double 5.5`, true},
		{"$avg", `"$x"`, mixed, `double 1.8333333333333333`, true},
		{"$sum", `1`, mixed, `int 9`, true},
		{"$sum", `2.5`, mixed, `double 22.5`, true},
		{"$sum", `{"$add": ["$x", 1]}`, nums, `double 8.5`, true},
		{"$avg", `{"$add": ["$x", 1]}`, nums, `double 2.8333333333333335`, true},
		{"$sum", `{"$add": ["$x", "$x"]}`, []string{`{"x": 1}`, `{"x": 2}`}, `int 6`, true},
		// int32 terms overflowing int32 widen to long; the sum stays long.
		{"$sum", `{"$add": ["$x", 1]}`, []string{`{"x": 2147483647}`}, `long 2147483648`, true},
		{"$sum", `"$x"`, []string{`{"x": 2147483647}`, `{"x": 1}`}, `long 2147483648`, true},
		// an int64 $add overflowing makes a double (general path).
		{"$sum", `{"$add": ["$x", {"$numberLong": "1"}]}`, []string{`{"x": {"$numberLong": "9223372036854775807"}}`}, `double 9.223372036854776E+18`, true},
		// the $sum overflowing int64 turns double.
		{"$sum", `"$x"`, []string{`{"x": {"$numberLong": "9223372036854775807"}}`, `{"x": 1}`}, `double 9.223372036854776E+18`, true},
		{"$sum", `{"$add": [1, "$x", 0.5]}`, []string{`{"x": 1}`, `{"x": {"$numberLong": "3"}}`}, `double 7.0`, true},
		// decimals and dates take the general path.
		{"$sum", `"$x"`, []string{`{"x": 1}`, `{"x": {"$numberDecimal": "0.25"}}`}, `decimal {"$numberDecimal":"1.25"}`, true},
		{"$avg", `{"$add": ["$x", 1]}`, []string{`{"x": {"$numberDecimal": "1"}}`, `{"x": 1}`}, `decimal {"$numberDecimal":"2"}`, true},
		{"$sum", `{"$add": ["$x", 1]}`, []string{`{"x": {"$date": "1970-01-01T00:00:00.010Z"}}`, `{"x": 1}`}, `int 2`, true},
		// nested paths, through an array (general path).
		{"$sum", `"$a.b"`, []string{`{"a": {"b": 4}}`, `{"a": [{"b": 1}]}`, `{"a": 3}`, `{"a": {"b": {"$numberLong": "5"}}}`}, `long 9`, true},
		{"$sum", `{"$add": ["$a.b", 1]}`, []string{`{"a": {"b": 4}}`, `{"a": {}}`, `{"a": null}`}, `int 5`, true},
		{"$avg", `"$x"`, []string{`{"x": "s"}`, `{}`}, `null null`, true},
		{"$sum", `{"$multiply": ["$x", 2]}`, []string{`{"x": 1}`}, `int 2`, false},
		{"$sum", `"$$ROOT.x"`, []string{`{"x": 1}`}, `int 1`, false},
	}
	for _, c := range cases {
		for _, fast := range []bool{true, false} {
			spec, err := ParseAccumulator(c.op, value(t, c.arg), nil)
			if err != nil {
				t.Fatalf("%s %s: %v", c.op, c.arg, err)
			}
			if fast && (spec.num != nil) != c.fast {
				t.Errorf("%s %s: fast path compiled %v, want %v", c.op, c.arg, spec.num != nil, c.fast)
			}
			if !fast {
				spec.num = nil
			}
			// acc2 shares the Env's per-document cache of field values.
			acc, acc2 := spec.New(), spec.New()
			env := NewEnv(nil)
			for _, d := range c.docs {
				env.NewDocument()
				if err := acc.Add(doc(t, d), env); err != nil {
					t.Fatalf("%s %s: %v", c.op, c.arg, err)
				}
				if err := acc2.Add(doc(t, d), env); err != nil {
					t.Fatalf("%s %s: %v", c.op, c.arg, err)
				}
			}
			for _, a := range []Accumulator{acc, acc2} {
				if got := show(t, a.Result()); got != c.want {
					t.Errorf("%s %s (fast path %v):\n got %s\nwant %s", c.op, c.arg, fast, got, c.want)
				}
			}
		}
	}
}

// TestSumExactUntilOverflow checks $sum and $avg totals where integers are
// kept exactly until they overflow or a double arrives, whole and split in
// two partial accumulators merged at every point (but where an overflow
// depends on the order of the additions: a parallel $group may then not
// overflow where a serial one does).
func TestSumExactUntilOverflow(t *testing.T) {
	cases := []struct {
		op      string
		vals    []string
		want    string
		ordered bool // no splits
	}{
		{"$sum", []string{`{"$numberLong": "9223372036854775807"}`, `1`, `-1`}, `double 9.223372036854776E+18`, true},
		{"$sum", []string{`{"$numberLong": "-9223372036854775808"}`, `-1`, `2`}, `double -9.223372036854776E+18`, true},
		{"$sum", []string{`{"$numberLong": "9223372036854775807"}`, `{"$numberLong": "9223372036854775807"}`, `-1`}, `double 1.8446744073709552E+19`, false},
		{"$sum", []string{`{"$numberLong": "9007199254740992"}`, `1`, `0.5`}, `double 9.007199254740994E+15`, false},
		{"$sum", []string{`{"$numberLong": "9007199254740993"}`, `0.0`}, `double 9.007199254740992E+15`, false},
		{"$sum", []string{`-5`, `2.5`, `1`}, `double -1.5`, false},
		{"$sum", []string{`2147483647`, `1`, `-1`}, `int 2147483647`, false},
		{"$sum", []string{`1`, `{"$numberDecimal": "0.5"}`, `1.5`}, `decimal {"$numberDecimal":"3.000000000000000000000000000000000"}`, false},
		{"$sum", []string{`null`, `"s"`}, `int 0`, false},
		{"$avg", []string{`{"$numberLong": "9223372036854775807"}`, `{"$numberLong": "9223372036854775807"}`}, `double 9.223372036854776E+18`, false},
		{"$avg", []string{`1`, `2`, `{"$numberLong": "4"}`}, `double 2.3333333333333335`, false},
		{"$avg", []string{`1`, `0.5`}, `double 0.75`, false},
	}
	for _, c := range cases {
		spec, err := ParseAccumulator(c.op, value(t, `"$x"`), nil)
		if err != nil {
			t.Fatal(err)
		}
		for k := 0; k <= len(c.vals); k++ {
			if c.ordered && k != 0 && k != len(c.vals) {
				continue
			}
			a, b := spec.New(), spec.New()
			env := NewEnv(nil)
			for i, v := range c.vals {
				acc := a
				if i >= k {
					acc = b
				}
				if err := acc.Add(doc(t, `{"x": `+v+`}`), env); err != nil {
					t.Fatal(err)
				}
			}
			if err := a.(Merger).Merge(b); err != nil {
				t.Fatal(err)
			}
			if got := show(t, a.Result()); got != c.want {
				t.Errorf("%s %v split at %d:\n got %s\nwant %s", c.op, c.vals, k, got, c.want)
			}
		}
	}
}
