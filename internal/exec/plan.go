package exec

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

// Plan is how a query reads a collection: a scan of the data tree in _id
// order (index nil), or a scan of ranges of one secondary index, fetching
// each document by its _id.
type Plan struct {
	Index  string // index name; "" for a collection scan
	Spec   *index.Spec
	Ranges []index.KeyRange
	// dedupe is set when one document may be reached twice (multikey
	// index, or several ranges).
	Dedupe bool
	// score ranks filter plans (see choosePlanHint).
	Score int
	// sorted: the scan returns documents in the query's sort order (no
	// SORT stage); reverse walks the index backward.
	Sorted, Reverse bool
	// covered rebuilds documents from the index keys (nil: fetch each).
	Covered *coverage
	// or, when set, makes this a union of index plans (MongoDB's OR
	// stage), one per branch of the filter's $or, walked in turn and
	// deduplicated by record; the other fields are then unset.
	Or []*Plan
}

// ChoosePlanHint picks an index whose leading field the filter restricts:
// equality (a point, best when unique) over ranges. Only indexes of the
// query's collation are candidates (bounds in another string order would
// not be a superset); hidden, sparse and partial indexes are not. The chosen
// plan returns the same documents as a scan: the filter is applied to
// every fetched document. A hint naming a secondary index
// (by name or key pattern) forces a scan of that index (bounded by the
// filter where it restricts the leading field, else the whole index); the
// _id index and $natural force a collection scan.
func ChoosePlanHint(coll *catalog.Collection, filter bson.Doc, opts *query.Options, hint bson.Value) *Plan {
	if coll == nil {
		return nil
	}
	if hint.Type == bson.TypeString || (hint.Type == bson.TypeDocument && hint.Document().Len() > 0) {
		return hintedPlan(coll, filter, hint, QueryCollation(opts))
	}
	if len(filter) == 0 {
		return nil
	}
	if best := ChooseIndex(coll, filter, opts); best != nil {
		return best
	}
	return OrPlan(coll, filter, opts)
}

// ChooseIndex is choosePlan's choice among the indexes the filter's
// top-level fields (not its $or) restrict: the first of the best score.
func ChooseIndex(coll *catalog.Collection, filter bson.Doc, opts *query.Options) *Plan {
	var best *Plan
	for _, p := range IndexCandidates(coll, filter, opts) {
		if best == nil || p.Score > best.Score {
			best = p
		}
	}
	return best
}

