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
	tree               string
	rejected           []string
	nReturned          int64
	keysExamined       int64
	docsExamined       int64
	rejectedPlansCount int
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
		{"numbers out are fetched", sRange, bson.D{{Key: "s", Value: 1}, {Key: "n", Value: 1}, {Key: "_id", Value: 0}}, nil, nil, "PROJECTION_COVERED>IXSCAN[s_1_n_1]", false},
		{"nested paths", bson.D{{Key: "d.x", Value: bson.D{{Key: "$in", Value: bson.A{"x1", "x5"}}}}}, bson.D{{Key: "d.x", Value: 1}, {Key: "d.y", Value: 1}, {Key: "_id", Value: 0}}, nil, nil, "PROJECTION_COVERED>IXSCAN[d.x_1_d.y_-1]", true},
		{"descending with _id in the index", bson.D{{Key: "t", Value: bson.D{{Key: "$gt", Value: "t05"}}}}, bson.D{{Key: "t", Value: 1}, {Key: "_id", Value: 1}}, nil, nil, "PROJECTION_COVERED>IXSCAN[t_-1__id_1]", false},
		{"sort by the index", bson.D{{Key: "t", Value: bson.D{{Key: "$lte", Value: "t03"}}}}, bson.D{{Key: "t", Value: 1}, {Key: "_id", Value: 0}}, bson.D{{Key: "t", Value: -1}}, nil, "PROJECTION_COVERED>IXSCAN[t_-1__id_1]", true},
		{"sort on a covered field", sRange, bson.D{{Key: "s", Value: 1}, {Key: "_id", Value: 0}}, bson.D{{Key: "n", Value: -1}, {Key: "s", Value: 1}}, nil, "PROJECTION_COVERED>SORT>IXSCAN[s_1_n_1]", false},
		{"hinted full index", bson.D{}, bson.D{{Key: "d.x", Value: 1}, {Key: "_id", Value: 0}}, nil, "d.x_1_d.y_-1", "PROJECTION_COVERED>IXSCAN[d.x_1_d.y_-1]", true},
		{"_id not in the index", sRange, bson.D{{Key: "s", Value: 1}}, nil, nil, "PROJECTION_DEFAULT>FETCH>IXSCAN[s_1_n_1]", false},
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
