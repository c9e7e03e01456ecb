package colcache

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/cairndb/cairn/kv"
)

// DefaultBudget is the memory budget of a Cache whose Options leave Budget
// zero.
const DefaultBudget = 512 << 20

// Options configures a Cache.
type Options struct {
	// Budget is the most bytes of column data the cache keeps; building
	// columns that would pass it evicts the least recently used fields
	// first, and fields that do not fit even alone are not cached. Zero
	// means DefaultBudget; a negative budget disables the cache.
	Budget int64
	// Workers is the number of goroutines that build a scan's chunks.
	// Zero means GOMAXPROCS.
	Workers int
}

// Stats are a Cache's counters.
type Stats struct {
	Budget    int64 // the memory budget in bytes (0: disabled)
	Bytes     int64 // bytes of column data held
	Fields    int64 // columns held (one per tree and field)
	Hits      int64 // requests served entirely from held columns
	Misses    int64 // requests that had to build columns or could not be served
	Builds    int64 // scans that built columns
	Built     int64 // columns built
	Evictions int64 // columns evicted to stay within the budget
	Dropped   int64 // columns dropped because their tree changed
	// FromSource counts builds that read stored columns (GetFrom's
	// Source) instead of the documents.
	FromSource int64
}

// Cache holds columns of the trees of one kv.DB. It is safe for concurrent
// use.
type Cache struct {
	budget  int64
	workers int

	buildMu sync.Mutex // one build at a time; a request finding it busy is not served

	mu     sync.Mutex
	tables map[string]*table
	used   int64
	tick   uint64

	hits, misses, builds, built, evictions, dropped, fromSource atomic.Int64
}

// table is the columns of one version of one tree.
type table struct {
	version uint64
	rows    int
	cols    map[string]*column
	noFit   map[string]bool // fields that did not fit the budget
	wanted  map[string]bool // fields a query asked to have built (Want)
}

// New returns an empty cache.
func New(opts Options) *Cache {
	b := opts.Budget
	if b == 0 {
		b = DefaultBudget
	}
	w := opts.Workers
	if w <= 0 {
		w = runtime.GOMAXPROCS(0)
	}
	return &Cache{budget: b, workers: w, tables: map[string]*table{}}
}

// Enabled reports whether the cache may hold columns.
func (c *Cache) Enabled() bool { return c != nil && c.budget > 0 }

// Stats returns the cache's counters (zero for a nil Cache).
func (c *Cache) Stats() Stats {
	if c == nil {
		return Stats{}
	}
	c.mu.Lock()
	s := Stats{Budget: max(c.budget, 0), Bytes: c.used}
	for _, t := range c.tables {
		s.Fields += int64(len(t.cols))
	}
	c.mu.Unlock()
	s.Hits, s.Misses = c.hits.Load(), c.misses.Load()
	s.Builds, s.Built = c.builds.Load(), c.built.Load()
	s.Evictions, s.Dropped = c.evictions.Load(), c.dropped.Load()
	s.FromSource = c.fromSource.Load()
	return s
}

// Set is the columns of some fields of one tree version, as one reader
// uses them.
type Set struct {
	fields []string
	rows   int
	cols   []*column
}

// Rows returns the number of documents.
func (s *Set) Rows() int { return s.rows }

// Fields returns the fields, in the order of the request.
func (s *Set) Fields() []string { return s.fields }

// tableFor returns the table of t's tree at version v for use, replacing
// an older version's; nil when the cache holds a newer version (an older
// reader: it must not replace what newer readers use). Called with mu.
func (c *Cache) tableFor(name string, v uint64) *table {
	tb := c.tables[name]
	switch {
	case tb != nil && tb.version == v:
		return tb
	case tb != nil && tb.version > v:
		return nil
	}
	wanted := map[string]bool{}
	if tb != nil {
		wanted = tb.wanted // a property of the queries, not of the data
		c.dropTable(name, tb)
	}
	tb = &table{version: v, cols: map[string]*column{}, noFit: map[string]bool{}, wanted: wanted}
	c.tables[name] = tb
	return tb
}

func (c *Cache) dropTable(name string, tb *table) {
	for _, col := range tb.cols {
		c.used -= col.size
		c.dropped.Add(1)
	}
	delete(c.tables, name)
}

