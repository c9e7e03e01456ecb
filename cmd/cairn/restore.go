package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	drvbson "go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/cairndb/cairn/bson"
)

// restoreOptions are cairn restore's settings, a subset of mongorestore's
// flags.
type restoreOptions struct {
	conn             connFlags
	db, coll         string
	dir              string
	drop             bool
	noIndexRestore   bool
	parallel         int
	workers          int
	batchSize        int
	stopOnError      bool
	maintainOrder    bool
	bypassValidation bool
	noProgress       bool
}

func runRestore(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	var o restoreOptions
	return tool{
		name:  "restore",
		usage: "usage: cairn restore [flags] [DIR]   (reads mongodump's layout: DIR/<db>/<collection>.bson and .metadata.json, optionally .gz)",
		flags: o.register,
		args: func(rest []string) error {
			err := argOrFlag(rest, &o.dir, "dir", "directory", "too many arguments")
			if o.dir == "" {
				o.dir = "dump"
			}
			return err
		},
		work: func(ctx context.Context) error {
			res, err := restoreData(ctx, &o, stderr)
			fmt.Fprintf(stderr, "%d document(s) restored successfully. %d document(s) failed to restore.\n", res.ok.Load(), res.failed.Load())
			return err
		},
	}.run(args, stderr)
}

func (o *restoreOptions) register(fs *flag.FlagSet) {
	o.conn.register(fs)
	stringFlag(fs, &o.db, "db", "d", "", "restore only this database (or, with a database directory or .bson file, restore into it)")
	stringFlag(fs, &o.coll, "collection", "c", "", "restore only this collection (or, with a .bson file, restore into it); needs --db")
	fs.StringVar(&o.dir, "dir", "", "dump directory, database directory or .bson file (default: dump, or the argument)")
	fs.BoolVar(&o.drop, "drop", false, "drop each collection before restoring it")
	fs.BoolVar(&o.noIndexRestore, "noIndexRestore", false, "do not create the dumped indexes")
	intFlag(fs, &o.parallel, "numParallelCollections", "j", 4, "collections restored at once")
	fs.IntVar(&o.workers, "numInsertionWorkersPerCollection", 1, "insert commands in flight per collection")
	fs.IntVar(&o.batchSize, "batchSize", 1000, "documents per insert command")
	fs.BoolVar(&o.stopOnError, "stopOnError", false, "stop at the first failed insert")
	fs.BoolVar(&o.maintainOrder, "maintainInsertionOrder", false, "insert in file order (ordered inserts, one worker)")
	fs.BoolVar(&o.bypassValidation, "bypassDocumentValidation", false, "skip the collections' schema validation")
	fs.BoolVar(&o.noProgress, "noProgress", false, "do not show the progress bar")
}

// restoreJob is one collection or view to restore.
type restoreJob struct {
	db, coll string
	data     string // .bson file, "" for a view or metadata only
	metadata string // .metadata.json file, "" when missing
	size     int64
}

type restoreResult struct {
	ok, failed atomic.Int64
}

// restorePlan finds what to restore: a dump directory of database
// directories, one database directory (with --db), or one .bson file
// (with --db and --collection).
func restorePlan(o *restoreOptions) ([]restoreJob, error) {
	if o.coll != "" && o.db == "" {
		return nil, errors.New("--collection needs --db")
	}
	st, err := os.Stat(o.dir)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		if o.db == "" || o.coll == "" {
			return nil, errors.New("restoring a single .bson file needs --db and --collection")
		}
		j := restoreJob{db: o.db, coll: o.coll, data: o.dir, size: st.Size()}
		base := strings.TrimSuffix(strings.TrimSuffix(o.dir, gzipExt), bsonExt)
		for _, m := range []string{base + metadataExt, base + metadataExt + gzipExt} {
			if _, err := os.Stat(m); err == nil {
				j.metadata = m
			}
		}
		return []restoreJob{j}, nil
	}
	dbDirs := map[string]string{} // db name -> directory
	if o.db != "" {
		if sub := filepath.Join(o.dir, escapeName(o.db)); isDir(sub) {
			dbDirs[o.db] = sub
		} else {
			dbDirs[o.db] = o.dir // the argument is the database's own directory
		}
	} else {
		entries, err := os.ReadDir(o.dir)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if e.IsDir() {
				dbDirs[unescapeName(e.Name())] = filepath.Join(o.dir, e.Name())
			}
		}
	}
	var jobs []restoreJob
	for db, dir := range dbDirs {
		if db == "local" || db == "config" {
			continue
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, err
		}
		byColl := map[string]*restoreJob{}
		for _, e := range entries {
			name := e.Name()
			trimmed := strings.TrimSuffix(name, gzipExt)
			var coll string
			var isData bool
			switch {
			case strings.HasSuffix(trimmed, metadataExt):
				coll = strings.TrimSuffix(trimmed, metadataExt)
			case strings.HasSuffix(trimmed, bsonExt):
				coll, isData = strings.TrimSuffix(trimmed, bsonExt), true
			default:
				continue
			}
			coll = unescapeName(coll)
			if strings.HasPrefix(coll, "system.") || (o.coll != "" && coll != o.coll) {
				continue
			}
			j := byColl[coll]
			if j == nil {
				j = &restoreJob{db: db, coll: coll}
				byColl[coll] = j
			}
			path := filepath.Join(dir, name)
			if isData {
				j.data = path
				if info, err := e.Info(); err == nil {
					j.size = info.Size()
				}
			} else {
				j.metadata = path
			}
		}
		for _, j := range byColl {
			jobs = append(jobs, *j)
		}
	}
	sort.Slice(jobs, func(a, b int) bool {
		if jobs[a].db != jobs[b].db {
			return jobs[a].db < jobs[b].db
		}
		return jobs[a].coll < jobs[b].coll
	})
	return jobs, nil
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

