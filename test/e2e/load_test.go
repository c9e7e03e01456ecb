package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/cairndb/cairn/internal/testutil/cairndtest"
	"github.com/cairndb/cairn/internal/wire"
)

// loadConn is a raw connection usable from any goroutine (errors are
// returned, not reported through t).
type loadConn struct {
	nc net.Conn
	r  *wire.Reader
	id int32
}

func (c *loadConn) run(cmd bson.D) (bson.Raw, error) {
	body, err := bson.Marshal(cmd)
	if err != nil {
		return nil, err
	}
	c.id++
	c.nc.SetDeadline(time.Now().Add(60 * time.Second))
	if _, err := c.nc.Write(wire.AppendMsg(nil, c.id, 0, 0, body)); err != nil {
		return nil, err
	}
	m, err := c.r.ReadMessage()
	if err != nil {
		return nil, err
	}
	if m.Msg == nil {
		return nil, fmt.Errorf("reply opcode %v", m.Header.OpCode)
	}
	reply := bson.Raw(bytes.Clone(m.Msg.Body))
	if ok, _ := reply.Lookup("ok").AsFloat64OK(); ok != 1 {
		return reply, fmt.Errorf("command failed: %v", reply)
	}
	if _, err := reply.LookupErr("writeErrors"); err == nil {
		return reply, fmt.Errorf("write error: %v", reply)
	}
	return reply, nil
}

// scrape reads the named series (without labels) from the server's
// Prometheus endpoint at addr.
func scrape(t *testing.T, addr string, names ...string) map[string]float64 {
	t.Helper()
	text := fetchMetrics(t, addr)
	got := map[string]float64{}
	for _, n := range names {
		got[n] = seriesValue(t, text, n)
	}
	return got
}

// processMetrics reads the server's goroutines and resident memory from
// its Prometheus endpoint.
var soakSeries = []string{"go_goroutines", "process_resident_memory_bytes", "go_memstats_heap_inuse_bytes",
	"go_memstats_heap_idle_bytes", "go_memstats_heap_released_bytes", "go_memstats_next_gc_bytes", "cairn_kv_cache_bytes", "cairn_cursors_open"}

