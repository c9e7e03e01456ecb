// Command csbench measures change streams on cairnd: the latency from an
// acknowledged insert to its event at each watcher (p50, p99) at paced
// write rates with 1, 10, 100 and 1,000 watchers of one collection, the
// writer's unpaced throughput with and without the watchers, and the
// server's CPU time per delivered event (per event per watcher: the
// cell's CPU less the same writes' CPU without watchers), which
// stays flat as watchers are added when no watcher rescans.
//
// Each cell starts its watchers (collection.watch(), maxAwaitTimeMS 1 s),
// writes for -duration (inserts {_id: seq} from -writers goroutines, paced
// to the rate, or unpaced), then waits until every watcher has every event.
// A watcher's latency for an event is the time from the insert's
// acknowledgement to the event's arrival (0 when the event came first),
// and, as an upper bound, from the insert's send.
//
//	go run ./cmd/csbench -rates 1000,10000 -watchers 0,1,10,100,1000
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/cairndb/cairn/bench/internal/cairndproc"
)

func ints(s string) []int {
	var out []int
	if strings.TrimSpace(s) == "" {
		return nil
	}
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			fmt.Fprintf(os.Stderr, "csbench: bad number %q\n", f)
			os.Exit(2)
		}
		out = append(out, n)
	}
	return out
}

// cell is one measurement.
type cell struct {
	watchers, rate int // rate 0: unpaced
	writes         int64
	throughput     float64
	p50, p99, max  time.Duration
	// sendP50 and sendP99 measure from the insert's send instead (they
	// include the write's own round trip).
	sendP50, sendP99 time.Duration
	cpuPerEvent      time.Duration // server CPU per delivered event
	// clientCPUPerEvent is the same for this process: the watchers'
	// driver receiving and decoding the events (the cell's client CPU
	// less the same writes' client CPU without watchers).
	clientCPUPerEvent time.Duration
	// serverCPU and clientCPU are the cell's CPU time (user + system) of
	// cairnd and of this process (the watchers' driver and the writers),
	// which share the machine's cores.
	serverCPU, clientCPU time.Duration
	elapsed              time.Duration
	// getMores is the server's getMore count over the cell
	// (serverStatus opcounters.getmore): delivered/getMores is the
	// events a round trip carries.
	getMores  int64
	delivered int64
	complete  bool
}

func main() {
	rates := flag.String("rates", "1000,10000", "paced write rates (writes/s; the unpaced cell always runs, \"\" for it alone)")
	watchers := flag.String("watchers", "0,1,10,100,1000", "watcher counts")
	duration := flag.Duration("duration", 4*time.Second, "writing time per cell")
	writers := flag.Int("writers", 8, "writer goroutines")
	binary := flag.String("binary", "", "cairnd binary (default: build ../cmd/cairnd)")
	cpuprofile := flag.String("server-cpuprofile", "", "write the server's CPU profile of the whole run to this file")
	serverArgs := flag.String("server-args", "", "extra cairnd flags, space-separated (e.g. --pprofAddr 127.0.0.1:6060 --mutexProfileFraction 10)")
	clientProfile := flag.String("client-cpuprofile", "", "write this process's (the driver's) CPU profile of the whole run to this file")
	flag.Parse()
	if *clientProfile != "" {
		f, err := os.Create(*clientProfile)
		if err != nil {
			fail(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fail(err)
		}
		defer func() {
			pprof.StopCPUProfile()
			f.Close()
		}()
	}
	dir, err := os.MkdirTemp("", "csbench")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	var args []string
	if *cpuprofile != "" {
		args = append(args, "--cpuprofile", *cpuprofile)
	}
	args = append(args, strings.Fields(*serverArgs)...)
	srv, err := cairndproc.Start(ctx, cairndproc.Options{Binary: *binary, Dir: dir, Args: args})
	if err != nil {
		fail(err)
	}
	defer srv.Stop()
	ws := ints(*watchers)
	maxW := 0
	for _, w := range ws {
		maxW = max(maxW, w)
	}
	client, err := mongo.Connect(options.Client().ApplyURI(srv.URI).SetMaxPoolSize(uint64(maxW + *writers + 16)).SetTimeout(2 * time.Minute))
	if err != nil {
		fail(err)
	}
	defer client.Disconnect(ctx)
	var cells []cell
	for _, w := range ws {
		for _, r := range append([]int{0}, ints(*rates)...) { // 0: unpaced
			c, err := run(ctx, client, srv.Pid(), w, r, *writers, *duration)
			if err != nil {
				fail(err)
			}
			fmt.Fprintf(os.Stderr, "watchers %d rate %d: %.0f writes/s p50 %v p99 %v cpu/event %v client cpu/event %v events/getMore %.1f server CPU %.0f%% client CPU %.0f%% complete %v\n",
				c.watchers, c.rate, c.throughput, c.p50, c.p99, c.cpuPerEvent, c.clientCPUPerEvent, c.perGetMore(), c.share(c.serverCPU), c.share(c.clientCPU), c.complete)
			cells = append(cells, c)
		}
	}
	fmt.Printf("| watchers | write rate | writes/s achieved | latency from ack p50 | p99 | max | from send p50 | p99 | server CPU per event per watcher | client CPU per event per watcher | events per getMore | server CPU | client CPU | all events delivered |\n")
	fmt.Printf("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|:---:|\n")
	for _, c := range cells {
		rate := "unpaced"
		if c.rate > 0 {
			rate = strconv.Itoa(c.rate)
		}
		lat := func(d time.Duration) string {
			if c.watchers == 0 {
				return "–"
			}
			return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000)
		}
		cpu, ccpu := "–", "–"
		if c.delivered > 0 {
			cpu = fmt.Sprintf("%.1f µs", float64(c.cpuPerEvent.Nanoseconds())/1000)
			ccpu = fmt.Sprintf("%.1f µs", float64(c.clientCPUPerEvent.Nanoseconds())/1000)
		}
		per := "–"
		if c.watchers > 0 {
			per = fmt.Sprintf("%.1f", c.perGetMore())
		}
		fmt.Printf("| %d | %s | %.0f | %s | %s | %s | %s | %s | %s | %s | %s | %.0f %% | %.0f %% | %v |\n", c.watchers, rate, c.throughput, lat(c.p50), lat(c.p99), lat(c.max), lat(c.sendP50), lat(c.sendP99), cpu, ccpu, per, c.share(c.serverCPU), c.share(c.clientCPU), c.complete || c.watchers == 0)
	}
}