// IndexCandidates lists one plan per index the filter's top-level fields
// (not its $or) restrict, in index order, each with its rule score.
func IndexCandidates(coll *catalog.Collection, filter bson.Doc, opts *query.Options) []*Plan {
	qc := QueryCollation(opts)
	var out []*Plan
	for _, ix := range coll.Indexes {
		if (ix.IsID() && ScansByID(coll)) || !ix.Ready {
			continue
		}
		spec, err := index.ParseCached(ix.Spec)
		if err == nil && spec.IsGeo() {
			if p := geoPlan(ix, spec, filter, qc); p != nil {
				out = append(out, p)
			}
			continue
		}
		if err != nil || !spec.Usable() || !index.SameCollation(spec.Collation, qc) {
			continue
		}
		// Under a collation, bounds are not intersected (FieldBounds
		// compares them in binary order).
		multikey := ix.Multikey || qc != nil
		var ivs []index.Interval
		var ranges []index.KeyRange
		var ok, points, second bool
		if spec.Wildcard != nil {
			var field string
			if field, ivs, ok = wildcardBounds(spec, filter); !ok {
				continue
			}
			ranges = spec.WildcardRanges(field, ivs)
			points = allPoints(ivs)
		} else {
			if ivs, ok = index.FieldBounds(filter, spec.Fields[0].Path, multikey); !ok {
				continue
			}
			points = allPoints(ivs)
			if spec.Fields[0].Hashed && !points {
				continue // a hash keeps no order
			}
			ranges = spec.KeyRanges(ivs)
			if points {
				ranges, second = spec.CompoundRanges(ivs, filter, multikey)
			}
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
		out = append(out, &Plan{Index: ix.Name, Spec: spec, Ranges: ranges, Dedupe: ix.Multikey || len(ranges) > 1 || spec.Wildcard != nil, Score: score})
	}
	return out
}

// geoPlan reads a geo index (geo field first) for a $geoWithin or
// $geoIntersects on its field: the ranges of the cells covering the
// region (2dsphere) or of the grid cells of its box (2d). The index holds
// every document with a geometry there, and no other document can match.
func geoPlan(ix catalog.Index, spec *index.Spec, filter bson.Doc, qc *query.Collation) *Plan {
	if (spec.Geo != nil && spec.Geo.Field != 0) || spec.Hidden || spec.Partial != nil || !index.SameCollation(spec.Collation, qc) {
		return nil
	}
	region, ok := query.GeoRegion(filter, spec.Fields[0].Path)
	if !ok {
		return nil
	}
	var ranges []index.KeyRange
	if spec.Flat != nil {
		// A 2d index serves the flat shapes and $centerSphere on legacy
		// pairs: the grid cells of the region's box.
		lo, hi, ok := region.Bounds()
		if !ok {
			return nil
		}
		ranges = spec.FlatKeyRanges(lo, hi)
	} else if ranges, ok = index.GeoKeyRanges(region); !ok {
		return nil
	}
	return &Plan{Index: ix.Name, Spec: spec, Ranges: ranges, Dedupe: true, Score: 1}
}

func allPoints(ivs []index.Interval) bool {
	for _, iv := range ivs {
		if !iv.Point() {
			return false
		}
	}
	return true
}

// wildcardBounds picks the first field of the filter a wildcard index
// answers, with its bounds (treated as multikey: the index always may be).
// Equality with a document is not indexed (only leaf values are).
func wildcardBounds(spec *index.Spec, filter bson.Doc) (string, []index.Interval, bool) {
	for _, f := range index.FilterFields(filter) {
		if !spec.Wildcard.CanAnswer(f) {
			continue
		}
		ivs, ok := index.FieldBounds(filter, f, true)
		if !ok {
			continue
		}
		docs := false
		for _, iv := range ivs {
			docs = docs || iv.Lo.Type == bson.TypeDocument || iv.Hi.Type == bson.TypeDocument
		}
		if !docs {
			return f, ivs, true
		}
	}
	return "", nil, false
}

// WalkState is where an index walk stopped, so a cursor can resume.
type WalkState struct {
	rng     int
	branch  int // the branch of a union plan
	lastKey []byte
	started bool
	seen    map[string]struct{}
	// cover and coverBuf build the documents rebuilt from keys.
	cover    bson.Builder
	coverBuf []byte
	// keys and docs count index entries and documents examined.
	Keys, Docs int64
}

// WalkIndex visits, from st onwards, the documents an index plan reaches,
// calling fn with each (its _id key and document). fn returns false to stop
// before the document is consumed; walkIndex then returns done=false and st
// still points before that document. A union plan walks its branches in
// turn.
func WalkIndex(ctx context.Context, tx *kv.Tx, coll *catalog.Collection, data *kv.Tree, p *Plan, st *WalkState, fn func(idKey []byte, doc bson.Doc) (bool, error)) (done bool, err error) {
	if p.Or == nil {
		return walkBranch(ctx, tx, coll, data, p, st, fn)
	}
	for ; st.branch < len(p.Or); st.branch, st.rng, st.started = st.branch+1, 0, false {
		if done, err := walkBranch(ctx, tx, coll, data, p.Or[st.branch], st, fn); err != nil || !done {
			return false, err
		}
	}
	return true, nil
}

// walkBranch is walkIndex for a plan over one index.
func walkBranch(ctx context.Context, tx *kv.Tx, coll *catalog.Collection, data *kv.Tree, p *Plan, st *WalkState, fn func(idKey []byte, doc bson.Doc) (bool, error)) (done bool, err error) {
	it, err := tx.Tree(coll.IndexTree(p.Index))
	if err != nil {
		return false, mongoerr.New(mongoerr.QueryPlanKilled, "query plan killed :: caused by :: index '%s' dropped", p.Index)
	}
	cur := it.Cursor()
	cv := p.Covered
	if cv != nil {
		if ix := indexNamed(coll, p.Index); ix == nil || ix.Multikey || (cv.numAs != nil && !bytes.Equal(ix.NumTypes, cv.numSets)) {
			cv = nil // an array, or another numeric type, arrived between batches
		}
	}
	n := 0
	for ; st.rng < len(p.Ranges); st.rng, st.started = st.rng+1, false {
		var k, v []byte
		var r index.KeyRange
		if p.Reverse {
			r = p.Ranges[len(p.Ranges)-1-st.rng]
			k, v = seekRangeBackward(cur, r, st)
		} else {
			r = p.Ranges[st.rng]
			k, v = seekRangeForward(cur, r, st)
		}
		for k != nil && r.BeforeEnd(k) && r.PastStart(k) {
			if n++; n&255 == 0 {
				if err := ctx.Err(); err != nil {
					return false, mongoerr.FromContext(err)
				}
			}
			st.Keys++
			if p.Dedupe {
				if _, dup := st.seen[string(v)]; dup {
					st.lastKey, st.started = append(st.lastKey[:0], k...), true
					k, v = step(cur, p.Reverse)
					continue
				}
			}
			var doc bson.Doc
			covered := false
			if cv != nil {
				if doc, covered = cv.doc(&st.cover, st.coverBuf, k, v); covered {
					st.coverBuf = doc
				}
			}
			if !covered {
				d, err := data.Get(v)
				if err != nil {
					return false, fmt.Errorf("fetching from %s: %w", coll.Namespace(), err)
				}
				if d == nil {
					return false, fmt.Errorf("index %s of %s has an entry for a missing document", p.Index, coll.Namespace())
				}
				doc = bson.Doc(d)
				st.Docs++
			}
			ok, err := fn(v, doc)
			if err != nil || !ok {
				return false, err
			}
			if p.Dedupe {
				if st.seen == nil {
					st.seen = make(map[string]struct{})
				}
				st.seen[string(v)] = struct{}{}
			}
			st.lastKey, st.started = append(st.lastKey[:0], k...), true
			k, v = step(cur, p.Reverse)
		}
		if err := cur.Err(); err != nil {
			return false, err
		}
	}
	return true, nil
}

func step(cur *kv.Cursor, reverse bool) ([]byte, []byte) {
	if reverse {
		return cur.Prev()
	}
	return cur.Next()
}

// seekRangeForward positions at the first key of r (or after the last key
// returned).
func seekRangeForward(cur *kv.Cursor, r index.KeyRange, st *WalkState) ([]byte, []byte) {
	if st.started {
		k, v := cur.Seek(st.lastKey)
		if k != nil && bytes.Equal(k, st.lastKey) {
			k, v = cur.Next()
		}
		return k, v
	}
	if r.All {
		return cur.First()
	}
	k, v := cur.Seek(r.Start)
	for k != nil && !r.PastStart(k) {
		k, v = cur.Next()
	}
	return k, v
}

// seekRangeBackward positions at the last key of r (or before the last key
// returned).
func seekRangeBackward(cur *kv.Cursor, r index.KeyRange, st *WalkState) ([]byte, []byte) {
	if st.started {
		k, v := cur.SeekLE(st.lastKey)
		if k != nil && bytes.Equal(k, st.lastKey) {
			k, v = cur.Prev()
		}
		return k, v
	}
	if r.All {
		return cur.Last()
	}
	var k, v []byte
	end := r.End
	if r.EndInclusivePrefix {
		end = index.PrefixEnd(r.End)
	}
	if end == nil {
		k, v = cur.Last()
	} else {
		k, v = cur.SeekLE(end)
	}
	for k != nil && !r.BeforeEnd(k) {
		k, v = cur.Prev()
	}
	return k, v
}

// hintedPlan resolves a hint to a plan (nil: collection scan).
func hintedPlan(coll *catalog.Collection, filter bson.Doc, hint bson.Value, qc *query.Collation) *Plan {
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
		if (ix.IsID() && ScansByID(coll)) || !ix.Ready {
			return nil
		}
		spec, err := index.ParseCached(ix.Spec)
		if err != nil {
			return nil
		}
		p := &Plan{Index: ix.Name, Spec: spec, Dedupe: ix.Multikey}
		if spec.Text != nil || spec.IsGeo() || spec.Column != nil {
			// A text index serves $text only, a 2dsphere index geo
			// queries, a column store aggregations' column scans.
			return nil
		}
		if spec.Wildcard != nil {
			field, ivs, ok := wildcardBounds(spec, filter)
			if !ok {
				return nil // nothing to look up: a collection scan
			}
			p.Ranges, p.Dedupe = spec.WildcardRanges(field, ivs), true
			return p
		}
		if !index.SameCollation(spec.Collation, qc) {
			// Bounds in the index's string order would not be a
			// superset of the query's matches: scan it all.
			p.Ranges = []index.KeyRange{{All: true}}
			return p
		}
		if ivs, ok := index.FieldBounds(filter, spec.Fields[0].Path, ix.Multikey || qc != nil); ok && !spec.Fields[0].Hashed {
			p.Ranges = spec.KeyRanges(ivs)
			p.Dedupe = p.Dedupe || len(ivs) > 1
		} else {
			p.Ranges = []index.KeyRange{{All: true}}
		}
		return p
	}
	return nil
}

