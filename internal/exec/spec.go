package exec

import (
	"github.com/golang/geo/r2"
	"github.com/golang/geo/s2"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/geo"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
)

// FindSpec is a parsed find (also used by count, distinct and the write
// commands to select documents).
type FindSpec struct {
	DB, Coll string
	// filterDoc is the filter as given (without its $text clause), which
	// the planner reads.
	FilterDoc bson.Doc
	// text is the filter's $text clause (nil: none); textFilterDoc is
	// then the whole filter, as explain shows it.
	Text          *TextClause
	TextFilterDoc bson.Doc
	// textOr is set when the $text sits in one branch of a top-level $or.
	TextOr *TextOr
	// near is the filter's $near or $nearSphere (nil: none), read
	// through a 2dsphere index; filterDoc then holds the rest.
	Near   *NearClause
	Filter *query.Filter
	// hint is the command's hint (zero: none).
	Hint bson.Value
	// sortDoc is the sort as given (to recognise a sort on _id, which the
	// data tree's order satisfies).
	SortDoc bson.Doc
	Proj    *query.Projection
	// projDoc is the projection as given (nil: none), which the planner
	// reads to cover the query from an index.
	ProjDoc bson.Doc
	// countOnly: the documents are only counted (count), so a plan may
	// be covered without a projection.
	CountOnly bool
	Sort      *query.Sort
	Skip      int64
	Limit     int64 // 0 = none
	Opts      *query.Options
	// Min and Max are find's min and max index bounds (nil: none;
	// findopts.go); ReturnKey and ShowRecordID its returnKey and
	// showRecordId.
	Min, Max                bson.Doc
	ReturnKey, ShowRecordID bool
}

// TextClause is a query's parsed {$text: {$search, $language,
// $caseSensitive, $diacriticSensitive}}.
type TextClause struct {
	Search                            string
	Language                          string // "": the index's default_language
	CaseSensitive, DiacriticSensitive bool
}

// TextOr is a $text inside a top-level $or: the documents the text search
// finds, with the other conditions of its branch, and those the $or's
// other branches match, each read through an index (as mongod requires).
type TextOr struct {
	// branch holds the text branch's other conditions (with the rest of
	// the filter); others matches the other branches (with the rest).
	Branch, Others *query.Filter
	// othersDoc is {$or: [the other branches]}, which the planner reads.
	OthersDoc bson.Doc
}

// NearClause is a parsed $near, $nearSphere or $geoNear.
type NearClause struct {
	Path   string
	Center s2.Point
	// flat: distances are planar, in the units of legacy coordinates,
	// from flatCenter ($near or non-spherical $geoNear on a legacy pair,
	// which need a 2d index). Otherwise they are angles on the sphere,
	// in radians.
	Flat       bool
	FlatCenter r2.Point
	// legacy: the center is a legacy pair (a 2d index may serve a
	// spherical query then; a GeoJSON center needs a 2dsphere index).
	Legacy bool
	// meters: distances are reported and bounded in meters (a GeoJSON
	// point); otherwise in radians or coordinate units.
	meters bool
	// minDist and maxDist bound the distance (radians or units; maxDist
	// < 0: none).
	MinDist, MaxDist float64
	// key names the index field for $geoNear's key option ("" = any).
	Key string
}

// Distance converts a distance to the clause's unit.
func (n *NearClause) Distance(d float64) float64 {
	if n.meters {
		return d * geo.EarthRadiusMeters
	}
	return d
}

func (c *NearClause) SetGeoJSONCenter(op string, g bson.Value) error {
	if g.Type != bson.TypeDocument {
		return mongoerr.New(mongoerr.BadValue, "%s requires a point, given %s", op, g.String())
	}
	sh, err := geo.ParseGeoJSON(g.Document())
	if err != nil || len(sh.Points) != 1 || len(sh.Lines)+len(sh.Polygons) > 0 {
		return mongoerr.New(mongoerr.BadValue, "invalid point in geo near query $geometry argument: %s", g.String())
	}
	c.Center, c.meters = sh.Points[0], true
	return nil
}

// SetLegacyCenter reads a legacy pair: planar distances with $near (a 2d
// index), spherical ones in radians with $nearSphere.
func (c *NearClause) SetLegacyCenter(op string, v bson.Value) error {
	p, err := geo.LegacyPoint(v)
	if err != nil {
		return mongoerr.New(mongoerr.BadValue, "%s requires a point, given %s", op, v.String())
	}
	c.Legacy, c.FlatCenter = true, p
	if op == "$near" {
		c.Flat = true
		return nil
	}
	if p.X < -180 || p.X > 180 || p.Y < -90 || p.Y > 90 {
		return mongoerr.New(mongoerr.BadValue, "longitude/latitude is out of bounds, lng: %g lat: %g", p.X, p.Y)
	}
	c.Center = s2.PointFromLatLng(s2.LatLngFromDegrees(p.Y, p.X))
	return nil
}

func (c *NearClause) SetBounds(maxV, minV bson.Value) error {
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
		if c.MaxDist, err = toAngle("$maxDistance", maxV); err != nil {
			return err
		}
	}
	if minV.Type != 0 {
		if c.MinDist, err = toAngle("$minDistance", minV); err != nil {
			return err
		}
	}
	return nil
}
