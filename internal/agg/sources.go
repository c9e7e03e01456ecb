package agg

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/expr"
	"github.com/cairndb/cairn/internal/mongoerr"
)

func init() {
	register("$documents", stageInfo{parse: parseDocuments, source: true, collectionless: true})
	register("$collStats", stageInfo{parse: parseCollStats, source: true})
	register("$indexStats", stageInfo{parse: parseIndexStats, source: true})
	register("$planCacheStats", stageInfo{parse: parsePlanCacheStats, source: true})
	register("$listLocalSessions", stageInfo{parse: parseListLocalSessions, source: true, collectionless: true})
	register("$listSessions", stageInfo{parse: parseListSessions, source: true})
}

// SessionLister answers $listSessions from config.system.sessions.
type SessionLister interface {
	ListSessions(spec bson.Doc) ([]bson.Doc, error)
}

// documentsStage is $documents: the documents of a constant array
// expression (let variables allowed, no field paths).
type documentsStage struct {
	docs []bson.Doc
}

func parseDocuments(c *Context, v bson.Value) (stage, error) {
	x, err := expr.Parse(v, c.Expr)
	if err != nil {
		return nil, err
	}
	env := expr.NewEnv(c.Expr)
	r, err := expr.Eval(x, bson.EmptyDoc, env)
	if err != nil {
		return nil, err
	}
	if r.Type != bson.TypeArray {
		return nil, mongoerr.New(mongoerr.DocumentsNotArray, "an array is expected")
	}
	s := &documentsStage{}
	it := r.Document().Iter()
	for it.Next() {
		e := it.Element().Value
		if e.Type != bson.TypeDocument {
			return nil, mongoerr.New(mongoerr.ReplaceRootNotObject, "'newRoot' expression  must evaluate to an object, but resulting value was: %s. Type of resulting value: '%s'. Input document: {}", e.String(), e.Type)
		}
		s.docs = append(s.docs, cloneDoc(e.Document()))
	}
	return s, nil
}

func (s *documentsStage) open(Iterator) (Iterator, error) {
	return &SliceIterator{Docs: append([]bson.Doc(nil), s.docs...)}, nil
}

// catalogStage produces documents from the Catalog.
type catalogStage struct {
	name string
	fn   func(Catalog) ([]bson.Doc, error)
	ctx  *Context
}

func (s *catalogStage) open(Iterator) (Iterator, error) {
	if s.ctx.Catalog == nil {
		return nil, mongoerr.New(mongoerr.NotImplemented, "%s is not available here", s.name)
	}
	docs, err := s.fn(s.ctx.Catalog)
	if err != nil {
		return nil, err
	}
	return &SliceIterator{Docs: docs}, nil
}

func parseCollStats(c *Context, v bson.Value) (stage, error) {
	if v.Type != bson.TypeDocument {
		return nil, mongoerr.New(mongoerr.CollStatsNotObject, "$collStats must take a nested object but found: %s", v.String())
	}
	it := v.Document().Iter()
	for it.Next() {
		e := it.Element()
		switch e.Key {
		case "latencyStats", "storageStats", "count", "queryExecStats":
			if e.Value.Type != bson.TypeDocument {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '$collStats.%s' is the wrong type '%s', expected type 'object'", e.Key, e.Value.Type)
			}
		default:
			return nil, mongoerr.New(mongoerr.IDLUnknownField, "BSON field '$collStats.%s' is an unknown field.", e.Key)
		}
	}
	spec := v.Document()
	db, coll := c.DB, c.Coll
	return &catalogStage{name: "$collStats", ctx: c, fn: func(cat Catalog) ([]bson.Doc, error) {
		d, err := cat.CollStats(db, coll, spec)
		if err != nil {
			return nil, err
		}
		return []bson.Doc{d}, nil
	}}, nil
}