func restoreData(ctx context.Context, o *restoreOptions, stderr io.Writer) (*restoreResult, error) {
	res := &restoreResult{}
	jobs, err := restorePlan(o)
	if err != nil {
		return res, err
	}
	if len(jobs) == 0 {
		return res, fmt.Errorf("nothing to restore in %s", o.dir)
	}
	if o.workers < 1 || o.batchSize < 1 {
		return res, errors.New("--numInsertionWorkersPerCollection and --batchSize must be at least 1")
	}
	client, err := o.conn.connect(ctx, "cairn restore")
	if err != nil {
		return res, err
	}
	defer client.Disconnect(context.Background())

	// Collections first, views after them (a view's definition may name
	// another view; they are created in name order).
	var colls, views []restoreJob
	var total int64
	for _, j := range jobs {
		m, err := j.readMetadata()
		if err != nil {
			return res, err
		}
		if m != nil && m.Type == "view" {
			views = append(views, j)
			continue
		}
		total += j.size
		colls = append(colls, j)
	}
	var read atomic.Int64
	bar := startProgress(stderr, !o.noProgress, "restore", total, &read, &res.ok)
	defer bar.finish()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	r := &restorer{o: o, client: client, res: res, read: &read, errOut: stderr, cancel: cancel}
	work := make(chan restoreJob)
	var wg sync.WaitGroup
	for range max(o.parallel, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				if ctx.Err() != nil {
					continue
				}
				if err := r.restoreCollection(ctx, j); err != nil {
					cancel(fmt.Errorf("%s.%s: %w", j.db, j.coll, err))
				}
			}
		}()
	}
	for _, j := range colls {
		work <- j
	}
	close(work)
	wg.Wait()
	for _, j := range views {
		if ctx.Err() != nil {
			break
		}
		if err := r.restoreView(ctx, j); err != nil {
			cancel(fmt.Errorf("%s.%s: %w", j.db, j.coll, err))
		}
	}
	bar.finish()
	return res, context.Cause(ctx)
}

func (j *restoreJob) readMetadata() (*collMetadata, error) {
	if j.metadata == "" {
		return nil, nil
	}
	r, closeFn, err := openFile(j.metadata, nil)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", j.metadata, err)
	}
	m, err := parseMetadata(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", j.metadata, err)
	}
	return m, nil
}

// restorer is one restore's shared state.
type restorer struct {
	o      *restoreOptions
	client *mongo.Client
	res    *restoreResult
	read   *atomic.Int64
	errMu  sync.Mutex
	errOut io.Writer
	cancel context.CancelCauseFunc
}

func (r *restorer) warn(format string, args ...any) {
	r.errMu.Lock()
	defer r.errMu.Unlock()
	fmt.Fprintf(r.errOut, "continuing through error: "+format+"\n", args...)
}

// runRaw runs a command given as a raw document.
func runRaw(ctx context.Context, db *mongo.Database, cmd bson.Doc) error {
	return db.RunCommand(ctx, drvbson.Raw(cmd)).Err()
}

func isCode(err error, code int) bool {
	var se mongo.ServerError
	return errors.As(err, &se) && se.HasErrorCode(code)
}

