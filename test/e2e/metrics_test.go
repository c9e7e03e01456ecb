package e2e

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/cairndb/cairn/internal/testutil/cairndtest"
)

// TestPrometheusMetrics: --metricsAddr serves the server's figures in
// Prometheus' text format.
func TestPrometheusMetrics(t *testing.T) {
	port, err := cairndtest.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	srv := cairndtest.Start(t, "--metricsAddr", fmt.Sprintf("127.0.0.1:%d", port))
	client := dial(t, srv.URI)
	if _, err := client.Database("m").Collection("c").InsertOne(ctx(t), bson.D{{Key: "x", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	body := scrapeMetrics(t, port)
	for _, want := range []string{`cairn_operations_total{type="insert"} 1`, "cairn_connections ", "cairn_kv_commits_total", `cairn_command_duration_seconds_count{class="writes"}`, "go_goroutines"} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

// scrapeMetrics fetches the Prometheus text exposition served on a
// loopback port.
func scrapeMetrics(t *testing.T, port int) string {
	t.Helper()
	return fetchMetrics(t, fmt.Sprintf("127.0.0.1:%d", port))
}

// fetchMetrics fetches the Prometheus text exposition served at addr.
func fetchMetrics(t *testing.T, addr string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// seriesValue returns the value of one series (its name with labels, as
// exposed) in a scrape.
func seriesValue(t *testing.T, text, series string) float64 {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("the scrape lacks %s", series)
	}
	f, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
