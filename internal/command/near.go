package command

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
	"github.com/golang/geo/s2"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/agg"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/geo"
	"github.com/cairndb/cairn/internal/index"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
	"github.com/cairndb/cairn/kv"
)

// nearClause is a parsed $near, $nearSphere or $geoNear.
type nearClause struct {
	path   string
	center s2.Point
	// flat: distances are planar, in the units of legacy coordinates,
	// from flatCenter ($near or non-spherical $geoNear on a legacy pair,
	// which need a 2d index). Otherwise they are angles on the sphere,
	// in radians.
	flat       bool
	flatCenter r2.Point
	// legacy: the center is a legacy pair (a 2d index may serve a
	// spherical query then; a GeoJSON center needs a 2dsphere index).
	legacy bool
	// meters: distances are reported and bounded in meters (a GeoJSON
	// point); otherwise in radians or coordinate units.
	meters bool
	// minDist and maxDist bound the distance (radians or units; maxDist
	// < 0: none).
	minDist, maxDist float64
	// key names the index field for $geoNear's key option ("" = any).
	key string
}

// distance converts a distance to the clause's unit.
func (n *nearClause) distance(d float64) float64 {
	if n.meters {
		return d * geo.EarthRadiusMeters
	}
	return d
}

func noGeoIndex() error {
	return mongoerr.New(mongoerr.NoQueryExecutionPlans, "error processing query: planner returned error :: caused by :: unable to find index for $geoNear query")
}

// splitNear takes a $near or $nearSphere out of a filter (at the top level
// or in a top-level $and): the rest is the filter the matcher applies.
func splitNear(filter bson.Doc) (bson.Doc, *nearClause, error) {
	var clause *nearClause
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
					rest, c, err := splitNear(sub.Document())
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
func parseNearOps(path string, ops bson.Doc) (*nearClause, bson.Doc, error) {
	c := &nearClause{path: path, maxDist: -1}
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
			if err := c.setGeoJSONCenter(op, g); err != nil {
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
			if err := c.setGeoJSONCenter(op, point); err != nil {
				return nil, nil, err
			}
		} else if err := c.setLegacyCenter(op, point); err != nil {
			return nil, nil, err
		}
	} else if err := c.setLegacyCenter(op, point); err != nil {
		return nil, nil, err
	}
	if err := c.setBounds(maxV, minV); err != nil {
		return nil, nil, err
	}
	return c, rest.Finish(), nil
}

func (c *nearClause) setGeoJSONCenter(op string, g bson.Value) error {
	if g.Type != bson.TypeDocument {
		return mongoerr.New(mongoerr.BadValue, "%s requires a point, given %s", op, g.String())
	}
	sh, err := geo.ParseGeoJSON(g.Document())
	if err != nil || len(sh.Points) != 1 || len(sh.Lines)+len(sh.Polygons) > 0 {
		return mongoerr.New(mongoerr.BadValue, "invalid point in geo near query $geometry argument: %s", g.String())
	}
	c.center, c.meters = sh.Points[0], true
	return nil
}

// setLegacyCenter reads a legacy pair: planar distances with $near (a 2d
// index), spherical ones in radians with $nearSphere.
func (c *nearClause) setLegacyCenter(op string, v bson.Value) error {
	p, err := geo.LegacyPoint(v)
	if err != nil {
		return mongoerr.New(mongoerr.BadValue, "%s requires a point, given %s", op, v.String())
	}
	c.legacy, c.flatCenter = true, p
	if op == "$near" {
		c.flat = true
		return nil
	}
	if p.X < -180 || p.X > 180 || p.Y < -90 || p.Y > 90 {
		return mongoerr.New(mongoerr.BadValue, "longitude/latitude is out of bounds, lng: %g lat: %g", p.X, p.Y)
	}
	c.center = s2.PointFromLatLng(s2.LatLngFromDegrees(p.Y, p.X))
	return nil
}

