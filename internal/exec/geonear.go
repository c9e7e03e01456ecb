package exec

import (
	"context"
	"math"
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
	"github.com/cairndb/cairn/kv"
)

// GeoNearSpec is a parsed $geoNear stage: the documents of the collection
// matching query, nearest first, each with its distance (times
// distanceMultiplier) at distanceField and, with includeLocs, the nearest
// of its geometries.
type GeoNearSpec struct {
	db, coll      string
	Near          *NearClause
	distanceField []string
	includeLocs   []string
	multiplier    float64
	Query         bson.Doc
	filter        *query.Filter
	// limit is the $limit right after the stage (0: none), which bounds
	// the search.
	limit int64
}

// SplitGeoNear takes a leading $geoNear out of a pipeline on collection
// coll ("" for a view or {aggregate: 1}); the returned stages are the
// rest. $geoNear anywhere else is refused (40602), as in mongod.
func SplitGeoNear(db, coll string, stages []bson.Doc, qopts *query.Options) ([]bson.Doc, *GeoNearSpec, error) {
	for i, st := range stages {
		if firstKeyOf(st) == "$geoNear" && (i > 0 || coll == "") {
			return nil, nil, mongoerr.New(mongoerr.StageMustBeFirst, "$geoNear is only valid as the first stage in a pipeline")
		}
	}
	if len(stages) == 0 || firstKeyOf(stages[0]) != "$geoNear" {
		return stages, nil, nil
	}
	v, _ := stages[0].Lookup("$geoNear")
	g, err := parseGeoNear(v, qopts)
	if err != nil {
		return nil, nil, err
	}
	g.db, g.coll = db, coll
	if len(stages) > 1 && firstKeyOf(stages[1]) == "$limit" {
		if l, _ := stages[1].Lookup("$limit"); l.IsNumber() {
			if n, ok := l.AsInt64(); ok && n > 0 {
				g.limit = n
			}
		}
	}
	return stages[1:], g, nil
}

func firstKeyOf(d bson.Doc) string {
	if it := d.Iter(); it.Next() {
		return it.Element().Key
	}
	return ""
}

