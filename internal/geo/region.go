package geo

import (
	"math"

	"github.com/golang/geo/r2"
	"github.com/golang/geo/s1"
	"github.com/golang/geo/s2"

	"github.com/cairndb/cairn/bson"
)

// Region is the shape of a $geoWithin or $geoIntersects query.
type Region interface {
	// Within reports whether all of s lies inside the region ($geoWithin).
	Within(s *Shape) bool
	// Intersects reports whether s and the region share a point
	// ($geoIntersects).
	Intersects(s *Shape) bool
	// Cover returns cells covering the region, for a 2dsphere index scan;
	// false for flat shapes, which a 2dsphere index cannot serve.
	Cover(rc *s2.RegionCoverer) (s2.CellUnion, bool)
	// Bounds returns a box of legacy coordinates holding every legacy
	// point in the region, for a 2d index scan; false for GeoJSON
	// geometries, which a 2d index cannot serve.
	Bounds() (lo, hi r2.Point, ok bool)
	// HasPoint is Within (within) or Intersects for a single point,
	// without building a Shape.
	HasPoint(p Point, within bool) bool
}

// ParseWithin reads the argument of $geoWithin: {$geometry: Polygon or
// MultiPolygon}, {$centerSphere: [[x, y], radians]}, or a flat shape
// ({$box}, {$polygon}, {$center}) for legacy coordinate pairs.
func ParseWithin(arg bson.Doc) (Region, error) {
	it := arg.Iter()
	var region Region
	for it.Next() {
		e := it.Element()
		if e.Key == "$uniqueDocs" {
			continue // deprecated, without effect (as in mongod)
		}
		if region != nil {
			return nil, errorf("$geoWithin takes exactly one shape: %s", arg.String())
		}
		var err error
		switch e.Key {
		case "$geometry":
			var s *Shape
			if s, err = geometryArg(e.Value); err != nil {
				return nil, err
			}
			if len(s.Polygons) == 0 || len(s.Points)+len(s.Lines) > 0 {
				return nil, errorf("$geoWithin not supported with provided geometry: %s", arg.String())
			}
			region = shapeRegion{s}
		case "$centerSphere":
			region, err = parseCenterSphere(e.Value)
		case "$box":
			region, err = parseBox(e.Value)
		case "$center":
			region, err = parseCenter(e.Value)
		case "$polygon":
			region, err = parseFlatPolygon(e.Value)
		default:
			return nil, errorf("unknown geo specifier: %s", e.Key+": "+e.Value.String())
		}
		if err != nil {
			return nil, err
		}
	}
	if region == nil {
		return nil, errorf("$geoWithin needs a shape: %s", arg.String())
	}
	return region, nil
}

// ParseIntersects reads the argument of $geoIntersects: {$geometry: any
// GeoJSON geometry}.
func ParseIntersects(arg bson.Doc) (Region, error) {
	g, ok := arg.Lookup("$geometry")
	if !ok || arg.Len() != 1 {
		return nil, errorf("$geoIntersects not supported with provided geometry: %s", arg.String())
	}
	s, err := geometryArg(g)
	if err != nil {
		return nil, err
	}
	return shapeRegion{s}, nil
}

func geometryArg(v bson.Value) (*Shape, error) {
	if v.Type != bson.TypeDocument {
		return nil, errorf("$geometry must be an object")
	}
	d := v.Document()
	if t, ok := d.Lookup("type"); !ok || t.Type != bson.TypeString {
		return nil, errorf("$geometry must be a GeoJSON object: %s", d.String())
	}
	strict := false
	if crs, ok := d.Lookup("crs"); ok {
		var name bson.Value
		if crs.Type == bson.TypeDocument {
			name, _ = crs.Document().LookupPath("properties", "name")
		}
		switch {
		case name.Type != bson.TypeString:
			return nil, errorf("GeoJSON CRS must be an object with properties.name: %s", crs.String())
		case name.StringValue() == strictWindingCRS:
			// mongod's big polygon: a Polygon whose rings' winding says
			// which side is inside, so it may exceed a hemisphere.
			if t, _ := d.Lookup("type"); t.StringValue() != "Polygon" {
				return nil, errorf("Strict winding order CRS is only supported by polygon")
			}
			strict = true
		case name.StringValue() == "EPSG:4326" || name.StringValue() == "urn:ogc:def:crs:OGC:1.3:CRS84":
		default:
			return nil, errorf("Unknown CRS name: %s", name.StringValue())
		}
	}
	return parseGeoJSON(d, strict)
}

