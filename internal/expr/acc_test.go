package expr

import (
	"fmt"
	"math"
	"math/big"
	"strings"
	"testing"
)

func TestAccumulators(t *testing.T) {
	docs := []string{
		`{"a": 1, "s": "x", "g": {"p": 1}}`,
		`{"a": 2.5, "s": "y", "g": {"q": 2}}`,
		`{"a": null, "s": "x"}`,
		`{"s": "z", "a": "str"}`,
		`{"a": {"$numberLong": "4"}, "s": "w", "g": {"p": 3}}`,
	}
	cases := []struct {
		op, arg, want string
		docs          []string
		code          int32
	}{
		{op: "$sum", arg: `"$a"`, want: `double 7.5`},
		{op: "$sum", arg: `1`, want: `int 5`},
		{op: "$sum", arg: `"$missing"`, want: `int 0`},
		{op: "$sum", arg: `"$a"`, docs: []string{`{"a": 2147483647}`, `{"a": 1}`}, want: `long 2147483648`},
		{op: "$sum", arg: `"$a"`, docs: []string{`{"a": {"$numberLong": "1"}}`}, want: `long 1`},
		{op: "$sum", arg: `"$a"`, docs: []string{`{"a": {"$numberDecimal": "0.1"}}`, `{"a": 1}`}, want: `decimal {"$numberDecimal":"1.1"}`},
		{op: "$count", arg: `{}`, want: `int 5`},
		{op: "$count", arg: `1`, code: 9},
		{op: "$avg", arg: `"$a"`, want: `double 2.5`},
		{op: "$avg", arg: `"$s"`, want: `null null`},
		{op: "$min", arg: `"$a"`, want: `int 1`},
		{op: "$max", arg: `"$a"`, want: `string "str"`},
		{op: "$max", arg: `"$a"`, docs: []string{`{"a": 1}`, `{"a": "b"}`}, want: `string "b"`},
		{op: "$min", arg: `"$missing"`, want: `null null`},
		{op: "$first", arg: `"$a"`, want: `int 1`},
		{op: "$last", arg: `"$a"`, want: `long 4`},
		{op: "$first", arg: `"$zz"`, want: `null null`},
		{op: "$push", arg: `"$s"`, want: `array ["x","y","x","z","w"]`},
		{op: "$push", arg: `"$g.p"`, want: `array [1,3]`},
		{op: "$addToSet", arg: `"$s"`, want: `array ["x","y","z","w"]`},
		{op: "$addToSet", arg: `"$v"`, docs: []string{`{"v": 1}`, `{"v": 1.0}`, `{"v": {"$numberLong": "1"}}`, `{"v": {"$numberDecimal": "1.00"}}`, `{"v": [1, {"a": 2}]}`, `{"v": [1.0, {"a": 2.0}]}`, `{"v": null}`, `{}`, `{"v": null}`}, want: `array [1,[1,{"a":2}],null]`},
		{op: "$stdDevPop", arg: `"$v"`, docs: []string{`{"v": 2}`, `{"v": 4}`, `{"v": 4}`, `{"v": 4}`, `{"v": 5}`, `{"v": 5}`, `{"v": 7}`, `{"v": 9}`}, want: `double 2.0`},
		{op: "$stdDevSamp", arg: `"$v"`, docs: []string{`{"v": 1}`}, want: `null null`},
		{op: "$stdDevSamp", arg: `"$v"`, docs: []string{`{"v": 1}`, `{"v": 3}`}, want: `double 1.4142135623730951`},
		{op: "$mergeObjects", arg: `"$g"`, want: `object {"p":3,"q":2}`},
		{op: "$mergeObjects", arg: `"$a"`, code: 40400},
		{op: "$top", arg: `{"output": "$s", "sortBy": {"a": -1}}`, want: `string "z"`},
		{op: "$bottom", arg: `{"output": "$s", "sortBy": {"a": -1}}`, want: `string "x"`},
		{op: "$topN", arg: `{"output": "$s", "sortBy": {"s": 1}, "n": 3}`, want: `array ["w","x","x"]`},
		{op: "$bottomN", arg: `{"output": ["$s", "$a"], "sortBy": {"s": 1}, "n": 2}`, want: `array [["y",2.5],["z","str"]]`},
		{op: "$topN", arg: `{"output": "$s", "sortBy": {"s": 1}, "n": 0}`, code: 5787908},
		{op: "$top", arg: `{"output": "$s"}`, code: 5788005},
		{op: "$firstN", arg: `{"input": "$a", "n": 2}`, want: `array [1,2.5]`},
		{op: "$lastN", arg: `{"input": "$a", "n": 3}`, want: `array [null,"str",4]`},
		{op: "$maxN", arg: `{"input": "$a", "n": 2}`, want: `array ["str",4]`},
		{op: "$minN", arg: `{"input": "$a", "n": 2}`, want: `array [1,2.5]`},
		{op: "$minN", arg: `{"input": "$a"}`, code: 5787906},
		{op: "$foo", arg: `1`, code: 15952},
		{op: "$sum", arg: `[1, 2]`, code: 40237},
		{op: "$median", arg: `{"input": "$a", "method": "approximate"}`, want: `double 2.5`},
		{op: "$percentile", arg: `{"input": "$a", "p": [0.1, 0.9], "method": "approximate"}`, want: `array [1.0,4.0]`},
		{op: "$accumulator", arg: `{}`, code: 4544707},
	}
	for _, c := range cases {
		ds := c.docs
		if ds == nil {
			ds = docs
		}
		acc, err := NewAccumulator(c.op, value(t, c.arg), nil)
		env := NewEnv(nil)
		if err == nil {
			for _, d := range ds {
				if err = acc.Add(doc(t, d), env); err != nil {
					break
				}
			}
		}
		if c.code != 0 {
			if errCode(err) != c.code {
				t.Errorf("%s %s: want error %d, got %v", c.op, c.arg, c.code, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s %s: %v", c.op, c.arg, err)
			continue
		}
		if got := show(t, acc.Result()); got != c.want {
			t.Errorf("%s %s:\n got %s\nwant %s", c.op, c.arg, got, c.want)
		}
	}
}

func TestAccumulatorMerge(t *testing.T) {
	docs := []string{`{"a": 1}`, `{"a": 2.5}`, `{"a": "x"}`, `{"a": {"$numberLong": "4"}}`, `{"a": 7}`, `{"a": null}`}
	for _, c := range []struct{ op, arg string }{
		{"$sum", `"$a"`}, {"$avg", `"$a"`}, {"$min", `"$a"`}, {"$max", `"$a"`}, {"$first", `"$a"`},
		{"$last", `"$a"`}, {"$push", `"$a"`}, {"$addToSet", `"$a"`}, {"$count", `{}`},
		{"$stdDevPop", `"$a"`}, {"$stdDevSamp", `"$a"`}, {"$maxN", `{"input": "$a", "n": 2}`},
	} {
		spec, err := ParseAccumulator(c.op, value(t, c.arg), nil)
		if err != nil {
			t.Fatal(err)
		}
		env := NewEnv(nil)
		whole := spec.New()
		for _, d := range docs {
			if err := whole.Add(doc(t, d), env); err != nil {
				t.Fatal(err)
			}
		}
		for split := 0; split <= len(docs); split++ {
			left, right := spec.New(), spec.New()
			for i, d := range docs {
				dst := left
				if i >= split {
					dst = right
				}
				if err := dst.Add(doc(t, d), env); err != nil {
					t.Fatal(err)
				}
			}
			if err := left.(Merger).Merge(right); err != nil {
				t.Fatal(err)
			}
			want, got := show(t, whole.Result()), show(t, left.Result())
			if c.op == "$stdDevPop" || c.op == "$stdDevSamp" {
				if math.Abs(whole.Result().Double()-left.Result().Double()) > 1e-12 {
					t.Errorf("%s split %d: got %s want %s", c.op, split, got, want)
				}
				continue
			}
			if got != want {
				t.Errorf("%s split %d: got %s want %s", c.op, split, got, want)
			}
		}
	}
}

func TestAccumulatorKeepsEarlierResults(t *testing.T) {
	env := NewEnv(nil)
	key := mustParse(t, `{"$concat": ["k-", "$s"]}`)
	acc, err := NewAccumulator("$push", value(t, `{"$concat": ["v-", "$s"]}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	d := doc(t, `{"s": "x"}`)
	env.Reset()
	k, _ := EvalKeep(key, d, env)
	for i := 0; i < 100; i++ {
		if err := acc.Add(d, env); err != nil {
			t.Fatal(err)
		}
	}
	if k.StringValue() != "k-x" {
		t.Fatalf("group key clobbered: %q", k.StringValue())
	}
	if n := len(env.arena); n > 64 {
		t.Fatalf("arena grew to %d bytes", n)
	}
}

func TestDecimalSumFastPath(t *testing.T) {
	vals := []string{"1", "2.50", "-3", "1E+3", "0.001", "12345678901234567890", "-0.25", "7", "1E-6176", "99999999999999999999999999999999"}
	var b strings.Builder
	b.WriteString(`{"a": [`)
	for i := 0; i < 2000; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"$numberDecimal": "%s"}`, vals[(i*7)%len(vals)])
	}
	b.WriteString("]}")
	d := doc(t, b.String())
	arr, _ := d.Lookup("a")
	want := dec{coef: new(big.Int)}
	it := arr.Document().Iter()
	for it.Next() {
		want = repack(decAdd(want, decOf(it.Element().Value)))
	}
	got, err := evalJSON(t, `{"$sum": "$a"}`, b.String(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if w := `decimal {"$numberDecimal":"` + want.String() + `"}`; got != w {
		t.Fatalf("got %s want %s", got, w)
	}
}
