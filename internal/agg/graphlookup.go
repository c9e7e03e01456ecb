package agg

import (
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/expr"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
)

func init() {
	register("$graphLookup", stageInfo{parse: parseGraphLookup})
}

// graphLookupStage is $graphLookup: for each document, a breadth-first
// search of another collection. The first level is the documents whose
// connectToField equals a value of startWith; each next level, those whose
// connectToField equals a connectFromField value of the level before, not
// yet searched for; each document is kept once, at the depth it was first
// reached. Every level is one query {connectToField: {$in: values}} (and
// restrictSearchWithMatch), which the catalog serves from an index on
// connectToField when there is one.
type graphLookupStage struct {
	ctx        *Context
	from       string
	startWith  expr.Expr
	fromPath   []string
	toField    string
	as         []string
	maxDepth   int64 // -1: unbounded
	depthField []string
	restrict   bson.Doc
}

func parseGraphLookup(c *Context, v bson.Value) (stage, error) {
	if v.Type != bson.TypeDocument {
		return nil, mongoerr.New(mongoerr.FailedToParse, "the $graphLookup stage specification must be an object, but found %s", v.Type)
	}
	s := &graphLookupStage{ctx: c, maxDepth: -1}
	var startWith bson.Value
	var as, from, fromField, toField string
	it := v.Document().Iter()
	for it.Next() {
		e := it.Element()
		str := func() (string, error) {
			if e.Value.Type != bson.TypeString {
				return "", mongoerr.New(mongoerr.GraphLookupArgNotString, "expected string as argument for %s, found: %s", e.Key, e.Value.String())
			}
			p := e.Value.StringValue()
			if err := checkFieldPath(p); err != nil {
				return "", err
			}
			return p, nil
		}
		var err error
		switch e.Key {
		case "from":
			if e.Value.Type != bson.TypeString || e.Value.StringValue() == "" {
				return nil, mongoerr.New(mongoerr.FailedToParse, "from must be a string, but found %s", e.Value.Type)
			}
			from = e.Value.StringValue()
		case "startWith":
			startWith = e.Value
		case "connectFromField":
			fromField, err = str()
		case "connectToField":
			toField, err = str()
		case "as":
			as, err = str()
		case "depthField":
			var d string
			if d, err = str(); err == nil {
				s.depthField = strings.Split(d, ".")
			}
		case "maxDepth":
			if !e.Value.IsNumber() {
				return nil, mongoerr.New(mongoerr.GraphLookupMaxDepthNotNumber, "Argument 'maxDepth' to $graphLookup must be a number, is type %s", e.Value.Type)
			}
			n, ok := e.Value.AsInt64()
			f, _ := e.Value.AsFloat64()
			if !ok || float64(n) != f {
				return nil, mongoerr.New(mongoerr.GraphLookupMaxDepthNotInt64, "Argument 'maxDepth' to $graphLookup must be representable as a long long, is %s", e.Value.String())
			}
			if n < 0 {
				return nil, mongoerr.New(mongoerr.GraphLookupMaxDepthNegative, "Argument 'maxDepth' to $graphLookup must be nonnegative, is %d", n)
			}
			s.maxDepth = n
		case "restrictSearchWithMatch":
			if e.Value.Type != bson.TypeDocument {
				return nil, mongoerr.New(mongoerr.GraphLookupRestrictNotObject, "Argument 'restrictSearchWithMatch' to $graphLookup must be an object, is type %s", e.Value.Type)
			}
			s.restrict = e.Value.Document()
		default:
			return nil, mongoerr.New(mongoerr.GraphLookupUnknownArgument, "Unknown argument to $graphLookup: %s", e.Key)
		}
		if err != nil {
			return nil, err
		}
	}
	if startWith.Type == 0 || as == "" || fromField == "" || toField == "" || from == "" {
		return nil, mongoerr.New(mongoerr.GraphLookupMissingArgument, "Must specify 'startWith', 'connectFromField', 'connectToField', 'as', and 'from'")
	}
	x, err := expr.Parse(startWith, c.Expr)
	if err != nil {
		return nil, err
	}
	if s.restrict != nil {
		// Checked now (mongod refuses $expr and $text here, as their
		// results would depend on the document being searched for).
		if _, err := query.ParseFilter(s.restrict, c.Query); err != nil {
			return nil, err
		}
	}
	s.from, s.startWith, s.fromPath, s.toField, s.as = from, x, strings.Split(fromField, "."), toField, strings.Split(as, ".")
	return s, nil
}

