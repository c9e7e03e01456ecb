package main

import (
	"context"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	drvbson "go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/cairndb/cairn/bson"
)

// dumpOptions are cairn dump's settings, a subset of mongodump's flags.
type dumpOptions struct {
	conn       connFlags
	db, coll   string
	out        string
	gzip       bool
	query      string
	parallel   int
	noProgress bool
}

func runDump(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	var o dumpOptions
	return tool{
		name:  "dump",
		usage: "usage: cairn dump [flags]   (writes mongodump's layout: OUT/<db>/<collection>.bson and .metadata.json)",
		flags: o.register,
		work: func(ctx context.Context) error {
			res, err := dumpData(ctx, &o, stderr)
			fmt.Fprintf(stderr, "dumped %d document(s) of %d collection(s) and %d view(s) to %s\n", res.docs, res.colls, res.views, o.out)
			return err
		},
	}.run(args, stderr)
}

func (o *dumpOptions) register(fs *flag.FlagSet) {
	o.conn.register(fs)
	stringFlag(fs, &o.db, "db", "d", "", "database to dump (default: all but local and config)")
	stringFlag(fs, &o.coll, "collection", "c", "", "collection to dump (needs --db)")
	stringFlag(fs, &o.out, "out", "o", "dump", "output directory")
	fs.BoolVar(&o.gzip, "gzip", false, "compress the files with gzip")
	stringFlag(fs, &o.query, "query", "q", "", "dump only the documents matching this Extended JSON filter (needs --collection)")
	intFlag(fs, &o.parallel, "numParallelCollections", "j", 4, "collections dumped at once")
	fs.BoolVar(&o.noProgress, "noProgress", false, "do not show the progress bar")
}

type dumpResult struct {
	docs         int64
	colls, views int
}

// dumpJob is one collection or view to dump.
type dumpJob struct {
	db   string
	meta collMetadata
}

func dumpData(ctx context.Context, o *dumpOptions, stderr io.Writer) (dumpResult, error) {
	var res dumpResult
	if o.coll != "" && o.db == "" {
		return res, errors.New("--collection needs --db")
	}
	if o.query != "" && o.coll == "" {
		return res, errors.New("--query needs --collection")
	}
	filter, err := parseJSONFlag("query", o.query)
	if err != nil {
		return res, err
	}
	if filter == nil {
		filter = drvbson.Raw(bson.EmptyDoc)
	}
	client, err := o.conn.connect(ctx, "cairn dump")
	if err != nil {
		return res, err
	}
	defer client.Disconnect(context.Background())

	dbs := []string{o.db}
	if o.db == "" {
		names, err := client.ListDatabaseNames(ctx, drvbson.D{})
		if err != nil {
			return res, fmt.Errorf("listing databases: %w", err)
		}
		dbs = dbs[:0]
		for _, n := range names {
			if n != "local" && n != "config" {
				dbs = append(dbs, n)
			}
		}
	}
	var jobs []dumpJob
	var total int64
	for _, db := range dbs {
		metas, err := listMetadata(ctx, client.Database(db), o.coll)
		if err != nil {
			return res, err
		}
		for _, m := range metas {
			if m.Type == "view" {
				res.views++
			} else {
				res.colls++
				if n, err := client.Database(db).Collection(m.CollectionName).EstimatedDocumentCount(ctx); err == nil {
					total += n
				}
			}
			jobs = append(jobs, dumpJob{db: db, meta: m})
		}
		if err := os.MkdirAll(filepath.Join(o.out, escapeName(db)), 0o755); err != nil {
			return res, err
		}
	}
	if o.coll != "" && len(jobs) == 0 {
		return res, fmt.Errorf("%s.%s does not exist", o.db, o.coll)
	}

	var docs atomic.Int64
	bar := startProgress(stderr, !o.noProgress, "dump", total, &docs, &docs)
	defer bar.finish()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	work := make(chan dumpJob)
	var wg sync.WaitGroup
	for range max(o.parallel, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				if ctx.Err() != nil {
					continue
				}
				if err := dumpCollection(ctx, client.Database(j.db), o, j.meta, filter, &docs); err != nil {
					cancel(fmt.Errorf("%s.%s: %w", j.db, j.meta.CollectionName, err))
				}
			}
		}()
	}
	for _, j := range jobs {
		work <- j
	}
	close(work)
	wg.Wait()
	bar.finish()
	res.docs = docs.Load()
	return res, context.Cause(ctx)
}

