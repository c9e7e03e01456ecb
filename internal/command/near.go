package command

// $near, $nearSphere and $geoNear: documents in order of distance from a
// point, read through a 2dsphere index.
//
// The query needs a 2dsphere index on its field (291 otherwise, as
// mongod). When the index starts with the geo field, the candidates come
// from it: with a $maxDistance, the cells covering that cap; with a limit
// and no maximum, caps of growing radius (from about 1 km, four times
// wider each time) until the cap holds enough answers, since every answer
// nearer than the cap's radius is then among them; otherwise every
// indexed document. Each candidate's distance is computed exactly (the
// nearest part of its geometries), the rest of the filter applied, and
// the answers sorted by distance, nearest first.

import (
	"bytes"
	"context"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/golang/geo/s1"
	"github.com/golang/geo/s2"

	"github.com/cairndb/cairn/bson"
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
	// meters: distances are reported and bounded in meters (a GeoJSON
	// point); otherwise in radians (a legacy pair with $nearSphere or
	// spherical $geoNear).
	meters           bool
	minDist, maxDist s1.Angle // maxDist < 0: none
	// key names the index field for $geoNear's key option ("" = any).
	key string
}

// distance converts an angle to the clause's unit.
func (n *nearClause) distance(a s1.Angle) float64 {
	if n.meters {
		return a.Radians() * geo.EarthRadiusMeters
	}
	return a.Radians()
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

// setLegacyCenter reads a legacy pair: spherical only with $nearSphere
// (radians); $near on a legacy pair needs a 2d index, which Cairn lacks.
func (c *nearClause) setLegacyCenter(op string, v bson.Value) error {
	p, err := geo.LegacyPoint(v)
	if err != nil {
		return mongoerr.New(mongoerr.BadValue, "%s requires a point, given %s", op, v.String())
	}
	if op == "$near" {
		return noGeoIndex()
	}
	if p.X < -180 || p.X > 180 || p.Y < -90 || p.Y > 90 {
		return mongoerr.New(mongoerr.BadValue, "longitude/latitude is out of bounds, lng: %g lat: %g", p.X, p.Y)
	}
	c.center = s2.PointFromLatLng(s2.LatLngFromDegrees(p.Y, p.X))
	return nil
}

func (c *nearClause) setBounds(maxV, minV bson.Value) error {
	toAngle := func(name string, v bson.Value) (s1.Angle, error) {
		f, ok := v.AsFloat64()
		if !v.IsNumber() || !ok || !(f >= 0) {
			return 0, mongoerr.New(mongoerr.BadValue, "%s must be a non-negative number", name)
		}
		if c.meters {
			return s1.Angle(f / geo.EarthRadiusMeters), nil
		}
		return s1.Angle(f), nil
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
	dist s1.Angle
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
	gf := spec.Fields[spec.Geo.Field]
	seen := map[string]bool{}
	var hits []nearHit
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
		hits = append(hits, h)
		return nil
	}
	fullScan := func() error {
		clear(seen)
		hits = hits[:0]
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
	switch {
	case spec.Geo.Field != 0:
		// The geo field is not the index's first: its entries are not in
		// cell order. Every document is a candidate.
		err = fullScan()
	case nc.maxDist >= 0:
		err = coverCap(ctx, tx, coll, ix, data, geo.CapRegion(nc.center, nc.maxDist), st, examine)
	case want > 0:
		err = nil
		for r := s1.Angle(1000 / geo.EarthRadiusMeters); ; r *= 4 {
			if r >= math.Pi {
				err = fullScan()
				break
			}
			if err = coverCap(ctx, tx, coll, ix, data, geo.CapRegion(nc.center, r), st, examine); err != nil {
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

// nearIndex finds the 2dsphere index on the clause's field.
func nearIndex(coll *catalog.Collection, nc *nearClause) (string, *index.Spec, error) {
	var found []catalog.Index
	var specs []*index.Spec
	for _, ix := range coll.Indexes {
		if !ix.Ready {
			continue
		}
		s, err := index.ParseCached(ix.Spec)
		if err != nil || s.Geo == nil {
			continue
		}
		path := s.Fields[s.Geo.Field].Path
		if (nc.path != "" && path != nc.path) || (nc.key != "" && path != nc.key) {
			continue
		}
		found, specs = append(found, ix), append(specs, s)
	}
	switch {
	case len(found) == 0:
		return "", nil, noGeoIndex()
	case len(found) > 1 && nc.path == "" && nc.key == "":
		return "", nil, mongoerr.New(mongoerr.IndexNotFound, "There is more than one 2dsphere index on %s; unsure which to use for $geoNear", coll.Namespace())
	}
	if nc.path == "" {
		nc.path = specs[0].Fields[specs[0].Geo.Field].Path
	}
	return found[0].Name, specs[0], nil
}

// nearDistance measures a document: the smallest distance from the
// center to its geometries at the field, within the clause's bounds.
func nearDistance(raw []byte, parts []string, nc *nearClause) (nearHit, bool) {
	h := nearHit{dist: s1.InfAngle()}
	for _, v := range index.GeoValues(bson.Doc(raw), parts) {
		sh, err := geo.ParseShape(v)
		if err != nil || !sh.Spherical() {
			continue
		}
		if d := sh.MinDistance(nc.center); d < h.dist {
			h.dist, h.loc = d, v
		}
	}
	if h.loc.Type == 0 || h.dist < nc.minDist || (nc.maxDist >= 0 && h.dist > nc.maxDist) {
		return h, false
	}
	return h, true
}

// coverCap reads the index entries of the cells covering a cap (each
// cell's descendants and its ancestors) and examines their documents.
func coverCap(ctx context.Context, tx *kv.Tx, coll *catalog.Collection, ix string, data *kv.Tree, c geo.Region, st *walkState, examine func(key, raw []byte) error) error {
	t, err := tx.Tree(coll.IndexTree(ix))
	if err != nil {
		return mongoerr.New(175, "query plan killed :: caused by :: index '%s' dropped", ix)
	}
	ranges, _ := index.GeoKeyRanges(c)
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
	env  *Env
	spec *findSpec
	ran  bool
	hits []nearHit
	pos  int
	buf  []byte
	walk walkState
}

func (s *nearSource) Close() { s.hits = nil }

func (s *nearSource) Fill(ctx context.Context, emit func(bson.Doc) bool) (bool, error) {
	if !s.ran {
		if err := s.run(ctx); err != nil {
			return false, err
		}
		s.ran = true
	}
	for s.pos < len(s.hits) {
		out := s.hits[s.pos].doc
		if s.spec.proj != nil {
			var md query.MatchDetails
			var err error
			if out, err = s.spec.proj.Apply(s.buf[:0], out, &md); err != nil {
				return false, err
			}
			s.buf = out
		}
		if !emit(out) {
			return false, nil
		}
		s.hits[s.pos] = nearHit{}
		s.pos++
	}
	return true, nil
}

func (s *nearSource) run(ctx context.Context) error {
	tx, err := s.env.KV.BeginRead()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	coll, err := catalog.Get(tx, s.spec.db, s.spec.coll)
	if err != nil {
		return err
	}
	want := int64(0)
	if s.spec.limit > 0 && s.spec.sort == nil {
		want = s.spec.skip + s.spec.limit
	}
	hits, err := nearSearch(ctx, tx, coll, s.spec.near, s.spec.filter, want, &s.walk)
	if err != nil {
		return err
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
	s.hits = hits
	return nil
}

// appendNearStages writes a near plan as MongoDB explains it.
func appendNearStages(r *bson.Builder, spec *findSpec, coll *catalog.Collection) {
	name, ixSpec, err := nearIndex(coll, spec.near)
	if err != nil {
		r.AppendString("stage", "EOF")
		return
	}
	r.AppendString("stage", "GEO_NEAR_2DSPHERE")
	r.AppendDocument("keyPattern", ixSpec.Key)
	r.AppendString("indexName", name)
	r.AppendInt64("indexVersion", 2)
	if spec.filterDoc.Len() > 0 {
		r.AppendDocument("filter", spec.filterDoc)
	}
}
