package timeseries

import (
	"bytes"
	"fmt"
	"sort"
	"sync"

	"github.com/cairndb/cairn/bson"
)

// Store is the buckets collection inside one write transaction.
type Store interface {
	// Get returns the bucket with _id id (nil when there is none).
	Get(id [12]byte) (bson.Doc, error)
	// Insert stores a new bucket.
	Insert(doc bson.Doc) error
	// Replace stores updated in place of old (same _id).
	Replace(id [12]byte, old, updated bson.Doc) error
	// Reopen returns the _ids of some buckets with meta value meta
	// (Type 0: none) whose span may hold time t (ms) and that are not
	// full: mongod 7.0's query for an archived bucket to reopen.
	Reopen(o *Options, meta bson.Value, t int64) ([][12]byte, error)
}

// Catalog remembers, per buckets collection and meta value, the buckets
// last written (hints checked against the stored buckets: see the
// package documentation). It is safe for concurrent use.
//
// The newest bucket of a meta value is kept decoded with the document it
// was written as (up to cacheLimit bytes in all), so that the next insert
// that finds the same document stored (compared byte for byte: another
// writer's change is seen) grows a copy of it instead of decoding the
// document again.
type Catalog struct {
	mu     sync.Mutex
	colls  map[[16]byte]*collHints
	cached int // estimated bytes of the kept buckets
}

type collHints struct {
	byMeta map[string][]hint
	cached int
}

// hint is a bucket that measurements may join.
type hint struct {
	id    [12]byte
	start int64
	// b, when set, is the bucket decoded from doc, its stored form.
	b   *Bucket
	doc bson.Doc
}

// cacheLimit bounds the decoded buckets a catalog keeps.
const cacheLimit = 64 << 20

func (h *hint) cost() int {
	if h.b == nil {
		return 0
	}
	return 3 * len(h.doc)
}

// Hints kept per meta value, and meta values per collection (beyond it
// the collection's hints start again: buckets are then fuller than they
// could be, never wrong).
const (
	hintsPerMeta = 8
	maxMetas     = 200000
)

// NewCatalog returns an empty catalog.
func NewCatalog() *Catalog { return &Catalog{colls: map[[16]byte]*collHints{}} }

// Forget drops what the catalog remembers of a buckets collection
// (dropped, or its bucketing changed).
func (c *Catalog) Forget(uuid [16]byte) {
	c.mu.Lock()
	if ch := c.colls[uuid]; ch != nil {
		c.cached -= ch.cached
	}
	delete(c.colls, uuid)
	c.mu.Unlock()
}

func (c *Catalog) hints(uuid [16]byte, meta string) []hint {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := c.colls[uuid]
	if ch == nil {
		return nil
	}
	return append([]hint(nil), ch.byMeta[meta]...)
}

// remember replaces the hints of meta; the decoded buckets among them
// are kept while the catalog has room.
func (c *Catalog) remember(uuid [16]byte, meta string, hs []hint) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := c.colls[uuid]
	if ch == nil || len(ch.byMeta) >= maxMetas {
		if ch != nil {
			c.cached -= ch.cached
		}
		ch = &collHints{byMeta: map[string][]hint{}}
		c.colls[uuid] = ch
	}
	for _, h := range ch.byMeta[meta] {
		ch.cached -= h.cost()
		c.cached -= h.cost()
	}
	for i := range hs {
		if hs[i].b == nil {
			continue
		}
		if c.cached+hs[i].cost() > cacheLimit {
			hs[i].b, hs[i].doc = nil, nil
			continue
		}
		ch.cached += hs[i].cost()
		c.cached += hs[i].cost()
	}
	ch.byMeta[meta] = hs
}

// working is a bucket read or opened by one insert.
type working struct {
	b     *Bucket
	old   bson.Doc // nil: new
	dirty bool
}