// saveHeapProfile writes the server's heap profile to path.
func saveHeapProfile(t *testing.T, addr, path string) {
	resp, err := http.Get("http://" + addr + "/debug/pprof/heap")
	if err != nil {
		t.Error(err)
		return
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil {
		err = os.WriteFile(path, b, 0o644)
	}
	if err != nil {
		t.Error(err)
	}
}

func processMetrics(t *testing.T, addr string) (goroutines int, rss int64) {
	t.Helper()
	m := scrape(t, addr, "go_goroutines", "process_resident_memory_bytes")
	return int(m["go_goroutines"]), int64(m["process_resident_memory_bytes"])
}

// TestLoadConnectionsAndSoak holds many connections open and uses them
// all, then runs a time-bounded soak of mixed reads and writes on them
// (inserts, updates, deletes that keep the data set's size steady, reads):
// every acknowledged write must be found, and the server's goroutines and
// resident memory must stay flat. CAIRN_LONG_LOAD=1 runs the long variant
// (1,000 connections, 60 s soak, a checkpoint every 5 s); the default is
// 200 connections, 3 s, a checkpoint every second. CAIRN_SOAK_PPROF=dir
// also saves the server's heap profile at every sample into dir.
func TestLoadConnectionsAndSoak(t *testing.T) {
	conns, soak, syncdelay := 200, 3*time.Second, 1
	if os.Getenv("CAIRN_LONG_LOAD") != "" {
		conns, soak, syncdelay = 1000, 60*time.Second, 5
	}
	port, err := cairndtest.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	maddr := "127.0.0.1:" + strconv.Itoa(port)
	// What is not yet checkpointed stays in memory by design: frequent
	// checkpoints let the soak see several cycles.
	args := []string{"--metricsAddr", maddr, "--syncdelay", strconv.Itoa(syncdelay)}
	pprofDir, paddr := os.Getenv("CAIRN_SOAK_PPROF"), ""
	if pprofDir != "" {
		pport, err := cairndtest.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		paddr = "127.0.0.1:" + strconv.Itoa(pport)
		args = append(args, "--pprofAddr", paddr)
	}
	srv := cairndtest.Start(t, args...)
	addr := srv.URI[len("mongodb://"):strings.Index(srv.URI, "/?")]
	baseG, baseRSS := processMetrics(t, maddr)

	cs := make([]*loadConn, conns)
	for i := range cs {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		cs[i] = &loadConn{nc: nc, r: wire.NewReader(nc, 0)}
		defer nc.Close()
	}
	// Every connection is used, concurrently, while all are open.
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for i, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.run(bson.D{{Key: "hello", Value: 1}, {Key: "$db", Value: "admin"}}); err != nil {
				errs <- fmt.Errorf("conn %d hello: %w", i, err)
				return
			}
			if _, err := c.run(bson.D{{Key: "insert", Value: "load"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: fmt.Sprintf("c%d", i)}, {Key: "conn", Value: i}, {Key: "n", Value: 0}}}}, {Key: "$db", Value: "load"}}); err != nil {
				errs <- fmt.Errorf("conn %d insert: %w", i, err)
			}
		}()
	}
	wg.Wait()
	heldG, heldRSS := processMetrics(t, maddr)
	t.Logf("%d connections held and used: %d goroutines (%d before), RSS %d MiB (%d before)", conns, heldG, baseG, heldRSS>>20, baseRSS>>20)
	if heldG < baseG+conns-10 {
		t.Errorf("%d goroutines with %d connections open (baseline %d): connections are not all held", heldG, conns, baseG)
	}

	// The soak: each connection inserts new documents, increments its
	// counter and reads back what it wrote, until the deadline.
	var inserts, updates, reads, deletes atomic.Int64
	acked := make([]int64, conns) // acknowledged increments per connection
	stop := time.Now().Add(soak)
	var samples []map[string]float64
	sampler := make(chan struct{})
	go func() {
		defer close(sampler)
		for i := 0; time.Now().Before(stop); i++ {
			samples = append(samples, scrape(t, maddr, soakSeries...))
			if pprofDir != "" {
				saveHeapProfile(t, paddr, filepath.Join(pprofDir, fmt.Sprintf("heap-%02d.pb.gz", i)))
			}
			time.Sleep(soak / 30)
		}
	}()
	for i, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var window []string // this connection's documents, oldest first
			for n := 0; time.Now().Before(stop); n++ {
				var err error
				switch n % 4 {
				case 0:
					id := fmt.Sprintf("c%d-%d", i, n)
					_, err = c.run(bson.D{{Key: "insert", Value: "load"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: id}, {Key: "conn", Value: i}, {Key: "pad", Value: strings.Repeat("x", 200)}}}}, {Key: "$db", Value: "load"}})
					if err == nil {
						inserts.Add(1)
						window = append(window, id)
					}
				case 1:
					_, err = c.run(bson.D{{Key: "update", Value: "load"}, {Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: fmt.Sprintf("c%d", i)}}}, {Key: "u", Value: bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}}}}}}, {Key: "$db", Value: "load"}})
					if err == nil {
						acked[i]++
						updates.Add(1)
					}
				case 2:
					var r bson.Raw
					r, err = c.run(bson.D{{Key: "find", Value: "load"}, {Key: "filter", Value: bson.D{{Key: "_id", Value: fmt.Sprintf("c%d", i)}}}, {Key: "$db", Value: "load"}})
					if err == nil {
						got, _ := r.Lookup("cursor", "firstBatch", "0", "n").AsInt64OK()
						if got != acked[i] {
							err = fmt.Errorf("conn %d read n=%d after %d acknowledged increments", i, got, acked[i])
						}
						reads.Add(1)
					}
				case 3:
					// Keep the data set's size steady: delete the oldest.
					if len(window) < 8 {
						continue
					}
					var r bson.Raw
					r, err = c.run(bson.D{{Key: "delete", Value: "load"}, {Key: "deletes", Value: bson.A{bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: window[0]}}}, {Key: "limit", Value: 1}}}}, {Key: "$db", Value: "load"}})
					if err == nil {
						if n, _ := r.Lookup("n").AsInt64OK(); n != 1 {
							err = fmt.Errorf("conn %d: deleting its acknowledged %s removed %d documents", i, window[0], n)
						}
						deletes.Add(1)
						window = window[1:]
					}
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	<-sampler
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// Every acknowledged write is there.
	r, err := cs[0].run(bson.D{{Key: "count", Value: "load"}, {Key: "$db", Value: "load"}})
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := r.Lookup("n").AsInt64OK(); n != int64(conns)+inserts.Load()-deletes.Load() {
		t.Errorf("count %d, want %d counters + %d acknowledged inserts - %d acknowledged deletes", n, conns, inserts.Load(), deletes.Load())
	}
	r, err = cs[0].run(bson.D{{Key: "aggregate", Value: "load"}, {Key: "pipeline", Value: bson.A{
		bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: nil}, {Key: "n", Value: bson.D{{Key: "$sum", Value: "$n"}}}}}}}},
		{Key: "cursor", Value: bson.D{}}, {Key: "$db", Value: "load"}})
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := r.Lookup("cursor", "firstBatch", "0", "n").AsInt64OK(); n != updates.Load() {
		t.Errorf("sum of counters %d, want %d acknowledged increments", n, updates.Load())
	}
	for _, name := range soakSeries {
		series := make([]string, len(samples))
		for i, m := range samples {
			series[i] = strconv.FormatFloat(m[name]/(1<<20), 'f', 0, 64)
			if name == "go_goroutines" || name == "cairn_cursors_open" {
				series[i] = strconv.FormatFloat(m[name], 'f', 0, 64)
			}
		}
		t.Logf("%s: %s", name, strings.Join(series, " "))
	}
	t.Logf("soak %v: %d inserts, %d updates, %d deletes, %d reads acknowledged (%.0f ops/s)",
		soak, inserts.Load(), updates.Load(), deletes.Load(), reads.Load(), float64(inserts.Load()+updates.Load()+deletes.Load()+reads.Load())/soak.Seconds())
	// Flat: the first third of the soak is the warm-up (the heap grows to
	// its collection target, the page cache fills with the working set);
	// the last third may not hold more than the middle third did, within
	// a bound that a leak of a few kilobytes per operation would exceed.
	midG, lastG, peakG := thirds(samples, "go_goroutines")
	midRSS, lastRSS, peakRSS := thirds(samples, "process_resident_memory_bytes")
	t.Logf("peak: %d connections, %.0f goroutines, RSS %.0f MiB; middle third %.0f MiB, last third %.0f MiB",
		conns, peakG, peakRSS/(1<<20), midRSS/(1<<20), lastRSS/(1<<20))
	if lastG > midG+10 {
		t.Errorf("goroutines grew during the soak: %.0f in the last third, %.0f in the middle third", lastG, midG)
	}
	if lastRSS > midRSS+midRSS/8+16<<20 {
		t.Errorf("resident memory grew during the soak: %.0f MiB in the last third, %.0f MiB in the middle third", lastRSS/(1<<20), midRSS/(1<<20))
	}
	// Closing the connections releases their goroutines.
	for _, c := range cs {
		c.nc.Close()
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		g, _ := processMetrics(t, maddr)
		if g <= baseG+10 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines 10 s after closing every connection (baseline %d)", g, baseG)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// thirds returns the largest value of series name in the middle and the
// last third of the samples, and over all of them.
func thirds(samples []map[string]float64, name string) (mid, last, peak float64) {
	n := len(samples)
	for i, m := range samples {
		v := m[name]
		peak = max(peak, v)
		switch {
		case i >= 2*n/3:
			last = max(last, v)
		case i >= n/3:
			mid = max(mid, v)
		}
	}
	return mid, last, peak
}
