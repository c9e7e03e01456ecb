package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// planTree flattens an explain stage into "STAGE>STAGE[index]", with the
// branches of a stage with inputStages in parentheses, joined by "|".
func planTree(st bson.Raw) string {
	s := st.Lookup("stage").StringValue()
	if ix, ok := st.Lookup("indexName").StringValueOK(); ok {
		s += "[" + ix + "]"
	}
	if in, ok := st.Lookup("inputStage").DocumentOK(); ok {
		return s + ">" + planTree(in)
	}
	if arr, ok := st.Lookup("inputStages").ArrayOK(); ok {
		vals, _ := arr.Values()
		var parts []string
		for _, v := range vals {
			parts = append(parts, planTree(v.Document()))
		}
		return s + "(" + strings.Join(parts, "|") + ")"
	}
	return s
}

// explained is the part of a find explain the planner tests read.
type explained struct {
	tree         string
	rejected     []string
	nReturned    int64
	keysExamined int64
	docsExamined int64
}

func explainFind(t *testing.T, db *mongo.Database, cmd bson.D) explained {
	t.Helper()
	raw, err := db.RunCommand(ctx(t), bson.D{{Key: "explain", Value: cmd}, {Key: "verbosity", Value: "executionStats"}}).Raw()
	if err != nil {
		t.Fatalf("explain %v: %v", cmd, err)
	}
	qp := raw.Lookup("queryPlanner").Document()
	ex := explained{tree: planTree(qp.Lookup("winningPlan").Document())}
	rej, _ := qp.Lookup("rejectedPlans").Array().Values()
	for _, r := range rej {
		ex.rejected = append(ex.rejected, planTree(r.Document()))
	}
	es := raw.Lookup("executionStats").Document()
	ex.nReturned = es.Lookup("nReturned").AsInt64()
	ex.keysExamined = es.Lookup("totalKeysExamined").AsInt64()
	ex.docsExamined = es.Lookup("totalDocsExamined").AsInt64()
	return ex
}

// sortedResults runs a find and returns its documents as extended JSON,
// sorted (so that results are compared as multisets).
func sortedResults(t *testing.T, coll *mongo.Collection, filter, proj, sort bson.D, hint any) []string {
	t.Helper()
	o := options.Find()
	if proj != nil {
		o.SetProjection(proj)
	}
	if sort != nil {
		o.SetSort(sort)
	}
	if hint != nil {
		o.SetHint(hint)
	}
	cur, err := coll.Find(ctx(t), filter, o)
	if err != nil {
		t.Fatalf("find %v: %v", filter, err)
	}
	var out []string
	for cur.Next(ctx(t)) {
		out = append(out, cur.Current.String())
	}
	if err := cur.Err(); err != nil {
		t.Fatal(err)
	}
	if sort == nil {
		slices.Sort(out)
	}
	return out
}

