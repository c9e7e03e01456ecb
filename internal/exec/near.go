package exec

// $near, $nearSphere and $geoNear: documents in order of distance from a
// point, read through a geo index.
//
// The query needs a geo index on its field (291 otherwise, as mongod): a
// 2dsphere index for a GeoJSON point, a 2d index for planar distances
// from a legacy pair ($near), either for spherical distances from a legacy
// pair ($nearSphere). When the index starts with the geo field, the
// candidates come from it: with a $maxDistance, the index ranges of that
// cap (2dsphere: the cells covering it; 2d: the grid cells of its box);
// with a limit and no maximum, ranges of growing radius (four times wider
// each time) until they hold enough answers, since every answer nearer
// than the radius is then among them; otherwise every indexed document.
// Each candidate's distance is computed exactly (the nearest part of its
// geometries), the rest of the filter applied, and the answers sorted by
// distance, nearest first.

import (
	"bytes"
	"context"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/golang/geo/r2"
	"github.com/golang/geo/s1"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/agg"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/geo"
	"github.com/cairndb/cairn/internal/index"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
	"github.com/cairndb/cairn/kv"
)

func noGeoIndex() error {
	return mongoerr.New(mongoerr.NoQueryExecutionPlans, "error processing query: planner returned error :: caused by :: unable to find index for $geoNear query")
}

// SplitNear takes a $near or $nearSphere out of a filter (at the top level
// or in a top-level $and): the rest is the filter the matcher applies.
func SplitNear(filter bson.Doc) (bson.Doc, *NearClause, error) {
	var clause *NearClause
	var b bson.Builder
	changed := false
	it := filter.Iter()
	for it.Next() {
		e := it.Element()
		if e.Key == "$and" && e.Value.Type == bson.TypeArray {
			// A top-level $and: take the clause out of its documents.
			var ab bson.Builder
			ab.StartArray("$and")
			n := 0
			ai := e.Value.Document().Iter()
			for ai.Next() {
				sub := ai.Element().Value
				if sub.Type == bson.TypeDocument {
					rest, c, err := SplitNear(sub.Document())
					if err != nil {
						return nil, nil, err
					}
					if c != nil {
						if clause != nil {
							return nil, nil, mongoerr.New(mongoerr.BadValue, "Too many geoNear expressions")
						}
						clause, changed = c, true
						sub = bson.Value{Type: bson.TypeDocument, Data: rest}
					}
				}
				ab.AppendValue(bson.Index(n), sub)
				n++
			}
			ab.End()
			and, _ := ab.Finish().Lookup("$and")
			b.AppendValue("$and", and)
			continue
		}
		if e.Value.Type == bson.TypeDocument && !strings.HasPrefix(e.Key, "$") {
			ops := e.Value.Document()
			if _, ok := nearOperator(ops); ok {
				if clause != nil {
					return nil, nil, mongoerr.New(mongoerr.BadValue, "Too many geoNear expressions")
				}
				c, rest, err := parseNearOps(e.Key, ops)
				if err != nil {
					return nil, nil, err
				}
				clause, changed = c, true
				if rest.Len() > 0 {
					b.AppendDocument(e.Key, rest)
				}
				continue
			}
		}
		b.AppendElement(e)
	}
	if !changed {
		return filter, nil, nil
	}
	return b.Finish(), clause, nil
}

func nearOperator(ops bson.Doc) (string, bool) {
	for _, name := range []string{"$near", "$nearSphere"} {
		if _, ok := ops.Lookup(name); ok {
			return name, true
		}
	}
	return "", false
}

