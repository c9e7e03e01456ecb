package exec

import (
	"bytes"
	"context"
	"fmt"
	"runtime"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/agg"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/colcache"
	"github.com/cairndb/cairn/internal/index"
	"github.com/cairndb/cairn/kv"
)

// An aggregation whose fields a column store index holds (ready, not
// hidden, storing every top-level field the pipeline reads) is a column
// scan (explained as COLUMN_SCAN): the column cache serves it, and builds
// the columns it lacks from the index's entries — each field's cells only
// — instead of from the documents. The column store is the durable,
// always-current copy of the columns, the cache the decoded working set
// that one version of the collection's tree keeps in memory; see
// docs/architecture.md.

// columnStore returns the name and tree of a column store index of coll
// that holds every field of fields, or "" when there is none.
func columnStore(tx *kv.Tx, coll *catalog.Collection, fields []string) (string, *kv.Tree, error) {
	if len(fields) == 0 {
		return "", nil, nil
	}
	for _, ix := range coll.Indexes {
		if !ix.Ready {
			continue
		}
		spec, err := index.ParseCached(ix.Spec)
		if err != nil || spec.Column == nil || spec.Hidden {
			continue
		}
		covered := true
		for _, f := range fields {
			covered = covered && spec.Column.Stores(f)
		}
		if !covered {
			continue
		}
		t, err := tx.Tree(coll.IndexTree(ix.Name))
		if err != nil {
			return "", nil, fmt.Errorf("column store index %s: %w", ix.Name, err)
		}
		return ix.Name, t, nil
	}
	return "", nil, nil
}

// hintsColumnStore reports whether hint names (or gives the key pattern
// of) a column store index of coll: an aggregation so hinted is a column
// scan when the index holds its fields, a collection scan otherwise.
func hintsColumnStore(coll *catalog.Collection, hint bson.Value) bool {
	for _, ix := range coll.Indexes {
		match := false
		switch hint.Type {
		case bson.TypeString:
			match = ix.Name == hint.StringValue()
		case bson.TypeDocument:
			key, ok := ix.Spec.Lookup("key")
			match = ok && bson.Equal(key, hint)
		}
		if match {
			spec, err := index.ParseCached(ix.Spec)
			return err == nil && spec.Column != nil
		}
	}
	return false
}

// storeSource reads a column store index's tree (colcache.Source).
type storeSource struct {
	name     string
	t        *kv.Tree
	parallel bool // a read transaction: cursors may run side by side
}

var _ colcache.Source = (*storeSource)(nil)

func (s *storeSource) Name() string   { return s.name }
func (s *storeSource) Parallel() bool { return s.parallel }

// each calls fn with the document key and value of every entry of
// field's column.
func (s *storeSource) each(ctx context.Context, field string, fn func(key, val []byte) error) error {
	prefix := index.ColumnPrefix(field)
	cur := s.t.Cursor()
	n := 0
	for k, v := cur.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = cur.Next() {
		if n++; n&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if err := fn(k[len(prefix):], v); err != nil {
			return err
		}
	}
	if err := cur.Err(); err != nil {
		return fmt.Errorf("column store index %s: reading %q: %w", s.name, field, err)
	}
	return nil
}

// Rows implements colcache.Source.
func (s *storeSource) Rows(ctx context.Context, fn func(key []byte) error) error {
	return s.each(ctx, index.RowIDColumn, func(k, _ []byte) error { return fn(k) })
}

// Column implements colcache.Source.
func (s *storeSource) Column(ctx context.Context, field string, fn func(key []byte, ord int, val []byte) error) error {
	return s.each(ctx, field, func(k, v []byte) error {
		c, ok := index.DecodeCell(v)
		if !ok {
			return fmt.Errorf("column store index %s: field %q: a malformed cell under key %x", s.name, field, k)
		}
		return fn(k, c.Ordinal, v[len(v)-len(c.Value.Data)-1:])
	})
}

// explainColumnScan returns what writes explain's COLUMN_SCAN stage for
// an aggregation of p over db.source that ParallelPipeline would serve
// from a column store index (the index's name, the fields read, the
// leading $match as its filter), or nil when it would not.
func (e *Engine) explainColumnScan(tx *kv.Tx, db, source string, p *agg.Pipeline, hint bson.Value) func(r *bson.Builder, filter bson.Doc) {
	if source == "" || runtime.GOMAXPROCS(0) < 2 || p.StartsWithSource() || !p.CanRunParallel() || !e.ColumnCache.Enabled() {
		return nil
	}
	coll, err := catalog.Get(tx, db, source)
	if err != nil || coll == nil || (Hinted(hint) && !hintsColumnStore(coll, hint)) {
		return nil
	}
	if _, _, isView := coll.View(); isView {
		return nil
	}
	t, err := DataTree(tx, coll)
	if err != nil || t.Len() < columnMinRows {
		return nil
	}
	fields := p.ParallelFields()
	if fields == nil {
		fields = p.LateFields()
	}
	name, store, err := columnStore(tx, coll, fields)
	if err != nil || store == nil {
		return nil
	}
	return func(r *bson.Builder, filter bson.Doc) {
		r.AppendString("stage", "COLUMN_SCAN")
		r.AppendString("indexName", name)
		r.StartArray("allFields")
		for i, f := range fields {
			r.AppendString(bson.Index(i), f)
		}
		r.End()
		if len(filter) > 5 {
			r.AppendDocument("filter", filter)
		}
		r.AppendBool("columnCache", e.ColumnCache.Covers(t, fields))
		// vectorized: the leading $match stages and the $group or $count
		// run over the columns' chunks without building documents
		// (agg.RunVector).
		r.AppendBool("vectorized", p.CanRunVector(fields))
	}
}