// TestPlannerCovered checks covered plans: the winning plan (asserted
// through explain), that no document is fetched when every needed key
// value round-trips exactly, and that the results equal a collection
// scan's, across getMore batches.
func TestPlannerCovered(t *testing.T) {
	_, client := connect(t)
	db := client.Database("plan")
	coll := db.Collection("cov")
	var docs []any
	for i := 0; i < 300; i++ {
		// Fields in index order, so that rebuilt documents have the
		// stored order too.
		d := bson.D{{Key: "_id", Value: i}, {Key: "s", Value: fmt.Sprintf("s%03d", i%50)}, {Key: "n", Value: i % 7}}
		switch i % 10 {
		case 1:
			d[2].Value = float64(i%7) + 0.5
		case 2:
			d[2].Value = int64(i % 7)
		case 3:
			d = d[:2] // n missing
		case 4:
			d[2].Value = nil
		}
		d = append(d, bson.E{Key: "d", Value: bson.D{{Key: "x", Value: fmt.Sprintf("x%d", i%9)}, {Key: "y", Value: bson.NewObjectIDFromTimestamp(time.Unix(int64(1e9+i), 0))}}})
		d = append(d, bson.E{Key: "t", Value: fmt.Sprintf("t%02d", i%13)}, bson.E{Key: "other", Value: i})
		if i%25 == 0 {
			d = append(d, bson.E{Key: "arr", Value: bson.A{1, 2}})
		}
		docs = append(docs, d)
	}
	if _, err := coll.InsertMany(ctx(t), docs); err != nil {
		t.Fatal(err)
	}
	for _, m := range []mongo.IndexModel{
		{Keys: bson.D{{Key: "s", Value: 1}, {Key: "n", Value: 1}}},
		{Keys: bson.D{{Key: "d.x", Value: 1}, {Key: "d.y", Value: -1}}},
		{Keys: bson.D{{Key: "t", Value: -1}, {Key: "_id", Value: 1}}},
		{Keys: bson.D{{Key: "arr", Value: 1}, {Key: "s", Value: 1}}},
	} {
		if _, err := coll.Indexes().CreateOne(ctx(t), m); err != nil {
			t.Fatal(err)
		}
	}
	sRange := bson.D{{Key: "s", Value: bson.D{{Key: "$gte", Value: "s010"}, {Key: "$lt", Value: "s030"}}}}
	cases := []struct {
		name       string
		filter     bson.D
		proj, sort bson.D
		hint       any
		tree       string
		noFetch    bool // totalDocsExamined must be 0
	}{
		{"string range, string out", sRange, bson.D{{Key: "s", Value: 1}, {Key: "_id", Value: 0}}, nil, nil, "PROJECTION_COVERED>IXSCAN[s_1_n_1]", true},
		{"filter on the second field", bson.D{{Key: "s", Value: "s007"}, {Key: "n", Value: bson.D{{Key: "$gte", Value: 2}}}}, bson.D{{Key: "s", Value: 1}, {Key: "_id", Value: false}}, nil, nil, "PROJECTION_COVERED>IXSCAN[s_1_n_1]", true},
		{"numbers of several types out are fetched", sRange, bson.D{{Key: "s", Value: 1}, {Key: "n", Value: 1}, {Key: "_id", Value: 0}}, nil, nil, "PROJECTION_DEFAULT>FETCH>IXSCAN[s_1_n_1]", false},
		{"nested paths", bson.D{{Key: "d.x", Value: bson.D{{Key: "$in", Value: bson.A{"x1", "x5"}}}}}, bson.D{{Key: "d.x", Value: 1}, {Key: "d.y", Value: 1}, {Key: "_id", Value: 0}}, nil, nil, "PROJECTION_COVERED>IXSCAN[d.x_1_d.y_-1]", true},
		{"descending with _id in the index", bson.D{{Key: "t", Value: bson.D{{Key: "$gt", Value: "t05"}}}}, bson.D{{Key: "t", Value: 1}, {Key: "_id", Value: 1}}, nil, nil, "PROJECTION_COVERED>IXSCAN[t_-1__id_1]", true},
		{"sort by the index", bson.D{{Key: "t", Value: bson.D{{Key: "$lte", Value: "t03"}}}}, bson.D{{Key: "t", Value: 1}, {Key: "_id", Value: 0}}, bson.D{{Key: "t", Value: -1}}, nil, "PROJECTION_COVERED>IXSCAN[t_-1__id_1]", true},
		{"sort on a covered field", sRange, bson.D{{Key: "s", Value: 1}, {Key: "_id", Value: 0}}, bson.D{{Key: "n", Value: -1}, {Key: "s", Value: 1}}, nil, "PROJECTION_COVERED>SORT>IXSCAN[s_1_n_1]", false},
		{"hinted full index", bson.D{}, bson.D{{Key: "d.x", Value: 1}, {Key: "_id", Value: 0}}, nil, "d.x_1_d.y_-1", "PROJECTION_COVERED>IXSCAN[d.x_1_d.y_-1]", true},
		// _id comes from the entry's document key; these are numbers,
		// whose type the key loses, so each entry fetches.
		{"_id not in the index, numbers", sRange, bson.D{{Key: "s", Value: 1}}, nil, nil, "PROJECTION_COVERED>IXSCAN[s_1_n_1]", false},
		{"field outside the index", sRange, bson.D{{Key: "s", Value: 1}, {Key: "other", Value: 1}, {Key: "_id", Value: 0}}, nil, nil, "PROJECTION_DEFAULT>FETCH>IXSCAN[s_1_n_1]", false},
		{"filter outside the index", bson.D{{Key: "s", Value: "s001"}, {Key: "other", Value: 1}}, bson.D{{Key: "s", Value: 1}, {Key: "_id", Value: 0}}, nil, nil, "PROJECTION_DEFAULT>FETCH>IXSCAN[s_1_n_1]", false},
		{"$type needs the stored type", bson.D{{Key: "s", Value: "s001"}, {Key: "n", Value: bson.D{{Key: "$type", Value: "double"}}}}, bson.D{{Key: "s", Value: 1}, {Key: "_id", Value: 0}}, nil, nil, "PROJECTION_DEFAULT>FETCH>IXSCAN[s_1_n_1]", false},
		{"exclusion projection", sRange, bson.D{{Key: "other", Value: 0}}, nil, nil, "PROJECTION_DEFAULT>FETCH>IXSCAN[s_1_n_1]", false},
		{"multikey index", bson.D{{Key: "arr", Value: 1}}, bson.D{{Key: "arr", Value: 1}, {Key: "_id", Value: 0}}, nil, nil, "PROJECTION_DEFAULT>FETCH>IXSCAN[arr_1_s_1]", false},
		{"null may be missing", bson.D{{Key: "s", Value: bson.D{{Key: "$lt", Value: "s005"}}}, {Key: "n", Value: bson.D{{Key: "$exists", Value: false}}}}, bson.D{{Key: "s", Value: 1}, {Key: "_id", Value: 0}}, nil, nil, "PROJECTION_COVERED>IXSCAN[s_1_n_1]", false},
	}
	for _, tc := range cases {
		cmd := bson.D{{Key: "find", Value: "cov"}, {Key: "filter", Value: tc.filter}, {Key: "projection", Value: tc.proj}}
		if tc.sort != nil {
			cmd = append(cmd, bson.E{Key: "sort", Value: tc.sort})
		}
		if tc.hint != nil {
			cmd = append(cmd, bson.E{Key: "hint", Value: tc.hint})
		}
		ex := explainFind(t, db, cmd)
		if ex.tree != tc.tree {
			t.Errorf("%s: plan %s, want %s", tc.name, ex.tree, tc.tree)
		}
		if tc.noFetch && ex.docsExamined != 0 {
			t.Errorf("%s: %d documents examined, want 0", tc.name, ex.docsExamined)
		}
		got := sortedResults(t, coll, tc.filter, tc.proj, tc.sort, tc.hint)
		want := sortedResults(t, coll, tc.filter, tc.proj, tc.sort, bson.D{{Key: "$natural", Value: 1}})
		if ex.nReturned != int64(len(want)) || len(want) == 0 {
			t.Errorf("%s: explain returned %d, the scan %d", tc.name, ex.nReturned, len(want))
		}
		if tc.sort == nil && !slices.Equal(got, want) {
			t.Errorf("%s: results differ from a scan:\n%v\n%v", tc.name, got, want)
		}
		if tc.sort != nil && len(got) != len(want) {
			t.Errorf("%s: %d results, the scan %d", tc.name, len(got), len(want))
		}
	}
	// A count whose filter the index answers reads no document.
	ex := explainFind(t, db, bson.D{{Key: "count", Value: "cov"}, {Key: "query", Value: sRange}})
	if ex.tree != "IXSCAN[s_1_n_1]" || ex.docsExamined != 0 || ex.nReturned != 120 {
		t.Errorf("covered count: %+v", ex)
	}
	if n, err := coll.CountDocuments(ctx(t), bson.D{{Key: "s", Value: "s002"}, {Key: "n", Value: bson.D{{Key: "$lt", Value: 3}}}}); err != nil || n != 2 {
		t.Errorf("covered countDocuments = %d, %v", n, err)
	}
	// ObjectId and string _ids are returned from the entries' document
	// keys: the default projection of an indexed field reads no document.
	ids := db.Collection("covid")
	var idDocs []any
	for i := 0; i < 60; i++ {
		var id any = bson.NewObjectIDFromTimestamp(time.Unix(int64(1e9+i), 0))
		if i%3 == 0 {
			id = fmt.Sprintf("id\x00%03d", i) // a NUL survives the key encoding
		}
		idDocs = append(idDocs, bson.D{{Key: "_id", Value: id}, {Key: "s", Value: fmt.Sprintf("s%02d", i%20)}, {Key: "x", Value: i}})
	}
	if _, err := ids.InsertMany(ctx(t), idDocs); err != nil {
		t.Fatal(err)
	}
	if _, err := ids.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "s", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	idFilter := bson.D{{Key: "s", Value: bson.D{{Key: "$gte", Value: "s05"}, {Key: "$lt", Value: "s12"}}}}
	idProj := bson.D{{Key: "s", Value: 1}}
	ex = explainFind(t, db, bson.D{{Key: "find", Value: "covid"}, {Key: "filter", Value: idFilter}, {Key: "projection", Value: idProj}})
	if ex.tree != "PROJECTION_COVERED>IXSCAN[s_1]" || ex.docsExamined != 0 || ex.nReturned != 21 {
		t.Errorf("_id from the document key: %+v", ex)
	}
	got := sortedResults(t, ids, idFilter, idProj, nil, nil)
	want := sortedResults(t, ids, idFilter, idProj, nil, bson.D{{Key: "$natural", Value: 1}})
	if !slices.Equal(got, want) || len(got) != 21 {
		t.Errorf("_id from the document key: results differ from a scan:\n%v\n%v", got, want)
	}
	// Small batches resume a covered walk.
	cur, err := coll.Find(ctx(t), sRange, options.Find().SetProjection(bson.D{{Key: "s", Value: 1}, {Key: "_id", Value: 0}}).SetBatchSize(7))
	if err != nil {
		t.Fatal(err)
	}
	var all []bson.M
	if err := cur.All(ctx(t), &all); err != nil || len(all) != 120 {
		t.Fatalf("covered find in batches: %d, %v", len(all), err)
	}
}

