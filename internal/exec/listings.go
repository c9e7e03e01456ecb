package exec

// The catalog listings: listDatabases' databases and sizes,
// listCollections' collection documents and listIndexes' index
// specifications, read in the command's snapshot.

import (
	"sort"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
)

// DatabaseSize is one database of listDatabases: its name and the bytes
// of its collections' documents (0 with nameOnly).
type DatabaseSize struct {
	Name string
	Size int64
}

// ListDatabases lists the databases in tx, in name order, with their
// sizes unless nameOnly. mongod always has admin (system.version), config
// and local (startup_log, the oplog): they are listed whether or not
// Cairn holds collections there (its users and roles are kept outside
// collections).
func ListDatabases(tx *Tx, nameOnly bool) ([]DatabaseSize, error) {
	colls, err := catalog.List(tx, "")
	if err != nil {
		return nil, err
	}
	sizes := map[string]int64{}
	var names []string
	for _, coll := range colls {
		if _, ok := sizes[coll.DB]; !ok {
			names = append(names, coll.DB)
			sizes[coll.DB] = 0
		}
		if _, _, isView := coll.View(); !nameOnly && !isView {
			_, size, err := CollSizes(tx, coll)
			if err != nil {
				return nil, err
			}
			sizes[coll.DB] += size
		}
	}
	for _, db := range []string{"admin", "config", "local"} {
		if _, ok := sizes[db]; !ok {
			names = append(names, db)
			sizes[db] = 0
		}
	}
	sort.Strings(names)
	out := make([]DatabaseSize, len(names))
	for i, n := range names {
		out[i] = DatabaseSize{Name: n, Size: sizes[n]}
	}
	return out, nil
}

// AppendDatabases appends listDatabases' answer for dbs: those filter
// (nil: all) matches and visible (nil: all) allows, and their total size
// unless nameOnly.
func AppendDatabases(r *bson.Builder, dbs []DatabaseSize, nameOnly bool, filter *query.Filter, visible func(string) bool) {
	r.StartArray("databases")
	var total int64
	i := 0
	for _, db := range dbs {
		var b bson.Builder
		b.AppendString("name", db.Name)
		if !nameOnly {
			b.AppendInt64("sizeOnDisk", db.Size)
			b.AppendBool("empty", false)
		}
		d := b.Finish()
		if filter != nil && !filter.Match(d) || visible != nil && !visible(db.Name) {
			continue
		}
		total += db.Size
		r.AppendDocument(bson.Index(i), d)
		i++
	}
	r.End()
	if !nameOnly {
		r.AppendInt64("totalSize", total)
		r.AppendInt64("totalSizeMb", total>>20)
	}
}

// CollectionInfos are listCollections' documents of db's collections in
// tx that filter (nil: all) matches.
func CollectionInfos(tx *Tx, db string, nameOnly bool, filter *query.Filter) ([]bson.Doc, error) {
	colls, err := catalog.List(tx, db)
	if err != nil {
		return nil, err
	}
	var docs []bson.Doc
	for _, coll := range colls {
		var b bson.Builder
		if ts, err := TimeseriesOfCollection(tx, coll); err != nil {
			return nil, err
		} else if ts != nil {
			AppendTimeseriesInfo(&b, ts, nameOnly)
		} else {
			coll.AppendInfo(&b, nameOnly)
		}
		d := b.Finish()
		if filter != nil && !filter.Match(d) {
			continue
		}
		docs = append(docs, d)
	}
	return docs, nil
}

// IndexSpecs are listIndexes' documents: the ready indexes of db.name in
// tx (NamespaceNotFound without the collection).
func IndexSpecs(tx *Tx, db, name string) ([]bson.Doc, error) {
	coll, err := catalog.Get(tx, db, name)
	if err != nil {
		return nil, err
	}
	if coll == nil {
		return nil, mongoerr.New(mongoerr.NamespaceNotFound, "ns does not exist: %s.%s", db, name)
	}
	var docs []bson.Doc
	ts, err := TimeseriesOfCollection(tx, coll)
	if err != nil {
		return nil, err
	}
	if ts != nil {
		// The buckets' indexes, with the keys the collection's users gave.
		for _, ix := range ts.Buckets.Indexes {
			if d, ok := ts.Opts.UserIndexSpec(ix.Spec); ok && ix.Ready {
				docs = append(docs, d)
			}
		}
	}
	for _, ix := range coll.Indexes {
		if ix.Ready {
			docs = append(docs, ix.Spec)
		}
	}
	return docs, nil
}
