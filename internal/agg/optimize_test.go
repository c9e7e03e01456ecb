package agg

import "testing"

// TestOptimizeRewrites checks that the optimizer's rewrites keep results:
// a $limit bounding a $sort across one-to-one stages and a $skip, and a
// plain $project dropped before $count.
func TestOptimizeRewrites(t *testing.T) {
	in := `[{"_id":1,"a":5,"b":"x"},{"_id":2,"a":3,"b":"y"},{"_id":3,"a":9},{"_id":4,"a":1,"b":null},{"_id":5,"a":7,"b":"z"}]`
	runCases(t, []pipeCase{
		{name: "sort project limit", input: in, pipeline: `[{"$sort":{"a":-1}},{"$project":{"a":1}},{"$limit":2}]`,
			want: `[{"_id":3,"a":9},{"_id":5,"a":7}]`},
		{name: "sort set unset limit", input: in, pipeline: `[{"$sort":{"a":1}},{"$set":{"c":{"$add":["$a",1]}}},{"$unset":"b"},{"$limit":2}]`,
			want: `[{"_id":4,"a":1,"c":2},{"_id":2,"a":3,"c":4}]`},
		{name: "sort skip limit", input: in, pipeline: `[{"$sort":{"a":1}},{"$skip":1},{"$limit":2}]`,
			want: `[{"_id":2,"a":3,"b":"y"},{"_id":1,"a":5,"b":"x"}]`},
		{name: "sort skip past the end", input: in, pipeline: `[{"$sort":{"a":1}},{"$skip":4},{"$limit":5}]`,
			want: `[{"_id":3,"a":9}]`},
		{name: "sort match limit is not bounded", input: in, pipeline: `[{"$sort":{"a":1}},{"$match":{"b":{"$type":"string"}}},{"$limit":2}]`,
			want: `[{"_id":2,"a":3,"b":"y"},{"_id":1,"a":5,"b":"x"}]`},
		{name: "project count", input: in, pipeline: `[{"$project":{"_id":1}},{"$count":"c"}]`, want: `[{"c":5}]`},
		{name: "computed project count still fails", input: in,
			pipeline: `[{"$project":{"x":{"$toInt":"$b"}}},{"$count":"c"}]`, code: 241},
		{name: "unset count", input: in, pipeline: `[{"$unset":"a"},{"$count":"c"}]`, want: `[{"c":5}]`},
	})
}

func TestOptimizeShapes(t *testing.T) {
	for pl, want := range map[string]int64{
		`[{"$sort":{"a":-1}},{"$project":{"a":1}},{"$limit":2}]`:    2,
		`[{"$sort":{"a":-1}},{"$skip":10},{"$limit":2}]`:            12,
		`[{"$sort":{"a":-1}},{"$match":{"a":1}},{"$limit":2}]`:      0,
		`[{"$sort":{"a":-1}},{"$skip":1},{"$skip":1},{"$limit":2}]`: 0,
	} {
		p, err := Parse(&Context{DB: "test", Coll: "c"}, parseJSONArray(t, pl))
		if err != nil {
			t.Fatal(err)
		}
		if got := p.stages[0].(*sortStage).limit; got != want {
			t.Errorf("%s: sort bound %d, want %d", pl, got, want)
		}
	}
	p, err := Parse(&Context{DB: "test", Coll: "c"}, parseJSONArray(t, `[{"$project":{"_id":1}},{"$count":"c"}]`))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.stages) != 1 {
		t.Errorf("plain $project before $count kept: %d stages", len(p.stages))
	}
}
