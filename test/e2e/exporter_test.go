package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/cairndb/cairn/internal/testutil/cairndtest"
)

// exporterBinary is Debian's package of the mgo-based MongoDB exporter
// (github.com/dcu/mongodb_exporter), which speaks only legacy OP_QUERY.
const exporterBinary = "prometheus-mongodb-exporter"

// lockedBuffer collects a process's output.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestMongoDBExporter points prometheus-mongodb-exporter at cairnd and
// checks the scrape: the server is up, its counters are exported and move,
// and the exporter logs no error. It runs when the exporter is installed
// (scripts/check-exporter.sh installs it and runs this test).
func TestMongoDBExporter(t *testing.T) {
	bin, err := exec.LookPath(exporterBinary)
	if err != nil {
		t.Skipf("%s is not installed (scripts/check-exporter.sh installs it)", exporterBinary)
	}
	srv := cairndtest.Start(t)
	client := dial(t, srv.URI)
	c := client.Database("exp").Collection("c")
	for i := range 25 {
		if _, err := c.InsertOne(ctx(t), bson.D{{Key: "_id", Value: i}}); err != nil {
			t.Fatal(err)
		}
	}
	port, err := cairndtest.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	// The replica set and oplog collectors are off: a standalone has
	// neither, and they log errors against a standalone mongod too.
	cmd := exec.Command(bin, "-mongodb.uri", fmt.Sprintf("mongodb://127.0.0.1:%d", srv.Port),
		"-web.listen-address", fmt.Sprintf("127.0.0.1:%d", port), "-logtostderr",
		"-mongodb.collect.replset=false", "-mongodb.collect.oplog=false",
		"-mongodb.collect.database", "-mongodb.collect.collection", "-mongodb.collect.top",
		"-mongodb.collect.connpoolstats", "-mongodb.collect.profile")
	var log lockedBuffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	scrape := func() string {
		t.Helper()
		var last error
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
			if err != nil {
				last = err
				continue
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err == nil && strings.Contains(string(b), "\nmongodb_up 1\n") {
				return string(b)
			}
			last = fmt.Errorf("scrape without mongodb_up 1: %.500s", b)
		}
		t.Fatalf("exporter: %v\nexporter log:\n%s", last, log.String())
		return ""
	}
	value := func(text, series string) float64 { return seriesValue(t, text, series) }
	first := scrape()
	checks := []struct {
		series string
		min    float64
	}{
		{`mongodb_op_counters_total{type="insert"}`, 25},
		{`mongodb_metrics_document_total{state="inserted"}`, 25},
		{`mongodb_connections{state="current"}`, 1},
		{`mongodb_network_metrics_num_requests_total`, 25},
		{`mongodb_instance_uptime_seconds`, 0},
		{`mongodb_memory{type="resident"}`, 1},
		{`mongodb_asserts_total{type="regular"}`, 0},
		{`mongodb_db_collections_total{db="exp",shard=""}`, 1},
		{`mongodb_collection_total_objects{ns="exp.c"}`, 25},
		{`mongodb_connpoolstats_connections_created_total`, 0},
	}
	for _, ch := range checks {
		if v := value(first, ch.series); v < ch.min {
			t.Errorf("%s = %v, want at least %v", ch.series, v, ch.min)
		}
	}
	for i := 25; i < 35; i++ {
		if _, err := c.InsertOne(ctx(t), bson.D{{Key: "_id", Value: i}}); err != nil {
			t.Fatal(err)
		}
	}
	second := scrape()
	series := `mongodb_op_counters_total{type="insert"}`
	if d := value(second, series) - value(first, series); d != 10 {
		t.Errorf("%s moved by %v between scrapes, want 10", series, d)
	}
	for _, line := range strings.Split(log.String(), "\n") {
		if len(line) > 0 && line[0] == 'E' { // glog: E1130 07:23:29.676112 ...
			t.Errorf("exporter error: %s", line)
		}
	}
}
