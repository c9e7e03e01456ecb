package agg

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairndb/cairn/bson"
)

// sliceColumns is a ColumnSource over documents in memory, cut to fields,
// in chunks of rows documents.
type sliceColumns struct {
	fields []string
	docs   []bson.Doc
	rows   int
	cols   map[int][]Column // built chunks
	mu     sync.Mutex
}

func (s *sliceColumns) ColumnFields() []string { return s.fields }
func (s *sliceColumns) ColumnChunks() int      { return (len(s.docs) + s.rows - 1) / s.rows }

func (s *sliceColumns) ColumnChunk(ci int) ColumnChunk {
	docs := s.docs[ci*s.rows : min(len(s.docs), (ci+1)*s.rows)]
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cols == nil {
		s.cols = map[int][]Column{}
	}
	cols := s.cols[ci]
	if cols == nil {
		cols = make([]Column, len(s.fields))
		for f, name := range s.fields {
			c := Column{Off: []uint32{0}}
			for _, d := range docs {
				if v, ok := d.Lookup(name); ok {
					c.Data = append(append(c.Data, byte(v.Type)), v.Data...)
				}
				c.Off = append(c.Off, uint32(len(c.Data)))
			}
			cols[f] = c
		}
		s.cols[ci] = cols
	}
	want := map[string]bool{}
	for _, f := range s.fields {
		want[f] = true
	}
	return ColumnChunk{Rows: len(docs), Cols: cols, Doc: func(dst []byte, r int) []byte {
		at := len(dst)
		dst = append(dst, 0, 0, 0, 0)
		seen := map[string]bool{}
		it := docs[r].Iter()
		for it.Next() {
			e := it.Element()
			if want[e.Key] && !seen[e.Key] {
				seen[e.Key] = true
				dst = append(append(append(append(dst, byte(e.Value.Type)), e.Key...), 0), e.Value.Data...)
			}
		}
		dst = append(dst, 0)
		binary.LittleEndian.PutUint32(dst[at:], uint32(len(dst)-at))
		return dst
	}}
}

// randomValue returns a random value of a mix of types, as JSON (""
// leaves the field out).
func randomValue(r *rand.Rand) string {
	switch r.IntN(16) {
	case 0:
		return ""
	case 1:
		return "null"
	case 2, 3:
		return fmt.Sprint(r.IntN(7) - 2)
	case 4:
		return fmt.Sprintf(`{"$numberLong": "%d"}`, r.IntN(7)-2)
	case 5:
		return fmt.Sprintf("%d.5", r.IntN(5)-2)
	case 6:
		return fmt.Sprintf("%d.0", r.IntN(5)-2)
	case 7:
		return []string{`{"$numberDouble": "NaN"}`, `{"$numberDecimal": "1.50"}`, `{"$numberDecimal": "2"}`}[r.IntN(3)]
	case 8, 9:
		return fmt.Sprintf(`"s%d"`, r.IntN(4))
	case 10:
		return `""`
	case 11:
		return fmt.Sprintf("[%d, %q]", r.IntN(4), fmt.Sprintf("s%d", r.IntN(4)))
	case 12:
		return fmt.Sprintf(`{"x": %d}`, r.IntN(3))
	case 13:
		return []string{"true", "false"}[r.IntN(2)]
	case 14:
		return fmt.Sprintf(`{"$date": {"$numberLong": "%d"}}`, 1373846400000+int64(r.IntN(3))*86400000)
	}
	return `{"$oid": "5f0000000000000000000001"}`
}

// randomOperand is a constant a vectorized $match compiles (or, rarely,
// one it does not).
func randomOperand(r *rand.Rand) string {
	switch r.IntN(10) {
	case 0, 1, 2:
		return fmt.Sprint(r.IntN(5) - 2)
	case 3:
		return fmt.Sprintf("%d.5", r.IntN(3)-1)
	case 4:
		return fmt.Sprintf(`{"$numberLong": "%d"}`, r.IntN(5)-2)
	case 5, 6:
		return fmt.Sprintf(`"s%d"`, r.IntN(4))
	case 7:
		return fmt.Sprintf(`{"$date": {"$numberLong": "%d"}}`, 1373846400000+int64(r.IntN(3))*86400000)
	case 8:
		return "true"
	}
	return "null"
}