// TestPlannerOr checks $or plans: an OR of one index scan per branch when
// every branch has an index (asserted through explain), a collection scan
// otherwise, and results equal to a collection scan's (each document once,
// multikey entries included), for find, count, update and aggregate.
func TestPlannerOr(t *testing.T) {
	_, client := connect(t)
	db := client.Database("plan")
	coll := db.Collection("or")
	var docs []any
	for i := 0; i < 400; i++ {
		d := bson.D{{Key: "_id", Value: i}, {Key: "a", Value: i % 20}, {Key: "b", Value: fmt.Sprintf("b%02d", i%30)}, {Key: "c", Value: i % 3}, {Key: "g", Value: i % 4}}
		if i%9 == 0 {
			d[1].Value = bson.A{i % 20, (i + 1) % 20, 50}
		}
		docs = append(docs, d)
	}
	if _, err := coll.InsertMany(ctx(t), docs); err != nil {
		t.Fatal(err)
	}
	for _, m := range []mongo.IndexModel{
		{Keys: bson.D{{Key: "a", Value: 1}}},
		{Keys: bson.D{{Key: "b", Value: -1}}},
		{Keys: bson.D{{Key: "g", Value: 1}, {Key: "c", Value: 1}}},
	} {
		if _, err := coll.Indexes().CreateOne(ctx(t), m); err != nil {
			t.Fatal(err)
		}
	}
	or := func(branches ...bson.D) bson.D {
		a := bson.A{}
		for _, b := range branches {
			a = append(a, b)
		}
		return bson.D{{Key: "$or", Value: a}}
	}
	cases := []struct {
		name   string
		filter bson.D
		sort   bson.D
		tree   string
	}{
		{"two indexes", or(bson.D{{Key: "a", Value: 3}}, bson.D{{Key: "b", Value: bson.D{{Key: "$lt", Value: "b03"}}}}), nil, "FETCH>OR(IXSCAN[a_1]|IXSCAN[b_-1])"},
		{"overlapping branches, one index", or(bson.D{{Key: "a", Value: bson.D{{Key: "$in", Value: bson.A{1, 2}}}}}, bson.D{{Key: "a", Value: bson.D{{Key: "$gte", Value: 2}, {Key: "$lt", Value: 5}}}}, bson.D{{Key: "a", Value: 50}}), nil, "FETCH>OR(IXSCAN[a_1]|IXSCAN[a_1]|IXSCAN[a_1])"},
		{"compound branch and residual", or(bson.D{{Key: "g", Value: 1}, {Key: "c", Value: 2}}, bson.D{{Key: "b", Value: "b07"}, {Key: "c", Value: 1}}), nil, "FETCH>OR(IXSCAN[g_1_c_1]|IXSCAN[b_-1])"},
		{"nested $or", or(bson.D{{Key: "a", Value: 4}}, or(bson.D{{Key: "b", Value: "b09"}}, bson.D{{Key: "g", Value: 3}})), nil, "FETCH>OR(IXSCAN[a_1]|IXSCAN[b_-1]|IXSCAN[g_1_c_1])"},
		{"with an outside condition", append(or(bson.D{{Key: "a", Value: 5}}, bson.D{{Key: "b", Value: "b05"}}), bson.E{Key: "c", Value: 2}), nil, "FETCH>OR(IXSCAN[a_1]|IXSCAN[b_-1])"},
		{"sorted", or(bson.D{{Key: "a", Value: 6}}, bson.D{{Key: "b", Value: "b11"}}), bson.D{{Key: "c", Value: -1}, {Key: "_id", Value: 1}}, "SORT>FETCH>OR(IXSCAN[a_1]|IXSCAN[b_-1])"},
		{"a branch without an index", or(bson.D{{Key: "a", Value: 3}}, bson.D{{Key: "c", Value: 1}}), nil, "COLLSCAN"},
		{"an indexed top-level field wins", append(or(bson.D{{Key: "a", Value: 3}}, bson.D{{Key: "b", Value: "b01"}}), bson.E{Key: "g", Value: 2}), nil, "FETCH>IXSCAN[g_1_c_1]"},
	}
	for _, tc := range cases {
		cmd := bson.D{{Key: "find", Value: "or"}, {Key: "filter", Value: tc.filter}}
		if tc.sort != nil {
			cmd = append(cmd, bson.E{Key: "sort", Value: tc.sort})
		}
		ex := explainFind(t, db, cmd)
		if ex.tree != tc.tree {
			t.Errorf("%s: plan %s, want %s", tc.name, ex.tree, tc.tree)
		}
		got := sortedResults(t, coll, tc.filter, nil, tc.sort, nil)
		want := sortedResults(t, coll, tc.filter, nil, tc.sort, bson.D{{Key: "$natural", Value: 1}})
		if !slices.Equal(got, want) || len(want) == 0 || ex.nReturned != int64(len(want)) {
			t.Errorf("%s: %d results (explain %d), the scan %d", tc.name, len(got), ex.nReturned, len(want))
		}
		if n, err := coll.CountDocuments(ctx(t), tc.filter); err != nil || n != int64(len(want)) {
			t.Errorf("%s: countDocuments = %d, %v; want %d", tc.name, n, err, len(want))
		}
		// Small batches resume the union across getMores.
		cur, err := coll.Find(ctx(t), tc.filter, options.Find().SetBatchSize(3))
		if err != nil {
			t.Fatal(err)
		}
		var all []bson.Raw
		if err := cur.All(ctx(t), &all); err != nil || len(all) != len(want) {
			t.Errorf("%s: in batches of 3: %d, %v", tc.name, len(all), err)
		}
	}
	// Writes select through the union and see each document once.
	f := or(bson.D{{Key: "a", Value: bson.D{{Key: "$lte", Value: 2}}}}, bson.D{{Key: "b", Value: bson.D{{Key: "$lte", Value: "b02"}}}})
	want := len(sortedResults(t, coll, f, nil, nil, bson.D{{Key: "$natural", Value: 1}}))
	r, err := coll.UpdateMany(ctx(t), f, bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}})
	if err != nil || r.ModifiedCount != int64(want) {
		t.Fatalf("updateMany through $or: %+v, %v; want %d", r, err, want)
	}
	if n, _ := coll.CountDocuments(ctx(t), bson.D{{Key: "n", Value: bson.D{{Key: "$gt", Value: 1}}}}); n != 0 {
		t.Fatalf("%d documents updated twice", n)
	}
	// The aggregate explain shows the union under $cursor.
	raw, err := db.RunCommand(ctx(t), bson.D{{Key: "explain", Value: bson.D{{Key: "aggregate", Value: "or"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$match", Value: f}}, bson.D{{Key: "$count", Value: "n"}}}}, {Key: "cursor", Value: bson.D{}}}}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	stage0, _ := raw.Lookup("stages").Array().Values()
	if tree := planTree(stage0[0].Document().Lookup("$cursor", "queryPlanner", "winningPlan").Document()); tree != "FETCH>OR(IXSCAN[a_1]|IXSCAN[b_-1])" {
		t.Errorf("aggregate $or plan: %s", tree)
	}
}

// TestAggregateHintAndText checks hint on aggregate (the leading $match's
// scan, asserted through explain) and $text in the first $match, including
// the pipeline the Go driver's CountDocuments sends.
func TestAggregateHintAndText(t *testing.T) {
	_, client := connect(t)
	db := client.Database("plan")
	coll := db.Collection("aggtext")
	words := []string{"coffee", "tea", "milk", "sugar", "bread"}
	var docs []any
	for i := 0; i < 200; i++ {
		body := words[i%5] + " and " + words[(i/5)%5]
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "a", Value: i % 10}, {Key: "b", Value: i % 7}, {Key: "body", Value: body}})
	}
	if _, err := coll.InsertMany(ctx(t), docs); err != nil {
		t.Fatal(err)
	}
	for _, m := range []mongo.IndexModel{
		{Keys: bson.D{{Key: "a", Value: 1}}},
		{Keys: bson.D{{Key: "b", Value: 1}}},
		{Keys: bson.D{{Key: "body", Value: "text"}}},
	} {
		if _, err := coll.Indexes().CreateOne(ctx(t), m); err != nil {
			t.Fatal(err)
		}
	}
	text := func(s string) bson.D { return bson.D{{Key: "$text", Value: bson.D{{Key: "$search", Value: s}}}} }
	aggIDs := func(pipeline bson.A, opts ...options.Lister[options.AggregateOptions]) []int32 {
		t.Helper()
		cur, err := coll.Aggregate(ctx(t), pipeline, opts...)
		if err != nil {
			t.Fatalf("aggregate %v: %v", pipeline, err)
		}
		var out []int32
		for cur.Next(ctx(t)) {
			out = append(out, cur.Current.Lookup("_id").Int32())
		}
		slices.Sort(out)
		return out
	}
	findIDs := func(filter bson.D) []int32 {
		t.Helper()
		var out []int32
		for _, s := range sortedResults(t, coll, filter, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "_id", Value: 1}}, nil) {
			var d struct {
				ID int32 `bson:"_id"`
			}
			if err := bson.UnmarshalExtJSON([]byte(s), false, &d); err != nil {
				t.Fatal(err)
			}
			out = append(out, d.ID)
		}
		return out
	}
	// $text in the first $match, with more conditions and later stages.
	f := append(text("coffee"), bson.E{Key: "a", Value: bson.D{{Key: "$lt", Value: 5}}})
	want := findIDs(f)
	if got := aggIDs(bson.A{bson.D{{Key: "$match", Value: f}}, bson.D{{Key: "$project", Value: bson.D{{Key: "a", Value: 1}}}}}); !slices.Equal(got, want) || len(want) == 0 {
		t.Fatalf("$text $match: %v, find %v", got, want)
	}
	// The driver's CountDocuments: $match {$text} then $group.
	for _, s := range []string{"tea", "milk sugar", "\"coffee and tea\"", "bread -milk"} {
		n, err := coll.CountDocuments(ctx(t), text(s))
		if w := len(findIDs(text(s))); err != nil || n != int64(w) || w == 0 {
			t.Errorf("CountDocuments($text %s) = %d, %v; find has %d", s, n, err, w)
		}
	}
	// $text later in the pipeline is refused as MongoDB does.
	_, err := coll.Aggregate(ctx(t), bson.A{bson.D{{Key: "$match", Value: bson.D{{Key: "a", Value: 1}}}}, bson.D{{Key: "$match", Value: text("tea")}}})
	cmdErr(t, err, 17313)
	// Explain shows the text plan under $cursor.
	cursorPlan := func(pipeline bson.A, hint any) string {
		t.Helper()
		cmd := bson.D{{Key: "aggregate", Value: "aggtext"}, {Key: "pipeline", Value: pipeline}, {Key: "cursor", Value: bson.D{}}}
		if hint != nil {
			cmd = append(cmd, bson.E{Key: "hint", Value: hint})
		}
		raw, err := db.RunCommand(ctx(t), bson.D{{Key: "explain", Value: cmd}}).Raw()
		if err != nil {
			t.Fatalf("explain %v: %v", pipeline, err)
		}
		stages, _ := raw.Lookup("stages").Array().Values()
		return planTree(stages[0].Document().Lookup("$cursor", "queryPlanner", "winningPlan").Document())
	}
	if tree := cursorPlan(bson.A{bson.D{{Key: "$match", Value: text("tea")}}}, nil); !strings.HasPrefix(tree, "TEXT_MATCH") {
		t.Errorf("explain of a $text aggregate: %s", tree)
	}
	// hint forces the leading $match's index (or a collection scan).
	match := bson.A{bson.D{{Key: "$match", Value: bson.D{{Key: "a", Value: 3}, {Key: "b", Value: bson.D{{Key: "$gte", Value: 2}}}}}}}
	want = aggIDs(match)
	for _, tc := range []struct {
		hint any
		tree string
	}{
		{nil, "FETCH>IXSCAN[a_1]"},
		{"b_1", "FETCH>IXSCAN[b_1]"},
		{bson.D{{Key: "b", Value: 1}}, "FETCH>IXSCAN[b_1]"},
		{bson.D{{Key: "$natural", Value: 1}}, "COLLSCAN"},
	} {
		if tree := cursorPlan(match, tc.hint); tree != tc.tree {
			t.Errorf("hint %v: plan %s, want %s", tc.hint, tree, tc.tree)
		}
		if tc.hint == nil {
			continue
		}
		if got := aggIDs(match, options.Aggregate().SetHint(tc.hint)); !slices.Equal(got, want) {
			t.Errorf("hint %v: %v, unhinted %v", tc.hint, got, want)
		}
		// Parallel pipelines ($group) follow the hint too.
		if got := aggIDs(append(slices.Clone(match), bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$_id"}}}}), options.Aggregate().SetHint(tc.hint)); !slices.Equal(got, want) {
			t.Errorf("hint %v with $group: %v, want %v", tc.hint, got, want)
		}
	}
	// A hinted index serves a pipeline without $match; an unknown hint is refused.
	if tree := cursorPlan(bson.A{bson.D{{Key: "$sort", Value: bson.D{{Key: "a", Value: 1}}}}}, "a_1"); tree != "FETCH>IXSCAN[a_1]" {
		t.Errorf("hinted $sort pipeline: %s", tree)
	}
	if got := aggIDs(bson.A{bson.D{{Key: "$sort", Value: bson.D{{Key: "a", Value: 1}}}}}, options.Aggregate().SetHint("a_1")); len(got) != 200 {
		t.Errorf("hinted $sort pipeline returned %d documents", len(got))
	}
	_, err = coll.Aggregate(ctx(t), match, options.Aggregate().SetHint("nope"))
	cmdErr(t, err, 2)
}

