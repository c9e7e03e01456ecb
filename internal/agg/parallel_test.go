package agg

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cairndb/cairn/bson"
)

// sliceBatches is a BatchSource over documents in memory.
type sliceBatches struct {
	docs []bson.Doc
	pos  int
}

func (s *sliceBatches) NextBatch(dst []bson.Doc, max int) ([]bson.Doc, error) {
	dst = dst[:0]
	for s.pos < len(s.docs) && len(dst) < max {
		dst = append(dst, s.docs[s.pos])
		s.pos++
	}
	return dst, nil
}

// mixedDocs has group keys of every kind (numbers of three types that
// compare equal, strings, null, missing, arrays, documents) and values
// that are numbers, null, missing or strings.
func mixedDocs(t testing.TB, n int) []bson.Doc {
	var parts []string
	for i := 0; i < n; i++ {
		var k string
		switch i % 9 {
		case 0:
			k = `"k": 1`
		case 1:
			k = `"k": 1.0`
		case 2:
			k = `"k": {"$numberLong": "1"}`
		case 3:
			k = fmt.Sprintf(`"k": "s%d"`, i%7)
		case 4:
			k = `"k": null`
		case 5:
			k = ``
		case 6:
			k = fmt.Sprintf(`"k": [%d, 2]`, i%3)
		case 7:
			k = fmt.Sprintf(`"k": {"a": %d}`, i%4)
		case 8:
			k = fmt.Sprintf(`"k": %d`, i%13)
		}
		var v string
		switch i % 5 {
		case 0:
			v = fmt.Sprintf(`"v": %d`, i%17)
		case 1:
			v = fmt.Sprintf(`"v": %d.5`, i%11)
		case 2:
			v = `"v": null`
		case 3:
			v = ``
		case 4:
			v = fmt.Sprintf(`"v": "t%d"`, i%5)
		}
		fields := []string{fmt.Sprintf(`"_id": %d`, i), fmt.Sprintf(`"s": "x%d"`, i)}
		for _, f := range []string{k, v} {
			if f != "" {
				fields = append(fields, f)
			}
		}
		parts = append(parts, "{"+strings.Join(fields, ", ")+"}")
	}
	return parseJSONArray(t, "["+strings.Join(parts, ",")+"]")
}