// Insert puts measurements (from Prepare) into buckets of the buckets
// collection uuid through st, reading and writing each bucket once.
func (c *Catalog) Insert(st Store, uuid [16]byte, o *Options, ms []Measurement) error {
	// Group by meta value, in order of first appearance; within a group
	// the measurements keep their order.
	groups := map[string][]int{}
	var order []string
	for i, m := range ms {
		if _, ok := groups[m.MetaKey]; !ok {
			order = append(order, m.MetaKey)
		}
		groups[m.MetaKey] = append(groups[m.MetaKey], i)
	}
	for _, key := range order {
		if err := c.insertGroup(st, uuid, o, key, ms, groups[key]); err != nil {
			return err
		}
	}
	return nil
}

func (c *Catalog) insertGroup(st Store, uuid [16]byte, o *Options, key string, ms []Measurement, idx []int) error {
	hs := c.hints(uuid, key)
	buckets := make([]*working, len(hs)) // loaded on first use
	load := func(i int) (*working, error) {
		if buckets[i] != nil {
			return buckets[i], nil
		}
		doc, err := st.Get(hs[i].id)
		if err != nil {
			return nil, err
		}
		w := &working{}
		if doc != nil && hs[i].b != nil && bytes.Equal(doc, hs[i].doc) {
			w.b, w.old = hs[i].b.clone(), doc
		} else if doc != nil {
			b, err := Decode(o, doc)
			if err != nil || !bson.Equal(b.Meta, ms[idx[0]].Meta) {
				doc = nil // not a bucket this insert may grow
			} else {
				w.b, w.old = b, doc
			}
		}
		buckets[i] = w
		return w, nil
	}
	for _, mi := range idx {
		m := ms[mi]
		size := MeasurementSize(m)
		var into *working
		for i := range hs {
			if m.Time < hs[i].start || m.Time >= hs[i].start+o.MaxSpan*1000 {
				continue
			}
			w, err := load(i)
			if err != nil {
				return err
			}
			if w.b == nil || !w.b.Holds(o, m.Time) || w.b.Count >= MaxCount || (w.b.Count > 0 && w.b.Size()+size > MaxSize) {
				continue
			}
			into = w
			break
		}
		if into == nil {
			// No remembered bucket: look for one to reopen.
			ids, err := st.Reopen(o, m.Meta, m.Time)
			if err != nil {
				return err
			}
			for _, id := range ids {
				known := false
				for _, h := range hs {
					known = known || h.id == id
				}
				if known {
					continue
				}
				doc, err := st.Get(id)
				if err != nil {
					return err
				}
				if doc == nil {
					continue
				}
				b, err := Decode(o, doc)
				if err != nil || !bson.Equal(b.Meta, m.Meta) || !b.Holds(o, m.Time) || b.Count >= MaxCount || b.Size()+size > MaxSize {
					continue
				}
				into = &working{b: b, old: doc}
				hs = append([]hint{{id: b.ID, start: b.Start}}, hs...)
				buckets = append([]*working{into}, buckets...)
				break
			}
		}
		if into == nil {
			into = &working{b: NewBucket(o, m.Meta, m.Time)}
			hs = append([]hint{{id: into.b.ID, start: into.b.Start}}, hs...)
			buckets = append([]*working{into}, buckets...)
		}
		into.b.Add(o, m)
		into.dirty = true
	}
	// The newest buckets first; keep the few that still have room.
	var keep []hint
	for i, w := range buckets {
		if w != nil && w.dirty {
			doc := w.b.Encode(o)
			hs[i].b, hs[i].doc = w.b, doc // not grown again: the next insert clones it
			var err error
			if w.old == nil {
				err = st.Insert(doc)
			} else {
				err = st.Replace(w.b.ID, w.old, doc)
			}
			if err != nil {
				return fmt.Errorf("timeseries: writing bucket %x: %w", w.b.ID, err)
			}
		}
		if w != nil && w.b == nil {
			continue // gone
		}
		if w != nil && w.b.Count >= MaxCount {
			continue // full
		}
		if len(keep) < hintsPerMeta {
			keep = append(keep, hs[i])
		}
	}
	// Newest start first, so in-order measurements find their bucket at
	// once.
	sort.SliceStable(keep, func(a, b int) bool { return keep[a].start > keep[b].start })
	c.remember(uuid, key, keep)
	return nil
}