func randomMatch(r *rand.Rand, fields []string) string {
	var conds []string
	perm := r.Perm(len(fields))
	for k := range 1 + r.IntN(2) {
		f := fields[perm[k]]
		switch r.IntN(9) {
		case 0:
			conds = append(conds, fmt.Sprintf("%q: %s", f, randomOperand(r)))
		case 1:
			conds = append(conds, fmt.Sprintf(`%q: {"$in": [%s, %s]}`, f, randomOperand(r), randomOperand(r)))
		case 2:
			conds = append(conds, fmt.Sprintf(`%q: {"$exists": true}`, f))
		case 3:
			conds = append(conds, fmt.Sprintf(`"$or": [{%q: %s}, {%q: {"$gt": %s}}]`, f, randomOperand(r), f, randomOperand(r)))
		default:
			op := []string{"$eq", "$ne", "$gt", "$gte", "$lt", "$lte"}[r.IntN(6)]
			conds = append(conds, fmt.Sprintf(`%q: {%q: %s}`, f, op, randomOperand(r)))
		}
	}
	return `{"$match": {` + strings.Join(conds, ", ") + `}}`
}

func randomGroup(r *rand.Rand, fields []string) string {
	f := func() string { return fields[r.IntN(len(fields))] }
	ids := []string{"null", `"x"`, `"$` + f() + `"`, `"$` + f() + `"`, fmt.Sprintf(`{"p": "$%s", "q": "$%s"}`, f(), f()), fmt.Sprintf(`{"$toString": "$%s"}`, f()),
		// Expressions compiled from the columns (vector_expr.go).
		fmt.Sprintf(`{"$concat": ["$%s", "|", {"$toString": "$%s"}]}`, f(), f()),
		fmt.Sprintf(`{"$concat": [{"$toString": "$%s"}, "-", {"$toString": ["$%s"]}]}`, f(), f()),
		fmt.Sprintf(`{"p": "$%s", "m": {"$minute": "$%s"}, "h": {"$hour": ["$%s"]}}`, f(), f(), f()),
		fmt.Sprintf(`{"$strLenBytes": "$%s"}`, f())}
	accs := []string{`{"$sum": 1}`, `{"$count": {}}`, `{"$sum": "$%s"}`, `{"$avg": "$%s"}`, `{"$min": "$%s"}`, `{"$max": "$%s"}`,
		`{"$first": "$%s"}`, `{"$last": "$%s"}`, `{"$addToSet": "$%s"}`, `{"$sum": {"$add": ["$%s", 1]}}`, `{"$sum": 2.5}`,
		`{"$avg": {"$strLenBytes": "$%s"}}`, `{"$sum": {"$toDecimal": "$%s"}}`, `{"$avg": {"$toDecimal": "$%s"}}`,
		`{"$last": {"$concat": ["$%s", "!"]}}`, `{"$max": {"$second": "$%s"}}`}
	parts := []string{`"_id": ` + ids[r.IntN(len(ids))]}
	var sets []string
	for i := range 1 + r.IntN(4) {
		a := accs[r.IntN(len(accs))]
		if strings.Contains(a, "%s") {
			a = fmt.Sprintf(a, f())
		}
		if strings.Contains(a, "$min") || strings.Contains(a, "$max") {
			// Of equal numbers of different types (1, 1.0), the one a
			// parallel run keeps depends on how the input was split.
			sets = append(sets, fmt.Sprintf(`"a%d": {"$cond": [{"$isNumber": "$a%d"}, {"$toDouble": "$a%d"}, "$a%d"]}`, i, i, i, i))
		}
		if strings.Contains(a, "$addToSet") {
			// The order of a set's elements (and which of equal values
			// of different types it keeps) is unspecified and differs
			// between serial and parallel runs: compare its size.
			sets = append(sets, fmt.Sprintf(`"a%d": {"$size": "$a%d"}`, i, i))
		}
		parts = append(parts, fmt.Sprintf(`"a%d": %s`, i, a))
	}
	g := `{"$group": {` + strings.Join(parts, ", ") + `}}`
	if len(sets) > 0 {
		g += `, {"$set": {` + strings.Join(sets, ", ") + `}}`
	}
	return g
}