// runBoth runs pipeline serially and in parallel with each worker count and
// returns the serial result and error, failing the test when a parallel
// run differs.
func runBoth(t *testing.T, docs []bson.Doc, pipeline string, memLimit int64, allowDisk bool) (string, error) {
	t.Helper()
	mk := func() *Pipeline {
		ctx := &Context{DB: "test", Coll: "c", AllowDiskUse: allowDisk, TempDir: t.TempDir(), MemoryLimit: memLimit}
		p, err := Parse(ctx, parseJSONArray(t, pipeline))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	serial, serr := runSerial(t, mk(), docs)
	want := canonical(t, serial)
	for _, workers := range []int{1, 2, 4} {
		pit, ok, err := mk().RunParallel(&sliceBatches{docs: docs}, workers)
		if err != nil || !ok {
			t.Fatalf("RunParallel: %v, %v", ok, err)
		}
		par, perr := Drain(pit)
		if errCode(perr) != errCode(serr) || (perr == nil) != (serr == nil) {
			t.Fatalf("%d workers: error %v, serial error %v", workers, perr, serr)
		}
		if got := canonical(t, par); serr == nil && got != want {
			t.Fatalf("%d workers:\n got %s\nwant %s", workers, got, want)
		}
	}
	return want, serr
}

// answer is runBoth with disk use allowed, for a pipeline that must not
// fail.
func answer(t *testing.T, docs []bson.Doc, pipeline string, memLimit int64) string {
	t.Helper()
	out, err := runBoth(t, docs, pipeline, memLimit, true)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestParallelGroupMatchesSerial(t *testing.T) {
	docs := mixedDocs(t, 5000)
	for _, pl := range []string{
		`[{"$group": {"_id": "$k", "sum": {"$sum": "$v"}, "avg": {"$avg": "$v"}, "min": {"$min": "$v"}, "max": {"$max": "$v"},
			"n": {"$count": {}}, "one": {"$sum": 1}, "f": {"$first": "$s"}, "l": {"$last": "$s"}, "fv": {"$first": "$v"}, "lv": {"$last": "$v"}}}]`,
		`[{"$match": {"v": {"$gt": 3}}}, {"$group": {"_id": null, "n": {"$sum": 1}, "sd": {"$stdDevPop": "$v"}, "ss": {"$stdDevSamp": "$v"}}},
			{"$set": {"sd": {"$round": ["$sd", 9]}, "ss": {"$round": ["$ss", 9]}}}]`,
		`[{"$match": {"v": {"$ne": null}}}, {"$set": {"w": {"$type": "$v"}}}, {"$project": {"w": 1, "k": 1, "s": 1}},
			{"$group": {"_id": {"w": "$w", "k": "$k"}, "u": {"$addToSet": "$s"}, "f": {"$first": "$s"}}},
			{"$set": {"u": {"$size": "$u"}}}, {"$sort": {"u": -1, "f": 1}}, {"$limit": 7}]`,
		`[{"$group": {"_id": {"$concat": ["$s", "|", {"$toString": "$_id"}]}, "c": {"$sum": 1}}}, {"$count": "groups"}]`,
		`[{"$match": {"nothing": 1}}, {"$group": {"_id": null, "n": {"$sum": 1}}}]`,
		// A second $group runs in parallel over the first one's results.
		`[{"$group": {"_id": {"k": "$k", "v": "$v"}, "n": {"$sum": 1}, "f": {"$first": "$s"}}},
			{"$match": {"n": {"$gt": 1}}}, {"$group": {"_id": "$_id.k", "u": {"$sum": 1}, "f": {"$first": "$f"}, "l": {"$last": "$f"}, "m": {"$max": "$n"}}}]`,
	} {
		runBoth(t, docs, pl, 0, true)
	}
	runBoth(t, nil, `[{"$group": {"_id": "$k", "n": {"$sum": 1}}}]`, 0, true)
}

// TestParallelGroupMemoryLimit stops the workers at the memory limit: with
// allowDiskUse the run continues serially (spilling) with the same result;
// without it the answer is MongoDB's error 292.
func TestParallelGroupMemoryLimit(t *testing.T) {
	docs := mixedDocs(t, 3000)
	pl := `[{"$group": {"_id": "$_id", "f": {"$first": "$s"}, "v": {"$sum": "$v"}}}, {"$sort": {"_id": 1}}]`
	got := answer(t, docs, pl, 20000)
	if !strings.Contains(got, `"_id":{"$numberInt":"2999"}`) {
		t.Fatalf("groups missing after the spill: %.200s", got)
	}
	if _, err := runBoth(t, docs, pl, 20000, false); errCode(err) != 292 {
		t.Fatalf("without allowDiskUse: %v, want code 292", err)
	}
}

// TestParallelGroupSpillFoldsResidentKeys: past the memory limit every
// worker spills the documents of keys its own table lacks, so one key can
// be in memory in one worker and spilled by another; the answer, $first
// and $last included, must equal a run that never spills.
func TestParallelGroupSpillFoldsResidentKeys(t *testing.T) {
	var parts []string
	for i := 0; i < 6000; i++ {
		k := (i * 7919) % 700
		if i%3 == 0 {
			k = i % 40 // keys seen early and often: resident in every worker
		}
		parts = append(parts, fmt.Sprintf(`{"_id": %d, "k": "key-%d", "v": %d, "w": %d.25}`, i, k, i%97, i%13))
	}
	docs := parseJSONArray(t, "["+strings.Join(parts, ",")+"]")
	pl := `[{"$group": {"_id": "$k", "n": {"$sum": 1}, "s": {"$sum": "$v"}, "a": {"$avg": "$w"}, "lo": {"$min": "$v"}, "hi": {"$max": "$_id"},
		"f": {"$first": "$_id"}, "l": {"$last": "$_id"}, "u": {"$addToSet": "$w"}}},
		{"$set": {"u": {"$size": "$u"}}}, {"$sort": {"_id": 1}}]`
	unlimited := answer(t, docs, pl, 0)
	defer func(r int) { emitRound = r }(emitRound)
	for i, limit := range []int64{3000, 20000, 60000} {
		emitRound = []int{2048, 7, 1}[i] // rounds of every size
		spilled := answer(t, docs, pl, limit)
		if spilled != unlimited {
			t.Fatalf("limit %d: spilling changed the answer:\n%.400s\n%.400s", limit, spilled, unlimited)
		}
	}
	if !strings.Contains(unlimited, `"_id":"key-0","n":{"$numberInt":"`) {
		t.Fatalf("unexpected answer %.300s", unlimited)
	}
}

// TestParallelGroupErrors: an expression error in a worker ends the run
// with the error a serial run gives.
func TestParallelGroupErrors(t *testing.T) {
	docs := mixedDocs(t, 2000)
	_, err := runBoth(t, docs, `[{"$group": {"_id": {"$toInt": "$s"}, "n": {"$sum": 1}}}]`, 0, true)
	if err == nil {
		t.Fatal("want a conversion error")
	}
}

func TestCanRunParallel(t *testing.T) {
	for pl, want := range map[string]bool{
		`[{"$group": {"_id": "$k", "n": {"$sum": 1}}}]`:                           true,
		`[{"$match": {"a": 1}}, {"$unset": "b"}, {"$group": {"_id": null}}]`:      true,
		`[{"$group": {"_id": "$k", "p": {"$push": "$v"}}}]`:                       false,
		`[{"$sort": {"a": 1}}, {"$group": {"_id": "$k", "f": {"$first": "$v"}}}]`: false,
		`[{"$limit": 5}, {"$group": {"_id": null}}]`:                              false,
		`[{"$match": {"a": 1}}]`:                                                  false,
	} {
		p, err := Parse(&Context{DB: "test", Coll: "c"}, parseJSONArray(t, pl))
		if err != nil {
			t.Fatal(err)
		}
		if got := p.CanRunParallel(); got != want {
			t.Errorf("%s: CanRunParallel = %v, want %v", pl, got, want)
		}
	}
}

// TestGroupSpillKeepsWhatIsRead: spilled documents keep only the fields
// the group reads, and the answers equal those of a run that never spills.
func TestGroupSpillKeepsWhatIsRead(t *testing.T) {
	docs := mixedDocs(t, 2500)
	for _, pl := range []string{
		`[{"$group": {"_id": {"i": "$_id", "k": "$k.a"}, "s": {"$sum": "$v"}, "f": {"$first": "$s"}}}, {"$sort": {"_id.i": 1}}]`,
		`[{"$group": {"_id": "$_id", "d": {"$first": "$$ROOT"}, "c": {"$last": "$$CURRENT.s"}}}, {"$sort": {"_id": 1}}]`,
		`[{"$group": {"_id": "$_id", "g": {"$max": {"$getField": "s"}}}}, {"$sort": {"_id": 1}}]`,
	} {
		unlimited := answer(t, docs, pl, 0)
		spilled := answer(t, docs, pl, 20000)
		if spilled != unlimited {
			t.Errorf("%s: spilling changed the answer:\n%.300s\n%.300s", pl, spilled, unlimited)
		}
	}
	for spec, want := range map[string]string{
		`{"_id": "$a.b", "x": {"$sum": {"$add": ["$c", "$$v", 1]}}, "y": {"$first": {"$literal": 1}}}`: "[a c]",
		`{"_id": null, "x": {"$push": "$$ROOT"}}`:                                                      "[]",
		`{"_id": "$a", "x": {"$first": {"$getField": "b"}}}`:                                           "[]",
	} {
		d, err := bson.UnmarshalExtJSON([]byte(`{"g": `+spec+`}`), false)
		if err != nil {
			t.Fatal(err)
		}
		v, _ := d.Lookup("g")
		if got := fmt.Sprint(topLevelDeps(v)); got != want {
			t.Errorf("topLevelDeps(%s) = %s, want %s", spec, got, want)
		}
	}
}

// TestParallelCountAndTopK: $count and a $sort bounded by $limit split
// across workers answer as a serial run does, ties (equal keys, missing
// fields, mixed types) resolved in input order.
func TestParallelCountAndTopK(t *testing.T) {
	docs := mixedDocs(t, 4000)
	for _, pl := range []string{
		`[{"$match": {"v": {"$type": "number"}}}, {"$count": "n"}]`,
		`[{"$count": "all"}]`,
		`[{"$match": {"nothing": 1}}, {"$count": "n"}]`,
		`[{"$sort": {"k": 1}}, {"$limit": 25}]`,
		`[{"$match": {"v": {"$ne": null}}}, {"$sort": {"v": -1, "k": 1}}, {"$limit": 40}]`,
		`[{"$project": {"_id": 0, "s": 1}}, {"$sort": {"v": 1}}, {"$limit": 7}]`,
		`[{"$match": {"k": {"$exists": true}}}, {"$sort": {"s": 1}}, {"$project": {"s": 1}}, {"$limit": 5}]`,
		`[{"$sort": {"k": -1}}, {"$skip": 3990}, {"$limit": 20}]`,
	} {
		p, err := Parse(&Context{DB: "test", Coll: "c"}, parseJSONArray(t, pl))
		if err != nil {
			t.Fatal(err)
		}
		if !p.CanRunParallel() {
			t.Fatalf("%s does not run in parallel", pl)
		}
		runBoth(t, docs, pl, 0, true)
	}
	if _, err := runBoth(t, docs, `[{"$sort": {"k": 1}}, {"$limit": 3000}]`, 10000, false); errCode(err) != 292 {
		t.Fatalf("top-k over the memory limit: %v, want code 292", err)
	}
}

// TestGroupSpillLargeItems: spilled documents larger than a run reader's
// buffer are read back whole (they are copied, the others served from
// the buffer) and answer as a run that never spills.
func TestGroupSpillLargeItems(t *testing.T) {
	big := strings.Repeat("x", 300<<10)
	var parts []string
	for i := 0; i < 600; i++ {
		s := fmt.Sprintf("s%04d", i)
		if i%97 == 5 {
			s = big + s
		}
		parts = append(parts, fmt.Sprintf(`{"_id": %d, "k": %d, "s": "%s"}`, i, (i*31)%150, s))
	}
	docs := parseJSONArray(t, "["+strings.Join(parts, ",")+"]")
	pl := `[{"$group": {"_id": "$k", "n": {"$sum": 1}, "m": {"$max": "$s"}, "f": {"$first": "$s"}}}, {"$set": {"m": {"$strLenBytes": "$m"}, "f": {"$strLenBytes": "$f"}}}, {"$sort": {"_id": 1}}]`
	unlimited := answer(t, docs, pl, 0)
	spilled := answer(t, docs, pl, 4000)
	if spilled != unlimited {
		t.Fatalf("spilling changed the answer:\n%.300s\n%.300s", spilled, unlimited)
	}
	if !strings.Contains(unlimited, fmt.Sprint(len(big)+5)) {
		t.Fatalf("no large value in %.300s", unlimited)
	}
}

// TestGroupTopKFused: a $group followed by a top-k $sort hands on only
// the results the top-k keeps; the answer equals that of the same
// pipeline with a stage between them (no fusing): ties resolved in the
// groups' order without a spill, and total orders with one (a spill
// changes the groups' order, which MongoDB leaves undefined).
// keyedDocs returns n documents {_id: i, k, g, v} whose (k, g) pairs
// repeat irregularly: 1,300 values of k spread over the input, 3 of g.
func keyedDocs(t *testing.T, n int) []bson.Doc {
	var parts []string
	for i := 0; i < n; i++ {
		parts = append(parts, fmt.Sprintf(`{"_id": %d, "k": %d, "g": %d, "v": %d}`, i, (i*7919)%1300, i%3, i%5))
	}
	return parseJSONArray(t, "["+strings.Join(parts, ",")+"]")
}

func TestGroupTopKFused(t *testing.T) {
	docs := keyedDocs(t, 4000)
	defer func(r int) { emitRound = r }(emitRound)
	for _, tc := range []struct {
		tail  string
		spill bool // the order is total: the answer does not depend on a spill
	}{
		{`{"$sort": {"c": -1}}, {"$limit": 7}`, false},
		{`{"$sort": {"s": 1, "c": -1}}, {"$skip": 3}, {"$limit": 5}`, false},
		{`{"$sort": {"_id.g": 1}}, {"$limit": 25}`, false},
		{`{"$sort": {"f": -1}}, {"$project": {"c": 1}}, {"$limit": 4}`, true},
		{`{"$sort": {"c": -1, "s": 1, "_id.k": 1, "_id.g": -1}}, {"$limit": 30}`, true},
		{`{"$sort": {"zz": 1, "_id": -1}}, {"$limit": 22}`, true},
	} {
		group := `{"$group": {"_id": {"k": "$k", "g": "$g"}, "c": {"$sum": 1}, "s": {"$sum": "$v"}, "f": {"$first": "$_id"}}}`
		fused := "[" + group + ", " + tc.tail + "]"
		plain := "[" + group + `, {"$match": {}}, ` + tc.tail + "]"
		limits := []int64{0}
		if tc.spill {
			limits = append(limits, 30000)
		}
		for _, limit := range limits {
			for _, round := range []int{2048, 5} {
				emitRound = round
				want := answer(t, docs, plain, limit)
				got := answer(t, docs, fused, limit)
				if got != want || len(want) < 20 {
					t.Fatalf("%s (limit %d, round %d):\nfused %.300s\nplain %.300s", tc.tail, limit, round, got, want)
				}
			}
		}
	}
}

// TestGroupFirstKeysFused: a $group followed by a $limit builds only the
// groups of the first keys, each over the whole input; the answer must
// equal the unfused pipeline's, serially and with 1, 2 and 4 workers,
// also when the keys are not found within the read-ahead.
func TestGroupFirstKeysFused(t *testing.T) {
	docs := keyedDocs(t, 6000)
	defer func(n int) { firstKeyBatches = n }(firstKeyBatches)
	group := `{"$group": {"_id": {"k": "$k", "g": "$g"}, "c": {"$sum": 1}, "s": {"$sum": "$v"},
		"f": {"$first": "$_id"}, "l": {"$last": "$_id"}, "m": {"$max": "$v"}, "u": {"$addToSet": "$g"}}}`
	for _, tc := range []struct {
		head, limit string
		ahead       int
	}{
		{"", `{"$limit": 7}`, 64},
		{"", `{"$limit": 1}`, 64},
		{"", `{"$limit": 5000}`, 64}, // more than there are groups
		{`{"$match": {"k": {"$lt": 15}}}, `, `{"$limit": 30}`, 64},
		{`{"$match": {"k": {"$lt": 15}}}, `, `{"$limit": 30}`, 1}, // keys not found within the read-ahead (about 12 documents of a batch match)
	} {
		firstKeyBatches = tc.ahead
		fused := "[" + tc.head + group + ", " + tc.limit + "]"
		plain := "[" + tc.head + group + `, {"$match": {}}, ` + tc.limit + "]"
		want := answer(t, docs, plain, 0)
		got := answer(t, docs, fused, 0)
		if got != want || len(want) < 50 {
			t.Fatalf("%s%s (read-ahead %d):\nfused %.400s\nplain %.400s", tc.head, tc.limit, tc.ahead, got, want)
		}
	}
}

// TestSpilledGroupKeepsItsID: a spilled group's _id is the value its key
// was made from, not a second evaluation of the _id expression. With
// $rand in the _id a second evaluation would name groups by values that
// other groups hold: every _id of the output must be distinct, serially
// and in parallel, whatever the random values.
func TestSpilledGroupKeepsItsID(t *testing.T) {
	docs := keyedDocs(t, 6000)
	pl := parseJSONArray(t, `[{"$group": {"_id": {"$floor": {"$multiply": [{"$rand": {}}, 1000]}}, "n": {"$sum": 1}}}]`)
	for _, workers := range []int{0, 1, 2} {
		p, err := Parse(&Context{DB: "test", Coll: "c", AllowDiskUse: true, TempDir: t.TempDir(), MemoryLimit: 20000}, pl)
		if err != nil {
			t.Fatal(err)
		}
		var it Iterator
		if workers == 0 {
			it, err = p.Run(&SliceIterator{Docs: append([]bson.Doc(nil), docs...)})
		} else {
			var ok bool
			it, ok, err = p.RunParallel(&sliceBatches{docs: docs}, workers)
			if !ok {
				t.Fatal("RunParallel refused the pipeline")
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		out, err := Drain(it)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		total := int64(0)
		for _, d := range out {
			id, _ := d.Lookup("_id")
			if seen[string(id.Data)] {
				t.Fatalf("%d workers: _id %v twice among %d groups", workers, id, len(out))
			}
			seen[string(id.Data)] = true
			n, _ := d.Lookup("n")
			c, ok := n.AsInt64()
			if !ok {
				t.Fatalf("%d workers: n is %v", workers, n)
			}
			total += c
		}
		if total != int64(len(docs)) || len(out) < 500 {
			t.Fatalf("%d workers: %d groups counting %d documents, want %d documents", workers, len(out), total, len(docs))
		}
	}
}

// TestFirstKeysRandomID: a $group whose _id uses $rand, followed by a
// $limit, still returns the $limit's number of groups in parallel (the
// fusion, which evaluates the _id ahead of the workers, is not used).
func TestFirstKeysRandomID(t *testing.T) {
	docs := keyedDocs(t, 6000)
	pl := parseJSONArray(t, `[{"$group": {"_id": {"$floor": {"$multiply": [{"$rand": {}}, 1000000]}}, "n": {"$sum": 1}}}, {"$limit": 5}]`)
	for _, workers := range []int{1, 2} {
		p, err := Parse(&Context{DB: "test", Coll: "c", AllowDiskUse: true, TempDir: t.TempDir()}, pl)
		if err != nil {
			t.Fatal(err)
		}
		it, ok, err := p.RunParallel(&sliceBatches{docs: docs}, workers)
		if err != nil || !ok {
			t.Fatal(ok, err)
		}
		out, err := Drain(it)
		if err != nil {
			t.Fatal(err)
		}
		if len(out) != 5 {
			t.Fatalf("%d workers: %d groups, want 5", workers, len(out))
		}
	}
}

// TestFirstKeysUnderMemoryLimit: the groups of the first keys fit where
// all the groups do not, so a $group followed by $limit answers without
// allowDiskUse where the $group alone fails with 292.
func TestFirstKeysUnderMemoryLimit(t *testing.T) {
	docs := keyedDocs(t, 6000)
	group := `{"$group": {"_id": {"k": "$k", "g": "$g"}, "c": {"$sum": 1}}}`
	if _, err := runBoth(t, docs, "["+group+"]", 20000, false); errCode(err) != 292 {
		t.Fatalf("$group alone under a 20,000-byte limit: %v, want code 292", err)
	}
	out, err := runBoth(t, docs, "["+group+`, {"$limit": 3}]`, 20000, false)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out, `"c"`); n != 3 {
		t.Fatalf("%d groups, want 3: %.300s", n, out)
	}
}