// TestPlannerTrial checks plan choice by trial: the candidate that returns
// its documents in the fewest works wins (asserted through explain, with
// the loser in rejectedPlans), the winner is cached per query shape
// ($planCacheStats), and the cache is cleared by planCacheClear and by
// index changes.
func TestPlannerTrial(t *testing.T) {
	_, client := connect(t)
	db := client.Database("plan")
	coll := db.Collection("trial")
	var docs []any
	for i := 0; i < 3000; i++ {
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "a", Value: i % 2}, {Key: "b", Value: i}, {Key: "c", Value: i % 3}})
	}
	if _, err := coll.InsertMany(ctx(t), docs); err != nil {
		t.Fatal(err)
	}
	for _, m := range []mongo.IndexModel{
		{Keys: bson.D{{Key: "a", Value: 1}}},
		{Keys: bson.D{{Key: "b", Value: 1}}},
	} {
		if _, err := coll.Indexes().CreateOne(ctx(t), m); err != nil {
			t.Fatal(err)
		}
	}
	between := func(lo, hi int) bson.D { return bson.D{{Key: "$gte", Value: lo}, {Key: "$lt", Value: hi}} }
	cases := []struct {
		name           string
		filter, sort   bson.D
		tree, rejected string
	}{
		// The rule (equality before ranges) would take a_1; the range on
		// b reaches its end after 10 documents.
		{"selective range beats equality", bson.D{{Key: "a", Value: 0}, {Key: "b", Value: between(10, 20)}}, nil, "FETCH>IXSCAN[b_1]", "FETCH>IXSCAN[a_1]"},
		// Every b matches: a_1 returns 101 documents in fewer works.
		{"equality beats an open range", bson.D{{Key: "a", Value: 1}, {Key: "b", Value: bson.D{{Key: "$gte", Value: 0}}}, {Key: "c", Value: bson.D{{Key: "$ne", Value: 2}}}}, nil, "FETCH>IXSCAN[a_1]", "FETCH>IXSCAN[b_1]"},
		{"with a sort", bson.D{{Key: "a", Value: 0}, {Key: "b", Value: between(100, 130)}}, bson.D{{Key: "c", Value: 1}}, "SORT>FETCH>IXSCAN[b_1]", "SORT>FETCH>IXSCAN[a_1]"},
	}
	for _, tc := range cases {
		cmd := bson.D{{Key: "find", Value: "trial"}, {Key: "filter", Value: tc.filter}}
		if tc.sort != nil {
			cmd = append(cmd, bson.E{Key: "sort", Value: tc.sort})
		}
		ex := explainFind(t, db, cmd)
		if ex.tree != tc.tree || len(ex.rejected) != 1 || ex.rejected[0] != tc.rejected {
			t.Errorf("%s: plan %s, rejected %v; want %s, [%s]", tc.name, ex.tree, ex.rejected, tc.tree, tc.rejected)
		}
		got := sortedResults(t, coll, tc.filter, nil, nil, nil)
		want := sortedResults(t, coll, tc.filter, nil, nil, bson.D{{Key: "$natural", Value: 1}})
		if !slices.Equal(got, want) || len(want) == 0 {
			t.Errorf("%s: %d results, the scan %d", tc.name, len(got), len(want))
		}
	}
	type cacheEntry struct {
		Works            int64 `bson:"works"`
		Hits             int64 `bson:"hits"`
		CreatedFromQuery struct {
			Query bson.Raw `bson:"query"`
		} `bson:"createdFromQuery"`
		CachedPlan struct {
			Indexes string `bson:"indexes"`
		} `bson:"cachedPlan"`
	}
	cacheStats := func() []cacheEntry {
		t.Helper()
		cur, err := coll.Aggregate(ctx(t), bson.A{bson.D{{Key: "$planCacheStats", Value: bson.D{}}}})
		if err != nil {
			t.Fatal(err)
		}
		var out []cacheEntry
		if err := cur.All(ctx(t), &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	// The finds above cached one entry per shape; the same shape with
	// other values reuses it.
	b1Hits := func() int64 {
		entries := cacheStats()
		if len(entries) != 2 {
			t.Fatalf("$planCacheStats after 2 shapes: %+v", entries)
		}
		for _, e := range entries {
			if e.CachedPlan.Indexes == "b_1" {
				return e.Hits
			}
		}
		t.Fatalf("no b_1 entry: %+v", entries)
		return 0
	}
	before := b1Hits()
	if _, err := coll.Find(ctx(t), bson.D{{Key: "a", Value: 1}, {Key: "b", Value: between(500, 505)}}); err != nil {
		t.Fatal(err)
	}
	if after := b1Hits(); after != before+1 {
		t.Errorf("cache hits for the b_1 shape went from %d to %d", before, after)
	}
	// planCacheClear with a query drops that shape; without, all.
	if err := db.RunCommand(ctx(t), bson.D{{Key: "planCacheClear", Value: "trial"}, {Key: "query", Value: bson.D{{Key: "a", Value: 5}, {Key: "b", Value: between(1, 2)}}}}).Err(); err != nil {
		t.Fatal(err)
	}
	if n := len(cacheStats()); n != 1 {
		t.Errorf("after clearing one shape: %d entries", n)
	}
	if err := db.RunCommand(ctx(t), bson.D{{Key: "planCacheClear", Value: "trial"}}).Err(); err != nil {
		t.Fatal(err)
	}
	if n := len(cacheStats()); n != 0 {
		t.Errorf("after planCacheClear: %d entries", n)
	}
	// Creating an index invalidates the collection's entries.
	if _, err := coll.Find(ctx(t), cases[0].filter); err != nil {
		t.Fatal(err)
	}
	if n := len(cacheStats()); n != 1 {
		t.Fatalf("cache entries after a find: %d", n)
	}
	if _, err := coll.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "c", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	if n := len(cacheStats()); n != 0 {
		t.Errorf("cache entries after createIndex: %d", n)
	}
	// Writes (update, delete) plan through the trial too.
	r, err := coll.UpdateMany(ctx(t), cases[0].filter, bson.D{{Key: "$set", Value: bson.D{{Key: "u", Value: true}}}})
	if err != nil || r.ModifiedCount != 5 {
		t.Fatalf("updateMany: %+v, %v", r, err)
	}
}
