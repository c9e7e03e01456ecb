// Command journalbench reproduces the tables of MongoDB's SERVER-9754
// against cairnd, every insert acknowledged with writeConcern {j: true}
// through the official Go driver:
//
//  1. one writer inserting N documents (default 10,000) of each BSON size
//     98, 818, …, 98918 bytes — elapsed ms per size;
//  2. 1 to 8 writers, each inserting N documents of 8918 bytes on its own
//     connection — elapsed ms per writer count.
//
// Every row also reports the server's journal fdatasyncs per acknowledged
// insert and the bytes it wrote to disk (journal records plus checkpoint
// pages) per inserted byte, read from serverStatus. The floor is measured
// in the same run, alternating with the server: bare pwrite+fdatasync of
// the same sizes, sequentially into a preallocated file on the same file
// system. Each row also times the same inserts with {j: false}, which do
// all of the work but the fdatasync. Each measurement is repeated -reps
// times (floor, server with j:true, server with j:false, alternating) and
// the median is reported. Documents are built before the clock starts
// (a pool per writer and size, each insert with a fresh ObjectId), so the
// timed loop holds only the driver and the server.
//
//	go run ./cmd/journalbench                       (in bench/)
//	go run ./cmd/journalbench -docs 2000 -reps 1    (a quick look)
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"
	"golang.org/x/sys/unix"

	"github.com/cairndb/cairn/bench/internal/cairndproc"
)

// The document sizes of SERVER-9754's first table.
var defaultSizes = "98,818,1718,4418,7118,8018,8918,9918,10918,11918,12918,13918,14918,15918,16918,17918,18918,48918,98918"

// threadDocSize is the document size of the second table.
const threadDocSize = 8918

func main() {
	docs := flag.Int("docs", 10000, "documents per writer and row")
	sizesFlag := flag.String("sizes", defaultSizes, "comma-separated BSON document sizes of table 1")
	maxThreads := flag.Int("threads", 8, "table 2 runs 1..threads writers")
	writersFlag := flag.String("writers", "", "table 2's writer counts, comma-separated (e.g. 1,8,40,80; overrides -threads)")
	reps := flag.Int("reps", 3, "repetitions of every measurement (median reported)")
	compressor := flag.String("compressor", "snappy", "cairnd --journalCompressor")
	bin := flag.String("cairnd", "", "cairnd binary (default: build ../cmd/cairnd)")
	dir := flag.String("dir", "", "working directory (default: a new temporary one)")
	out := flag.String("out", "", "also write OUT.md, OUT.json and OUT.png")
	serverArgs := flag.String("args", "", "extra cairnd flags, space-separated (e.g. \"--cpuprofile /tmp/cairnd.prof\")")
	flag.Parse()
	var sizes []int
	for _, f := range strings.Split(*sizesFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 30 {
			fmt.Fprintf(os.Stderr, "journalbench: bad size %q (minimum 30)\n", f)
			os.Exit(2)
		}
		sizes = append(sizes, n)
	}
	var writers []int
	for w := 1; w <= *maxThreads; w++ {
		writers = append(writers, w)
	}
	if *writersFlag != "" {
		writers = writers[:0]
		for _, f := range strings.Split(*writersFlag, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				fmt.Fprintf(os.Stderr, "journalbench: bad writer count %q\n", f)
				os.Exit(2)
			}
			writers = append(writers, n)
		}
	}
	cfg := config{docs: *docs, sizes: sizes, writers: writers, reps: max(*reps, 1), compressor: *compressor, bin: *bin, dir: *dir, out: *out, args: strings.Fields(*serverArgs)}
	if err := run(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "journalbench:", err)
		os.Exit(1)
	}
}

type config struct {
	docs, reps      int
	sizes, writers  []int
	compressor, bin string
	dir, out        string
	args            []string
}

// row is one measured line of a table.
type row struct {
	Size, Writers int
	// Medians over the repetitions.
	ElapsedMs      float64
	FloorMs        float64 // bare pwrite+fdatasync of the same inserts, one writer
	FsyncsPerWrite float64
	DiskPerByte    float64 // bytes written to disk per inserted byte
	GroupSize      float64 // acknowledged inserts per fdatasync
	FsyncMs        float64 // the server's mean journal fdatasync time meanwhile
	CheckpointMs   float64 // time the server spent in checkpoints meanwhile
	// UnsyncedMs is the same inserts acknowledged with {j: false}: all of
	// the request's work (driver, wire, insert, journal write) but the
	// fdatasync, so ElapsedMs-UnsyncedMs is what waiting for the disk cost.
	UnsyncedMs   float64
	Runs         []float64
	FloorRuns    []float64
	UnsyncedRuns []float64
}

type report struct {
	Date, Machine, Command string
	CPUs, Docs, Reps       int
	Compressor             string
	BySize, ByWriters      []row
}