// Covers reports whether the cache holds every field of fields for t's
// version.
func (c *Cache) Covers(t *kv.Tree, fields []string) bool {
	v := t.Version()
	if !c.Enabled() || v == 0 {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	tb := c.tables[t.Name()]
	if tb == nil || tb.version != v {
		return false
	}
	for _, f := range fields {
		if tb.cols[f] == nil {
			return false
		}
	}
	return true
}

// Want notes that a query over t read fields another way (an index scan
// that fetched much of the tree): a later Get with wantedOnly set serves
// them, building them if needed. The note outlives the tree's version.
func (c *Cache) Want(t *kv.Tree, fields []string) {
	v := t.Version()
	if !c.Enabled() || v == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if tb := c.tableFor(t.Name(), v); tb != nil {
		for _, f := range fields {
			tb.wanted[f] = true
		}
	}
}

// Get returns the columns of fields for t (a tree of the transaction the
// caller reads in), building the missing ones by one scan of t. With
// wantedOnly set it serves only fields Want asked for (a caller that has
// an index to use instead). It returns nil, and
// no error, when the cache cannot serve the request: disabled, t changed
// by its own write transaction, the cache holding a newer version of the
// tree, columns that do not fit the budget, or another build running.
func (c *Cache) Get(ctx context.Context, t *kv.Tree, fields []string, wantedOnly bool) (*Set, error) {
	return c.GetFrom(ctx, t, fields, wantedOnly, nil)
}

// GetFrom is Get building the missing columns from src (stored columns
// of t's version, see source.go) when it is not nil, instead of scanning
// t's documents.
func (c *Cache) GetFrom(ctx context.Context, t *kv.Tree, fields []string, wantedOnly bool, src Source) (*Set, error) {
	v := t.Version()
	if !c.Enabled() || v == 0 || len(fields) == 0 {
		return nil, nil
	}
	name := t.Name()
	if s, missing := c.lookup(name, v, fields, wantedOnly); s != nil || missing == nil {
		if s != nil {
			c.hits.Add(1)
		} else {
			c.misses.Add(1)
		}
		return s, nil
	}
	c.misses.Add(1)
	if !c.buildMu.TryLock() {
		return nil, nil // another build is running: scan documents rather than wait
	}
	defer c.buildMu.Unlock()
	// Another build may have made some of them meanwhile.
	s, missing := c.lookup(name, v, fields, wantedOnly)
	if s != nil || missing == nil {
		return s, nil
	}
	var cols []*column
	var rows int
	var fit bool
	var err error
	if src != nil {
		cols, rows, fit, err = c.buildFrom(ctx, src, t.Len(), missing)
		if err == nil {
			c.fromSource.Add(1)
		}
	} else {
		cols, rows, fit, err = c.build(ctx, t, missing)
	}
	if err != nil {
		return nil, err
	}
	c.builds.Add(1)
	c.mu.Lock()
	defer c.mu.Unlock()
	tb := c.tables[name]
	if tb != nil && tb.version != v {
		tb = nil // replaced by a newer version meanwhile: serve, do not keep
	}
	if !fit {
		if tb != nil {
			for _, f := range missing {
				tb.noFit[f] = true
			}
		}
		return nil, nil
	}
	c.built.Add(int64(len(cols)))
	if tb != nil {
		if tb.rows != rows && len(tb.cols) > 0 {
			return nil, fmt.Errorf("colcache: %q version %d: a scan found %d documents, the columns hold %d", name, v, rows, tb.rows)
		}
		tb.rows = rows
		var need int64
		for _, col := range cols {
			need += col.size
		}
		c.evict(need, tb, fields)
		if c.used+need > c.budget {
			for _, f := range missing {
				tb.noFit[f] = true
			}
			return nil, nil
		}
		for _, col := range cols {
			c.tick++
			col.lastUse = c.tick
			tb.cols[col.field] = col
			c.used += col.size
		}
	}
	byField := make(map[string]*column, len(cols))
	for _, col := range cols {
		byField[col.field] = col
	}
	out := &Set{fields: fields, rows: rows, cols: make([]*column, len(fields))}
	for i, f := range fields {
		col := byField[f]
		if col == nil && tb != nil {
			col = tb.cols[f]
		}
		if col == nil {
			return nil, nil // not reached: evict keeps the request's fields
		}
		out.cols[i] = col
	}
	return out, nil
}

// lookup returns the Set when every field is held; else the missing fields
// (nil when they cannot or may not be built).
func (c *Cache) lookup(name string, v uint64, fields []string, wantedOnly bool) (*Set, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	tb := c.tableFor(name, v)
	if tb == nil {
		return nil, nil
	}
	var missing []string
	cols := make([]*column, len(fields))
	for i, f := range fields {
		if wantedOnly && !tb.wanted[f] {
			return nil, nil
		}
		if cols[i] = tb.cols[f]; cols[i] == nil {
			if tb.noFit[f] {
				return nil, nil
			}
			missing = append(missing, f)
		}
	}
	if missing != nil {
		return nil, missing
	}
	for _, col := range cols {
		c.tick++
		col.lastUse = c.tick
	}
	return &Set{fields: fields, rows: tb.rows, cols: cols}, nil
}

// evict drops least recently used columns (other than keep's fields of
// tb) until need more bytes fit the budget. Called with mu.
func (c *Cache) evict(need int64, tb *table, keep []string) {
	for c.used+need > c.budget {
		var victim *column
		var vt *table
		for _, t := range c.tables {
			for f, col := range t.cols {
				if t == tb && contains(keep, f) {
					continue
				}
				if victim == nil || col.lastUse < victim.lastUse {
					victim, vt = col, t
				}
			}
		}
		if victim == nil {
			return
		}
		delete(vt.cols, victim.field)
		c.used -= victim.size
		c.evictions.Add(1)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
