package agg

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// randomNumber returns a random value of a mostly numeric field, as JSON
// ("" leaves the field out): small and large int32s (near the limits, so
// that sums overflow into int64), int64s in and out of int32's range,
// doubles, null, booleans and, when dirty, rarely a string, a decimal or a
// date (which the compiled expressions leave to the expression engine,
// and on which $toLong fails).
func randomNumber(r *rand.Rand, dirty bool) string {
	switch r.IntN(14) {
	case 0:
		return ""
	case 1:
		return "null"
	case 2, 3:
		return fmt.Sprint(r.IntN(9) - 3)
	case 4:
		return fmt.Sprint(2147483600 + r.IntN(48))
	case 5:
		return fmt.Sprint(-2147483600 - r.IntN(48))
	case 6:
		return fmt.Sprintf(`{"$numberLong": "%d"}`, r.IntN(9)-3)
	case 7:
		if !dirty {
			// $toInt fails on it: clean documents have int64s in range.
			return fmt.Sprintf(`{"$numberLong": "%d"}`, 2147483000+r.Int64N(100))
		}
		return fmt.Sprintf(`{"$numberLong": "%d"}`, 5000000000+r.Int64N(100))
	case 8:
		if !dirty {
			return fmt.Sprintf(`{"$numberLong": "%d"}`, -2147483000-r.Int64N(100))
		}
		// Sums of these overflow into doubles or not depending on the
		// order of the additions: dirty rounds compare one worker's run.
		return fmt.Sprintf(`{"$numberLong": "%d"}`, 9223372036854775800+r.Int64N(7))
	case 9:
		return fmt.Sprintf("%d.5", r.IntN(5)-2)
	case 10:
		if dirty {
			return []string{"true", "false", "1e300"}[r.IntN(3)]
		}
		return []string{"-0.0", "1.0"}[r.IntN(2)]
	case 11:
		if dirty && r.IntN(40) == 0 {
			return []string{`"7"`, `{"$numberDecimal": "2.5"}`, `{"$date": {"$numberLong": "1373846400000"}}`, `[1]`}[r.IntN(4)]
		}
	}
	return fmt.Sprint(1000 + r.IntN(1000))
}

