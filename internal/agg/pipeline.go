package agg

import (
	"math"
	"slices"
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/expr"
	"github.com/cairndb/cairn/internal/extsort"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
	"github.com/cairndb/cairn/internal/timeseries"
)

// DefaultMemoryLimit is the memory one blocking stage may use before it
// must spill (allowDiskUse) or fail with QueryExceededMemoryLimitNoDiskUseAllowed,
// as MongoDB's internalQueryMaxBlockingSortMemoryUsageBytes and
// internalDocumentSourceGroupMaxMemoryBytes (100 MiB).
const DefaultMemoryLimit = 100 * 1024 * 1024

// Catalog gives a pipeline access to collections other than its input and
// to server state. Any method may be left unimplemented by returning a
// NotImplemented error; a nil Catalog refuses every such stage.
type Catalog interface {
	// Scan returns the documents of db.coll in _id order; an absent
	// collection has none.
	Scan(db, coll string) (Iterator, error)
	// Out replaces db.coll with the documents of in ($out).
	Out(spec *OutSpec, in Iterator) error
	// Merge merges the documents of in into spec's collection ($merge).
	Merge(spec *MergeSpec, in Iterator) error
	// CollStats answers $collStats for db.coll.
	CollStats(db, coll string, spec bson.Doc) (bson.Doc, error)
	// IndexStats answers $indexStats for db.coll.
	IndexStats(db, coll string) ([]bson.Doc, error)
	// LocalSessions answers $listLocalSessions.
	LocalSessions(spec bson.Doc) ([]bson.Doc, error)
}

// Context is what parsing and running a pipeline needs from the command.
type Context struct {
	// DB and Coll name the input; Coll is "" for {aggregate: 1}.
	DB, Coll string
	// Query carries the collation and let variables for $match.
	Query *query.Options
	// Expr carries the collation, let variables and $$NOW for expressions.
	Expr *expr.Options
	// AllowDiskUse lets blocking stages spill to TempDir.
	AllowDiskUse bool
	TempDir      string
	// Spill, if set, counts what the pipeline's stages spill (explain's
	// and the slow query log's usedDisk).
	Spill *extsort.Stats
	// MemoryLimit bounds each blocking stage (0: DefaultMemoryLimit).
	MemoryLimit int64
	// Catalog serves $lookup, $unionWith, $out, $merge and the metadata
	// stages.
	Catalog Catalog
	// Check is called periodically by long-running stages; an error stops
	// the pipeline (maxTimeMS, killOp).
	Check func() error

	depth  int    // sub-pipeline nesting
	within string // "$lookup", "$facet", "$unionWith" for sub-pipelines
}

func (c *Context) memLimit() int64 {
	if c.MemoryLimit > 0 {
		return c.MemoryLimit
	}
	return DefaultMemoryLimit
}

func (c *Context) check() error {
	if c.Check != nil {
		return c.Check()
	}
	return nil
}

// sub returns a context for a sub-pipeline.
func (c *Context) sub(within string) *Context {
	s := *c
	s.depth++
	s.within = within
	return &s
}

// collation is the comparer for strings (nil: binary).
func (c *Context) collation() *query.Collation {
	if c.Query == nil {
		return nil
	}
	return c.Query.Collation
}

// Pipeline is a parsed aggregation pipeline.
type Pipeline struct {
	ctx    *Context
	stages []stage
	specs  []bson.Doc
	// stageSpecs[i] is the specification of stages[i] (the optimizer may
	// drop stages; specs stays as written).
	stageSpecs []bson.Doc
	// Filter is the leading $match, which the caller may apply while it
	// reads the collection (the pipeline applies it anyway).
	Filter *query.Filter
}

// stage is one parsed stage; open connects it to its input for one run.
type stage interface {
	open(in Iterator) (Iterator, error)
}

// stageInfo describes where a stage may appear.
type stageInfo struct {
	parse func(c *Context, v bson.Value) (stage, error)
	// source stages produce their own documents and must come first.
	source bool
	// final stages ($out, $merge) must come last.
	final bool
	// collectionless stages may start an {aggregate: 1} pipeline.
	collectionless bool
}

var stageTable map[string]stageInfo

func register(name string, info stageInfo) {
	if stageTable == nil {
		stageTable = map[string]stageInfo{}
	}
	stageTable[name] = info
}

