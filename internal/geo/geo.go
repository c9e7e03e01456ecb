// Package geo owns Cairn's geospatial geometry: reading GeoJSON objects
// and legacy coordinate pairs out of BSON values, the query regions of
// $geoWithin and $geoIntersects (spherical and flat), and distances for
// $near, $nearSphere and $geoNear.
//
// Spherical geometry is S2's (github.com/golang/geo), as in mongod:
// points are unit vectors, edges are great-circle arcs, and a GeoJSON
// polygon is the smaller of the two regions its rings bound (mongod's
// default "small polygon" interpretation). Flat geometry (the legacy
// $box, $polygon and $center shapes) is planar, on legacy coordinate
// pairs only, as in mongod.
package geo

import (
	"fmt"
	"math"

	"github.com/golang/geo/r2"
	"github.com/golang/geo/s1"
	"github.com/golang/geo/s2"

	"github.com/cairndb/cairn/bson"
)

// EarthRadiusMeters is mongod's radius of the Earth (kRadiusOfEarthInMeters),
// which turns angles into the meters of GeoJSON distances.
const EarthRadiusMeters = 6378.1 * 1000

// Shape is a document's geometry: a GeoJSON object or a legacy coordinate
// pair. A GeoJSON geometry is a set of points, polylines and polygons (a
// collection or a multi-geometry has several).
type Shape struct {
	Points   []s2.Point
	Lines    []*s2.Polyline
	Polygons []*s2.Polygon
	// Legacy is set for a legacy coordinate pair ([x, y] or {a: x, b: y});
	// Flat holds it. Points then holds it as a point of the sphere when it
	// is a valid longitude and latitude, and is empty otherwise.
	Legacy bool
	Flat   r2.Point
}

// Error is a malformed geometry; the query layer reports it as BadValue.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

func errorf(format string, args ...any) error { return &Error{Msg: fmt.Sprintf(format, args...)} }

// ParseShape reads a stored value as a geometry: a GeoJSON object (a
// document with type and coordinates, or a GeometryCollection) or a
// legacy coordinate pair (an array or document whose first two values are
// numbers).
func ParseShape(v bson.Value) (*Shape, error) {
	switch v.Type {
	case bson.TypeDocument:
		d := v.Document()
		if t, ok := d.Lookup("type"); ok && t.Type == bson.TypeString {
			return ParseGeoJSON(d)
		}
		return legacyShape(v)
	case bson.TypeArray:
		return legacyShape(v)
	}
	return nil, errorf("geometry must be an object or an array")
}

func legacyShape(v bson.Value) (*Shape, error) {
	p, err := LegacyPoint(v)
	if err != nil {
		return nil, err
	}
	s := &Shape{Legacy: true, Flat: p}
	if validLngLat(p.X, p.Y) {
		s.Points = []s2.Point{pointOf(p.X, p.Y)}
	}
	return s, nil
}

// LegacyPoint reads a legacy coordinate pair: the first two values of an
// array or embedded document, both numbers.
func LegacyPoint(v bson.Value) (r2.Point, error) {
	if v.Type != bson.TypeArray && v.Type != bson.TypeDocument {
		return r2.Point{}, errorf("Point must be an array or object")
	}
	it := v.Document().Iter()
	var xy [2]float64
	for i := range xy {
		if !it.Next() {
			return r2.Point{}, errorf("Point must only contain numeric elements")
		}
		f, ok := number(it.Element().Value)
		if !ok {
			return r2.Point{}, errorf("Point must only contain numeric elements")
		}
		xy[i] = f
	}
	if math.IsNaN(xy[0]) || math.IsNaN(xy[1]) || math.IsInf(xy[0], 0) || math.IsInf(xy[1], 0) {
		return r2.Point{}, errorf("Point coordinates must be finite numbers")
	}
	return r2.Point{X: xy[0], Y: xy[1]}, nil
}

func number(v bson.Value) (float64, bool) {
	if !v.IsNumber() {
		return 0, false
	}
	return v.AsFloat64()
}

func validLngLat(lng, lat float64) bool {
	return lng >= -180 && lng <= 180 && lat >= -90 && lat <= 90
}

func pointOf(lng, lat float64) s2.Point {
	return s2.PointFromLatLng(s2.LatLngFromDegrees(lat, lng))
}

// ParseGeoJSON reads a GeoJSON geometry object.
func ParseGeoJSON(d bson.Doc) (*Shape, error) { return parseGeoJSON(d, false) }

