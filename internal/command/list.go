package command

import (
	"sort"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
)

func listDatabases(c *Ctx) error {
	a := newArgs(c)
	if err := a.check("filter", "nameOnly", "authorizedDatabases"); err != nil {
		return err
	}
	nameOnly, filter, err := listingArgs(a)
	if err != nil {
		return err
	}
	visible, err := c.visibleDatabases()
	if err != nil {
		return err
	}
	tx, err := c.readTx()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	colls, err := catalog.List(tx, "")
	if err != nil {
		return err
	}
	sizes := map[string]int64{}
	var names []string
	for _, coll := range colls {
		if _, ok := sizes[coll.DB]; !ok {
			names = append(names, coll.DB)
			sizes[coll.DB] = 0
		}
		if _, _, isView := coll.View(); !nameOnly && !isView {
			_, size, err := exec.CollSizes(tx, coll)
			if err != nil {
				return err
			}
			sizes[coll.DB] += size
		}
	}
	// mongod always has admin (system.version), config and local
	// (startup_log, the oplog): they are listed whether or not Cairn holds
	// collections there (its users and roles are kept outside collections).
	for _, db := range []string{"admin", "config", "local"} {
		if _, ok := sizes[db]; !ok {
			names = append(names, db)
			sizes[db] = 0
		}
	}
	sort.Strings(names)
	r := c.Reply
	r.StartArray("databases")
	var total int64
	i := 0
	for _, n := range names {
		var b bson.Builder
		b.AppendString("name", n)
		if !nameOnly {
			b.AppendInt64("sizeOnDisk", sizes[n])
			b.AppendBool("empty", false)
		}
		d := b.Finish()
		if filter != nil && !filter.Match(d) || visible != nil && !visible(n) {
			continue
		}
		total += sizes[n]
		r.AppendDocument(bson.Index(i), d)
		i++
	}
	r.End()
	if !nameOnly {
		r.AppendInt64("totalSize", total)
		r.AppendInt64("totalSizeMb", total>>20)
	}
	return nil
}

func listCollections(c *Ctx) error {
	a := newArgs(c)
	if err := a.check("filter", "nameOnly", "authorizedCollections", "cursor"); err != nil {
		return err
	}
	if err := catalog.ValidateDBName(c.DB); err != nil {
		return err
	}
	nameOnly, filter, err := listingArgs(a)
	if err != nil {
		return err
	}
	batchSize, err := cursorBatchSize(a)
	if err != nil {
		return err
	}
	tx, err := c.readTx()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	colls, err := catalog.List(tx, c.DB)
	if err != nil {
		return err
	}
	var docs []bson.Doc
	for _, coll := range colls {
		var b bson.Builder
		if ts, err := timeseriesOf(tx, coll); err != nil {
			return err
		} else if ts != nil {
			exec.AppendTimeseriesInfo(&b, ts, nameOnly)
		} else {
			coll.AppendInfo(&b, nameOnly)
		}
		d := b.Finish()
		if filter != nil && !filter.Match(d) {
			continue
		}
		docs = append(docs, d)
	}
	return writeBatch(c, nil, &exec.SliceSource{Docs: docs}, c.DB+".$cmd.listCollections", 0, batchOptions{batchSize: batchSize, firstBatch: true}, false)
}

// cursorBatchSize reads cursor: {batchSize} of commands that return cursors.
func cursorBatchSize(a args) (int64, error) {
	cur, ok, err := a.doc("cursor")
	if err != nil || !ok {
		return 0, err
	}
	v, ok := cur.Lookup("batchSize")
	if !ok {
		return 0, nil
	}
	n, err := numberArg(v)
	if err != nil {
		return 0, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'cursor.batchSize' is the wrong type '%s', expected types '[long, int, decimal, double]'", v.Type)
	}
	if n < 0 {
		return 0, mongoerr.New(mongoerr.IDLValueOutOfRange, "BSON field 'batchSize' value must be >= 0, actual value '%d'", n)
	}
	return n, nil
}

func listIndexes(c *Ctx) error {
	a := newArgs(c)
	if err := a.check("cursor", "includeBuildUUIDs", "includeIndexBuildInfo"); err != nil {
		return err
	}
	name, err := c.collectionArg()
	if err != nil {
		return err
	}
	batchSize, err := cursorBatchSize(a)
	if err != nil {
		return err
	}
	tx, err := c.readTx()
	if err != nil {
		return err
	}
	coll, err := catalog.Get(tx, c.DB, name)
	var ts *exec.Timeseries
	if err == nil {
		ts, err = timeseriesOf(tx, coll)
	}
	tx.Rollback()
	if err != nil {
		return err
	}
	if coll == nil {
		return mongoerr.New(mongoerr.NamespaceNotFound, "ns does not exist: %s.%s", c.DB, name)
	}
	var docs []bson.Doc
	if ts != nil {
		// The buckets' indexes, with the keys the collection's users gave.
		for _, ix := range ts.Buckets.Indexes {
			if d, ok := timeseriesListedIndex(ts.Opts, ix.Spec); ok && ix.Ready {
				docs = append(docs, d)
			}
		}
	}
	for _, ix := range coll.Indexes {
		if ix.Ready {
			docs = append(docs, ix.Spec)
		}
	}
	return writeBatch(c, nil, &exec.SliceSource{Docs: docs}, c.DB+"."+name, 0, batchOptions{batchSize: batchSize, firstBatch: true}, false)
}

// listingArgs reads nameOnly and filter, as listDatabases and
// listCollections take them (filter is nil when absent).
func listingArgs(a args) (nameOnly bool, filter *query.Filter, err error) {
	if nameOnly, _, err = a.boolean("nameOnly"); err != nil {
		return false, nil, err
	}
	if f, ok, err := a.doc("filter"); err != nil {
		return false, nil, err
	} else if ok {
		if filter, err = query.ParseFilter(f, &query.Options{}); err != nil {
			return false, nil, err
		}
	}
	return nameOnly, filter, nil
}