// unsupportedStages are MongoDB stages Cairn does not run: they answer
// NotImplemented naming the stage rather than "unrecognized".
var unsupportedStages = map[string]bool{
	"$geoNear": true, "$currentOp": true,
	"$changeStream": true, "$changeStreamSplitLargeEvent": true,
	"$search": true, "$searchMeta": true, "$vectorSearch": true,
	"$listSampledQueries": true, "$shardedDataDistribution": true, "$queryStats": true,
	"$listCatalog": true,
}

// maxSubPipelineDepth bounds $lookup/$facet/$unionWith nesting (MongoDB's
// internalMaxSubPipelineViewDepth is 100; nesting that deep would also
// exceed BSON's depth).
const maxSubPipelineDepth = 20

// Parse compiles a pipeline (an array of single-field stage documents).
func Parse(c *Context, stages []bson.Doc) (*Pipeline, error) {
	if c.Query == nil {
		c.Query = &query.Options{}
	}
	if c.Expr == nil {
		c.Expr = &expr.Options{Let: c.Query.Let}
	}
	if c.Expr.Collation == nil && c.Query.Collation != nil {
		c.Expr.Collation = c.Query.Collation
	}
	if c.depth > maxSubPipelineDepth {
		return nil, mongoerr.New(mongoerr.BadValue, "Maximum number of nested sub-pipelines exceeded. Limit is %d", maxSubPipelineDepth)
	}
	p := &Pipeline{ctx: c}
	stages = timeseries.Rewrite(stages)
	// {$meta: "textScore"} is available from the first stage of a
	// top-level pipeline over a $text query (the caller sets
	// c.Expr.TextScore) until a stage that does not hand on each
	// document's score (see keepsScore); after it, it is refused (40218).
	cell := c.Expr.TextScore
	defer func() { c.Expr.TextScore = cell }()
	if c.depth > 0 {
		c.Expr.TextScore = nil
	}
	for i, sd := range stages {
		if sd.Len() != 1 {
			return nil, mongoerr.New(mongoerr.PipelineStageNotOneField, "A pipeline stage specification object must contain exactly one field.")
		}
		it := sd.Iter()
		it.Next()
		e := it.Element()
		info, ok := stageTable[e.Key]
		if !ok {
			if e.Key == "$listSearchIndexes" {
				// mongod 7.0 without Atlas's search index manager.
				return nil, mongoerr.New(mongoerr.ListSearchIndexesNotAtlas, "$listSearchIndexes stage is only allowed on MongoDB Atlas")
			}
			if unsupportedStages[e.Key] {
				return nil, mongoerr.New(mongoerr.NotImplemented, "pipeline stage %s is not supported by Cairn", e.Key)
			}
			return nil, mongoerr.New(mongoerr.PipelineUnknownStage, "Unrecognized pipeline stage name: '%s'", e.Key)
		}
		if info.source && i != 0 {
			return nil, mongoerr.New(mongoerr.StageMustBeFirst, "%s is only valid as the first stage in a pipeline", e.Key)
		}
		if info.final && i != len(stages)-1 {
			return nil, mongoerr.New(mongoerr.StageMustBeLast, "%s can only be the final stage in the pipeline", e.Key)
		}
		if info.final && c.within != "" {
			if c.within == "$facet" {
				return nil, mongoerr.New(mongoerr.StageNotAllowedInFacet, "%s is not allowed to be used within a $facet stage", e.Key)
			}
			return nil, mongoerr.New(mongoerr.StageNotAllowedInSubPipeline, "%s is not allowed within a %s's sub-pipeline", e.Key, c.within)
		}
		if i == 0 && c.Coll == "" && c.within == "" && !info.collectionless {
			return nil, mongoerr.New(mongoerr.InvalidNamespace, "{aggregate: 1} is not valid for '%s'; a collection is required.", e.Key)
		}
		st, err := info.parse(c, e.Value)
		if err != nil {
			return nil, err
		}
		if !keepsScore(st) {
			c.Expr.TextScore = nil
		}
		if m, ok := st.(*matchStage); ok && i == 0 && m.exp == nil {
			p.Filter = m.f
		}
		p.stages = append(p.stages, st)
		p.specs = append(p.specs, sd)
	}
	p.optimize()
	return p, nil
}

