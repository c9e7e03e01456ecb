package exec

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/query"
)

// The plan cache keeps, per collection and query shape (the filter's field
// names, operators and value types, and the collation), the plan a trial
// chose. A collection's entries are dropped when its indexes change
// (created, dropped, finished building, or turned multikey) and an entry is
// replanned once the collection's document count has moved by a tenth
// (at least planCacheWrites documents) since the trial. planCacheClear
// and $planCacheStats read and clear it.

// planCacheWrites is the least change in document count that replans.
const planCacheWrites = 1000

// planCacheMaxEntries bounds a collection's entries (MongoDB bounds its
// cache by size too); beyond it the collection's entries are dropped.
const planCacheMaxEntries = 5000

type planCacheEntry struct {
	plan    string // planID of the winner
	summary string
	works   int64
	docs    int64 // the collection's documents at the trial
	query   bson.Doc
	created time.Time
	hits    int64
}

type collPlans struct {
	sig     string // the index set the entries were chosen among
	entries map[string]*planCacheEntry
}

// planCache is safe for concurrent use; the zero value is empty.
type planCache struct {
	mu    sync.Mutex
	colls map[[16]byte]*collPlans
}

// PlanCacheKey is a query's shape.
func PlanCacheKey(filter bson.Doc, opts *query.Options) string {
	var sb strings.Builder
	appendShape(&sb, filter, false, 0)
	if c := QueryCollation(opts); c != nil {
		var b bson.Builder
		c.AppendSpec(&b, "collation")
		sb.WriteString(" collation:")
		sb.WriteString(b.Finish().String())
	}
	return sb.String()
}

// indexSignature names coll's indexes and their states.
func indexSignature(coll *catalog.Collection) string {
	var sb strings.Builder
	for _, ix := range coll.Indexes {
		sb.WriteString(ix.Name)
		sb.WriteString(map[bool]string{false: "/0", true: "/1"}[ix.Ready])
		sb.WriteString(map[bool]string{false: "/0", true: "/1"}[ix.Multikey])
		fmt.Fprintf(&sb, "/%x;", ix.NumTypes)
	}
	return sb.String()
}

// current returns coll's entries, emptied when its indexes changed.
func (c *planCache) current(coll *catalog.Collection, create bool) *collPlans {
	cp := c.colls[coll.UUID]
	sig := indexSignature(coll)
	if cp != nil && cp.sig != sig {
		cp = nil
		delete(c.colls, coll.UUID)
	}
	if cp == nil && create {
		if c.colls == nil {
			c.colls = make(map[[16]byte]*collPlans)
		}
		cp = &collPlans{sig: sig, entries: make(map[string]*planCacheEntry)}
		c.colls[coll.UUID] = cp
	}
	return cp
}

// lookup returns the cached winner's planID ("" when none or stale).
func (c *planCache) lookup(coll *catalog.Collection, key string, docs int64) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	cp := c.current(coll, false)
	if cp == nil {
		return ""
	}
	e := cp.entries[key]
	if e == nil {
		return ""
	}
	if d := docs - e.docs; max(d, -d) >= max(planCacheWrites, e.docs/10) {
		delete(cp.entries, key)
		return ""
	}
	e.hits++
	return e.plan
}

func (c *planCache) store(coll *catalog.Collection, key string, docs int64, e planCacheEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cp := c.current(coll, true)
	if len(cp.entries) >= planCacheMaxEntries {
		clear(cp.entries)
	}
	e.docs, e.created = docs, time.Now()
	e.query = append(bson.Doc(nil), e.query...)
	cp.entries[key] = &e
}

// Clear drops coll's entries (of one shape when key is not "").
func (c *planCache) Clear(coll *catalog.Collection, key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cp := c.colls[coll.UUID]
	if cp == nil {
		return
	}
	if key == "" {
		delete(c.colls, coll.UUID)
		return
	}
	delete(cp.entries, key)
}

// Stats describes coll's current entries as $planCacheStats documents.
func (c *planCache) Stats(coll *catalog.Collection, host string) []bson.Doc {
	c.mu.Lock()
	defer c.mu.Unlock()
	cp := c.current(coll, false)
	if cp == nil {
		return nil
	}
	keys := make([]string, 0, len(cp.entries))
	for k := range cp.entries {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var out []bson.Doc
	for _, k := range keys {
		e := cp.entries[k]
		h := fnv.New32a()
		h.Write([]byte(k))
		hash := fmt.Sprintf("%08X", h.Sum32())
		var b bson.Builder
		b.AppendString("namespace", coll.Namespace())
		b.AppendString("queryHash", hash)
		b.AppendString("planCacheKey", hash)
		b.AppendString("planCacheShapeHash", hash)
		b.AppendBool("isActive", true)
		b.AppendInt64("works", e.works)
		b.AppendDateTime("timeOfCreation", e.created.UnixMilli())
		b.StartDocument("createdFromQuery")
		b.AppendDocument("query", e.query)
		b.End()
		b.StartDocument("cachedPlan")
		b.AppendString("stage", e.summary)
		b.AppendString("indexes", e.plan)
		b.End()
		b.AppendInt64("hits", e.hits)
		b.AppendString("host", host)
		out = append(out, b.Finish())
	}
	return out
}