// restoreCollection creates the collection with its dumped options,
// inserts the documents, then builds the dumped indexes.
func (r *restorer) restoreCollection(ctx context.Context, j restoreJob) error {
	db := r.client.Database(j.db)
	m, err := j.readMetadata()
	if err != nil {
		return err
	}
	if r.o.drop {
		if err := db.Collection(j.coll).Drop(ctx); err != nil {
			return fmt.Errorf("dropping: %w", err)
		}
	}
	var create bson.Builder
	create.AppendString("create", j.coll)
	if m != nil {
		it := m.Options.Iter()
		for it.Next() {
			create.AppendElement(it.Element())
		}
	}
	if err := runRaw(ctx, db, create.Finish()); err != nil && !isCode(err, 48) { // 48: NamespaceExists
		return fmt.Errorf("creating the collection: %w", err)
	}
	if j.data != "" {
		if err := r.insertFile(ctx, db.Collection(j.coll), j.data); err != nil {
			return err
		}
	}
	if m == nil || r.o.noIndexRestore {
		return nil
	}
	var ix bson.Builder
	ix.AppendString("createIndexes", j.coll)
	ix.StartArray("indexes")
	n := 0
	for _, spec := range m.Indexes {
		if v, ok := spec.Lookup("name"); ok && v.StringValue() == "_id_" {
			continue
		}
		ix.StartDocument(bson.Index(n))
		it := spec.Iter()
		for it.Next() {
			if e := it.Element(); e.Key != "ns" {
				ix.AppendElement(e)
			}
		}
		ix.End()
		n++
	}
	ix.End()
	if n == 0 {
		return nil
	}
	if err := runRaw(ctx, db, ix.Finish()); err != nil {
		return fmt.Errorf("creating the indexes: %w", err)
	}
	return nil
}

// insertFile inserts a .bson file's documents in batches, with
// --numInsertionWorkersPerCollection commands in flight.
func (r *restorer) insertFile(ctx context.Context, coll *mongo.Collection, path string) error {
	in, closeFn, err := openFile(path, func(n int) { r.read.Add(int64(n)) })
	if err != nil {
		return err
	}
	defer closeFn()
	ordered := r.o.stopOnError || r.o.maintainOrder
	workers := r.o.workers
	if r.o.maintainOrder {
		workers = 1
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	batches := make(chan []bson.Doc, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range batches {
				if ctx.Err() != nil {
					continue
				}
				err := insertRaw(ctx, coll, b, ordered, r.o.bypassValidation, func(_, n int, errs []writeError) error {
					r.res.ok.Add(int64(n - len(errs)))
					r.res.failed.Add(int64(len(errs)))
					if len(errs) > 0 && ordered {
						return errors.New(errs[0].ErrMsg)
					}
					for i, e := range errs {
						if i == 3 {
							r.warn("%s.%s: ... and %d more write errors", coll.Database().Name(), coll.Name(), len(errs)-3)
							break
						}
						r.warn("%s.%s: %s", coll.Database().Name(), coll.Name(), e.ErrMsg)
					}
					return nil
				})
				if err != nil {
					cancel(err)
				}
			}
		}()
	}
	var batch []bson.Doc
	size := 0
	var readErr error
	for ctx.Err() == nil {
		d, err := readBSONDoc(in)
		if err == io.EOF {
			break
		}
		if err != nil {
			readErr = fmt.Errorf("%s: %w", path, err)
			break
		}
		batch = append(batch, d)
		size += len(d)
		if len(batch) >= r.o.batchSize || size >= 8<<20 {
			select {
			case batches <- batch:
			case <-ctx.Done():
			}
			batch, size = nil, 0
		}
	}
	if len(batch) > 0 && ctx.Err() == nil && readErr == nil {
		batches <- batch
	}
	close(batches)
	wg.Wait()
	if readErr != nil {
		return readErr
	}
	return context.Cause(ctx)
}

// restoreView creates a dumped view from its viewOn and pipeline.
func (r *restorer) restoreView(ctx context.Context, j restoreJob) error {
	m, err := j.readMetadata()
	if err != nil {
		return err
	}
	db := r.client.Database(j.db)
	if r.o.drop {
		if err := db.Collection(j.coll).Drop(ctx); err != nil {
			return fmt.Errorf("dropping: %w", err)
		}
	}
	var create bson.Builder
	create.AppendString("create", j.coll)
	it := m.Options.Iter()
	for it.Next() {
		create.AppendElement(it.Element())
	}
	if err := runRaw(ctx, db, create.Finish()); err != nil {
		return fmt.Errorf("creating the view: %w", err)
	}
	return nil
}
