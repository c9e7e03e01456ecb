package main

import (
	"bufio"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// indexes are ClickBench's 15 indexes on hits.
var indexes = []bson.D{
	{{Key: "EventDate", Value: 1}},
	{{Key: "MobilePhoneModel", Value: 1}},
	{{Key: "Referer", Value: 1}},
	{{Key: "RefererHash", Value: 1}},
	{{Key: "URLHash", Value: 1}},
	{{Key: "UserID", Value: 1}},
	{{Key: "AdvEngineID", Value: 1}, {Key: "ResolutionWidth", Value: 1}, {Key: "RegionID", Value: 1}},
	{{Key: "RegionID", Value: 1}, {Key: "UserID", Value: 1}},
	{{Key: "SearchPhrase", Value: 1}, {Key: "SearchEngineID", Value: 1}},
	{{Key: "SearchPhrase", Value: 1}, {Key: "UserID", Value: 1}, {Key: "EventTime", Value: 1}},
	{{Key: "SearchPhrase", Value: 1}, {Key: "URL", Value: 1}, {Key: "Title", Value: 1}},
	{{Key: "CounterID", Value: 1}, {Key: "EventDate", Value: 1}, {Key: "URL", Value: 1}},
	{{Key: "CounterID", Value: 1}, {Key: "IsRefresh", Value: 1}, {Key: "EventDate", Value: 1}},
	{{Key: "URL", Value: 1}, {Key: "CounterID", Value: 1}},
	{{Key: "ClientIP", Value: 1}, {Key: "WatchID", Value: 1}, {Key: "ResolutionWidth", Value: 1}, {Key: "IsRefresh", Value: 1}},
}

// generate writes rows [0, n) to path as TSV, in parallel chunks written in
// order; with keep it also returns the rows the checker reads.
func generate(path string, seed uint64, n int, isRefresh, keep bool) ([]hit, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var hits []hit
	if keep {
		hits = make([]hit, n)
	}
	const chunk = 10000
	workers := runtime.GOMAXPROCS(0)
	type part struct {
		buf  []byte
		done chan struct{}
	}
	parts := make([]*part, (n+chunk-1)/chunk)
	for i := range parts {
		parts[i] = &part{done: make(chan struct{})}
	}
	sem := make(chan struct{}, workers)
	go func() {
		for i, p := range parts {
			sem <- struct{}{}
			go func() {
				var h hit
				for r := i * chunk; r < min(n, (i+1)*chunk); r++ {
					p.buf = genRow(seed, r, &h, p.buf, isRefresh)
					if keep {
						hits[r] = h
					}
				}
				close(p.done)
			}()
		}
	}()
	w := bufio.NewWriterSize(f, 1<<20)
	for _, p := range parts {
		<-p.done
		<-sem
		if _, err := w.Write(p.buf); err != nil {
			return nil, err
		}
		p.buf = nil
	}
	if err := w.Flush(); err != nil {
		return nil, err
	}
	return hits, f.Close()
}

// load imports the TSV into test.hits and builds the indexes, timing both.
func load(ctx context.Context, c *config, srv *cairnServer, cl *mongo.Client, tsv string, rep *report) error {
	coll := cl.Database("test").Collection("hits")
	if err := coll.Drop(ctx); err != nil {
		return err
	}
	fieldFile := filepath.Join(c.dir, "create.txt")
	ff, err := os.Create(fieldFile)
	if err != nil {
		return err
	}
	if err := writeFieldFile(ff, c.isRefresh); err != nil {
		return err
	}
	ff.Close()
	t0, c0 := time.Now(), srv.cpu()
	switch c.loader {
	case "import":
		bin, err := buildTool(c.cairn, "cairn", c.dir)
		if err != nil {
			return err
		}
		c.cairn = bin // built once for a -versus server's load too
		args := []string{"import", "--host", srv.host, "--port", srv.port, "--db", "test", "--collection", "hits",
			"--type", "tsv", "--columnsHaveTypes", "--fieldFile", fieldFile,
			"--numInsertionWorkers", strconv.Itoa(c.workers), "--file", tsv}
		rep.ImportCommand = "cairn " + strings.Join(args, " ")
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("cairn import: %w", err)
		}
		rep.ImportToolCPU = cmd.ProcessState.UserTime().Seconds() + cmd.ProcessState.SystemTime().Seconds()
	case "driver":
		if err := loadDriver(ctx, coll, tsv, c.isRefresh, c.workers); err != nil {
			return err
		}
	default:
		return fmt.Errorf("unknown -loader %q", c.loader)
	}
	rep.ImportSeconds = time.Since(t0).Seconds()
	rep.ImportServerCPU = srv.cpu() - c0
	n, err := coll.EstimatedDocumentCount(ctx)
	if err != nil {
		return err
	}
	if n != int64(c.rows) {
		return fmt.Errorf("loaded %d documents, want %d", n, c.rows)
	}
	fmt.Printf("imported %d rows in %.1f s (cpu: server %.1f s, import tool %.1f s)\n", n, rep.ImportSeconds, rep.ImportServerCPU, rep.ImportToolCPU)
	t0, c0 = time.Now(), srv.cpu()
	models := make([]mongo.IndexModel, len(indexes))
	for i, k := range indexes {
		models[i] = mongo.IndexModel{Keys: k}
	}
	if _, err := coll.Indexes().CreateMany(ctx, models); err != nil {
		return fmt.Errorf("creating indexes: %w", err)
	}
	rep.IndexSeconds = time.Since(t0).Seconds()
	rep.IndexServerCPU = srv.cpu() - c0
	fmt.Printf("created %d indexes in %.1f s (server cpu %.1f s)\n", len(indexes), rep.IndexSeconds, rep.IndexServerCPU)
	if c.colstore {
		t0, c0 = time.Now(), srv.cpu()
		name, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "$**", Value: "columnstore"}}})
		if err != nil {
			return fmt.Errorf("creating the column store index: %w", err)
		}
		rep.ColumnStoreSeconds, rep.ColumnStoreCPU = time.Since(t0).Seconds(), srv.cpu()-c0
		var st struct {
			IndexSizes map[string]int64 `bson:"indexSizes"`
		}
		if err := cl.Database("test").RunCommand(ctx, bson.D{{Key: "collStats", Value: "hits"}}).Decode(&st); err != nil {
			return err
		}
		rep.ColumnStoreBytes = st.IndexSizes[name]
		fmt.Printf("created the column store index in %.1f s (server cpu %.1f s), %.1f MiB\n", rep.ColumnStoreSeconds, rep.ColumnStoreCPU, float64(rep.ColumnStoreBytes)/(1<<20))
	}
	return nil
}

