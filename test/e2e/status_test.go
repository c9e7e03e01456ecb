package e2e

import (
	"fmt"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/cairndb/cairn/internal/testutil/cairndtest"
)

// statusFields are the serverStatus fields monitoring tools read, with
// the BSON type mongod gives them.
var statusFields = []struct {
	path string
	typ  bson.Type
}{
	{"host", bson.TypeString}, {"version", bson.TypeString}, {"process", bson.TypeString}, {"pid", bson.TypeInt64},
	{"uptime", bson.TypeDouble}, {"uptimeMillis", bson.TypeInt64}, {"uptimeEstimate", bson.TypeInt64}, {"localTime", bson.TypeDateTime},
	{"asserts.regular", bson.TypeInt32}, {"asserts.warning", bson.TypeInt32}, {"asserts.msg", bson.TypeInt32},
	{"asserts.user", bson.TypeInt32}, {"asserts.tripwire", bson.TypeInt32}, {"asserts.rollovers", bson.TypeInt32},
	{"connections.current", bson.TypeInt32}, {"connections.available", bson.TypeInt32}, {"connections.totalCreated", bson.TypeInt32},
	{"connections.rejected", bson.TypeInt32}, {"connections.active", bson.TypeInt32},
	{"globalLock.totalTime", bson.TypeInt64},
	{"globalLock.currentQueue.total", bson.TypeInt32}, {"globalLock.currentQueue.readers", bson.TypeInt32}, {"globalLock.currentQueue.writers", bson.TypeInt32},
	{"globalLock.activeClients.total", bson.TypeInt32}, {"globalLock.activeClients.readers", bson.TypeInt32}, {"globalLock.activeClients.writers", bson.TypeInt32},
	{"locks.Global.acquireCount.w", bson.TypeInt64}, {"locks.Global.acquireWaitCount.w", bson.TypeInt64}, {"locks.Global.timeAcquiringMicros.w", bson.TypeInt64},
	{"network.bytesIn", bson.TypeInt64}, {"network.bytesOut", bson.TypeInt64}, {"network.numRequests", bson.TypeInt64},
	{"opcounters.insert", bson.TypeInt64}, {"opcounters.query", bson.TypeInt64}, {"opcounters.update", bson.TypeInt64},
	{"opcounters.delete", bson.TypeInt64}, {"opcounters.getmore", bson.TypeInt64}, {"opcounters.command", bson.TypeInt64},
	{"opLatencies.reads.latency", bson.TypeInt64}, {"opLatencies.reads.ops", bson.TypeInt64},
	{"opLatencies.writes.latency", bson.TypeInt64}, {"opLatencies.writes.ops", bson.TypeInt64},
	{"opLatencies.commands.latency", bson.TypeInt64}, {"opLatencies.commands.ops", bson.TypeInt64},
	{"mem.bits", bson.TypeInt32}, {"mem.resident", bson.TypeInt32}, {"mem.virtual", bson.TypeInt32}, {"mem.supported", bson.TypeBoolean},
	{"metrics.document.deleted", bson.TypeInt64}, {"metrics.document.inserted", bson.TypeInt64},
	{"metrics.document.returned", bson.TypeInt64}, {"metrics.document.updated", bson.TypeInt64},
	{"metrics.operation.scanAndOrder", bson.TypeInt64}, {"metrics.operation.writeConflicts", bson.TypeInt64},
	{"metrics.operation.killedDueToMaxTimeMSExpired", bson.TypeInt64},
	{"metrics.queryExecutor.scanned", bson.TypeInt64}, {"metrics.queryExecutor.scannedObjects", bson.TypeInt64},
	{"metrics.cursor.timedOut", bson.TypeInt64}, {"metrics.cursor.totalOpened", bson.TypeInt64},
	{"metrics.cursor.open.total", bson.TypeInt64}, {"metrics.cursor.open.noTimeout", bson.TypeInt64},
	{"storageEngine.name", bson.TypeString},
	{"cairn.journal.commits", bson.TypeInt64}, {"cairn.checkpoints.count", bson.TypeInt64}, {"cairn.files.dataFileBytes", bson.TypeInt64},
}

