package e2e

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/cairndb/cairn/internal/testutil/cairndtest"
)

// TestKillOpEndsAggregation: killOp interrupts a long aggregation, which
// answers Interrupted (11601), and it leaves currentOp.
func TestKillOpEndsAggregation(t *testing.T) {
	_, client := connect(t)
	c := client.Database("kill").Collection("c")
	var docs []any
	for i := range 3000 {
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "x", Value: i}})
	}
	if _, err := c.InsertMany(ctx(t), docs); err != nil {
		t.Fatal(err)
	}
	// A self-join of every document with every other: 9 million pairs,
	// far longer than the test waits.
	pipeline := mongo.Pipeline{
		{{Key: "$lookup", Value: bson.D{{Key: "from", Value: "c"}, {Key: "pipeline", Value: bson.A{
			bson.D{{Key: "$match", Value: bson.D{{Key: "$expr", Value: bson.D{{Key: "$gte", Value: bson.A{"$x", 0}}}}}}},
		}}, {Key: "as", Value: "all"}}}},
		{{Key: "$unwind", Value: "$all"}},
		{{Key: "$group", Value: bson.D{{Key: "_id", Value: nil}, {Key: "n", Value: bson.D{{Key: "$sum", Value: 1}}}}}},
	}
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		cur, err := c.Aggregate(ctx(t), pipeline)
		if err == nil {
			cur.Close(ctx(t))
		}
		done <- err
	}()
	admin := client.Database("admin")
	var opid int64
	for deadline := time.Now().Add(20 * time.Second); opid == 0; time.Sleep(20 * time.Millisecond) {
		// mongosh's db.currentOp() runs the $currentOp stage; the
		// currentOp command must see the same operation.
		cur, err := admin.Aggregate(ctx(t), mongo.Pipeline{
			{{Key: "$currentOp", Value: bson.D{{Key: "allUsers", Value: true}}}},
			{{Key: "$match", Value: bson.D{{Key: "command.aggregate", Value: "c"}}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		var staged []struct{ Opid int64 }
		if err := cur.All(ctx(t), &staged); err != nil {
			t.Fatal(err)
		}
		var cmd struct {
			Inprog []struct{ Opid int64 }
		}
		filter := bson.D{{Key: "currentOp", Value: 1}, {Key: "command.aggregate", Value: "c"}}
		if err := admin.RunCommand(ctx(t), filter).Decode(&cmd); err != nil {
			t.Fatal(err)
		}
		if len(staged) == 1 && len(cmd.Inprog) == 1 {
			if staged[0].Opid != cmd.Inprog[0].Opid {
				t.Fatalf("$currentOp lists op %d, currentOp %d", staged[0].Opid, cmd.Inprog[0].Opid)
			}
			opid = staged[0].Opid
		}
		select {
		case err := <-done:
			t.Fatalf("the aggregation ended before it was killed: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the aggregation never showed in currentOp")
		}
	}
	if err := admin.RunCommand(ctx(t), bson.D{{Key: "killOp", Value: 1}, {Key: "op", Value: opid}}).Err(); err != nil {
		t.Fatal(err)
	}
	// $currentOp is only valid first, on admin with {aggregate: 1}.
	_, err := client.Database("kill").Aggregate(ctx(t), mongo.Pipeline{{{Key: "$currentOp", Value: bson.D{}}}})
	cmdErr(t, err, 73)
	_, err = admin.Aggregate(ctx(t), mongo.Pipeline{{{Key: "$match", Value: bson.D{}}}, {{Key: "$currentOp", Value: bson.D{}}}})
	cmdErr(t, err, 40602)
	select {
	case err := <-done:
		var ce mongo.CommandError
		if !errors.As(err, &ce) || ce.Code != 11601 {
			t.Fatalf("killed aggregation answered %v, want Interrupted (11601)", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the aggregation still runs 30 s after killOp (started %v ago)", time.Since(start))
	}
}

// TestViewsInDatabaseStats: listDatabases and dbStats count a view, which
// has no storage, without failing on it.
func TestViewsInDatabaseStats(t *testing.T) {
	_, client := connect(t)
	db := client.Database("vs")
	if _, err := db.Collection("base").InsertOne(ctx(t), bson.D{{Key: "x", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateView(ctx(t), "v", "base", mongo.Pipeline{}); err != nil {
		t.Fatal(err)
	}
	names, err := client.ListDatabaseNames(ctx(t), bson.D{})
	if err != nil {
		t.Fatalf("listDatabases with a view: %v", err)
	}
	found := false
	for _, n := range names {
		found = found || n == "vs"
	}
	if !found {
		t.Fatalf("listDatabases lacks vs: %v", names)
	}
	var st struct {
		Collections, Views, Objects int64
	}
	if err := db.RunCommand(ctx(t), bson.D{{Key: "dbStats", Value: 1}}).Decode(&st); err != nil || st.Collections != 1 || st.Views != 1 || st.Objects != 1 {
		t.Fatalf("dbStats = %+v, %v", st, err)
	}
	// collStats of a view is refused as mongod refuses it.
	cmdErr(t, db.RunCommand(ctx(t), bson.D{{Key: "collStats", Value: "v"}}).Err(), 166)
	// $collStats (what mongosh's db.c.stats() runs) reports the index sizes
	// collStats reports, and latencyStats from top.
	var cs struct {
		TotalIndexSize int64            `bson:"totalIndexSize"`
		IndexSizes     map[string]int64 `bson:"indexSizes"`
	}
	if err := db.RunCommand(ctx(t), bson.D{{Key: "collStats", Value: "base"}}).Decode(&cs); err != nil || cs.TotalIndexSize <= 0 {
		t.Fatalf("collStats = %+v, %v", cs, err)
	}
	cur, err := db.Collection("base").Aggregate(ctx(t), mongo.Pipeline{{{Key: "$collStats", Value: bson.D{
		{Key: "storageStats", Value: bson.D{}}, {Key: "latencyStats", Value: bson.D{}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	var stages []struct {
		StorageStats struct {
			TotalIndexSize int64            `bson:"totalIndexSize"`
			IndexSizes     map[string]int64 `bson:"indexSizes"`
		} `bson:"storageStats"`
		LatencyStats struct {
			Writes struct{ Ops int64 } `bson:"writes"`
		} `bson:"latencyStats"`
	}
	if err := cur.All(ctx(t), &stages); err != nil || len(stages) != 1 {
		t.Fatalf("$collStats: %v %v", stages, err)
	}
	if st := stages[0]; st.StorageStats.TotalIndexSize != cs.TotalIndexSize || st.StorageStats.IndexSizes["_id_"] != cs.IndexSizes["_id_"] || st.LatencyStats.Writes.Ops != 1 {
		t.Fatalf("$collStats = %+v, collStats = %+v", st, cs)
	}
}

// TestMetricsMoveUnderLoad: the Prometheus endpoint's counters and
// latency histograms grow by what a load did.
func TestMetricsMoveUnderLoad(t *testing.T) {
	port, err := cairndtest.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	srv := cairndtest.Start(t, "--metricsAddr", fmt.Sprintf("127.0.0.1:%d", port))
	client := dial(t, srv.URI)
	scrape := func() string { return scrapeMetrics(t, port) }
	value := func(text, series string) float64 { return seriesValue(t, text, series) }
	series := []string{
		`cairn_operations_total{type="insert"}`, `cairn_operations_total{type="query"}`, `cairn_operations_total{type="update"}`,
		`cairn_operations_total{type="delete"}`, `cairn_command_duration_seconds_count{class="writes"}`,
		`cairn_command_duration_seconds_count{class="reads"}`, `cairn_documents_total{state="deleted"}`,
		`cairn_documents_total{state="updated"}`, `cairn_documents_returned_total`, "cairn_kv_commits_total",
	}
	qe := func() (keys, docs int64) {
		t.Helper()
		var st struct {
			Metrics struct {
				QueryExecutor struct{ Scanned, ScannedObjects int64 } `bson:"queryExecutor"`
			}
		}
		if err := client.Database("admin").RunCommand(ctx(t), bson.D{{Key: "serverStatus", Value: 1}}).Decode(&st); err != nil {
			t.Fatal(err)
		}
		return st.Metrics.QueryExecutor.Scanned, st.Metrics.QueryExecutor.ScannedObjects
	}
	keys0, docs0 := qe()
	before := scrape()
	c := client.Database("load").Collection("c")
	const n = 50
	for i := range n {
		if _, err := c.InsertOne(ctx(t), bson.D{{Key: "_id", Value: i}}); err != nil {
			t.Fatal(err)
		}
		if err := c.FindOne(ctx(t), bson.D{{Key: "_id", Value: i}}).Err(); err != nil {
			t.Fatal(err)
		}
		if _, err := c.UpdateOne(ctx(t), bson.D{{Key: "_id", Value: i}}, bson.D{{Key: "$set", Value: bson.D{{Key: "y", Value: 1}}}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.DeleteMany(ctx(t), bson.D{}); err != nil {
		t.Fatal(err)
	}
	after := scrape()
	// Each FindOne by _id examines one key and one document.
	if keys, docs := qe(); keys-keys0 < n || docs-docs0 < n {
		t.Errorf("metrics.queryExecutor grew by %d keys and %d documents, want at least %d each", keys-keys0, docs-docs0, n)
	}
	// opcounters count statements (one deleteMany), metrics.document counts
	// documents (n deleted).
	want := map[string]float64{series[0]: n, series[1]: n, series[2]: n, series[3]: 1, series[4]: 2*n + 1, series[5]: n,
		series[6]: n, series[7]: n, series[8]: n}
	for _, s := range series {
		d := value(after, s) - value(before, s)
		w, exact := want[s]
		if exact && d != w {
			t.Errorf("%s grew by %v, want %v", s, d, w)
		}
		if !exact && d <= 0 {
			t.Errorf("%s did not grow (%v)", s, d)
		}
	}
}
