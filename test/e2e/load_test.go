package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
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

// processMetrics reads the server's goroutines and resident memory from
// its Prometheus endpoint.
func processMetrics(t *testing.T, addr string) (goroutines int, rss int64) {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "go_goroutines "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			goroutines = int(f)
		}
		if v, ok := strings.CutPrefix(line, "process_resident_memory_bytes "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			rss = int64(f)
		}
	}
	if goroutines == 0 || rss == 0 {
		t.Fatal("metrics without go_goroutines or process_resident_memory_bytes")
	}
	return goroutines, rss
}

// TestLoadConnectionsAndSoak holds many connections open and uses them
// all, then runs a time-bounded soak of mixed reads and writes on them
// (inserts, updates, deletes that keep the data set's size steady, reads):
// every acknowledged write must be found, and the server's goroutines and
// resident memory must stay flat. CAIRN_LONG_LOAD=1 runs the long variant
// (1,000 connections, 60 s soak); the default is 200 connections, 3 s.
func TestLoadConnectionsAndSoak(t *testing.T) {
	conns, soak := 200, 3*time.Second
	if os.Getenv("CAIRN_LONG_LOAD") != "" {
		conns, soak = 1000, 60*time.Second
	}
	port, err := cairndtest.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	maddr := "127.0.0.1:" + strconv.Itoa(port)
	// Checkpoints every 5 s: what is not yet checkpointed stays in memory
	// by design, so the soak sees several cycles.
	srv := cairndtest.Start(t, "--metricsAddr", maddr, "--syncdelay", "5")
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
	var samples [][2]int64
	var smu sync.Mutex
	sampler := make(chan struct{})
	go func() {
		defer close(sampler)
		for time.Now().Before(stop) {
			g, rss := processMetrics(t, maddr)
			smu.Lock()
			samples = append(samples, [2]int64{int64(g), rss})
			smu.Unlock()
			time.Sleep(soak / 10)
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
	// Flat: the second half of the soak holds no more than the first
	// half did (plus slack for the heap's growth target).
	var peakRSS, firstHalf, secondHalf, peakG int64
	for i, s := range samples {
		peakG, peakRSS = max(peakG, s[0]), max(peakRSS, s[1])
		if i < len(samples)/2 {
			firstHalf = max(firstHalf, s[1])
		} else {
			secondHalf = max(secondHalf, s[1])
		}
	}
	t.Logf("soak %v: %d inserts, %d updates, %d deletes, %d reads acknowledged (%.0f ops/s); goroutines peak %d; RSS peak %d MiB (first half %d MiB, second half %d MiB)",
		soak, inserts.Load(), updates.Load(), deletes.Load(), reads.Load(), float64(inserts.Load()+updates.Load()+deletes.Load()+reads.Load())/soak.Seconds(),
		peakG, peakRSS>>20, firstHalf>>20, secondHalf>>20)
	series := make([]string, len(samples))
	for i, s := range samples {
		series[i] = strconv.FormatInt(s[1]>>20, 10)
	}
	t.Logf("RSS samples (MiB): %s", strings.Join(series, " "))
	if peakG > int64(heldG)+20 {
		t.Errorf("goroutines grew during the soak: %d, held %d", peakG, heldG)
	}
	if secondHalf > firstHalf*5/4+64<<20 {
		t.Errorf("resident memory grew during the soak: %d MiB in the first half, %d MiB in the second", firstHalf>>20, secondHalf>>20)
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