// loadDriver inserts the TSV's rows with InsertMany, converting each
// column by its type as --columnsHaveTypes would.
func loadDriver(ctx context.Context, coll *mongo.Collection, tsv string, isRefresh bool, workers int) error {
	cols := columns
	if isRefresh {
		cols = append(cols[:len(cols):len(cols)], isRefreshColumn)
	}
	f, err := os.Open(tsv)
	if err != nil {
		return err
	}
	defer f.Close()
	batches := make(chan []string, workers)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for lines := range batches {
				docs := make([]any, len(lines))
				for i, l := range lines {
					d, err := tsvDoc(cols, l)
					if err != nil {
						errs <- err
						return
					}
					docs[i] = d
				}
				if _, err := coll.InsertMany(ctx, docs, options.InsertMany().SetOrdered(false)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var batch []string
	var err2 error
	for sc.Scan() && err2 == nil {
		batch = append(batch, sc.Text())
		if len(batch) == 1000 {
			select {
			case batches <- batch:
			case err2 = <-errs:
			}
			batch = nil
		}
	}
	if len(batch) > 0 && err2 == nil {
		batches <- batch
	}
	close(batches)
	wg.Wait()
	if err2 != nil {
		return err2
	}
	select {
	case err := <-errs:
		return err
	default:
	}
	return sc.Err()
}

func tsvDoc(cols []column, line string) (bson.D, error) {
	fields := strings.Split(line, "\t")
	if len(fields) != len(cols) {
		return nil, fmt.Errorf("row has %d fields, want %d", len(fields), len(cols))
	}
	d := make(bson.D, len(cols))
	for i, c := range cols {
		var v any
		var err error
		switch c.kind {
		case kInt32:
			var n int64
			n, err = strconv.ParseInt(fields[i], 10, 32)
			v = int32(n)
		case kInt64:
			v, err = strconv.ParseInt(fields[i], 10, 64)
		case kString:
			v = fields[i]
		case kDate:
			var t time.Time
			t, err = time.Parse("2006-01-02", fields[i])
			v = bson.DateTime(t.UnixMilli())
		case kDateTime:
			var t time.Time
			t, err = time.Parse("2006-01-02 15:04:05", fields[i])
			v = bson.DateTime(t.UnixMilli())
		}
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", c.name, err)
		}
		d[i] = bson.E{Key: c.name, Value: v}
	}
	return d, nil
}

// dataSize records collStats' sizes and the data directory's size on disk.
func dataSize(ctx context.Context, cl *mongo.Client, srv *cairnServer, rep *report) error {
	var st struct {
		Size        int64 `bson:"size"`
		StorageSize int64 `bson:"storageSize"`
		Count       int64 `bson:"count"`
	}
	if err := cl.Database("test").RunCommand(ctx, bson.D{{Key: "collStats", Value: "hits"}}).Decode(&st); err != nil {
		return err
	}
	rep.DataBytes, rep.StorageBytes = st.Size, st.StorageSize
	if srv.dbpath != "" {
		filepath.WalkDir(srv.dbpath, func(_ string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				if info, err := d.Info(); err == nil {
					rep.DiskBytes += info.Size()
				}
			}
			return nil
		})
	}
	return nil
}