// checkFieldPath refuses what MongoDB's FieldPath refuses.
func checkFieldPath(p string) error {
	if p == "" {
		return mongoerr.New(mongoerr.FieldPathEmpty, "FieldPath cannot be constructed with empty string")
	}
	if strings.HasPrefix(p, "$") {
		return mongoerr.New(mongoerr.FieldPathDollarPrefix, "FieldPath field names may not start with '$'. Consider using $getField or $setField.")
	}
	for _, part := range strings.Split(p, ".") {
		if part == "" {
			return mongoerr.New(mongoerr.FieldPathEmptyName, "FieldPath field names may not be empty strings.")
		}
	}
	return nil
}

func (s *graphLookupStage) open(in Iterator) (Iterator, error) {
	if s.ctx.Catalog == nil {
		return nil, mongoerr.New(mongoerr.NotImplemented, "$graphLookup is not available here")
	}
	env := expr.NewEnv(s.ctx.Expr)
	return FuncIterator(func() (bson.Doc, error) {
		d, err := in.Next()
		if d == nil || err != nil {
			return nil, err
		}
		env.Reset()
		start, err := expr.Eval(s.startWith, d, env)
		if err != nil {
			return nil, err
		}
		found, err := s.search(start)
		if err != nil {
			return nil, err
		}
		return withDocs(d, s.as, found, "$graphLookup", s.from)
	}), nil
}

// search runs the breadth-first search from the value of startWith (each
// element of an array).
func (s *graphLookupStage) search(start bson.Value) ([]bson.Doc, error) {
	keys := &lookupStage{ctx: s.ctx}
	var next []bson.Value
	queried := map[string]bool{}
	queue := func(v bson.Value) {
		if v.Type == 0 {
			return
		}
		if k := keys.valueKey(v); !queried[k] {
			queried[k] = true
			next = append(next, bson.Value{Type: v.Type, Data: append([]byte(nil), v.Data...)})
		}
	}
	if start.Type == bson.TypeArray {
		for _, v := range start.Document().Values() {
			queue(v)
		}
	} else {
		queue(start)
	}
	var found []bson.Doc
	seen := map[string]bool{}
	var mem int64
	for depth := int64(0); len(next) > 0 && (s.maxDepth < 0 || depth <= s.maxDepth); depth++ {
		level, err := s.level(next)
		if err != nil {
			return nil, err
		}
		next = nil
		for _, doc := range level {
			id, _ := doc.Lookup("_id")
			k := keys.valueKey(id)
			if seen[k] {
				continue
			}
			seen[k] = true
			out := doc
			if s.depthField != nil {
				var b bson.Builder
				b.AppendInt64("d", depth)
				dv, _ := b.Finish().Lookup("d")
				out = bson.WithPath(doc, s.depthField, dv)
			}
			if mem += int64(len(out)); mem > s.ctx.memLimit() {
				return nil, mongoerr.New(mongoerr.GraphLookupMemoryLimit, "$graphLookup reached maximum memory consumption")
			}
			found = append(found, out)
			for _, v := range foreignValues(doc, s.fromPath) {
				if v.Type != bson.TypeArray {
					queue(v)
				}
			}
		}
		if err := s.ctx.check(); err != nil {
			return nil, err
		}
	}
	return found, nil
}

// level reads the documents whose connectToField equals one of values
// (and that restrictSearchWithMatch keeps).
func (s *graphLookupStage) level(values []bson.Value) ([]bson.Doc, error) {
	var b bson.Builder
	b.StartArray("$and")
	b.StartDocument("0")
	b.StartDocument(s.toField)
	b.StartArray("$in")
	for i, v := range values {
		b.AppendValue(bson.Index(i), v)
	}
	b.End()
	b.End()
	b.End()
	if s.restrict != nil {
		b.AppendDocument("1", s.restrict)
	}
	b.End()
	filterDoc := b.Finish()
	f, err := query.ParseFilter(filterDoc, s.ctx.Query)
	if err != nil {
		return nil, err
	}
	var it Iterator
	if fs, ok := s.ctx.Catalog.(FilteredScanner); ok {
		it, err = fs.ScanFiltered(s.ctx.DB, s.from, filterDoc)
	} else {
		it, err = s.ctx.Catalog.Scan(s.ctx.DB, s.from)
	}
	if err != nil {
		return nil, err
	}
	return collectMatching(s.ctx, it, f.Match)
}