// parseNearOps reads {$near|$nearSphere: point, $maxDistance, $minDistance}
// on path and returns the operators left for the matcher.
func parseNearOps(path string, ops bson.Doc) (*NearClause, bson.Doc, error) {
	c := &NearClause{Path: path, MaxDist: -1}
	var point bson.Value
	var op string
	var maxV, minV bson.Value
	var rest bson.Builder
	it := ops.Iter()
	for it.Next() {
		e := it.Element()
		switch e.Key {
		case "$near", "$nearSphere":
			op, point = e.Key, e.Value
		case "$maxDistance":
			maxV = e.Value
		case "$minDistance":
			minV = e.Value
		default:
			rest.AppendElement(e)
		}
	}
	if point.Type == bson.TypeDocument {
		d := point.Document()
		if g, ok := d.Lookup("$geometry"); ok {
			if err := c.SetGeoJSONCenter(op, g); err != nil {
				return nil, nil, err
			}
			// {$near: {$geometry, $maxDistance, $minDistance}}
			if v, ok := d.Lookup("$maxDistance"); ok {
				maxV = v
			}
			if v, ok := d.Lookup("$minDistance"); ok {
				minV = v
			}
		} else if t, ok := d.Lookup("type"); ok && t.Type == bson.TypeString {
			if err := c.SetGeoJSONCenter(op, point); err != nil {
				return nil, nil, err
			}
		} else if err := c.SetLegacyCenter(op, point); err != nil {
			return nil, nil, err
		}
	} else if err := c.SetLegacyCenter(op, point); err != nil {
		return nil, nil, err
	}
	if err := c.SetBounds(maxV, minV); err != nil {
		return nil, nil, err
	}
	return c, rest.Finish(), nil
}

// NearHit is one answer with its distance.
type NearHit struct {
	key  []byte
	Doc  bson.Doc
	Dist float64    // radians or coordinate units (see nearClause)
	Loc  bson.Value // the nearest geometry ($geoNear's includeLocs)
}

// NearSearch runs a near query in tx: the documents of coll matching
// filter, nearest first, at least want of them when want > 0 (all
// otherwise).
//
// st counts the index entries and documents examined.
func NearSearch(ctx context.Context, tx *kv.Tx, coll *catalog.Collection, nc *NearClause, filter *query.Filter, want int64, st *WalkState) ([]NearHit, error) {
	if coll == nil {
		return nil, nil
	}
	ix, spec, err := NearIndex(coll, nc)
	if err != nil {
		return nil, err
	}
	data, err := DataTree(tx, coll)
	if err != nil {
		return nil, err
	}
	gf := spec.Fields[geoFieldOf(spec)]
	seen := map[string]bool{}
	var hits []NearHit
	var mem int64
	examine := func(key, raw []byte) error {
		if seen[string(key)] {
			return nil
		}
		seen[string(key)] = true
		st.Docs++
		h, ok := nearDistance(raw, gf.Parts, nc)
		if !ok {
			return nil
		}
		var md query.MatchDetails
		if ok, err := Matches(filter, bson.Doc(raw), &md); err != nil || !ok {
			return err
		}
		h.key, h.Doc = slices.Clone(key), slices.Clone(bson.Doc(raw))
		if mem += int64(len(key) + len(raw) + 64); mem > agg.DefaultMemoryLimit {
			// The answers are sorted in memory: bound them as a blocking
			// sort is bounded.
			return mongoerr.New(mongoerr.QueryExceededMemoryLimitNoDiskUseAllowed, "Exceeded memory limit for $near/$geoNear: its answers pass 100 MiB; bound it with $maxDistance or a limit")
		}
		hits = append(hits, h)
		return nil
	}
	fullScan := func() error {
		clear(seen)
		hits, mem = hits[:0], 0
		cur := data.Cursor()
		n := 0
		for k, v := cur.First(); k != nil; k, v = cur.Next() {
			if n++; n&255 == 0 {
				if err := ctx.Err(); err != nil {
					return mongoerr.FromContext(err)
				}
			}
			if err := examine(k, v); err != nil {
				return err
			}
		}
		return cur.Err()
	}
	// start and whole: the first radius of a growing search, and one
	// that reaches everything.
	start, whole := 1000/geo.EarthRadiusMeters, math.Pi
	if nc.Flat {
		side := spec.Flat.Grid.Max - spec.Flat.Grid.Min
		start, whole = side/4096, 2*side
	}
	switch {
	case geoFieldOf(spec) != 0:
		// The geo field is not the index's first: its entries are not in
		// cell order. Every document is a candidate.
		err = fullScan()
	case nc.MaxDist >= 0:
		err = coverCap(ctx, tx, coll, ix, data, nearRanges(spec, nc, nc.MaxDist), st, examine)
	case want > 0:
		err = nil
		for r := start; ; r *= 4 {
			if r >= whole {
				err = fullScan()
				break
			}
			if err = coverCap(ctx, tx, coll, ix, data, nearRanges(spec, nc, r), st, examine); err != nil {
				break
			}
			within := 0
			for _, h := range hits {
				if h.Dist <= r {
					within++
				}
			}
			if int64(within) >= want {
				break
			}
		}
	default:
		err = fullScan()
	}
	if err != nil {
		return nil, err
	}
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].Dist != hits[j].Dist {
			return hits[i].Dist < hits[j].Dist
		}
		return bytes.Compare(hits[i].key, hits[j].key) < 0
	})
	return hits, nil
}