// TestVectorMatchesRowPath runs random pipelines of $match stages and a
// $group or $count over random documents (missing fields, mixed types,
// arrays, documents, null, NaN, decimals) on the row path and
// vectorized over columns, with 1 to 3 workers and chunks of a few rows,
// in and out of the memory limit, and requires identical answers and
// errors.
func TestVectorMatchesRowPath(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("CAIRN_VECTOR_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 26))
	fields := []string{"a", "b", "s"}
	docs := randomDocs(t, r, fields, 2000)
	vectorized := 0
	deadline := time.Now().Add(10 * time.Second)
	// Up to 300 rounds within the deadline, and past it until 20
	// pipelines ran vectorized (a loaded machine), at most 1000.
	for round := 0; round < 1000 && (round < 300 && time.Now().Before(deadline) || vectorized < 20); round++ {
		var stages []string
		for range r.IntN(3) {
			stages = append(stages, randomMatch(r, fields))
		}
		if r.IntN(4) == 0 {
			if r.IntN(2) == 0 {
				stages = append(stages, `{"$project": {"a": 1}}`)
			}
			stages = append(stages, `{"$count": "n"}`)
		}
		memLimit := int64(0)
		if r.IntN(4) == 0 {
			memLimit = 2000
		}
		if len(stages) == 0 || !strings.Contains(stages[len(stages)-1], "$count") {
			stages = append(stages, randomGroup(r, fields))
			if r.IntN(2) == 0 {
				stages = append(stages, `{"$sort": {"_id": 1}}`)
			}
		}
		pipeline := "[" + strings.Join(stages, ", ") + "]"
		if os.Getenv("VXDBG") != "" {
			t.Logf("%v %s", time.Now().Format("05.000"), pipeline)
		}
		mk := func() *Pipeline {
			ctx := &Context{DB: "test", Coll: "c", AllowDiskUse: true, TempDir: t.TempDir(), MemoryLimit: memLimit}
			p, err := Parse(ctx, parseJSONArray(t, pipeline))
			if err != nil {
				t.Fatalf("%s: %v", pipeline, err)
			}
			return p
		}
		serial, serr := runSerial(t, mk(), docs)
		want := canonical(t, serial)
		src := &sliceColumns{fields: append([]string{"_id"}, fields...), docs: docs, rows: 1 + r.IntN(700)}
		p := mk()
		if p.ParallelFields() == nil {
			continue // no column scan serves it (a $group that reads no field)
		}
		if !p.CanRunVector(src.fields) {
			t.Fatalf("%s: not vectorized", pipeline)
		}
		vectorized++
		for _, workers := range []int{1, 2, 3} {
			vit, ok, err := mk().RunVector(src, workers)
			if err != nil || !ok {
				t.Fatalf("%s: RunVector: %v, %v", pipeline, ok, err)
			}
			got, verr := Drain(vit)
			// Workers meet the rows in another order: which row's error
			// comes first is the row path's with one worker only.
			if (workers == 1 && errCode(verr) != errCode(serr)) || (verr == nil) != (serr == nil) {
				t.Fatalf("%s, %d workers: error %v, row path's %v", pipeline, workers, verr, serr)
			}
			if memLimit > 0 {
				// Spilled groups come out in another order than that of
				// their first documents (and a $sort keeps the order of
				// ties, such as [0, 1] and 0): compare them as sets.
				got, serial = sortedDocs(t, got), sortedDocs(t, serial)
				want = canonical(t, serial)
			}
			if g := canonical(t, got); serr == nil && g != want {
				t.Fatalf("%s, %d workers, chunks of %d: %s", pipeline, workers, src.rows, firstDiff(t, got, serial))
			}
		}
	}
	if vectorized < 20 {
		t.Fatalf("only %d pipelines ran vectorized", vectorized)
	}
}

func TestCanRunVector(t *testing.T) {
	// x: a column scan serves the fields a projection computes as well
	// (readFields), all missing.
	fields := []string{"_id", "a", "b", "x"}
	for _, c := range []struct {
		pipeline string
		want     bool
	}{
		{`[{"$match": {"a": {"$ne": 0}}}, {"$count": "c"}]`, true},
		{`[{"$project": {"_id": 1}}, {"$count": "c"}]`, true},
		{`[{"$project": {"x": {"$add": ["$a", 1]}}}, {"$count": "c"}]`, false},
		{`[{"$group": {"_id": "$a", "n": {"$sum": 1}, "m": {"$max": "$b"}}}, {"$sort": {"n": -1}}]`, true},
		{`[{"$group": {"_id": "$c"}}]`, false}, // c is not a column
		{`[{"$set": {"x": 1}}, {"$group": {"_id": "$a"}}]`, true},
		{`[{"$group": {"_id": "$a", "p": {"$push": "$b"}}}]`, false}, // $push does not merge
		{`[{"$sort": {"a": 1}}, {"$limit": 3}]`, false},
		// Projections before a group (vector_project.go).
		{`[{"$project": {"x": {"$toLong": "$a"}}}, {"$group": {"_id": null, "s": {"$sum": "$x"}}}]`, true},
		{`[{"$project": {"_id": 0, "a": {"$add": ["$a", 1, "$b"]}}}, {"$group": {"_id": "$a"}}]`, true},
		{`[{"$project": {"x": {"$toLower": "$a"}}}, {"$group": {"_id": "$x"}}]`, false}, // does not compile
		{`[{"$project": {"x": "$$ROOT"}}, {"$group": {"_id": "$x"}}]`, false},
		{`[{"$project": {"a.b": 1}}, {"$group": {"_id": "$a"}}]`, false}, // nested
		{`[{"$project": {"x": {"$toLong": "$a"}}}, {"$match": {"x": 1}}, {"$group": {"_id": null}}]`, false},
		{`[{"$project": {"x": {"$toLong": "$a"}}}, {"$group": {"_id": null, "p": {"$push": "$x"}}}]`, false}, // heavy
	} {
		ctx := &Context{DB: "test", Coll: "c"}
		p, err := Parse(ctx, parseJSONArray(t, c.pipeline))
		if err != nil {
			t.Fatal(err)
		}
		if got := p.CanRunVector(fields); got != c.want {
			t.Errorf("%s: CanRunVector %v, want %v", c.pipeline, got, c.want)
		}
	}
}

// firstDiff describes where two answers first differ.
func firstDiff(t *testing.T, got, want []bson.Doc) string {
	for i := range max(len(got), len(want)) {
		var g, w string
		if i < len(got) {
			g = canonical(t, got[i:i+1])
		}
		if i < len(want) {
			w = canonical(t, want[i:i+1])
		}
		if g != w {
			return fmt.Sprintf("%d and %d documents; #%d:\n got %s\nwant %s", len(got), len(want), i, g, w)
		}
	}
	return "same"
}

// randomDocs returns n documents with _id and a random value (or none) of
// each field, the fields in random order.
func randomDocs(t testing.TB, r *rand.Rand, fields []string, n int) []bson.Doc {
	var parts []string
	for i := range n {
		var fs []string
		fs = append(fs, fmt.Sprintf(`"_id": %d`, i))
		order := r.Perm(len(fields))
		for _, k := range order {
			if v := randomValue(r); v != "" {
				fs = append(fs, fmt.Sprintf("%q: %s", fields[k], v))
			}
		}
		parts = append(parts, "{"+strings.Join(fs, ", ")+"}")
	}
	return parseJSONArray(t, "["+strings.Join(parts, ",")+"]")
}

// sortedDocs orders docs by their canonical Extended JSON.
func sortedDocs(t *testing.T, docs []bson.Doc) []bson.Doc {
	out := slices.Clone(docs)
	slices.SortFunc(out, func(a, b bson.Doc) int {
		return strings.Compare(canonical(t, []bson.Doc{a}), canonical(t, []bson.Doc{b}))
	})
	return out
}

// TestVectorCompilesExpressions checks that the _id and arguments of
// ClickBench's shapes are computed from the columns (vector_expr.go), and
// that the others stay on the document.
func TestVectorCompilesExpressions(t *testing.T) {
	fields := []string{"_id", "a", "b", "s", "t"}
	for _, c := range []struct {
		pipeline string
		id       bool   // the _id is a compiled expression
		args     []bool // per accumulator: its argument is compiled
	}{
		{`[{"$group": {"_id": {"$concat": ["$s", "|", {"$toString": "$a"}]}, "c": {"$sum": 1}}}]`, true, []bool{false}},
		{`[{"$group": {"_id": {"u": "$a", "s": "$s", "m": {"$minute": "$t"}}, "c": {"$sum": 1}}}]`, true, []bool{false}},
		{`[{"$group": {"_id": null, "x": {"$avg": {"$toDecimal": "$a"}}}}]`, false, []bool{true}},
		{`[{"$group": {"_id": "$b", "l": {"$avg": {"$strLenBytes": "$s"}}, "f": {"$first": {"$toString": "$a"}}}}]`, false, []bool{true, false}},
		{`[{"$group": {"_id": {"$toLower": "$s"}, "x": {"$sum": {"$multiply": ["$a", 2]}}}}]`, false, []bool{false}},
		{`[{"$group": {"_id": {"$toLong": "$a"}, "x": {"$sum": {"$add": ["$a", 2, "$b"]}}, "y": {"$avg": {"$subtract": ["$a", {"$toDouble": "$b"}]}}}}]`, true, []bool{true, true}},
		{`[{"$group": {"_id": {"$concat": ["$s", {"$substrBytes": ["$s", 0, 1]}]}, "x": {"$max": {"$hour": {"date": "$t", "timezone": "+01"}}}}}]`, false, []bool{false}},
	} {
		p, err := Parse(&Context{DB: "test", Coll: "c"}, parseJSONArray(t, c.pipeline))
		if err != nil {
			t.Fatal(err)
		}
		vp, ok := p.planVector(fields)
		if !ok {
			t.Fatalf("%s: not vectorized", c.pipeline)
		}
		if got := vp.idExpr != nil; got != c.id {
			t.Errorf("%s: compiled _id %v, want %v", c.pipeline, got, c.id)
		}
		for i, want := range c.args {
			if got := vp.accs[i].x != nil; got != want {
				t.Errorf("%s: accumulator %d compiled %v, want %v", c.pipeline, i, got, want)
			}
		}
	}
}
