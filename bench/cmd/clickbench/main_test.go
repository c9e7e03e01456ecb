package main

import (
	"context"
	"flag"
	"slices"
	"testing"
)

var (
	testRows   = flag.Int("rows", 20000, "rows for TestClickBench (1000000 for the full-size check)")
	testLoader = flag.String("loader", "import", "loader for TestClickBench: import or driver")
)

// TestClickBench generates a small hits table, loads it into a fresh
// cairnd, runs all 43 pipelines once and checks every answer against the
// oracle.
func TestClickBench(t *testing.T) {
	if testing.Short() {
		t.Skip("starts cairnd and loads data")
	}
	c := &config{rows: *testRows, seed: 1, loader: *testLoader, workers: 2, runs: 1, check: true, cacheGB: 2,
		out: t.TempDir(), name: "test", isRefresh: true, dir: t.TempDir()}
	c.queries, _ = parseQueries("", len(queryText))
	rep, err := run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Queries) != 43 {
		t.Fatalf("%d queries ran, want 43", len(rep.Queries))
	}
	for _, q := range rep.Queries {
		if q.Error != "" || q.Mismatch != "" || !q.Checked {
			t.Errorf("%s", q.line())
		}
	}
}

// TestOracleDetectsWrongAnswers feeds the checker answers that differ from
// the oracle's in one way each.
func TestOracleDetectsWrongAnswers(t *testing.T) {
	o := &oracle{isRefresh: true}
	for i := range 3000 {
		var h hit
		genRow(7, i, &h, nil, true)
		o.hits = append(o.hits, h)
	}
	// The oracle's own window passes.
	for q := range oracleFuncs {
		e := o.expect(q)
		lo := min(e.skip, len(e.all))
		hi := len(e.all)
		if e.limit > 0 {
			hi = min(lo+e.limit, hi)
		}
		got := make([]row, 0, hi-lo)
		for _, r := range e.all[lo:hi] {
			got = append(got, concrete(r))
		}
		if msg := e.check(got); msg != "" {
			t.Errorf("Q%d: own answer rejected: %s", q, msg)
		}
	}
	e := o.expect(12) // top phrases by count
	good := []row{}
	for _, r := range e.all[:10] {
		good = append(good, concrete(r))
	}
	cases := map[string]func([]row) []row{
		"one fewer": func(r []row) []row { return r[:9] },
		"wrong count": func(r []row) []row {
			r[3] = clone(r[3])
			r[3]["c"] = r[3]["c"].(int64) + 1
			return r
		},
		"unknown group": func(r []row) []row {
			r[9] = row{"_id": "no such phrase", "c": r[9]["c"]}
			return r
		},
		"repeated group": func(r []row) []row { r[1] = r[0]; return r },
		"extra field": func(r []row) []row {
			r[0] = clone(r[0])
			r[0]["x"] = int64(1)
			return r
		},
		"wrong order": func(r []row) []row {
			r[0], r[9] = r[9], r[0]
			return r
		},
	}
	for name, mutate := range cases {
		got := mutate(append([]row(nil), good...))
		if name == "wrong order" && same(e.key(got[0]), e.key(got[9])) {
			continue // equal counts: either order is right
		}
		if msg := e.check(got); msg == "" {
			t.Errorf("%s: accepted", name)
		} else if testing.Verbose() {
			t.Logf("%s: %s", name, msg)
		}
	}
	// Q36 without the IsRefresh column selects nothing.
	if n := len((&oracle{hits: o.hits}).expect(36).all); n != 0 {
		t.Errorf("Q36 without IsRefresh: %d candidates, want 0", n)
	}
}

func clone(r row) row {
	c := row{}
	for k, v := range r {
		c[k] = v
	}
	return c
}

// concrete replaces anyValue placeholders by a value, as a server would
// return one.
func concrete(r row) row {
	c := clone(r)
	for k, v := range c {
		if _, ok := v.(anyValue); ok {
			c[k] = "objectid"
		}
	}
	return c
}

func TestParseQueries(t *testing.T) {
	got, err := parseQueries("0, 3,10-12", 43)
	if err != nil || !slices.Equal(got, []int{0, 3, 10, 11, 12}) {
		t.Fatalf("parseQueries = %v, %v", got, err)
	}
	for _, bad := range []string{"x", "5-2", "43", "-1"} {
		if _, err := parseQueries(bad, 43); err == nil {
			t.Errorf("parseQueries(%q) accepted", bad)
		}
	}
	ps, err := pipelines()
	if err != nil || len(ps) != 43 {
		t.Fatalf("pipelines: %d, %v", len(ps), err)
	}
}

// TestClickBenchVersus runs the queries on two servers taking turns
// (-versus): both must answer every query correctly, each run once per
// turn.
func TestClickBenchVersus(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two cairnd and loads data twice")
	}
	dir := t.TempDir()
	bin, err := buildTool("", "cairnd", dir)
	if err != nil {
		t.Fatal(err)
	}
	c := &config{rows: 5000, seed: 1, loader: "import", workers: 2, runs: 3, check: true, cacheGB: 1,
		out: t.TempDir(), name: "test", isRefresh: true, dir: dir, cairnd: bin, versus: bin}
	c.queries, _ = parseQueries("", len(queryText))
	rep, err := run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Queries) != 43 || len(rep.Versus) != 43 {
		t.Fatalf("%d and %d queries ran, want 43 on each server", len(rep.Queries), len(rep.Versus))
	}
	for _, side := range [][]queryResult{rep.Queries, rep.Versus} {
		for _, q := range side {
			if q.Error != "" || q.Mismatch != "" || !q.Checked || len(q.Times) != 3 {
				t.Errorf("%s", q.line())
			}
		}
	}
}