// keepsScore reports whether a stage hands each document on with its
// $text score: stages that pass documents through one by one ($match,
// $project, $addFields, $set, $unset, $limit, $skip, $unwind) and $sort,
// which carries the scores. Other stages build new documents, buffer
// them, or mix in documents of other collections.
func keepsScore(st stage) bool {
	switch st.(type) {
	case *matchStage, *projectStage, *limitStage, *skipStage, *unwindStage, *sortStage:
		return true
	}
	return false
}

// optimize rewrites the stages as MongoDB's optimizer does, without
// changing results:
//   - a $limit after a $sort, separated from it only by one-to-one stages
//     ($project, $set, $addFields, $unset) and at most one $skip, bounds
//     the sort: it keeps the best skip+limit documents (a top-k);
//   - a $project or $unset of plain inclusions or exclusions right before
//     $count is dropped (it changes no count and cannot fail);
//   - a $group followed by a top-k $sort hands on only the results the
//     top-k keeps (groupStage.topk).
func (p *Pipeline) optimize() {
	for i, s := range p.stages {
		st, ok := s.(*sortStage)
		if !ok || st.limit != 0 {
			continue
		}
		var skip int64
		for j := i + 1; j < len(p.stages); j++ {
			if l, ok := p.stages[j].(*limitStage); ok {
				cp := *st
				cp.limit = l.n
				if skip > 0 && skip <= math.MaxInt64-l.n {
					cp.limit += skip
				} else if skip > 0 {
					break
				}
				p.stages[i] = &cp
				break
			}
			if sk, ok := p.stages[j].(*skipStage); ok && skip == 0 {
				skip = sk.n
				continue
			}
			if _, ok := p.stages[j].(*projectStage); !ok {
				break
			}
		}
	}
	for i, s := range p.stages[:max(len(p.stages)-1, 0)] {
		if g, ok := s.(*groupStage); ok {
			if st, ok := p.stages[i+1].(*sortStage); ok && st.limit > 0 && st.limit <= lateLimit {
				if idx, ok := g.sortFields(p.specs[i+1]); ok {
					g.topk, g.topkIdx = st, idx
				}
			}
			if l, ok := p.stages[i+1].(*limitStage); ok && l.n > 0 && l.n <= lateLimit && !g.idRand {
				g.firstKeys = int(l.n)
			}
		}
	}
	p.narrowUnpacks()
	out := p.stages[:0:0]
	var outSpecs []bson.Doc
	for i, s := range p.stages {
		if i+1 < len(p.stages) {
			if _, ok := p.stages[i+1].(*countStage); ok && plainProjection(p.specs[i]) {
				continue
			}
		}
		out = append(out, s)
		outSpecs = append(outSpecs, p.specs[i])
	}
	p.stages, p.stageSpecs = out, outSpecs
}

// plainProjection reports whether a $project or $unset stage only keeps or
// drops fields (no computed values).
func plainProjection(spec bson.Doc) bool {
	it := spec.Iter()
	if !it.Next() {
		return false
	}
	e := it.Element()
	switch e.Key {
	case "$unset":
		return true
	case "$project":
		if e.Value.Type != bson.TypeDocument {
			return false
		}
		fit := e.Value.Document().Iter()
		for fit.Next() {
			switch v := fit.Element().Value; v.Type {
			case bson.TypeBoolean, bson.TypeInt32, bson.TypeInt64, bson.TypeDouble:
			default:
				return false
			}
		}
		return true
	}
	return false
}

// StartsWithSource reports whether the pipeline's first stage produces
// its own documents ($documents, $collStats, ...), ignoring the input.
func (p *Pipeline) StartsWithSource() bool {
	if len(p.specs) == 0 {
		return false
	}
	return stageTable[firstKey(p.specs[0])].source
}

// Writes reports whether the pipeline ends with $out or $merge.
func (p *Pipeline) Writes() bool {
	if len(p.specs) == 0 {
		return false
	}
	return stageTable[firstKey(p.specs[len(p.specs)-1])].final
}

// Run connects the pipeline to its input.
func (p *Pipeline) Run(in Iterator) (Iterator, error) {
	var err error
	for _, s := range p.stages {
		if in, err = s.open(in); err != nil {
			return nil, err
		}
	}
	return in, nil
}