// randomProjection returns a $project or $unset over fields and the
// fields of its output a $group may read (some of them left missing by
// the projection).
func randomProjection(r *rand.Rand, fields []string) (string, []string) {
	f := func() string { return fields[r.IntN(len(fields))] }
	computed := []string{`{"$toLong": "$%s"}`, `{"$toInt": "$%s"}`, `{"$toDouble": "$%s"}`, `{"$add": ["$%s", 1]}`,
		`{"$add": ["$%s", {"$numberLong": "2"}, "$%s"]}`, `{"$subtract": ["$%s", "$%s"]}`, `{"$add": [{"$toLong": "$%s"}, 2147483647]}`,
		`{"$add": ["$%s", 0.5]}`, `"$%s"`, `{"$toLong": {"$add": ["$%s", "$%s"]}}`}
	comp := func() string {
		c := computed[r.IntN(len(computed))]
		args := make([]any, strings.Count(c, "%s"))
		for i := range args {
			args[i] = f()
		}
		return fmt.Sprintf(c, args...)
	}
	switch r.IntN(6) {
	case 0:
		ex := f()
		return fmt.Sprintf(`{"$project": {%q: 0}}`, ex), append([]string{"_id"}, fields...)
	case 1:
		return fmt.Sprintf(`{"$unset": %q}`, f()), append([]string{"_id"}, fields...)
	case 2:
		n := []string{"p", "q", f()}[r.IntN(3)]
		return fmt.Sprintf(`{"%s": {%q: %s}}`, []string{"$set", "$addFields"}[r.IntN(2)], n, comp()), append([]string{"_id", "p", "q"}, fields...)
	}
	// An inclusion projection: computed fields under new names and the
	// source's (as Q29 converts ResolutionWidth into itself), included
	// fields, and _id kept or dropped.
	var parts []string
	out := []string{"_id"}
	if r.IntN(2) == 0 {
		parts = append(parts, `"_id": 0`)
	}
	names := []string{"p", "q"}
	for _, n := range fields {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	r.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	for _, n := range names[:1+r.IntN(3)] {
		if r.IntN(4) == 0 && !strings.ContainsAny(n, "pq") {
			parts = append(parts, fmt.Sprintf("%q: 1", n))
		} else {
			parts = append(parts, fmt.Sprintf("%q: %s", n, comp()))
		}
	}
	return `{"$project": {` + strings.Join(parts, ", ") + `}}`, append(out, "p", "q", fields[0], fields[1])
}

// randomSumGroup returns a $group over fields of _id, arithmetic of the
// fields and sum families ($sum of one field plus constants, four or more
// of them).
func randomSumGroup(r *rand.Rand, fields []string) string {
	f := func() string { return fields[r.IntN(len(fields))] }
	ids := []string{"null", `"$` + f() + `"`, fmt.Sprintf(`{"$add": ["$%s", 1]}`, f()), fmt.Sprintf(`{"$toLong": "$%s"}`, f()),
		fmt.Sprintf(`{"k": "$%s", "l": {"$subtract": ["$%s", 1]}}`, f(), f())}
	parts := []string{`"_id": ` + ids[r.IntN(len(ids))]}
	consts := []string{"0", "1", "-3", "7", "2147483000", "-2147483000", `{"$numberLong": "5"}`}
	for fi := range 1 + r.IntN(2) {
		term := f()
		for k := range 4 + r.IntN(3) {
			parts = append(parts, fmt.Sprintf(`"f%d_%d": {"$sum": {"$add": ["$%s", %s]}}`, fi, k, term, consts[r.IntN(len(consts))]))
		}
	}
	accs := []string{`{"$sum": 1}`, `{"$sum": "$%s"}`, `{"$avg": {"$add": ["$%s", "$%s"]}}`, `{"$sum": {"$toDouble": "$%s"}}`,
		`{"$last": {"$toInt": "$%s"}}`, `{"$first": "$%s"}`}
	for i := range r.IntN(3) {
		a := accs[r.IntN(len(accs))]
		args := make([]any, strings.Count(a, "%s"))
		for j := range args {
			args[j] = f()
		}
		parts = append(parts, fmt.Sprintf(`"a%d": %s`, i, fmt.Sprintf(a, args...)))
	}
	return `{"$group": {` + strings.Join(parts, ", ") + `}}`
}

// TestVectorProjectionMatchesRowPath runs random pipelines of $match
// stages, projections (computed with $toLong, $toInt, $toDouble, $add,
// $subtract; included, excluded and dropped fields) and a $group of sum
// families and arithmetic over mostly numeric documents (int32 sums that
// overflow into int64, int64s, doubles, null, missing fields and, in
// some rounds, values the expressions fail on) on the row path and
// vectorized, and requires identical answers (types included) and
// errors.
func TestVectorProjectionMatchesRowPath(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("CAIRN_VECTOR_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 33))
	fields := []string{"a", "b", "c"}
	docsOf := func(dirty bool) string {
		var ds []string
		for i := range 1500 {
			fs := []string{fmt.Sprintf(`"_id": %d`, i)}
			for _, k := range r.Perm(len(fields)) {
				if v := randomNumber(r, dirty); v != "" {
					fs = append(fs, fmt.Sprintf("%q: %s", fields[k], v))
				}
			}
			ds = append(ds, "{"+strings.Join(fs, ", ")+"}")
		}
		return "[" + strings.Join(ds, ",") + "]"
	}
	clean, dirtyDocs := parseJSONArray(t, docsOf(false)), parseJSONArray(t, docsOf(true))
	vectorized, failed := 0, 0
	limit := 10 * time.Second
	if s := os.Getenv("CAIRN_VECTOR_SECONDS"); s != "" {
		n, _ := strconv.Atoi(s)
		limit = time.Duration(n) * time.Second
	}
	deadline := time.Now().Add(limit)
	for round := 0; round < 1000 && (round < 300 && time.Now().Before(deadline) || vectorized < 30); round++ {
		docs, dirty := clean, r.IntN(3) == 0
		if dirty {
			docs = dirtyDocs
		}
		var stages []string
		if r.IntN(3) == 0 {
			stages = append(stages, randomMatch(r, fields))
		}
		out := append([]string{"_id"}, fields...)
		for range 1 + r.IntN(2) {
			var st string
			st, out = randomProjection(r, out[1:])
			stages = append(stages, st)
		}
		stages = append(stages, randomSumGroup(r, out))
		if r.IntN(2) == 0 {
			stages = append(stages, `{"$sort": {"_id": 1}}`)
		}
		memLimit := int64(0)
		if r.IntN(5) == 0 {
			memLimit = 3000
		}
		pipeline := "[" + strings.Join(stages, ", ") + "]"
		mk := func() *Pipeline {
			ctx := &Context{DB: "test", Coll: "c", AllowDiskUse: true, TempDir: t.TempDir(), MemoryLimit: memLimit}
			p, err := Parse(ctx, parseJSONArray(t, pipeline))
			if err != nil {
				t.Fatalf("%s: %v", pipeline, err)
			}
			return p
		}
		serial, serr := runSerial(t, mk(), docs)
		src := &sliceColumns{fields: append(append([]string{"_id"}, fields...), "p", "q"), docs: docs, rows: 1 + r.IntN(700)}
		p := mk()
		if p.ParallelFields() == nil || !p.CanRunVector(src.fields) {
			t.Fatalf("%s: not vectorized", pipeline)
		}
		vectorized++
		if serr != nil {
			failed++
		}
		for _, workers := range []int{1, 2, 3} {
			vit, ok, err := mk().RunVector(src, workers)
			if err != nil || !ok {
				t.Fatalf("%s: RunVector: %v, %v", pipeline, ok, err)
			}
			got, verr := Drain(vit)
			// Which row's error comes first is the row path's with one
			// worker only, and without spilling (spilled rows are added
			// later, and the runs spill at different points).
			if (workers == 1 && memLimit == 0 && errCode(verr) != errCode(serr)) || (verr == nil) != (serr == nil) {
				t.Fatalf("%s, %d workers: error %v, row path's %v", pipeline, workers, verr, serr)
			}
			want := serial
			if memLimit > 0 {
				got, want = sortedDocs(t, got), sortedDocs(t, serial)
			}
			exact := !dirty || (workers == 1 && memLimit == 0)
			if serr == nil && exact && canonical(t, got) != canonical(t, want) {
				t.Fatalf("%s, %d workers, chunks of %d: %s", pipeline, workers, src.rows, firstDiff(t, got, want))
			}
		}
	}
	t.Logf("%d pipelines vectorized, %d of them failing on the row path", vectorized, failed)
}

// TestVectorQ29 checks that ClickBench's Q29 shape (a $toLong projection
// then ninety sums of the field plus constants) runs with its projection
// and its sum family compiled from the columns.
func TestVectorQ29(t *testing.T) {
	var b strings.Builder
	b.WriteString(`[{"$project": {"_id": 0, "w": {"$toLong": "$w"}}}, {"$group": {"_id": null`)
	for k := range 90 {
		fmt.Fprintf(&b, `, "s%d": {"$sum": {"$add": ["$w", %d]}}`, k, k)
	}
	b.WriteString(`}}]`)
	p, err := Parse(&Context{DB: "test", Coll: "c"}, parseJSONArray(t, b.String()))
	if err != nil {
		t.Fatal(err)
	}
	vp, ok := p.planVector([]string{"_id", "w"})
	if !ok {
		t.Fatal("not vectorized")
	}
	if len(vp.projX) != 1 || len(vp.famX) != 1 || vp.famX[0].kind != vxRef || len(vp.plainAccs) != 0 {
		t.Fatalf("projected %d, families %d, plain accumulators %d", len(vp.projX), len(vp.famX), len(vp.plainAccs))
	}
	docs := parseJSONArray(t, `[{"_id": 1, "w": 2147483647}, {"_id": 2, "w": 5}, {"_id": 3}, {"_id": 4, "w": null}, {"_id": 5, "w": 2.9}]`)
	want, err := runSerial(t, p, docs)
	if err != nil {
		t.Fatal(err)
	}
	p, _ = Parse(&Context{DB: "test", Coll: "c"}, parseJSONArray(t, b.String()))
	it, _, err := p.RunVector(&sliceColumns{fields: []string{"_id", "w"}, docs: docs, rows: 2}, 2)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Drain(it)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := canonical(t, got), canonical(t, want); g != w {
		t.Fatalf("got %s\nwant %s", g, w)
	}
}