func parseIndexStats(c *Context, v bson.Value) (stage, error) {
	if v.Type != bson.TypeDocument {
		return nil, mongoerr.New(mongoerr.IndexStatsNotEmptyObject, "The $indexStats stage specification must be an empty object")
	}
	if v.Document().Len() != 0 {
		return nil, mongoerr.New(mongoerr.IndexStatsNotEmptyObject, "The $indexStats stage specification must be an empty object")
	}
	db, coll := c.DB, c.Coll
	return &catalogStage{name: "$indexStats", ctx: c, fn: func(cat Catalog) ([]bson.Doc, error) {
		return cat.IndexStats(db, coll)
	}}, nil
}

// PlanCacheReader is implemented by catalogs that keep a plan cache.
type PlanCacheReader interface {
	// PlanCacheStats answers $planCacheStats for db.coll.
	PlanCacheStats(db, coll string) ([]bson.Doc, error)
}

func parsePlanCacheStats(c *Context, v bson.Value) (stage, error) {
	if v.Type != bson.TypeDocument {
		return nil, mongoerr.New(mongoerr.FailedToParse, "$planCacheStats value must be an object. Found: %s", v.Type)
	}
	it := v.Document().Iter()
	for it.Next() {
		if e := it.Element(); e.Key != "allShards" || e.Value.Type != bson.TypeBoolean {
			return nil, mongoerr.New(mongoerr.FailedToParse, "unrecognized option to $planCacheStats: %s", e.Key)
		}
	}
	db, coll := c.DB, c.Coll
	return &catalogStage{name: "$planCacheStats", ctx: c, fn: func(cat Catalog) ([]bson.Doc, error) {
		pc, ok := cat.(PlanCacheReader)
		if !ok {
			return nil, mongoerr.New(mongoerr.NotImplemented, "$planCacheStats is not supported here")
		}
		return pc.PlanCacheStats(db, coll)
	}}, nil
}

// parseListSessions reads $listSessions, which lists the records of
// config.system.sessions and runs only there.
func parseListSessions(c *Context, v bson.Value) (stage, error) {
	if c.DB != "config" || c.Coll != "system.sessions" {
		return nil, mongoerr.New(mongoerr.InvalidNamespace, "$listSessions may only be run against config.system.sessions")
	}
	if err := checkSessionsSpec("$listSessions", v); err != nil {
		return nil, err
	}
	spec := v.Document()
	return &catalogStage{name: "$listSessions", ctx: c, fn: func(cat Catalog) ([]bson.Doc, error) {
		sl, ok := cat.(SessionLister)
		if !ok {
			return nil, mongoerr.New(mongoerr.NotImplemented, "$listSessions is not supported here")
		}
		return sl.ListSessions(spec)
	}}, nil
}

func parseListLocalSessions(c *Context, v bson.Value) (stage, error) {
	if err := checkSessionsSpec("$listLocalSessions", v); err != nil {
		return nil, err
	}
	spec := v.Document()
	return &catalogStage{name: "$listLocalSessions", ctx: c, fn: func(cat Catalog) ([]bson.Doc, error) {
		return cat.LocalSessions(spec)
	}}, nil
}

// checkSessionsSpec checks the options of $listLocalSessions and
// $listSessions: {allUsers: bool, users: [{user, db}]}.
func checkSessionsSpec(name string, v bson.Value) error {
	if v.Type != bson.TypeDocument {
		return mongoerr.New(mongoerr.TypeMismatch, "%s options must be specified in an object, but found: %s", name, v.Type)
	}
	it := v.Document().Iter()
	for it.Next() {
		e := it.Element()
		switch e.Key {
		case "allUsers":
			if e.Value.Type != bson.TypeBoolean {
				return mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s.allUsers' is the wrong type '%s', expected type 'bool'", name, e.Value.Type)
			}
		case "users":
			if e.Value.Type != bson.TypeArray {
				return mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s.users' is the wrong type '%s', expected type 'array'", name, e.Value.Type)
			}
		default:
			return mongoerr.New(mongoerr.IDLUnknownField, "BSON field '%s.%s' is an unknown field.", name, e.Key)
		}
	}
	return nil
}