// plainSortKeys reads a sort of plain fields ({a: 1, b: -1}); ok is false
// for $natural and $meta sorts.
func plainSortKeys(sortDoc bson.Doc) ([]index.SortKey, bool) {
	var keys []index.SortKey
	it := sortDoc.Iter()
	for it.Next() {
		e := it.Element()
		if e.Key == "$natural" || !e.Value.IsNumber() {
			return nil, false
		}
		f, _ := e.Value.AsFloat64()
		keys = append(keys, index.SortKey{Path: e.Key, Desc: f < 0})
	}
	return keys, len(keys) > 0
}

// ChoosePlanFind is the planner for find: the filter's plan p, or, when
// the query sorts on plain fields, an index scan that returns the
// documents in sort order (no SORT stage), forward or backward. The rule,
// in place of MongoDB's trial race: an index that both bounds the filter
// and provides the sort wins; else an equality plan (points) with a SORT;
// else an index scan in sort order (bounded by the filter when it can be);
// else the filter's range plan or a collection scan with a SORT.
func ChoosePlanFind(coll *catalog.Collection, spec *FindSpec, p *Plan) *Plan {
	if coll == nil || spec.Sort == nil || spec.Sort.Natural() != 0 || spec.Hint.Type != 0 {
		return p
	}
	keys, ok := plainSortKeys(spec.SortDoc)
	if !ok {
		return p
	}
	qc := QueryCollation(spec.Opts)
	var bounded, full *Plan
	for _, ix := range coll.Indexes {
		if (ix.IsID() && ScansByID(coll)) || !ix.Ready || ix.Multikey {
			continue
		}
		s, err := index.ParseCached(ix.Spec)
		if err != nil || !s.Usable() || !index.SameCollation(s.Collation, qc) {
			continue
		}
		var ivs []index.Interval
		bounds := false
		if len(spec.FilterDoc) > 0 {
			ivs, bounds = index.FieldBounds(spec.FilterDoc, s.Fields[0].Path, qc != nil)
		}
		pinned := 0
		if bounds && len(ivs) == 1 && ivs[0].Point() {
			pinned = 1
		}
		reverse, ok := s.ProvidesSort(keys, pinned)
		if !ok && pinned == 1 {
			reverse, ok = s.ProvidesSort(keys, 0)
		}
		if !ok {
			continue
		}
		c := &Plan{Index: ix.Name, Spec: s, Sorted: true, Reverse: reverse}
		if bounds {
			points := true
			for _, iv := range ivs {
				points = points && iv.Point()
			}
			c.Ranges = s.KeyRanges(ivs)
			if points {
				c.Ranges, _ = s.CompoundRanges(ivs, spec.FilterDoc, false)
			}
			c.Dedupe = len(c.Ranges) > 1
			if bounded == nil {
				bounded = c
			}
		} else {
			c.Ranges = []index.KeyRange{{All: true}}
			if ne, ok := index.NeBounds(spec.FilterDoc, s.Fields[0].Path); ok {
				c.Ranges = s.KeyRanges(ne) // still a full scan to the planner
				c.Dedupe = len(c.Ranges) > 1
			}
			if full == nil {
				full = c
			}
		}
	}
	switch {
	case bounded != nil:
		return bounded
	case p != nil && p.Score >= 2:
		return p
	case full != nil:
		return full
	}
	return p
}

// QueryCollation is the query's collation (nil: binary).
func QueryCollation(opts *query.Options) *query.Collation {
	if opts == nil {
		return nil
	}
	return opts.Collation
}