func (c *nearClause) setBounds(maxV, minV bson.Value) error {
	toAngle := func(name string, v bson.Value) (float64, error) {
		f, ok := v.AsFloat64()
		if !v.IsNumber() || !ok || !(f >= 0) {
			return 0, mongoerr.New(mongoerr.BadValue, "%s must be a non-negative number", name)
		}
		if c.meters {
			return f / geo.EarthRadiusMeters, nil
		}
		return f, nil
	}
	var err error
	if maxV.Type != 0 {
		if c.maxDist, err = toAngle("$maxDistance", maxV); err != nil {
			return err
		}
	}
	if minV.Type != 0 {
		if c.minDist, err = toAngle("$minDistance", minV); err != nil {
			return err
		}
	}
	return nil
}

// nearHit is one answer with its distance.
type nearHit struct {
	key  []byte
	doc  bson.Doc
	dist float64    // radians or coordinate units (see nearClause)
	loc  bson.Value // the nearest geometry ($geoNear's includeLocs)
}

// nearSearch runs a near query in tx: the documents of coll matching
// filter, nearest first, at least want of them when want > 0 (all
// otherwise).
//
// st counts the index entries and documents examined.
func nearSearch(ctx context.Context, tx *kv.Tx, coll *catalog.Collection, nc *nearClause, filter *query.Filter, want int64, st *walkState) ([]nearHit, error) {
	if coll == nil {
		return nil, nil
	}
	ix, spec, err := nearIndex(coll, nc)
	if err != nil {
		return nil, err
	}
	data, err := dataTree(tx, coll)
	if err != nil {
		return nil, err
	}
	gf := spec.Fields[geoFieldOf(spec)]
	seen := map[string]bool{}
	var hits []nearHit
	var mem int64
	examine := func(key, raw []byte) error {
		if seen[string(key)] {
			return nil
		}
		seen[string(key)] = true
		st.docs++
		h, ok := nearDistance(raw, gf.Parts, nc)
		if !ok {
			return nil
		}
		var md query.MatchDetails
		if ok, err := matches(filter, bson.Doc(raw), &md); err != nil || !ok {
			return err
		}
		h.key, h.doc = slices.Clone(key), slices.Clone(bson.Doc(raw))
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
					return ctxErr(err)
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
	if nc.flat {
		side := spec.Flat.Grid.Max - spec.Flat.Grid.Min
		start, whole = side/4096, 2*side
	}
	switch {
	case geoFieldOf(spec) != 0:
		// The geo field is not the index's first: its entries are not in
		// cell order. Every document is a candidate.
		err = fullScan()
	case nc.maxDist >= 0:
		err = coverCap(ctx, tx, coll, ix, data, nearRanges(spec, nc, nc.maxDist), st, examine)
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
				if h.dist <= r {
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
		if hits[i].dist != hits[j].dist {
			return hits[i].dist < hits[j].dist
		}
		return bytes.Compare(hits[i].key, hits[j].key) < 0
	})
	return hits, nil
}

// nearIndex finds the geo index on the clause's field: a 2dsphere index
// for a GeoJSON center, a 2d index for planar distances, either for a
// spherical query on a legacy pair.
func nearIndex(coll *catalog.Collection, nc *nearClause) (string, *index.Spec, error) {
	var found []catalog.Index
	var specs []*index.Spec
	for _, ix := range coll.Indexes {
		if !ix.Ready {
			continue
		}
		s, err := index.ParseCached(ix.Spec)
		if err != nil || !s.IsGeo() || (s.Geo == nil && !nc.legacy) || (s.Flat == nil && nc.flat) {
			continue
		}
		path := s.Fields[geoFieldOf(s)].Path
		if (nc.path != "" && path != nc.path) || (nc.key != "" && path != nc.key) {
			continue
		}
		found, specs = append(found, ix), append(specs, s)
	}
	switch {
	case len(found) == 0:
		return "", nil, noGeoIndex()
	case len(found) > 1 && nc.path == "" && nc.key == "":
		return "", nil, mongoerr.New(mongoerr.IndexNotFound, "There is more than one geo index on %s; unsure which to use for $geoNear", coll.Namespace())
	}
	if nc.path == "" {
		nc.path = specs[0].Fields[geoFieldOf(specs[0])].Path
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
func nearRanges(spec *index.Spec, nc *nearClause, r float64) []index.KeyRange {
	if spec.Geo != nil {
		ranges, _ := index.GeoKeyRanges(geo.CapRegion(nc.center, s1.Angle(r)))
		return ranges
	}
	if nc.flat {
		c := nc.flatCenter
		return spec.FlatKeyRanges(r2.Point{X: c.X - r, Y: c.Y - r}, r2.Point{X: c.X + r, Y: c.Y + r})
	}
	lo, hi, _ := geo.CapRegion(nc.center, s1.Angle(r)).Bounds()
	return spec.FlatKeyRanges(lo, hi)
}

// nearDistance measures a document: the smallest distance from the
// center to its geometries at the field, within the clause's bounds.
func nearDistance(raw []byte, parts []string, nc *nearClause) (nearHit, bool) {
	h := nearHit{dist: math.Inf(1)}
	for _, v := range index.GeoValues(bson.Doc(raw), parts) {
		if nc.flat {
			if p, err := geo.LegacyPoint(v); err == nil {
				if d := p.Sub(nc.flatCenter).Norm(); d < h.dist {
					h.dist, h.loc = d, v
				}
			}
			continue
		}
		sh, err := geo.ParseShape(v)
		if err != nil || !sh.Spherical() {
			continue
		}
		if d := sh.MinDistance(nc.center).Radians(); d < h.dist {
			h.dist, h.loc = d, v
		}
	}
	if h.loc.Type == 0 || h.dist < nc.minDist || (nc.maxDist >= 0 && h.dist > nc.maxDist) {
		return h, false
	}
	return h, true
}

// coverCap reads the index entries in ranges and examines their
// documents.
func coverCap(ctx context.Context, tx *kv.Tx, coll *catalog.Collection, ix string, data *kv.Tree, ranges []index.KeyRange, st *walkState, examine func(key, raw []byte) error) error {
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
					return ctxErr(err)
				}
			}
			st.keys++
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

// nearSource serves a find with $near or $nearSphere: the first Fill runs
// the search in one snapshot and keeps the answers; later Fills serve
// them.
type nearSource struct {
	heldHits[nearHit]
	spec *findSpec
	walk walkState
}

func newNearSource(env *Env, spec *findSpec) *nearSource {
	s := &nearSource{spec: spec}
	s.env, s.db, s.coll, s.load = env, spec.db, spec.coll, s.run
	return s
}

func (s *nearSource) Fill(ctx context.Context, emit func(bson.Doc) bool) (bool, error) {
	var md query.MatchDetails
	return s.fill(ctx, s.spec, false, func(h *nearHit) (bson.Doc, *query.MatchDetails) { return h.doc, &md }, emit)
}

func (s *nearSource) run(ctx context.Context, tx *kv.Tx, coll *catalog.Collection) ([]nearHit, error) {
	want := int64(0)
	if s.spec.limit > 0 && s.spec.sort == nil {
		want = s.spec.skip + s.spec.limit
	}
	hits, err := nearSearch(ctx, tx, coll, s.spec.near, s.spec.filter, want, &s.walk)
	if err != nil {
		return nil, err
	}
	if srt := s.spec.sort; srt != nil && srt.Natural() == 0 {
		// A sort re-orders the answers, as in mongod.
		sort.SliceStable(hits, func(i, j int) bool {
			return bytes.Compare(srt.Key(nil, hits[i].doc), srt.Key(nil, hits[j].doc)) < 0
		})
	}
	skip := min(s.spec.skip, int64(len(hits)))
	hits = hits[skip:]
	if s.spec.limit > 0 && int64(len(hits)) > s.spec.limit {
		hits = hits[:s.spec.limit]
	}
	return hits, nil
}

// appendNearStages writes a near plan as MongoDB explains it.
func appendNearStages(r *bson.Builder, spec *findSpec, coll *catalog.Collection) {
	name, ixSpec, err := nearIndex(coll, spec.near)
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
	if spec.filterDoc.Len() > 0 {
		r.AppendDocument("filter", spec.filterDoc)
	}
}