// NearIndex finds the geo index on the clause's field: a 2dsphere index
// for a GeoJSON center, a 2d index for planar distances, either for a
// spherical query on a legacy pair.
func NearIndex(coll *catalog.Collection, nc *NearClause) (string, *index.Spec, error) {
	var found []catalog.Index
	var specs []*index.Spec
	for _, ix := range coll.Indexes {
		if !ix.Ready {
			continue
		}
		s, err := index.ParseCached(ix.Spec)
		if err != nil || !s.IsGeo() || (s.Geo == nil && !nc.Legacy) || (s.Flat == nil && nc.Flat) {
			continue
		}
		path := s.Fields[geoFieldOf(s)].Path
		if (nc.Path != "" && path != nc.Path) || (nc.Key != "" && path != nc.Key) {
			continue
		}
		found, specs = append(found, ix), append(specs, s)
	}
	switch {
	case len(found) == 0:
		return "", nil, noGeoIndex()
	case len(found) > 1 && nc.Path == "" && nc.Key == "":
		return "", nil, mongoerr.New(mongoerr.IndexNotFound, "There is more than one geo index on %s; unsure which to use for $geoNear", coll.Namespace())
	}
	if nc.Path == "" {
		nc.Path = specs[0].Fields[geoFieldOf(specs[0])].Path
	}
	return found[0].Name, specs[0], nil
}

// geoFieldOf is the position of a geo index's geo field.
func geoFieldOf(s *index.Spec) int {
	if s.Geo != nil {
		return s.Geo.Field
	}
	return 0 // a 2d field comes first
}

// nearRanges are the index ranges holding every document within r of the
// center: the cells covering the cap (2dsphere), or the grid cells of the
// box around it (2d: the square of side 2r, or the cap's longitude and
// latitude box).
func nearRanges(spec *index.Spec, nc *NearClause, r float64) []index.KeyRange {
	if spec.Geo != nil {
		ranges, _ := index.GeoKeyRanges(geo.CapRegion(nc.Center, s1.Angle(r)))
		return ranges
	}
	if nc.Flat {
		c := nc.FlatCenter
		return spec.FlatKeyRanges(r2.Point{X: c.X - r, Y: c.Y - r}, r2.Point{X: c.X + r, Y: c.Y + r})
	}
	lo, hi, _ := geo.CapRegion(nc.Center, s1.Angle(r)).Bounds()
	return spec.FlatKeyRanges(lo, hi)
}

// nearDistance measures a document: the smallest distance from the
// center to its geometries at the field, within the clause's bounds.
func nearDistance(raw []byte, parts []string, nc *NearClause) (NearHit, bool) {
	h := NearHit{Dist: math.Inf(1)}
	for _, v := range index.GeoValues(bson.Doc(raw), parts) {
		if nc.Flat {
			if p, err := geo.LegacyPoint(v); err == nil {
				if d := p.Sub(nc.FlatCenter).Norm(); d < h.Dist {
					h.Dist, h.Loc = d, v
				}
			}
			continue
		}
		sh, err := geo.ParseShape(v)
		if err != nil || !sh.Spherical() {
			continue
		}
		if d := sh.MinDistance(nc.Center).Radians(); d < h.Dist {
			h.Dist, h.Loc = d, v
		}
	}
	if h.Loc.Type == 0 || h.Dist < nc.MinDist || (nc.MaxDist >= 0 && h.Dist > nc.MaxDist) {
		return h, false
	}
	return h, true
}

