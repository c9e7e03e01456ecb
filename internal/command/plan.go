package command

import (
	"bytes"
	"context"
	"fmt"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/index"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
	"github.com/cairndb/cairn/kv"
)

// plan is how a query reads a collection: a scan of the data tree in _id
// order (index nil), or a scan of ranges of one secondary index, fetching
// each document by its _id.
type plan struct {
	index  string // index name; "" for a collection scan
	spec   *index.Spec
	ranges []index.KeyRange
	// dedupe is set when one document may be reached twice (multikey
	// index, or several ranges).
	dedupe bool
}

// choosePlan picks an index whose leading field the filter restricts:
// equality (a point, best when unique) over ranges. Queries with a
// collation, and hidden, sparse and partial indexes, use collection scans
// (bounds computed in binary order would not be a superset). The chosen
// plan returns the same documents as a scan: the filter is applied to
// every fetched document.
func choosePlan(coll *catalog.Collection, filter bson.Doc, opts *query.Options) *plan {
	return choosePlanHint(coll, filter, opts, bson.Value{})
}

// choosePlanHint is choosePlan with a hint: a hint naming a secondary index
// (by name or key pattern) forces a scan of that index (bounded by the
// filter where it restricts the leading field, else the whole index); the
// _id index and $natural force a collection scan.
func choosePlanHint(coll *catalog.Collection, filter bson.Doc, opts *query.Options, hint bson.Value) *plan {
	if coll == nil {
		return nil
	}
	if hint.Type == bson.TypeString || (hint.Type == bson.TypeDocument && hint.Document().Len() > 0) {
		return hintedPlan(coll, filter, hint)
	}
	if len(filter) == 0 || (opts != nil && opts.Collation != nil) {
		return nil
	}
	var best *plan
	bestScore := 0
	for _, ix := range coll.Indexes {
		if ix.Name == "_id_" || !ix.Ready {
			continue
		}
		spec, err := index.ParseCached(ix.Spec)
		if err != nil || !spec.Usable() {
			continue
		}
		ivs, ok := index.FieldBounds(filter, spec.Fields[0].Path, ix.Multikey)
		if !ok {
			continue
		}
		points := true
		for _, iv := range ivs {
			points = points && iv.Point()
		}
		if spec.Fields[0].Hashed && !points {
			continue // a hash keeps no order
		}
		ranges, second := spec.KeyRanges(ivs), false
		if points {
			ranges, second = spec.CompoundRanges(ivs, filter, ix.Multikey)
		}
		score := 1
		switch {
		case points && spec.Unique && len(spec.Fields) == 1:
			score = 4
		case points && second:
			score = 3
		case points:
			score = 2
		}
		if score > bestScore {
			bestScore = score
			best = &plan{index: ix.Name, spec: spec, ranges: ranges, dedupe: ix.Multikey || len(ranges) > 1}
		}
	}
	return best
}

// walkState is where an index walk stopped, so a cursor can resume.
type walkState struct {
	rng     int
	lastKey []byte
	started bool
	seen    map[string]struct{}
	// keys and docs count index entries and documents examined.
	keys, docs int64
}

// walkIndex visits, from st onwards, the documents an index plan reaches,
// calling fn with each (its _id key and document). fn returns false to stop
// before the document is consumed; walkIndex then returns done=false and st
// still points before that document.
func walkIndex(ctx context.Context, tx *kv.Tx, coll *catalog.Collection, data *kv.Tree, p *plan, st *walkState, fn func(idKey []byte, doc bson.Doc) (bool, error)) (done bool, err error) {
	it, err := tx.Tree(coll.IndexTree(p.index))
	if err != nil {
		return false, mongoerr.New(175, "query plan killed :: caused by :: index '%s' dropped", p.index)
	}
	cur := it.Cursor()
	n := 0
	for ; st.rng < len(p.ranges); st.rng, st.started = st.rng+1, false {
		r := p.ranges[st.rng]
		var k, v []byte
		if st.started {
			k, v = cur.Seek(st.lastKey)
			if k != nil && bytes.Equal(k, st.lastKey) {
				k, v = cur.Next()
			}
		} else {
			k, v = cur.Seek(r.Start)
			for k != nil && !r.PastStart(k) {
				k, v = cur.Next()
			}
		}
		for ; k != nil && r.BeforeEnd(k); k, v = cur.Next() {
			if n++; n&255 == 0 {
				if err := ctx.Err(); err != nil {
					return false, ctxErr(err)
				}
			}
			st.keys++
			if p.dedupe {
				if _, dup := st.seen[string(v)]; dup {
					st.lastKey, st.started = append(st.lastKey[:0], k...), true
					continue
				}
			}
			doc, err := data.Get(v)
			if err != nil {
				return false, fmt.Errorf("fetching from %s: %w", coll.Namespace(), err)
			}
			if doc == nil {
				return false, fmt.Errorf("index %s of %s has an entry for a missing document", p.index, coll.Namespace())
			}
			st.docs++
			ok, err := fn(v, bson.Doc(doc))
			if err != nil || !ok {
				return false, err
			}
			if p.dedupe {
				if st.seen == nil {
					st.seen = make(map[string]struct{})
				}
				st.seen[string(v)] = struct{}{}
			}
			st.lastKey, st.started = append(st.lastKey[:0], k...), true
		}
		if err := cur.Err(); err != nil {
			return false, err
		}
	}
	return true, nil
}

// hintedPlan resolves a hint to a plan (nil: collection scan).
func hintedPlan(coll *catalog.Collection, filter bson.Doc, hint bson.Value) *plan {
	for _, ix := range coll.Indexes {
		match := false
		switch hint.Type {
		case bson.TypeString:
			match = ix.Name == hint.StringValue()
		case bson.TypeDocument:
			key, ok := ix.Spec.Lookup("key")
			match = ok && bson.Equal(key, hint)
		}
		if !match {
			continue
		}
		if ix.Name == "_id_" || !ix.Ready {
			return nil
		}
		spec, err := index.ParseCached(ix.Spec)
		if err != nil {
			return nil
		}
		p := &plan{index: ix.Name, spec: spec, dedupe: ix.Multikey}
		if ivs, ok := index.FieldBounds(filter, spec.Fields[0].Path, ix.Multikey); ok && !spec.Fields[0].Hashed {
			p.ranges = spec.KeyRanges(ivs)
			p.dedupe = p.dedupe || len(ivs) > 1
		} else {
			p.ranges = []index.KeyRange{{All: true}}
		}
		return p
	}
	return nil
}