// parseGeoJSON reads a GeoJSON geometry; with strictWinding (mongod's
// "big polygon" CRS) a polygon's rings keep their orientation, the
// interior on their left, instead of bounding the smaller region.
func parseGeoJSON(d bson.Doc, strictWinding bool) (*Shape, error) {
	t, _ := d.Lookup("type")
	if t.Type != bson.TypeString {
		return nil, errorf("unknown GeoJSON type: %s", d.String())
	}
	s := &Shape{}
	if t.StringValue() == "GeometryCollection" {
		g, ok := d.Lookup("geometries")
		if !ok || g.Type != bson.TypeArray {
			return nil, errorf("GeometryCollection geometries must be an array")
		}
		it := g.Document().Iter()
		for it.Next() {
			ev := it.Element().Value
			if ev.Type != bson.TypeDocument {
				return nil, errorf("Element %s of \"geometries\" is not an object", it.Element().Key)
			}
			sub, err := ParseGeoJSON(ev.Document())
			if err != nil {
				return nil, err
			}
			s.add(sub)
		}
		if len(s.Points)+len(s.Lines)+len(s.Polygons) == 0 {
			return nil, errorf("GeometryCollection has no geometries")
		}
		return s, nil
	}
	c, ok := d.Lookup("coordinates")
	if !ok || c.Type != bson.TypeArray {
		return nil, errorf("%s must have a coordinates array", t.StringValue())
	}
	switch t.StringValue() {
	case "Point":
		p, err := geoPoint(c)
		if err != nil {
			return nil, err
		}
		s.Points = []s2.Point{p}
	case "MultiPoint":
		err := eachArray(c, "MultiPoint", func(v bson.Value) error {
			p, err := geoPoint(v)
			s.Points = append(s.Points, p)
			return err
		})
		if err != nil {
			return nil, err
		}
	case "LineString":
		l, err := lineString(c)
		if err != nil {
			return nil, err
		}
		s.Lines = []*s2.Polyline{l}
	case "MultiLineString":
		err := eachArray(c, "MultiLineString", func(v bson.Value) error {
			l, err := lineString(v)
			s.Lines = append(s.Lines, l)
			return err
		})
		if err != nil {
			return nil, err
		}
	case "Polygon":
		p, err := polygon(c, strictWinding)
		if err != nil {
			return nil, err
		}
		s.Polygons = []*s2.Polygon{p}
	case "MultiPolygon":
		err := eachArray(c, "MultiPolygon", func(v bson.Value) error {
			p, err := polygon(v, strictWinding)
			s.Polygons = append(s.Polygons, p)
			return err
		})
		if err != nil {
			return nil, err
		}
	default:
		return nil, errorf("unknown GeoJSON type: %s", d.String())
	}
	return s, nil
}

func (s *Shape) add(o *Shape) {
	s.Points = append(s.Points, o.Points...)
	s.Lines = append(s.Lines, o.Lines...)
	s.Polygons = append(s.Polygons, o.Polygons...)
}

// eachArray calls fn with each element of a non-empty coordinates array.
func eachArray(c bson.Value, what string, fn func(bson.Value) error) error {
	it := c.Document().Iter()
	n := 0
	for it.Next() {
		v := it.Element().Value
		if v.Type != bson.TypeArray {
			return errorf("%s coordinates must be arrays", what)
		}
		if err := fn(v); err != nil {
			return err
		}
		n++
	}
	if n == 0 {
		return errorf("%s coordinates must have at least 1 element", what)
	}
	return nil
}

// geoPoint reads a GeoJSON position: [longitude, latitude].
func geoPoint(v bson.Value) (s2.Point, error) {
	if v.Type != bson.TypeArray {
		return s2.Point{}, errorf("GeoJSON coordinates must be an array")
	}
	vals := v.Document().Values()
	if len(vals) < 2 {
		return s2.Point{}, errorf("GeoJSON coordinates must be an array of at least two numbers")
	}
	lng, ok1 := number(vals[0])
	lat, ok2 := number(vals[1])
	if !ok1 || !ok2 {
		return s2.Point{}, errorf("Point must only contain numeric elements")
	}
	if !validLngLat(lng, lat) {
		return s2.Point{}, errorf("longitude/latitude is out of bounds, lng: %g lat: %g", lng, lat)
	}
	return pointOf(lng, lat), nil
}

func positions(c bson.Value) ([]s2.Point, error) {
	var pts []s2.Point
	it := c.Document().Iter()
	for it.Next() {
		p, err := geoPoint(it.Element().Value)
		if err != nil {
			return nil, err
		}
		pts = append(pts, p)
	}
	return pts, nil
}

func lineString(c bson.Value) (*s2.Polyline, error) {
	pts, err := positions(c)
	if err != nil {
		return nil, err
	}
	if len(pts) < 2 {
		return nil, errorf("GeoJSON LineString must have at least 2 vertices")
	}
	l := s2.Polyline(pts)
	return &l, nil
}