// listMetadata returns the metadata of a database's collections and views
// (only coll's when it is set). System collections are left out.
func listMetadata(ctx context.Context, db *mongo.Database, coll string) ([]collMetadata, error) {
	filter := drvbson.D{}
	if coll != "" {
		filter = drvbson.D{{Key: "name", Value: coll}}
	}
	cur, err := db.ListCollections(ctx, filter)
	if err != nil {
		return nil, fmt.Errorf("listing the collections of %s: %w", db.Name(), err)
	}
	defer cur.Close(ctx)
	var metas []collMetadata
	for cur.Next(ctx) {
		d := bson.Doc(cur.Current)
		m := collMetadata{Type: "collection"}
		if v, ok := d.Lookup("name"); ok {
			m.CollectionName = v.StringValue()
		}
		if v, ok := d.Lookup("type"); ok {
			m.Type = v.StringValue()
		}
		if v, ok := d.Lookup("options"); ok && v.Type == bson.TypeDocument {
			m.Options = append(bson.Doc(nil), v.Document()...)
		}
		if v, ok := d.LookupPath("info", "uuid"); ok && v.Type == bson.TypeBinary {
			_, id := v.Binary()
			m.UUID = hex.EncodeToString(id)
		}
		if strings.HasPrefix(m.CollectionName, "system.") || (m.Type != "collection" && m.Type != "view") {
			continue
		}
		metas = append(metas, m)
	}
	if err := cur.Err(); err != nil {
		return nil, err
	}
	for i := range metas {
		if metas[i].Type != "collection" {
			continue
		}
		ic, err := db.Collection(metas[i].CollectionName).Indexes().List(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing the indexes of %s.%s: %w", db.Name(), metas[i].CollectionName, err)
		}
		for ic.Next(ctx) {
			metas[i].Indexes = append(metas[i].Indexes, append(bson.Doc(nil), ic.Current...))
		}
		if err := ic.Err(); err != nil {
			return nil, err
		}
		ic.Close(ctx)
	}
	return metas, nil
}

// dumpCollection writes a collection's documents (in natural order) and
// its metadata; a view has only its metadata.
func dumpCollection(ctx context.Context, db *mongo.Database, o *dumpOptions, m collMetadata, filter drvbson.Raw, docs *atomic.Int64) error {
	dir := filepath.Join(o.out, escapeName(db.Name()))
	name := escapeName(m.CollectionName)
	if m.Type == "collection" {
		w, closeFn, err := createFile(dumpFileName(dir, name, bsonExt, o.gzip), o.gzip)
		if err != nil {
			return err
		}
		cur, err := db.Collection(m.CollectionName).Find(ctx, filter, options.Find().SetBatchSize(1000))
		if err != nil {
			closeFn()
			return err
		}
		for cur.Next(ctx) {
			if _, err := w.Write(cur.Current); err != nil {
				cur.Close(ctx)
				closeFn()
				return err
			}
			docs.Add(1)
		}
		err = cur.Err()
		cur.Close(ctx)
		if cerr := closeFn(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	j, err := m.marshal()
	if err != nil {
		return err
	}
	w, closeFn, err := createFile(dumpFileName(dir, name, metadataExt, o.gzip), o.gzip)
	if err != nil {
		return err
	}
	if _, err := w.Write(j); err != nil {
		closeFn()
		return err
	}
	return closeFn()
}

// escapeName makes a database or collection name safe as a file name, as
// mongodump does: '%' and '/' are percent-encoded.
func escapeName(s string) string {
	return strings.NewReplacer("%", "%25", "/", "%2F").Replace(s)
}

// unescapeName reverses escapeName.
func unescapeName(s string) string {
	return strings.NewReplacer("%2F", "/", "%2f", "/", "%25", "%").Replace(s)
}