// perGetMore is the events a getMore carried on average.
func (c cell) perGetMore() float64 {
	if c.getMores == 0 {
		return 0
	}
	return float64(c.delivered) / float64(c.getMores)
}

// share is d as a percentage of one core over the cell.
func (c cell) share(d time.Duration) float64 {
	if c.elapsed <= 0 {
		return 0
	}
	return 100 * d.Seconds() / c.elapsed.Seconds()
}

// getMores returns the server's getMore count (serverStatus
// opcounters.getmore).
func getMores(ctx context.Context, client *mongo.Client) (int64, error) {
	var st struct {
		Opcounters struct {
			Getmore int64 `bson:"getmore"`
		} `bson:"opcounters"`
	}
	err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "serverStatus", Value: 1}}).Decode(&st)
	return st.Opcounters.Getmore, err
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "csbench:", err)
	os.Exit(1)
}

// writeCPU and clientWriteCPU are the server's and this process's CPU
// per write of the watcher-less cell of each rate (measured first).
var writeCPU, clientWriteCPU = map[int]time.Duration{}, map[int]time.Duration{}

// run measures one cell on a fresh collection.
func run(ctx context.Context, client *mongo.Client, pid, nw, rate, writers int, d time.Duration) (cell, error) {
	c := cell{watchers: nw, rate: rate}
	db := client.Database("csbench")
	name := fmt.Sprintf("w%d_r%d", nw, rate)
	coll := db.Collection(name)
	if err := db.CreateCollection(ctx, name); err != nil {
		return c, err
	}
	defer coll.Drop(ctx)
	// The acknowledgement time of each insert, by _id (0: not yet).
	capacity := int(float64(max(rate, 30000)) * d.Seconds() * 1.5)
	acked := make([]atomic.Int64, capacity)
	sent := make([]atomic.Int64, capacity)
	streams := make([]*mongo.ChangeStream, nw)
	for i := range streams {
		cs, err := coll.Watch(ctx, mongo.Pipeline{}, options.ChangeStream().SetMaxAwaitTime(time.Second))
		if err != nil {
			return c, fmt.Errorf("watcher %d: %w", i, err)
		}
		streams[i] = cs
	}
	var total atomic.Int64 // the number of writes, known once writing ends
	total.Store(-1)
	hists := make([]*hdrhistogram.Histogram, nw)
	sendHists := make([]*hdrhistogram.Histogram, nw)
	// got[i] is watcher i's count of events, summed once they are done
	// (a shared counter would be one contended cache line per event).
	got := make([]int64, nw)
	var wg sync.WaitGroup
	wctx, cancel := context.WithTimeout(ctx, d+60*time.Second)
	defer cancel()
	for i, cs := range streams {
		h := hdrhistogram.New(1, int64(time.Minute/time.Microsecond), 3)
		hists[i] = h
		hs := hdrhistogram.New(1, int64(time.Minute/time.Microsecond), 3)
		sendHists[i] = hs
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer cs.Close(context.Background())
			var n int64
			defer func() { got[i] = n }()
			for {
				if want := total.Load(); want >= 0 && n >= want {
					return
				}
				if !cs.TryNext(wctx) {
					if cs.Err() != nil || wctx.Err() != nil {
						return
					}
					continue
				}
				now := time.Now().UnixNano()
				id := cs.Current.Lookup("documentKey", "_id").AsInt64()
				lat, slat := int64(0), int64(0)
				if id >= 0 && id < int64(len(acked)) {
					if a := acked[id].Load(); a > 0 && now > a {
						lat = (now - a) / 1000
					}
					if a := sent[id].Load(); a > 0 && now > a {
						slat = (now - a) / 1000
					}
				}
				_ = h.RecordValue(max(lat, 1))
				_ = hs.RecordValue(max(slat, 1))
				n++
			}
		}()
	}
	gm0, err := getMores(ctx, client)
	if err != nil {
		return c, err
	}
	cpu0, ccpu0 := cairndproc.CPU(pid), cairndproc.CPU(os.Getpid())
	start := time.Now()
	var seq atomic.Int64
	var wwg sync.WaitGroup
	var interval time.Duration
	if rate > 0 {
		interval = time.Second / time.Duration(rate)
	}
	for range writers {
		wwg.Add(1)
		go func() {
			defer wwg.Done()
			for {
				id := seq.Add(1) - 1
				if id >= int64(len(acked)) {
					return
				}
				due := start
				if rate > 0 {
					due = start.Add(time.Duration(id) * interval)
					if wait := time.Until(due); wait > 0 {
						time.Sleep(wait)
					}
				}
				if time.Since(start) >= d {
					return
				}
				sent[id].Store(time.Now().UnixNano())
				if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: id}}); err != nil {
					fmt.Fprintln(os.Stderr, "csbench: insert:", err)
					return
				}
				acked[id].Store(time.Now().UnixNano())
			}
		}()
	}
	wwg.Wait()
	elapsed := time.Since(start)
	n, err := coll.EstimatedDocumentCount(ctx)
	if err != nil {
		return c, err
	}
	c.writes = n
	c.throughput = float64(n) / elapsed.Seconds()
	total.Store(n)
	wg.Wait()
	cpu := cairndproc.CPU(pid) - cpu0
	c.serverCPU, c.clientCPU = cpu, cairndproc.CPU(os.Getpid())-ccpu0
	c.elapsed = time.Since(start)
	gm1, err := getMores(ctx, client)
	if err != nil {
		return c, err
	}
	c.getMores = gm1 - gm0
	for _, g := range got {
		c.delivered += g
	}
	c.complete = c.delivered == n*int64(nw)
	if nw == 0 && n > 0 {
		writeCPU[rate] = cpu / time.Duration(n)
		clientWriteCPU[rate] = c.clientCPU / time.Duration(n)
	}
	if c.delivered > 0 {
		// The watchers' share: the cell's CPU less what the same writes
		// cost without watchers.
		c.cpuPerEvent = (cpu - writeCPU[rate]*time.Duration(n)) / time.Duration(c.delivered)
		c.clientCPUPerEvent = (c.clientCPU - clientWriteCPU[rate]*time.Duration(n)) / time.Duration(c.delivered)
	}
	if nw > 0 {
		all := hdrhistogram.New(1, int64(time.Minute/time.Microsecond), 3)
		for _, h := range hists {
			all.Merge(h)
		}
		c.p50 = time.Duration(all.ValueAtQuantile(50)) * time.Microsecond
		c.p99 = time.Duration(all.ValueAtQuantile(99)) * time.Microsecond
		c.max = time.Duration(all.Max()) * time.Microsecond
		fromSend := hdrhistogram.New(1, int64(time.Minute/time.Microsecond), 3)
		for _, h := range sendHists {
			fromSend.Merge(h)
		}
		c.sendP50 = time.Duration(fromSend.ValueAtQuantile(50)) * time.Microsecond
		c.sendP99 = time.Duration(fromSend.ValueAtQuantile(99)) * time.Microsecond
	}
	return c, nil
}