// coverCap reads the index entries in ranges and examines their
// documents.
func coverCap(ctx context.Context, tx *kv.Tx, coll *catalog.Collection, ix string, data *kv.Tree, ranges []index.KeyRange, st *WalkState, examine func(key, raw []byte) error) error {
	t, err := tx.Tree(coll.IndexTree(ix))
	if err != nil {
		return mongoerr.New(mongoerr.QueryPlanKilled, "query plan killed :: caused by :: index '%s' dropped", ix)
	}
	cur := t.Cursor()
	n := 0
	for _, r := range ranges {
		for k, v := cur.Seek(r.Start); k != nil && r.BeforeEnd(k); k, v = cur.Next() {
			if n++; n&255 == 0 {
				if err := ctx.Err(); err != nil {
					return mongoerr.FromContext(err)
				}
			}
			st.Keys++
			raw, err := data.Get(v)
			if err != nil {
				return err
			}
			if raw == nil {
				continue
			}
			if err := examine(v, raw); err != nil {
				return err
			}
		}
		if err := cur.Err(); err != nil {
			return err
		}
	}
	return nil
}

// NearSource serves a find with $near or $nearSphere: the first Fill runs
// the search in one snapshot and keeps the answers; later Fills serve
// them.
type NearSource struct {
	HeldHits[NearHit]
	spec *FindSpec
	Walk WalkState
}

func NewNearSource(env *Engine, spec *FindSpec) *NearSource {
	s := &NearSource{spec: spec}
	s.Env, s.DB, s.Coll, s.Load = env, spec.DB, spec.Coll, s.run
	return s
}

func (s *NearSource) Fill(ctx context.Context, emit func(bson.Doc) bool) (bool, error) {
	var md query.MatchDetails
	return s.fill(ctx, s.spec, false, func(h *NearHit) (bson.Doc, *query.MatchDetails) { return h.Doc, &md }, emit)
}

func (s *NearSource) run(ctx context.Context, tx *kv.Tx, coll *catalog.Collection) ([]NearHit, error) {
	want := int64(0)
	if s.spec.Limit > 0 && s.spec.Sort == nil {
		want = s.spec.Skip + s.spec.Limit
	}
	hits, err := NearSearch(ctx, tx, coll, s.spec.Near, s.spec.Filter, want, &s.Walk)
	if err != nil {
		return nil, err
	}
	if srt := s.spec.Sort; srt != nil && srt.Natural() == 0 {
		// A sort re-orders the answers, as in mongod.
		sort.SliceStable(hits, func(i, j int) bool {
			return bytes.Compare(srt.Key(nil, hits[i].Doc), srt.Key(nil, hits[j].Doc)) < 0
		})
	}
	skip := min(s.spec.Skip, int64(len(hits)))
	hits = hits[skip:]
	if s.spec.Limit > 0 && int64(len(hits)) > s.spec.Limit {
		hits = hits[:s.spec.Limit]
	}
	return hits, nil
}

// AppendNearStages writes a near plan as MongoDB explains it.
func AppendNearStages(r *bson.Builder, spec *FindSpec, coll *catalog.Collection) {
	name, ixSpec, err := NearIndex(coll, spec.Near)
	if err != nil {
		r.AppendString("stage", "EOF")
		return
	}
	if ixSpec.Flat != nil {
		r.AppendString("stage", "GEO_NEAR_2D")
	} else {
		r.AppendString("stage", "GEO_NEAR_2DSPHERE")
	}
	r.AppendDocument("keyPattern", ixSpec.Key)
	r.AppendString("indexName", name)
	r.AppendInt64("indexVersion", 2)
	if spec.FilterDoc.Len() > 0 {
		r.AppendDocument("filter", spec.FilterDoc)
	}
}