func run(cfg config) error {
	ctx := context.Background()
	if cfg.dir == "" {
		d, err := os.MkdirTemp("", "journalbench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		cfg.dir = d
	}
	srv, err := cairndproc.Start(ctx, cairndproc.Options{Binary: cfg.bin, Dir: cfg.dir, Args: append([]string{"--journalCompressor", cfg.compressor}, cfg.args...)})
	if err != nil {
		return err
	}
	defer srv.Stop()
	clients := make([]*mongo.Client, max(slices.Max(cfg.writers), 1))
	for i := range clients {
		// One connection per writer, as the report's threads had.
		c, err := mongo.Connect(options.Client().ApplyURI(srv.URI).SetMaxPoolSize(1).SetTimeout(5 * time.Minute))
		if err != nil {
			return err
		}
		defer c.Disconnect(ctx)
		clients[i] = c
	}
	floorFile := filepath.Join(cfg.dir, "floor.dat")
	rep := report{Date: time.Now().UTC().Format("2006-01-02 15:04 MST"), Machine: machine(), CPUs: nproc(), Docs: cfg.docs, Reps: cfg.reps, Compressor: cfg.compressor,
		Command: "go run ./cmd/journalbench " + strings.Join(os.Args[1:], " ")}

	measure := func(size, writers int) (row, error) {
		r := row{Size: size, Writers: writers}
		var fs, dpb, grp, ck, fms []float64
		for i := 0; i < cfg.reps; i++ {
			f, err := floor(floorFile, size, cfg.docs)
			if err != nil {
				return r, err
			}
			r.FloorRuns = append(r.FloorRuns, ms(f))
			m, err := inserts(ctx, clients[:writers], size, cfg.docs, true)
			if err != nil {
				return r, err
			}
			u, err := inserts(ctx, clients[:writers], size, cfg.docs, false)
			if err != nil {
				return r, err
			}
			r.UnsyncedRuns = append(r.UnsyncedRuns, ms(u.elapsed))
			r.Runs = append(r.Runs, ms(m.elapsed))
			fs = append(fs, m.fsyncsPerWrite)
			dpb = append(dpb, m.diskPerByte)
			grp = append(grp, m.groupSize)
			ck = append(ck, m.checkpointMs)
			fms = append(fms, m.fsyncMs)
		}
		r.ElapsedMs, r.FloorMs, r.UnsyncedMs = median(r.Runs), median(r.FloorRuns), median(r.UnsyncedRuns)
		r.FsyncsPerWrite, r.DiskPerByte, r.GroupSize, r.CheckpointMs = median(fs), median(dpb), median(grp), median(ck)
		r.FsyncMs = median(fms)
		fmt.Fprintf(os.Stderr, "size %6d writers %d: %8.0f ms (floor %8.0f ms, j:false %8.0f ms), %.3f fdatasync/insert, %.2f disk bytes/inserted byte, checkpoints %.0f ms\n",
			size, writers, r.ElapsedMs, r.FloorMs, r.UnsyncedMs, r.FsyncsPerWrite, r.DiskPerByte, r.CheckpointMs)
		return r, nil
	}
	for _, size := range cfg.sizes {
		r, err := measure(size, 1)
		if err != nil {
			return err
		}
		rep.BySize = append(rep.BySize, r)
	}
	for _, w := range cfg.writers {
		r, err := measure(threadDocSize, w)
		if err != nil {
			return err
		}
		rep.ByWriters = append(rep.ByWriters, r)
	}
	md := render(rep)
	fmt.Print(md)
	if cfg.out != "" {
		if err := os.WriteFile(cfg.out+".md", []byte(md), 0o644); err != nil {
			return err
		}
		js, _ := json.MarshalIndent(rep, "", "  ")
		if err := os.WriteFile(cfg.out+".json", js, 0o644); err != nil {
			return err
		}
		if err := chart(rep, cfg.out+".png"); err != nil {
			return err
		}
	}
	return nil
}

type insertResult struct {
	elapsed                                time.Duration
	fsyncsPerWrite, diskPerByte, groupSize float64
	fsyncMs                                float64
	checkpointMs                           float64
}

// inserts has len(clients) writers insert n documents of size bytes each
// with {j: journal}, one at a time, into a fresh collection.
func inserts(ctx context.Context, clients []*mongo.Client, size, n int, journal bool) (insertResult, error) {
	var res insertResult
	db := clients[0].Database("journalbench")
	coll := fmt.Sprintf("s%d_w%d_j%v", size, len(clients), journal)
	if err := db.Collection(coll).Drop(ctx); err != nil {
		return res, err
	}
	if err := db.CreateCollection(ctx, coll); err != nil {
		return res, err
	}
	before, err := cairndproc.ServerStatus(ctx, clients[0])
	if err != nil {
		return res, err
	}
	wc := options.Collection().SetWriteConcern(&writeconcern.WriteConcern{W: 1, Journal: new(journal)})
	var wg sync.WaitGroup
	errs := make(chan error, len(clients))
	start := time.Now()
	for w, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := c.Database("journalbench").Collection(coll, wc)
			docs := documents(size, rand.New(rand.NewPCG(uint64(w), uint64(size))))
			for i := 0; i < n; i++ {
				if _, err := cl.InsertOne(ctx, docs.next()); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		return res, err
	}
	after, err := cairndproc.ServerStatus(ctx, clients[0])
	if err != nil {
		return res, err
	}
	delta := func(path ...string) float64 {
		return float64(cairndproc.Int(after, path...) - cairndproc.Int(before, path...))
	}
	total := float64(n * len(clients))
	fsyncs := delta("cairn", "journal", "fsyncs")
	disk := delta("cairn", "journal", "bytesWritten") + delta("cairn", "checkpoints", "pagesWritten")*float64(cairndproc.Int(after, "cairn", "files", "pageSize"))
	res.fsyncsPerWrite = fsyncs / total
	res.checkpointMs = delta("cairn", "checkpoints", "totalMillis")
	res.diskPerByte = disk / (total * float64(size))
	if fsyncs > 0 {
		res.groupSize = total / fsyncs
		res.fsyncMs = delta("cairn", "journal", "fsyncMicros") / fsyncs / 1000
	}
	return res, db.Collection(coll).Drop(ctx)
}

var words = strings.Fields(`the journal group commit makes every acknowledged write durable with one
fdatasync for many writers while the checkpoint writes pages copy on write and recycles the file
document insert size bytes elapsed floor disk metadata extent preallocated zero block sector`)

// docPool holds a few documents of one size, built before the clock
// starts so that the timed loop measures the server and the driver, not
// the benchmark's text generator: each next() gives one of them a fresh
// ObjectId in place (the driver has finished with a document when
// InsertOne returns).
type docPool struct {
	docs []bson.Raw
	i    int
}

// poolSize documents of each size per writer: distinct contents, so that
// no record or page compresses better than real data would.
const poolSize = 16

// documents returns a pool of documents of exactly size BSON bytes: an
// ObjectId _id and a string of words (compressible, like real data).
func documents(size int, rng *rand.Rand) *docPool {
	p := &docPool{}
	for range poolSize {
		// {_id: ObjectId, x: "<L bytes>"} is 30 + L bytes of BSON.
		l := size - 30
		var b strings.Builder
		for b.Len() < l {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[rng.IntN(len(words))])
		}
		raw, err := bson.Marshal(bson.D{{Key: "_id", Value: bson.NewObjectID()}, {Key: "x", Value: b.String()[:l]}})
		if err != nil || len(raw) != size {
			panic(fmt.Sprintf("journalbench: document of %d bytes, want %d (%v)", len(raw), size, err))
		}
		p.docs = append(p.docs, raw)
	}
	return p
}