// strictWindingCRS names mongod's "big polygon" coordinate system.
const strictWindingCRS = "urn:x-mongodb:crs:strictwinding:EPSG:4326"

// pairs reads an array of legacy points.
func pairs(v bson.Value) ([]r2.Point, error) {
	if v.Type != bson.TypeArray {
		return nil, errorf("geo shape must be an array of points")
	}
	var out []r2.Point
	it := v.Document().Iter()
	for it.Next() {
		p, err := LegacyPoint(it.Element().Value)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// centerAndRadius reads [[x, y], r] with r a non-negative number.
func centerAndRadius(what string, v bson.Value) (r2.Point, float64, error) {
	if v.Type != bson.TypeArray || v.Document().Len() != 2 {
		return r2.Point{}, 0, errorf("%s must be an array of a point and a radius", what)
	}
	vals := v.Document().Values()
	c, err := LegacyPoint(vals[0])
	if err != nil {
		return r2.Point{}, 0, err
	}
	r, ok := number(vals[1])
	if !ok || !(r >= 0) || math.IsInf(r, 0) {
		return r2.Point{}, 0, errorf("radius must be a non-negative number")
	}
	return c, r, nil
}

func parseCenterSphere(v bson.Value) (Region, error) {
	c, r, err := centerAndRadius("$centerSphere", v)
	if err != nil {
		return nil, err
	}
	if !validLngLat(c.X, c.Y) {
		return nil, errorf("longitude/latitude is out of bounds, lng: %g lat: %g", c.X, c.Y)
	}
	return capRegion{s2.CapFromCenterAngle(pointOf(c.X, c.Y), s1.Angle(r))}, nil
}

// shapeRegion is a GeoJSON geometry as a query region.
type shapeRegion struct{ q *Shape }

func (r shapeRegion) Within(s *Shape) bool {
	if !s.Spherical() {
		return false
	}
	for _, p := range s.Points {
		if !anyPolygon(r.q.Polygons, func(poly *s2.Polygon) bool { return poly.ContainsPoint(p) }) {
			return false
		}
	}
	for _, l := range s.Lines {
		if !anyPolygon(r.q.Polygons, func(poly *s2.Polygon) bool { return polygonContainsLine(poly, l) }) {
			return false
		}
	}
	for _, o := range s.Polygons {
		if !anyPolygon(r.q.Polygons, func(poly *s2.Polygon) bool { return poly.Contains(o) }) {
			return false
		}
	}
	return true
}

func (r shapeRegion) Intersects(s *Shape) bool { return s.Spherical() && shapesIntersect(s, r.q) }

func (r shapeRegion) Bounds() (lo, hi r2.Point, ok bool) { return lo, hi, false }

func (r shapeRegion) HasPoint(p Point, within bool) bool {
	if !p.Spherical {
		return false
	}
	if within {
		return anyPolygon(r.q.Polygons, func(poly *s2.Polygon) bool { return poly.ContainsPoint(p.Sphere) })
	}
	return pointTouches(p.Sphere, r.q)
}

func (r shapeRegion) Cover(rc *s2.RegionCoverer) (s2.CellUnion, bool) {
	var u s2.CellUnion
	for _, p := range r.q.Points {
		u = append(u, s2.CellIDFromLatLng(s2.LatLngFromPoint(p)))
	}
	for _, l := range r.q.Lines {
		u = append(u, rc.Covering(l)...)
	}
	for _, p := range r.q.Polygons {
		u = append(u, rc.Covering(p)...)
	}
	u.Normalize()
	return u, true
}

func anyPolygon(ps []*s2.Polygon, f func(*s2.Polygon) bool) bool {
	for _, p := range ps {
		if f(p) {
			return true
		}
	}
	return false
}

// polygonContainsLine: every vertex inside and no edge crossing the
// boundary.
func polygonContainsLine(p *s2.Polygon, l *s2.Polyline) bool {
	for _, v := range *l {
		if !p.ContainsPoint(v) {
			return false
		}
	}
	return !lineCrossesPolygon(p, l, true)
}

// lineCrossesPolygon reports whether an edge of l crosses an edge of p
// (only proper crossings when strict).
func lineCrossesPolygon(p *s2.Polygon, l *s2.Polyline, strict bool) bool {
	for i := 0; i+1 < len(*l); i++ {
		c := s2.NewEdgeCrosser((*l)[i], (*l)[i+1])
		for j := 0; j < p.NumEdges(); j++ {
			e := p.Edge(j)
			switch c.CrossingSign(e.V0, e.V1) {
			case s2.Cross:
				return true
			case s2.MaybeCross:
				if !strict {
					return true
				}
			}
		}
	}
	return false
}

// touchAngle is how close two geometries must come to share a point
// (about a micrometre on the Earth).
const touchAngle = s1.Angle(1e-13)

// shapesIntersect reports whether two geometries share a point.
func shapesIntersect(a, b *Shape) bool {
	for _, p := range a.Points {
		if pointTouches(p, b) {
			return true
		}
	}
	for _, p := range b.Points {
		if pointTouches(p, a) {
			return true
		}
	}
	for _, l := range a.Lines {
		if lineTouches(l, b) {
			return true
		}
	}
	for _, l := range b.Lines {
		if lineTouches(l, a) {
			return true
		}
	}
	for _, p := range a.Polygons {
		for _, q := range b.Polygons {
			if p.Intersects(q) {
				return true
			}
		}
	}
	return false
}

func pointTouches(p s2.Point, s *Shape) bool {
	return s.MinDistance(p) <= touchAngle
}

// lineTouches reports whether l meets a line or polygon of s (points are
// checked by pointTouches).
func lineTouches(l *s2.Polyline, s *Shape) bool {
	for _, o := range s.Lines {
		if l.Intersects(o) {
			return true
		}
	}
	for _, poly := range s.Polygons {
		for _, v := range *l {
			if poly.ContainsPoint(v) {
				return true
			}
		}
		if lineCrossesPolygon(poly, l, false) {
			return true
		}
	}
	return false
}

// capRegion is $centerSphere.
type capRegion struct{ c s2.Cap }

// CapRegion is the region of the points within angle of center.
func CapRegion(center s2.Point, angle s1.Angle) Region {
	return capRegion{s2.CapFromCenterAngle(center, angle)}
}

func (r capRegion) Within(s *Shape) bool {
	if !s.Spherical() {
		return false
	}
	in := func(pts []s2.Point) bool {
		for _, p := range pts {
			if !r.c.ContainsPoint(p) {
				return false
			}
		}
		return true
	}
	if !in(s.Points) {
		return false
	}
	for _, l := range s.Lines {
		if !in(*l) {
			return false
		}
	}
	for _, p := range s.Polygons {
		for _, loop := range p.Loops() {
			if !in(loop.Vertices()) {
				return false
			}
		}
	}
	return true
}

func (r capRegion) Intersects(s *Shape) bool {
	return s.Spherical() && s.MinDistance(r.c.Center()) <= r.c.Radius()
}

func (r capRegion) Cover(rc *s2.RegionCoverer) (s2.CellUnion, bool) { return rc.Covering(r.c), true }

func (r capRegion) HasPoint(p Point, _ bool) bool { return p.Spherical && r.c.ContainsPoint(p.Sphere) }

// Bounds is the longitude/latitude box of the cap.
func (r capRegion) Bounds() (lo, hi r2.Point, ok bool) {
	b := r.c.RectBound()
	if b.Lng.IsFull() || b.Lng.IsInverted() {
		return r2.Point{X: -180, Y: b.Lat.Lo * 180 / math.Pi}, r2.Point{X: 180, Y: b.Lat.Hi * 180 / math.Pi}, true
	}
	return r2.Point{X: b.Lng.Lo * 180 / math.Pi, Y: b.Lat.Lo * 180 / math.Pi}, r2.Point{X: b.Lng.Hi * 180 / math.Pi, Y: b.Lat.Hi * 180 / math.Pi}, true
}

// flat is embedded by the flat shapes: a 2dsphere index cannot serve them.
type flat struct{}

func (flat) Cover(*s2.RegionCoverer) (s2.CellUnion, bool) { return nil, false }

// Flat shapes match legacy coordinate pairs only.

type boxRegion struct {
	flat
	lo, hi r2.Point
}

func parseBox(v bson.Value) (Region, error) {
	pts, err := pairs(v)
	if err != nil {
		return nil, err
	}
	if len(pts) != 2 {
		return nil, errorf("$box requires two points, the bottom left and top right corners")
	}
	lo := r2.Point{X: min(pts[0].X, pts[1].X), Y: min(pts[0].Y, pts[1].Y)}
	hi := r2.Point{X: max(pts[0].X, pts[1].X), Y: max(pts[0].Y, pts[1].Y)}
	return boxRegion{lo: lo, hi: hi}, nil
}

func (r boxRegion) Within(s *Shape) bool {
	return r.HasPoint(Point{Flat: s.Flat, Legacy: s.Legacy}, true)
}

func (r boxRegion) Intersects(s *Shape) bool { return r.Within(s) }

func (r boxRegion) Bounds() (lo, hi r2.Point, ok bool) { return r.lo, r.hi, true }

func (r boxRegion) HasPoint(p Point, _ bool) bool {
	return p.Legacy && p.Flat.X >= r.lo.X && p.Flat.X <= r.hi.X && p.Flat.Y >= r.lo.Y && p.Flat.Y <= r.hi.Y
}

type circleRegion struct {
	flat
	c r2.Point
	r float64
}

func parseCenter(v bson.Value) (Region, error) {
	c, r, err := centerAndRadius("$center", v)
	if err != nil {
		return nil, err
	}
	return circleRegion{c: c, r: r}, nil
}

func (r circleRegion) Within(s *Shape) bool {
	return r.HasPoint(Point{Flat: s.Flat, Legacy: s.Legacy}, true)
}

func (r circleRegion) HasPoint(p Point, _ bool) bool {
	return p.Legacy && p.Flat.Sub(r.c).Norm() <= r.r
}

func (r circleRegion) Intersects(s *Shape) bool { return r.Within(s) }

func (r circleRegion) Bounds() (lo, hi r2.Point, ok bool) {
	return r2.Point{X: r.c.X - r.r, Y: r.c.Y - r.r}, r2.Point{X: r.c.X + r.r, Y: r.c.Y + r.r}, true
}

type flatPolygonRegion struct {
	flat
	pts []r2.Point
}

func parseFlatPolygon(v bson.Value) (Region, error) {
	pts, err := pairs(v)
	if err != nil {
		return nil, err
	}
	if len(pts) < 3 {
		return nil, errorf("Polygon must have at least 3 points")
	}
	return flatPolygonRegion{pts: pts}, nil
}

func (r flatPolygonRegion) Within(s *Shape) bool {
	return r.HasPoint(Point{Flat: s.Flat, Legacy: s.Legacy}, true)
}

// HasPoint: inside by the even-odd rule, or on an edge.
func (r flatPolygonRegion) HasPoint(pt Point, _ bool) bool {
	if !pt.Legacy {
		return false
	}
	p := pt.Flat
	in := false
	for i, j := 0, len(r.pts)-1; i < len(r.pts); j, i = i, i+1 {
		a, b := r.pts[i], r.pts[j]
		if onSegment(p, a, b) {
			return true
		}
		if (a.Y > p.Y) != (b.Y > p.Y) && p.X < (b.X-a.X)*(p.Y-a.Y)/(b.Y-a.Y)+a.X {
			in = !in
		}
	}
	return in
}

func (r flatPolygonRegion) Intersects(s *Shape) bool { return r.Within(s) }

func (r flatPolygonRegion) Bounds() (lo, hi r2.Point, ok bool) {
	lo, hi = r.pts[0], r.pts[0]
	for _, p := range r.pts[1:] {
		lo = r2.Point{X: min(lo.X, p.X), Y: min(lo.Y, p.Y)}
		hi = r2.Point{X: max(hi.X, p.X), Y: max(hi.Y, p.Y)}
	}
	return lo, hi, true
}

func onSegment(p, a, b r2.Point) bool {
	if b.Sub(a).Cross(p.Sub(a)) != 0 {
		return false
	}
	return p.X >= min(a.X, b.X) && p.X <= max(a.X, b.X) && p.Y >= min(a.Y, b.Y) && p.Y <= max(a.Y, b.Y)
}