// Explain appends the pipeline's stages, as MongoDB's explain shows them.
func (p *Pipeline) Explain(b *bson.Builder, key string) {
	b.StartArray(key)
	for i, sd := range p.specs {
		b.AppendDocument(bson.Index(i), sd)
	}
	b.End()
}

func firstKey(d bson.Doc) string {
	it := d.Iter()
	if it.Next() {
		return it.Element().Key
	}
	return ""
}

// parseSubPipeline reads an array of stages.
func parseSubPipeline(c *Context, v bson.Value, within, field string) (*Pipeline, []bson.Doc, error) {
	if v.Type != bson.TypeArray {
		return nil, nil, mongoerr.New(mongoerr.TypeMismatch, "%s.%s must be an array", strings.TrimPrefix(within, "$"), field)
	}
	var stages []bson.Doc
	it := v.Document().Iter()
	for it.Next() {
		e := it.Element().Value
		if e.Type != bson.TypeDocument {
			return nil, nil, mongoerr.New(mongoerr.TypeMismatch, "Each element of the '%s' array must be an object", field)
		}
		stages = append(stages, e.Document())
	}
	p, err := Parse(c.sub(within), stages)
	return p, stages, err
}

// RunFiltered is Run for an input already filtered by p.Filter: the
// leading $match is not applied again.
func (p *Pipeline) RunFiltered(in Iterator) (Iterator, error) {
	if p.Filter == nil {
		return p.Run(in)
	}
	var err error
	for _, s := range p.stages[1:] {
		if in, err = s.open(in); err != nil {
			return nil, err
		}
	}
	return in, nil
}

// LeadingSort returns the specification of the $sort that comes first,
// or right after the leading $match that Filter compiles, when it sorts
// on plain fields (no $meta): an input already in that order, filtered by
// Filter, may be run with RunSorted.
func (p *Pipeline) LeadingSort() (bson.Doc, bool) {
	i := 0
	if p.Filter != nil {
		i = 1
	}
	if i >= len(p.stages) {
		return nil, false
	}
	if _, ok := p.stages[i].(*sortStage); !ok {
		return nil, false
	}
	v, _ := p.stageSpecs[i].Lookup("$sort")
	if v.Type != bson.TypeDocument {
		return nil, false
	}
	it := v.Document().Iter()
	for it.Next() {
		if !it.Element().Value.IsNumber() {
			return nil, false
		}
	}
	return v.Document(), true
}

// RunSorted is Run for an input already filtered by p.Filter and in the
// order of LeadingSort: neither stage runs again (a $limit the sort took
// in still follows it).
func (p *Pipeline) RunSorted(in Iterator) (Iterator, error) {
	i := 1
	if p.Filter != nil {
		i = 2
	}
	var err error
	for _, s := range p.stages[i:] {
		if in, err = s.open(in); err != nil {
			return nil, err
		}
	}
	return in, nil
}

// LeadingFilter returns the specification of the leading $match that
// Filter compiles (nil when there is none).
func (p *Pipeline) LeadingFilter() bson.Doc {
	if p.Filter == nil {
		return nil
	}
	v, _ := p.specs[0].Lookup("$match")
	return v.Document()
}

// QueryOptions returns the collation and let variables $match uses.
func (p *Pipeline) QueryOptions() *query.Options { return p.ctx.Query }

// StageNames lists the stages Cairn runs, sorted (for checks that must
// consider every stage, such as the privilege walk of a pipeline).
func StageNames() []string {
	names := make([]string, 0, len(stageTable))
	for n := range stageTable {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// WriteStage is "$out" or "$merge" when an aggregate command's pipeline
// (body's pipeline field) ends in one, else "".
func WriteStage(body bson.Doc) string {
	p, ok := body.Lookup("pipeline")
	if !ok || p.Type != bson.TypeArray {
		return ""
	}
	var last bson.Value
	it := p.Document().Iter()
	for it.Next() {
		last = it.Element().Value
	}
	if last.Type != bson.TypeDocument {
		return ""
	}
	st := last.Document().Iter()
	if st.Next() && (st.Element().Key == "$out" || st.Element().Key == "$merge") {
		return st.Element().Key
	}
	return ""
}