// idOffset is where the _id's 12 bytes start in a pool document: after
// the length (4), the type byte and "_id\x00" (5).
const idOffset = 9

func (p *docPool) next() bson.Raw {
	d := p.docs[p.i%len(p.docs)]
	p.i++
	id := bson.NewObjectID()
	copy(d[idOffset:idOffset+12], id[:])
	return d
}

// floor times n sequential pwrite+fdatasync calls of size bytes into a
// preallocated file (zeros written and fsync'd first, as the journal is).
func floor(path string, size, n int) (time.Duration, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|os.O_TRUNC, 0o644)
	if err != nil {
		return 0, err
	}
	defer os.Remove(path)
	defer f.Close()
	total := int64(size) * int64(n)
	zeros := make([]byte, 1<<20)
	for off := int64(0); off < total; off += int64(len(zeros)) {
		if _, err := f.WriteAt(zeros[:min(int64(len(zeros)), total-off)], off); err != nil {
			return 0, err
		}
	}
	if err := f.Sync(); err != nil {
		return 0, err
	}
	buf := make([]byte, size)
	for i := range buf {
		buf[i] = byte('a' + i%26)
	}
	fd := int(f.Fd())
	start := time.Now()
	for i := 0; i < n; i++ {
		if _, err := f.WriteAt(buf, int64(i)*int64(size)); err != nil {
			return 0, err
		}
		if err := unix.Fdatasync(fd); err != nil {
			return 0, err
		}
	}
	return time.Since(start), nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func nproc() int {
	b, _ := os.ReadFile("/proc/cpuinfo")
	return strings.Count(string(b), "processor\t:")
}

func machine() string {
	host, _ := os.Hostname()
	model := ""
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "model name") {
				_, model, _ = strings.Cut(l, ":")
				break
			}
		}
	}
	return fmt.Sprintf("%s, %d × %s", host, nproc(), strings.TrimSpace(model))
}