func parseGeoNear(v bson.Value, qopts *query.Options) (*GeoNearSpec, error) {
	if v.Type != bson.TypeDocument {
		return nil, mongoerr.New(mongoerr.GeoNearNotObject, "invalid parameter: expected an object ($geoNear)")
	}
	g := &GeoNearSpec{multiplier: 1, Near: &NearClause{MaxDist: -1}}
	var near, maxV, minV bson.Value
	spherical := false
	it := v.Document().Iter()
	for it.Next() {
		e := it.Element()
		switch e.Key {
		case "near":
			near = e.Value
		case "distanceField":
			if e.Value.Type != bson.TypeString || e.Value.StringValue() == "" || strings.HasPrefix(e.Value.StringValue(), "$") {
				return nil, mongoerr.New(mongoerr.GeoNearDistanceFieldNotString, "$geoNear requires a 'distanceField' option as a String")
			}
			g.distanceField = strings.Split(e.Value.StringValue(), ".")
		case "includeLocs":
			if e.Value.Type != bson.TypeString || e.Value.StringValue() == "" || strings.HasPrefix(e.Value.StringValue(), "$") {
				return nil, mongoerr.New(mongoerr.GeoNearIncludeLocsNotString, "$geoNear requires that 'includeLocs' option is a String")
			}
			g.includeLocs = strings.Split(e.Value.StringValue(), ".")
		case "spherical":
			spherical = e.Value.Truthy()
		case "maxDistance", "minDistance":
			f, _ := e.Value.AsFloat64()
			if !e.Value.IsNumber() {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "%s must be a number", e.Key)
			}
			if !(f >= 0) {
				return nil, mongoerr.New(mongoerr.BadValue, "%s must be nonnegative", e.Key)
			}
			if e.Key == "maxDistance" {
				maxV = e.Value
			} else {
				minV = e.Value
			}
		case "distanceMultiplier":
			f, _ := e.Value.AsFloat64()
			if !e.Value.IsNumber() {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "distanceMultiplier must be a number")
			}
			if !(f >= 0) || math.IsInf(f, 0) {
				return nil, mongoerr.New(mongoerr.BadValue, "distanceMultiplier must be nonnegative")
			}
			g.multiplier = f
		case "query":
			if e.Value.Type != bson.TypeDocument {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "query must be an object")
			}
			g.Query = e.Value.Document()
		case "key":
			if e.Value.Type != bson.TypeString || e.Value.StringValue() == "" {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "$geoNear parameter 'key' must be of type string but found type: %s", e.Value.Type)
			}
			g.Near.Key = e.Value.StringValue()
		case "num", "limit":
			return nil, mongoerr.New(mongoerr.GeoNearNumRemoved, "$geoNear no longer supports the 'num' parameter. Use a $limit stage instead.")
		case "start":
			return nil, mongoerr.New(mongoerr.GeoNearStartRemoved, "$geoNear no longer supports the 'start' argument.")
		default:
			return nil, mongoerr.New(mongoerr.FailedToParse, "Unknown argument to $geoNear: %s", e.Key)
		}
	}
	if near.Type != bson.TypeArray && near.Type != bson.TypeDocument {
		return nil, mongoerr.New(mongoerr.GeoNearNearNotArray, "$geoNear requires a 'near' option as an Array")
	}
	if g.distanceField == nil {
		return nil, mongoerr.New(mongoerr.GeoNearDistanceFieldNotString, "$geoNear requires a 'distanceField' option as a String")
	}
	if t, ok := near.Document().Lookup("type"); near.Type == bson.TypeDocument && ok && t.Type == bson.TypeString {
		if err := g.Near.SetGeoJSONCenter("$geoNear", near); err != nil {
			return nil, err
		}
	} else {
		op := "$near" // a flat query: needs a 2d index
		if spherical {
			op = "$nearSphere"
		}
		if err := g.Near.SetLegacyCenter(op, near); err != nil {
			return nil, err
		}
	}
	if err := g.Near.SetBounds(maxV, minV); err != nil {
		return nil, err
	}
	if g.Query == nil {
		g.Query = bson.EmptyDoc
	}
	if _, inner, err := SplitNear(g.Query); err != nil {
		return nil, err
	} else if inner != nil {
		return nil, mongoerr.New(mongoerr.BadValue, "$geoNear may not contain a $near or $nearSphere in its query")
	}
	f, err := query.ParseFilter(g.Query, qopts)
	if err != nil {
		return nil, err
	}
	g.filter = f
	return g, nil
}

// GeoNearIter feeds a pipeline the documents of a $geoNear, computed in
// one snapshot on the first Next.
type GeoNearIter struct {
	HeldHits[NearHit]
	ctx  context.Context
	g    *GeoNearSpec
	walk WalkState
}

func NewGeoNearIter(ctx context.Context, env *Engine, g *GeoNearSpec) *GeoNearIter {
	t := &GeoNearIter{ctx: ctx, g: g}
	t.Env, t.DB, t.Coll, t.Load = env, g.db, g.coll, t.run
	return t
}

func (t *GeoNearIter) Next() (bson.Doc, error) {
	h, err := t.NextHit(t.ctx)
	if h == nil || err != nil {
		return nil, err
	}
	var b bson.Builder
	b.AppendDouble("d", t.g.Near.Distance(h.Dist)*t.g.multiplier)
	dist, _ := b.Finish().Lookup("d")
	out := bson.WithPath(h.Doc, t.g.distanceField, dist)
	if t.g.includeLocs != nil {
		out = bson.WithPath(out, t.g.includeLocs, h.Loc)
	}
	return out, nil
}

func (t *GeoNearIter) run(ctx context.Context, tx *kv.Tx, coll *catalog.Collection) ([]NearHit, error) {
	if coll == nil {
		return nil, nil // no collection: no documents
	}
	nc := *t.g.Near
	return NearSearch(ctx, tx, coll, &nc, t.g.filter, t.g.limit, &t.walk)
}
