package exec

import (
	"context"
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/colcache"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
	"github.com/cairndb/cairn/kv"
)

// Parallel aggregations read the column cache (Engine.ColumnCache) when it
// holds, or may build, the top-level fields they read: narrow documents
// of those fields instead of the collection's documents. A scan with no
// index plan builds the missing columns; one with an index plan uses
// columns already held, and builds them only after an index scan of the
// same fields examined more than a wantColumnsShare of the collection
// (the narrow scan of every document then costs less than the index
// scan: a fetched document counts one, an index entry a quarter). A column
// store index holding the fields feeds the cache's builds (colstore.go).

// columnMinRows is the smallest collection the cache serves: below it a
// plain scan costs little and columns would crowd out larger ones.
const columnMinRows = 1024

// wantColumnsShare: an index scan that examined more than
// 1/wantColumnsShare of a collection (documents, and index entries at a
// quarter each) asks the cache for its fields.
const wantColumnsShare = 16

// columnScan returns a scan of coll's documents cut to fields, served by
// the column cache, or nil when the cache does not serve it (disabled,
// small collection, columns that do not fit, a newer version held). With
// planned set it builds only fields an earlier index scan asked for.
func (e *Engine) columnScan(ctx context.Context, tx *kv.Tx, coll *catalog.Collection, fields []string, planned bool) (*colScan, error) {
	if !e.ColumnCache.Enabled() {
		return nil, nil
	}
	t, err := DataTree(tx, coll)
	if err != nil {
		return nil, err
	}
	if t.Len() < columnMinRows {
		return nil, nil
	}
	var src colcache.Source
	name, store, err := columnStore(tx, coll, fields)
	if err != nil {
		return nil, err
	}
	if store != nil {
		src = &storeSource{name: name, t: store, parallel: !tx.Writable()}
	}
	set, err := e.ColumnCache.GetFrom(ctx, t, fields, planned, src)
	if err != nil || set == nil {
		return nil, mongoerr.FromContext(err)
	}
	return &colScan{ctx: ctx, Scan: set.Scan(), set: set}, nil
}

// wantColumns notes that an index scan of coll for fields examined keys
// index entries and docs documents: more than a wantColumnsShare of the
// collection asks the cache to serve the fields from then on.
func (e *Engine) wantColumns(tx *kv.Tx, coll *catalog.Collection, fields []string, keys, docs int64) {
	if !e.ColumnCache.Enabled() {
		return
	}
	t, err := DataTree(tx, coll)
	if err != nil || t.Len() < columnMinRows || (docs+keys/4)*wantColumnsShare <= t.Len() {
		return
	}
	e.ColumnCache.Want(t, fields)
}

// colScan is a column-cache scan that stops when its context ends
// (agg.NarrowSource).
type colScan struct {
	ctx context.Context
	*colcache.Scan
	set *colcache.Set // the columns, for vectorized runs (agg.ColumnSource)
}

// NextBatch implements agg.BatchSource.
func (s *colScan) NextBatch(dst []bson.Doc, max int) ([]bson.Doc, error) {
	if s.ctx != nil {
		if err := s.ctx.Err(); err != nil {
			return dst[:0], mongoerr.FromContext(err)
		}
	}
	return s.Scan.NextBatch(dst, max)
}

// narrowByEqualities lets the column scan skip the rows that cannot pass
// filter's top-level equalities on numbers and strings (strings only
// without a collation), before their documents are assembled; the
// pipeline's $match still decides on the rows kept.
func narrowByEqualities(src *colScan, filter bson.Doc, opts *query.Options) {
	if len(filter) <= 5 {
		return
	}
	it := filter.Iter()
	for it.Next() {
		e := it.Element()
		if strings.HasPrefix(e.Key, "$") || strings.Contains(e.Key, ".") {
			continue
		}
		if e.Value.Type == bson.TypeString && opts != nil && opts.Collation != nil {
			continue
		}
		src.Equal(e.Key, e.Value)
	}
}