// polygon reads a GeoJSON polygon: closed rings, the first the shell and
// the others holes. Each ring is taken as the smaller region it bounds.
func polygon(c bson.Value, strictWinding bool) (*s2.Polygon, error) {
	var loops []*s2.Loop
	it := c.Document().Iter()
	for it.Next() {
		rv := it.Element().Value
		if rv.Type != bson.TypeArray {
			return nil, errorf("Polygon coordinates must be an array of arrays")
		}
		pts, err := positions(rv)
		if err != nil {
			return nil, err
		}
		if len(pts) < 4 {
			return nil, errorf("Loop must have at least 4 vertices: %s", rv.String())
		}
		if pts[0] != pts[len(pts)-1] {
			return nil, errorf("Loop is not closed, first vertex does not equal last vertex: %s", rv.String())
		}
		pts = pts[:len(pts)-1]
		// Drop repeated consecutive vertices, as mongod does.
		uniq := pts[:1]
		for _, p := range pts[1:] {
			if p != uniq[len(uniq)-1] {
				uniq = append(uniq, p)
			}
		}
		if len(uniq) > 1 && uniq[len(uniq)-1] == uniq[0] {
			uniq = uniq[:len(uniq)-1]
		}
		if len(uniq) < 3 {
			return nil, errorf("Loop must have at least 3 different vertices: %s", rv.String())
		}
		l := s2.LoopFromPoints(uniq)
		if err := l.Validate(); err != nil {
			return nil, errorf("Loop is not valid: %s %v", rv.String(), err)
		}
		if !strictWinding {
			l.Normalize()
		}
		loops = append(loops, l)
	}
	if len(loops) == 0 {
		return nil, errorf("Polygon has no loops")
	}
	p := s2.PolygonFromLoops(loops)
	if err := p.Validate(); err != nil {
		return nil, errorf("Polygon is not valid: %v", err)
	}
	return p, nil
}

// Distance is the angle between two points of the sphere.
func Distance(a, b s2.Point) s1.Angle { return a.Distance(b) }

// MinDistance is the smallest angle between p and any part of s.
func (s *Shape) MinDistance(p s2.Point) s1.Angle {
	best := s1.InfAngle()
	for _, q := range s.Points {
		best = min(best, p.Distance(q))
	}
	for _, l := range s.Lines {
		for i := 0; i+1 < len(*l); i++ {
			best = min(best, s2.DistanceFromSegment(p, (*l)[i], (*l)[i+1]))
		}
	}
	for _, poly := range s.Polygons {
		if poly.ContainsPoint(p) {
			return 0
		}
		for i := 0; i < poly.NumEdges(); i++ {
			e := poly.Edge(i)
			best = min(best, s2.DistanceFromSegment(p, e.V0, e.V1))
		}
	}
	return best
}

// Spherical reports whether s can be used with spherical queries: a
// GeoJSON object, or a legacy pair that is a valid longitude and
// latitude.
func (s *Shape) Spherical() bool {
	return len(s.Points)+len(s.Lines)+len(s.Polygons) > 0
}

// Point is a single-point geometry read without allocating: a GeoJSON
// Point or a legacy coordinate pair.
type Point struct {
	// Sphere is the point on the sphere; Spherical reports that it is
	// valid (a GeoJSON point, or a legacy pair within longitude and
	// latitude bounds).
	Sphere    s2.Point
	Spherical bool
	// Flat is a legacy pair's coordinates; Legacy reports one.
	Flat   r2.Point
	Legacy bool
}

// PointOf reads v as a point, if it is one (ok false otherwise: another
// geometry, or not a geometry; ParseShape tells which).
func PointOf(v bson.Value) (p Point, ok bool) {
	if v.Type != bson.TypeDocument && v.Type != bson.TypeArray {
		return p, false
	}
	d := v.Document()
	if v.Type == bson.TypeDocument {
		if t, ok := d.Lookup("type"); ok && t.Type == bson.TypeString {
			if t.StringValue() != "Point" {
				return p, false
			}
			c, ok := d.Lookup("coordinates")
			if !ok || c.Type != bson.TypeArray {
				return p, false
			}
			lng, lat, ok := firstTwoNumbers(c.Document())
			if !ok || !validLngLat(lng, lat) {
				return p, false
			}
			return Point{Sphere: pointOf(lng, lat), Spherical: true}, true
		}
	}
	x, y, ok := firstTwoNumbers(d)
	if !ok || math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) || math.IsInf(y, 0) {
		return p, false
	}
	p = Point{Flat: r2.Point{X: x, Y: y}, Legacy: true}
	if validLngLat(x, y) {
		p.Sphere, p.Spherical = pointOf(x, y), true
	}
	return p, true
}

func firstTwoNumbers(d bson.Doc) (a, b float64, ok bool) {
	it := d.Iter()
	if !it.Next() {
		return 0, 0, false
	}
	if a, ok = number(it.Element().Value); !ok || !it.Next() {
		return 0, 0, false
	}
	b, ok = number(it.Element().Value)
	return a, b, ok
}
