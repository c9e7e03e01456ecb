package query

import (
	"errors"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/geo"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// geoMatcher is $geoWithin (within) or $geoIntersects: a value matches
// when it is a geometry (GeoJSON or a legacy coordinate pair) inside or
// meeting the region. Values that are not geometries do not match, as in
// mongod without a geo index.
type geoMatcher struct {
	r      geo.Region
	within bool
}

func (m *geoMatcher) matchValue(v bson.Value) bool {
	if v.Type != bson.TypeDocument && v.Type != bson.TypeArray {
		return false
	}
	if p, ok := geo.PointOf(v); ok {
		return m.r.HasPoint(p, m.within)
	}
	s, err := geo.ParseShape(v)
	if err != nil {
		return false
	}
	if m.within {
		return m.r.Within(s)
	}
	return m.r.Intersects(s)
}

// parseGeoPred compiles $geoWithin (and its old name $within) and
// $geoIntersects.
func parseGeoPred(e bson.Element) (pred, error) {
	if e.Value.Type != bson.TypeDocument {
		return nil, badValue("%s must be an object", e.Key)
	}
	var r geo.Region
	var err error
	if e.Key == "$geoIntersects" {
		r, err = geo.ParseIntersects(e.Value.Document())
	} else {
		r, err = geo.ParseWithin(e.Value.Document())
	}
	if err != nil {
		return nil, geoError(err)
	}
	return &leafPred{m: &geoMatcher{r: r, within: e.Key != "$geoIntersects"}}, nil
}

// geoError reports a malformed geometry as mongod does: BadValue.
func geoError(err error) error {
	var ge *geo.Error
	if errors.As(err, &ge) {
		return mongoerr.New(mongoerr.BadValue, "%s", ge.Msg)
	}
	return err
}

// GeoRegion returns the region of a $geoWithin or $geoIntersects on path
// at the top level of filter (or in a top-level $and), for a 2dsphere
// index scan. ok is false when there is none or it cannot be parsed.
func GeoRegion(filter bson.Doc, path string) (r geo.Region, ok bool) {
	it := filter.Iter()
	for it.Next() {
		e := it.Element()
		switch {
		case e.Key == "$and" && e.Value.Type == bson.TypeArray:
			ai := e.Value.Document().Iter()
			for ai.Next() {
				if sub := ai.Element().Value; sub.Type == bson.TypeDocument {
					if r, ok := GeoRegion(sub.Document(), path); ok {
						return r, true
					}
				}
			}
		case e.Key == path && e.Value.Type == bson.TypeDocument:
			oi := e.Value.Document().Iter()
			for oi.Next() {
				op := oi.Element()
				if op.Value.Type != bson.TypeDocument {
					continue
				}
				var err error
				switch op.Key {
				case "$geoWithin", "$within":
					r, err = geo.ParseWithin(op.Value.Document())
				case "$geoIntersects":
					r, err = geo.ParseIntersects(op.Value.Document())
				default:
					continue
				}
				if err == nil {
					return r, true
				}
			}
		}
	}
	return nil, false
}