// TestServerStatusUnderLoad: serverStatus has mongod's sections with its
// field names and types, and its figures (and the Prometheus endpoint's)
// move by what a load did: documents, statements, index keys examined,
// in-memory sorts, errors, cursors, maxTimeMS expiries and writer-lock
// acquisitions.
func TestServerStatusUnderLoad(t *testing.T) {
	port, err := cairndtest.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	srv := cairndtest.Start(t, "--metricsAddr", fmt.Sprintf("127.0.0.1:%d", port))
	client := dial(t, srv.URI)
	admin := client.Database("admin")
	status := func() bson.Raw {
		t.Helper()
		raw, err := admin.RunCommand(ctx(t), bson.D{{Key: "serverStatus", Value: 1}}).Raw()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range statusFields {
			v, err := raw.LookupErr(splitPath(f.path)...)
			if err != nil || v.Type != f.typ {
				t.Fatalf("serverStatus %s: %v %v, want type %v", f.path, v.Type, err, f.typ)
			}
		}
		return raw
	}
	figure := func(raw bson.Raw, path string) int64 {
		v := raw.Lookup(splitPath(path)...)
		if n, ok := v.AsInt64OK(); ok {
			return n
		}
		return int64(v.Double())
	}
	scrape := func() string { return scrapeMetrics(t, port) }
	series := func(text, name string) float64 { return seriesValue(t, text, name) }

	before, promBefore := status(), scrape()
	c := client.Database("load").Collection("c")
	const n = 40
	for i := range n {
		if _, err := c.InsertOne(ctx(t), bson.D{{Key: "_id", Value: i}, {Key: "x", Value: n - i}}); err != nil {
			t.Fatal(err)
		}
	}
	// A sort on an unindexed field sorts in memory (scanAndOrder).
	cur, err := c.Find(ctx(t), bson.D{}, options.Find().SetSort(bson.D{{Key: "x", Value: 1}}))
	if err != nil {
		t.Fatal(err)
	}
	var all []bson.M
	if err := cur.All(ctx(t), &all); err != nil || len(all) != n {
		t.Fatalf("sorted find: %d %v", len(all), err)
	}
	// A duplicate _id is a write error, an unknown operator a failed
	// command: both are user asserts.
	if _, err := c.InsertOne(ctx(t), bson.D{{Key: "_id", Value: 0}}); !mongo.IsDuplicateKeyError(err) {
		t.Fatalf("duplicate insert: %v", err)
	}
	cmdErr(t, client.Database("load").RunCommand(ctx(t), bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "$bogus", Value: 1}}}}).Err(), 2)
	// A cursor left open.
	open, err := c.Find(ctx(t), bson.D{}, options.Find().SetBatchSize(2))
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close(ctx(t))
	// A self-join far longer than its maxTimeMS.
	long := mongo.Pipeline{
		{{Key: "$lookup", Value: bson.D{{Key: "from", Value: "c"}, {Key: "pipeline", Value: bson.A{
			bson.D{{Key: "$lookup", Value: bson.D{{Key: "from", Value: "c"}, {Key: "pipeline", Value: bson.A{
				bson.D{{Key: "$lookup", Value: bson.D{{Key: "from", Value: "c"}, {Key: "pipeline", Value: bson.A{}}, {Key: "as", Value: "z"}}}},
			}}, {Key: "as", Value: "y"}}}},
		}}, {Key: "as", Value: "all"}}}},
		{{Key: "$unwind", Value: "$all"}},
		{{Key: "$group", Value: bson.D{{Key: "_id", Value: nil}, {Key: "n", Value: bson.D{{Key: "$sum", Value: 1}}}}}},
	}
	err = client.Database("load").RunCommand(ctx(t), bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: long},
		{Key: "cursor", Value: bson.D{}}, {Key: "maxTimeMS", Value: 20}}).Err()
	cmdErr(t, err, 50)
	after, promAfter := status(), scrape()

	exact := map[string]int64{
		"opcounters.insert":                             n,
		"metrics.document.inserted":                     n,
		"metrics.operation.scanAndOrder":                1,
		"metrics.operation.killedDueToMaxTimeMSExpired": 1,
		"metrics.cursor.open.total":                     1,
		"metrics.operation.writeConflicts":              0,
	}
	for path, want := range exact {
		if d := figure(after, path) - figure(before, path); d != want {
			t.Errorf("%s moved by %d, want %d", path, d, want)
		}
	}
	atLeast := map[string]int64{
		"opcounters.query":                     2,
		"opcounters.command":                   n + 6,
		"network.numRequests":                  n + 6,
		"network.bytesIn":                      1000,
		"network.bytesOut":                     1000,
		"opLatencies.writes.ops":               n + 1,
		"opLatencies.reads.ops":                3,
		"asserts.user":                         2,
		"metrics.document.returned":            n + 2,
		"metrics.queryExecutor.scannedObjects": n,
		"metrics.cursor.totalOpened":           1,
		"locks.Global.acquireCount.w":          n + 1,
		"uptimeMillis":                         1,
		"globalLock.totalTime":                 1000,
	}
	for path, want := range atLeast {
		if d := figure(after, path) - figure(before, path); d < want {
			t.Errorf("%s moved by %d, want at least %d", path, d, want)
		}
	}
	if figure(after, "connections.active") < 1 || figure(after, "globalLock.activeClients.writers") != 0 || figure(after, "globalLock.currentQueue.total") != 0 {
		t.Errorf("idle server: connections.active %d, activeClients.writers %d, currentQueue.total %d",
			figure(after, "connections.active"), figure(after, "globalLock.activeClients.writers"), figure(after, "globalLock.currentQueue.total"))
	}
	promExact := map[string]float64{
		"cairn_scan_and_order_total":   1,
		"cairn_max_time_expired_total": 1,
	}
	for name, want := range promExact {
		if d := series(promAfter, name) - series(promBefore, name); d != want {
			t.Errorf("%s moved by %v, want %v", name, d, want)
		}
	}
	for _, name := range []string{`cairn_query_examined_total{kind="documents"}`, `cairn_asserts_total{type="user"}`} {
		if d := series(promAfter, name) - series(promBefore, name); d <= 0 {
			t.Errorf("%s did not move (%v)", name, d)
		}
	}
	for _, name := range []string{"cairn_writers_queued", "cairn_writers_active", "cairn_writer_lock_waits_total", "cairn_connections_rejected_total"} {
		series(promAfter, name)
	}
}

// splitPath splits a dotted path.
func splitPath(p string) []string { return strings.Split(p, ".") }
