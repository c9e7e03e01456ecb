package agg

import (
	"slices"
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

func init() {
	register("$lookup", stageInfo{parse: parseLookup})
	register("$unionWith", stageInfo{parse: parseUnionWith})
}

// lookupStage joins each document with matching documents of another
// collection, by field equality, by a correlated pipeline, or both.
type lookupStage struct {
	ctx                     *Context
	fromDB, from            string
	as                      []string
	localField, foreignPath []string
	foreignField            string
	let                     bson.Doc
	pipeline                []bson.Doc
	hasPipeline             bool

	cache   map[string]*Pipeline
	noVars  []bson.Doc // results of an uncorrelated pipeline, once computed
	noVarsD bool
}

func parseLookup(c *Context, v bson.Value) (stage, error) {
	if v.Type != bson.TypeDocument {
		return nil, mongoerr.New(mongoerr.FailedToParse, "the $lookup specification must be an Object, but found %s", v.Type)
	}
	s := &lookupStage{ctx: c, fromDB: c.DB}
	var as, local, foreign string
	hasLocal, hasForeign := false, false
	it := v.Document().Iter()
	for it.Next() {
		e := it.Element()
		if e.Key == "pipeline" {
			if e.Value.Type != bson.TypeArray {
				return nil, mongoerr.New(mongoerr.FailedToParse, "'pipeline' option must be specified as an array")
			}
			s.hasPipeline = true
			sub := e.Value.Document().Iter()
			for sub.Next() {
				if sub.Element().Value.Type != bson.TypeDocument {
					return nil, mongoerr.New(mongoerr.FailedToParse, "$lookup stage 'pipeline' contains a non-object stage")
				}
				s.pipeline = append(s.pipeline, sub.Element().Value.Document())
			}
			continue
		}
		if e.Key == "let" {
			if e.Value.Type != bson.TypeDocument {
				return nil, mongoerr.New(mongoerr.FailedToParse, "$lookup argument 'let: %s' must be an object, is type %s", e.Value.String(), e.Value.Type)
			}
			s.let = e.Value.Document()
			continue
		}
		if e.Key == "from" && e.Value.Type == bson.TypeDocument {
			db, _ := e.Value.Document().Lookup("db")
			coll, _ := e.Value.Document().Lookup("coll")
			if db.Type != bson.TypeString || coll.Type != bson.TypeString {
				return nil, mongoerr.New(mongoerr.FailedToParse, "$lookup 'from' field must specify 'db' and 'coll' as strings")
			}
			s.fromDB, s.from = db.StringValue(), coll.StringValue()
			continue
		}
		if e.Value.Type != bson.TypeString {
			return nil, mongoerr.New(mongoerr.FailedToParse, "$lookup argument '%s: %s' must be a string, is type %s", e.Key, e.Value.String(), e.Value.Type)
		}
		sv := e.Value.StringValue()
		switch e.Key {
		case "from":
			s.from = sv
		case "as":
			as = sv
		case "localField":
			local, hasLocal = sv, true
		case "foreignField":
			foreign, hasForeign = sv, true
		default:
			return nil, mongoerr.New(mongoerr.FailedToParse, "unknown argument to $lookup: %s", e.Key)
		}
	}
	if as == "" {
		return nil, mongoerr.New(mongoerr.FailedToParse, "must specify 'as' field for a $lookup")
	}
	if err := validFieldPath("$lookup", as); err != nil {
		return nil, err
	}
	s.as = strings.Split(as, ".")
	if hasLocal != hasForeign {
		return nil, mongoerr.New(mongoerr.FailedToParse, "$lookup requires both or neither of 'localField' and 'foreignField' to be specified")
	}
	if !hasLocal && !s.hasPipeline {
		return nil, mongoerr.New(mongoerr.FailedToParse, "$lookup requires either 'pipeline' or both 'localField' and 'foreignField' to be specified")
	}
	if hasLocal {
		for _, f := range []string{local, foreign} {
			if err := validFieldPath("$lookup", f); err != nil {
				return nil, err
			}
		}
		s.localField, s.foreignField = strings.Split(local, "."), foreign
		s.foreignPath = strings.Split(foreign, ".")
	}
	if s.from == "" && (!s.hasPipeline || len(s.pipeline) == 0 || firstKey(s.pipeline[0]) != "$documents") {
		return nil, mongoerr.New(mongoerr.FailedToParse, "must specify 'from' field for a $lookup")
	}
	if s.from != "" {
		if err := checkTargetName(s.from); err != nil && !strings.HasPrefix(s.from, "system.") {
			return nil, err
		}
	}
	// Parse now to report errors in the sub-pipeline (and its variables).
	if s.hasPipeline {
		vars := bson.EmptyDoc
		if s.let != nil {
			var b bson.Builder
			it := s.let.Iter()
			for it.Next() {
				b.AppendNull(it.Element().Key)
			}
			vars = b.Finish()
		}
		if _, err := s.pipelineFor(vars); err != nil {
			return nil, err
		}
		s.cache = nil
	}
	return s, nil
}

func (s *lookupStage) pipelineFor(vars bson.Doc) (*Pipeline, error) {
	if p := s.cache[string(vars)]; p != nil {
		return p, nil
	}
	c := s.ctx.sub("$lookup")
	c.DB, c.Coll = s.fromDB, s.from
	if len(vars) > 5 {
		withVars(c, vars)
	}
	p, err := Parse(c, s.pipeline)
	if err != nil {
		return nil, err
	}
	if s.cache == nil || len(s.cache) > 256 {
		s.cache = map[string]*Pipeline{}
	}
	s.cache[string(vars)] = p
	return p, nil
}

// foreign returns the documents of the foreign collection.
func (s *lookupStage) foreign() (Iterator, error) {
	if s.from == "" {
		return empty, nil
	}
	if s.ctx.Catalog == nil {
		return nil, mongoerr.New(mongoerr.NotImplemented, "$lookup is not available here")
	}
	return s.ctx.Catalog.Scan(s.fromDB, s.from)
}

// foreignFor returns the documents of the foreign collection that p's
// leading $match may keep: from an index when the catalog can serve one
// (a correlated {$expr: {$eq: ["$field", "$$var"]}} becomes an equality on
// field), else all of them.
func (s *lookupStage) foreignFor(p *Pipeline) (Iterator, error) {
	if fs, ok := s.ctx.Catalog.(FilteredScanner); ok && s.from != "" {
		if f := p.IndexFilter(); f != nil {
			return fs.ScanFiltered(s.fromDB, s.from, f)
		}
	}
	return s.foreign()
}

func (s *lookupStage) open(in Iterator) (Iterator, error) {
	var index *equalityIndex
	return FuncIterator(func() (bson.Doc, error) {
		d, err := in.Next()
		if d == nil || err != nil {
			return nil, err
		}
		var matches []bson.Doc
		if s.localField != nil {
			if index == nil {
				if index, err = s.buildIndex(); err != nil {
					return nil, err
				}
			}
			locals := lookupPathValues(d, s.localField)
			if index.tooBig {
				matches, err = s.scanMatches(locals)
				if err != nil {
					return nil, err
				}
			} else {
				matches = index.lookup(s.ctx, locals)
			}
		}
		if s.hasPipeline {
			if matches, err = s.runPipeline(d, matches); err != nil {
				return nil, err
			}
		}
		out, err := withDocs(d, s.as, matches, "$lookup", s.from)
		if err != nil {
			return nil, err
		}
		return out, nil
	}), nil
}

func (s *lookupStage) runPipeline(d bson.Doc, matches []bson.Doc) ([]bson.Doc, error) {
	correlated := len(s.let) > 5 || s.localField != nil
	if !correlated && s.noVarsD {
		return s.noVars, nil
	}
	vars := bson.EmptyDoc
	if len(s.let) > 5 {
		var err error
		if vars, err = evalVars(s.ctx, s.let, d); err != nil {
			return nil, err
		}
	}
	p, err := s.pipelineFor(vars)
	if err != nil {
		return nil, err
	}
	out, err := s.runOn(p, matches)
	if err != nil {
		return nil, err
	}
	res, err := Drain(out)
	if err != nil {
		return nil, err
	}
	if !correlated {
		s.noVars, s.noVarsD = res, true
	}
	return res, nil
}

// runOn starts p over its input: matches with localField, else the
// foreign collection, as the catalog runs it best (PipelineRunner).
func (s *lookupStage) runOn(p *Pipeline, matches []bson.Doc) (Iterator, error) {
	switch {
	case s.localField != nil:
		return p.Run(&SliceIterator{Docs: slices.Clone(matches)})
	case p.StartsWithSource():
		return p.Run(empty)
	}
	if pr, ok := s.ctx.Catalog.(PipelineRunner); ok && s.from != "" {
		if it, ok, err := pr.RunPipeline(s.fromDB, s.from, p); err != nil || ok {
			return it, err
		}
	}
	src, err := s.foreignFor(p)
	if err != nil {
		return nil, err
	}
	return p.Run(src)
}

// equalityIndex maps the encoded values of the foreign field to the
// positions of the foreign documents holding them.
type equalityIndex struct {
	docs []bson.Doc
	m    map[string][]int
	// tooBig is set when the foreign collection exceeds the memory limit:
	// each lookup then scans it.
	tooBig bool
}

func (s *lookupStage) valueKey(v bson.Value) string {
	if v.Type == 0 || v.Type == bson.TypeUndefined {
		v = bson.Value{Type: bson.TypeNull, Data: []byte{}}
	}
	if c := s.ctx.collation(); c != nil {
		return string(bson.AppendKeyCollated(nil, v, false, c))
	}
	return string(bson.AppendKey(nil, v, false))
}

func (s *lookupStage) buildIndex() (*equalityIndex, error) {
	it, err := s.foreign()
	if err != nil {
		return nil, err
	}
	ix := &equalityIndex{m: map[string][]int{}}
	var mem int64
	for {
		d, err := it.Next()
		if err != nil {
			return nil, err
		}
		if d == nil {
			break
		}
		d = cloneDoc(d)
		mem += int64(len(d)) + 64
		if mem > s.ctx.memLimit() {
			return &equalityIndex{tooBig: true}, nil
		}
		n := len(ix.docs)
		ix.docs = append(ix.docs, d)
		seen := map[string]bool{}
		for _, v := range foreignValues(d, s.foreignPath) {
			k := s.valueKey(v)
			if !seen[k] {
				seen[k] = true
				ix.m[k] = append(ix.m[k], n)
			}
		}
	}
	return ix, nil
}

// scanMatches reads the foreign collection for documents whose foreign
// field equals one of locals.
func (s *lookupStage) scanMatches(locals []bson.Value) ([]bson.Doc, error) {
	want := map[string]bool{}
	for _, v := range locals {
		want[s.valueKey(v)] = true
	}
	it, err := s.foreign()
	if err != nil {
		return nil, err
	}
	return collectMatching(s.ctx, it, func(d bson.Doc) bool {
		for _, v := range foreignValues(d, s.foreignPath) {
			if want[s.valueKey(v)] {
				return true
			}
		}
		return false
	})
}

// withDocs returns d with docs, as an array, at path: the output of
// $lookup and $graphLookup, refused past 16 MiB (4568) as in mongod.
func withDocs(d bson.Doc, path []string, docs []bson.Doc, stage, from string) (bson.Doc, error) {
	var b bson.Builder
	b.StartArray("a")
	for i, m := range docs {
		b.AppendDocument(bson.Index(i), m)
	}
	b.End()
	arr, _ := b.Finish().Lookup("a")
	out := bson.WithPath(d, path, arr)
	if len(out) > 16*1024*1024 {
		return nil, mongoerr.New(mongoerr.LookupResultTooLarge, "Total size of documents in %s matching pipeline's %s stage exceeds %d bytes", from, stage, 16*1024*1024)
	}
	return out, nil
}

// collectMatching reads it to the end and returns copies of the documents
// keep accepts, checking c (maxTimeMS, killOp) as it goes.
func collectMatching(c *Context, it Iterator, keep func(bson.Doc) bool) ([]bson.Doc, error) {
	var out []bson.Doc
	for n := 0; ; n++ {
		d, err := it.Next()
		if err != nil || d == nil {
			return out, err
		}
		if n&1023 == 1023 {
			if err := c.check(); err != nil {
				return nil, err
			}
		}
		if keep(d) {
			out = append(out, cloneDoc(d))
		}
	}
}

func (ix *equalityIndex) lookup(c *Context, locals []bson.Value) []bson.Doc {
	s := &lookupStage{ctx: c}
	var hits []int
	seen := map[int]bool{}
	for _, v := range locals {
		for _, i := range ix.m[s.valueKey(v)] {
			if !seen[i] {
				seen[i] = true
				hits = append(hits, i)
			}
		}
	}
	slices.Sort(hits)
	out := make([]bson.Doc, len(hits))
	for i, h := range hits {
		out[i] = ix.docs[h]
	}
	return out
}

// lookupPathValues returns the values the local field contributes: the
// elements of an array (an empty array contributes nothing... but matches
// null as MongoDB's $in with the array does not), the value itself
// otherwise; missing is null.
func lookupPathValues(d bson.Doc, path []string) []bson.Value {
	vals := foreignValues(d, path)
	var out []bson.Value
	for _, v := range vals {
		if v.Type == bson.TypeArray {
			continue
		}
		out = append(out, v)
	}
	if len(out) == 0 && len(vals) == 0 {
		out = append(out, bson.Value{})
	}
	return out
}

// foreignValues collects the values reachable at path, as a query's
// equality sees them: arrays along the path are traversed, a final array
// contributes itself and its elements, and a missing field is missing
// (which equals null).
func foreignValues(d bson.Doc, path []string) []bson.Value {
	var out []bson.Value
	var walk func(v bson.Value, i int)
	walk = func(v bson.Value, i int) {
		if i == len(path) {
			out = append(out, v)
			if v.Type == bson.TypeArray {
				it := v.Document().Iter()
				for it.Next() {
					out = append(out, it.Element().Value)
				}
			}
			return
		}
		switch v.Type {
		case bson.TypeDocument:
			nv, ok := v.Document().Lookup(path[i])
			if !ok {
				out = append(out, bson.Value{})
				return
			}
			walk(nv, i+1)
		case bson.TypeArray:
			it := v.Document().Iter()
			for it.Next() {
				e := it.Element().Value
				if e.Type == bson.TypeDocument {
					walk(e, i)
				}
			}
		default:
			out = append(out, bson.Value{})
		}
	}
	walk(bson.Value{Type: bson.TypeDocument, Data: d}, 0)
	return out
}

// unionWithStage outputs its input, then the documents of another
// collection through an optional pipeline.
type unionWithStage struct {
	ctx      *Context
	coll     string
	pipeline *Pipeline
}

func parseUnionWith(c *Context, v bson.Value) (stage, error) {
	s := &unionWithStage{ctx: c}
	switch v.Type {
	case bson.TypeString:
		s.coll = v.StringValue()
	case bson.TypeDocument:
		it := v.Document().Iter()
		for it.Next() {
			e := it.Element()
			switch e.Key {
			case "coll":
				if e.Value.Type != bson.TypeString {
					return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '$unionWith.coll' is the wrong type '%s', expected type 'string'", e.Value.Type)
				}
				s.coll = e.Value.StringValue()
			case "pipeline":
				sc := *c
				sc.Coll = "x"
				p, _, err := parseSubPipeline(&sc, e.Value, "$unionWith", "pipeline")
				if err != nil {
					return nil, err
				}
				s.pipeline = p
			default:
				return nil, mongoerr.New(mongoerr.IDLUnknownField, "BSON field '$unionWith.%s' is an unknown field.", e.Key)
			}
		}
	default:
		return nil, mongoerr.New(mongoerr.FailedToParse, "the $unionWith stage specification must be an object or string, but found %s", v.Type)
	}
	if s.coll == "" && (s.pipeline == nil || !s.pipeline.StartsWithSource()) {
		return nil, mongoerr.New(mongoerr.FailedToParse, "$unionWith stage without explicit collection must have a pipeline with $documents as first stage")
	}
	return s, nil
}

func (s *unionWithStage) open(in Iterator) (Iterator, error) {
	var second Iterator
	first := true
	return FuncIterator(func() (bson.Doc, error) {
		if first {
			d, err := in.Next()
			if d != nil || err != nil {
				return d, err
			}
			first = false
			if pr, ok := s.ctx.Catalog.(PipelineRunner); ok && s.coll != "" && s.pipeline != nil && !s.pipeline.StartsWithSource() {
				it, ran, err := pr.RunPipeline(s.ctx.DB, s.coll, s.pipeline)
				if err != nil {
					return nil, err
				}
				if ran {
					second = it
					return second.Next()
				}
			}
			var src Iterator = empty
			if s.coll != "" && (s.pipeline == nil || !s.pipeline.StartsWithSource()) {
				if s.ctx.Catalog == nil {
					return nil, mongoerr.New(mongoerr.NotImplemented, "$unionWith is not available here")
				}
				if src, err = s.ctx.Catalog.Scan(s.ctx.DB, s.coll); err != nil {
					return nil, err
				}
			}
			second = src
			if s.pipeline != nil {
				if second, err = s.pipeline.Run(src); err != nil {
					return nil, err
				}
			}
		}
		return second.Next()
	}), nil
}
