package query

import (
	"math"
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// Projection is a compiled find projection. It is safe for concurrent use.
type Projection struct {
	inclusion bool
	idExclude bool
	root      *projNode
	// tail holds the $elemMatch and computed fields appended after the
	// document's own fields, in specification order (MongoDB 4.4+).
	tail []*projNode
	// positional is the path of a "a.b.$" projection.
	positional []string
	empty      bool
	agg        bool // aggregation $project: operators are expressions
	vars       map[string]bson.Value
	coll       bson.StringComparer
	// meta lists the top-level fields set to {$meta: "textScore"}.
	meta []string
	// plain is set for a find projection that only keeps or drops whole
	// top-level fields: apply takes its one-pass path (plainproj.go).
	plain *PlainProjection
}

type projKind uint8

const (
	projSub projKind = iota // internal node: children
	projInclude
	projExclude
	projSlice
	projElemMatch
	projExpr
)

type projNode struct {
	kind     projKind
	name     string
	path     []string // full path of this node
	children []*projNode
	byName   map[string]*projNode

	skip, limit int  // $slice
	hasSkip     bool // [skip, limit] form
	elemMatch   interface {
		first(bson.Value) (string, bool)
	}
	expr compiledExpr
}

func (n *projNode) child(name string) *projNode {
	if n.byName == nil {
		return nil
	}
	return n.byName[name]
}

func (n *projNode) add(c *projNode) {
	if n.byName == nil {
		n.byName = map[string]*projNode{}
	}
	n.byName[c.name] = c
	n.children = append(n.children, c)
}

// ParseProjection compiles a find projection. An empty projection returns
// whole documents.
func ParseProjection(proj bson.Doc, opts *Options) (*Projection, error) {
	return parseProjection(proj, opts, false)
}

// projParser holds what deciding a projection's type needs, as mongod's
// projection parser tracks it.
type projParser struct {
	p            *Projection
	fp           *filterParser
	typeSet      bool // set by a non-_id inclusion, exclusion or expression
	hasSlice     bool
	hasElemMatch bool
	idIncluded   bool
	count        int
}

func parseProjection(proj bson.Doc, opts *Options, agg bool) (*Projection, error) {
	pp := &projParser{
		p:  &Projection{root: &projNode{kind: projSub}, agg: agg, coll: opts.comparer()},
		fp: &filterParser{coll: opts.comparer(), opts: opts},
	}
	if err := pp.walk("", proj); err != nil {
		return nil, err
	}
	p := pp.p
	if !pp.typeSet {
		// mongod's computeProjectionType: a find $slice makes an exclusion
		// unless _id is included; $elemMatch makes an inclusion; otherwise
		// {_id: 1} alone is an inclusion and anything else an exclusion.
		switch {
		case pp.hasSlice:
			p.inclusion = pp.idIncluded
		case pp.hasElemMatch:
			p.inclusion = true
		default:
			p.inclusion = pp.idIncluded
		}
	}
	p.empty = pp.count == 0
	if !agg && !p.empty {
		// Its names alias proj, as the path tree's do: proj must outlive
		// the Projection either way. (Parsed on the stack; only a plain
		// one is copied to the heap.)
		var pl PlainProjection
		if ParsePlainProjection(proj, &pl) {
			kept := pl
			p.plain = &kept
		}
	}
	return p, nil
}

func (pp *projParser) setType(incl bool, e bson.Element, path string) error {
	if !pp.typeSet {
		pp.typeSet, pp.p.inclusion = true, incl
		return nil
	}
	if pp.p.inclusion != incl {
		if incl {
			return mongoerr.New(mongoerr.InclusionInExclusionProjection, "Cannot do inclusion on field %s in exclusion projection", path)
		}
		return mongoerr.New(mongoerr.ExclusionInInclusionProjection, "Cannot do exclusion on field %s in inclusion projection", path)
	}
	return nil
}

func (pp *projParser) walk(prefix string, d bson.Doc) error {
	p := pp.p
	it := d.Iter()
	for it.Next() {
		e := it.Element()
		pp.count++
		path := e.Key
		if prefix != "" {
			path = prefix + "." + e.Key
		}
		v := e.Value
		if path == ".$" {
			return mongoerr.New(mongoerr.PositionalProjectionOnDollar, "Projection on field .$ is invalid")
		}
		if err := validateProjPath(path, e.Key); err != nil {
			return err
		}
		if strings.HasSuffix(path, ".$") {
			switch {
			case p.agg:
				return mongoerr.New(mongoerr.PositionalProjectionInAggregation, "Cannot use positional projection in aggregation projection")
			case v.Type == bson.TypeDocument:
				return mongoerr.New(mongoerr.PositionalProjectionWithObject, "positional projection cannot be used with an expression or sub object")
			case !(v.IsNumber() || v.Type == bson.TypeBoolean):
				return mongoerr.New(mongoerr.PositionalProjectionWithLiteral, "positional projection cannot be used with a literal")
			case !v.Truthy():
				return mongoerr.New(mongoerr.PositionalProjectionWithExclusion, "positional projection cannot be used with exclusion")
			default:
				if p.positional != nil {
					return mongoerr.New(mongoerr.PositionalProjectionRepeated, "Cannot specify more than one positional projection per query.")
				}
				if pp.hasElemMatch {
					return mongoerr.New(mongoerr.ProjectionElemMatchAndPositional, "Cannot specify positional operator and $elemMatch.")
				}
				base := strings.TrimSuffix(path, ".$")
				if _, err := p.addNode(base, &projNode{kind: projInclude}); err != nil {
					return err
				}
				p.positional = splitPath(base)
				if err := pp.setType(true, e, path); err != nil {
					return err
				}
				continue
			}
		}
		switch {
		case v.IsNumber() || v.Type == bson.TypeBoolean:
			incl := v.Truthy()
			kind := projExclude
			if incl {
				kind = projInclude
			}
			if path == "_id" {
				if incl {
					pp.idIncluded = true
				} else {
					p.idExclude = true
				}
				if incl {
					if _, err := p.addNode(path, &projNode{kind: kind}); err != nil {
						return err
					}
				}
				continue
			}
			if _, err := p.addNode(path, &projNode{kind: kind}); err != nil {
				return err
			}
			if err := pp.setType(incl, e, path); err != nil {
				return err
			}
		case v.Type == bson.TypeDocument:
			sub := bson.Doc(v.Data)
			if sub.Len() == 0 {
				return mongoerr.New(mongoerr.ProjectionEmptySubProjection, "Invalid empty sub-projection: %s", e.Key)
			}
			if op := firstKey(sub); sub.Len() == 1 && strings.HasPrefix(op, "$") {
				if isProjectionExpression(op, p.agg) {
					if err := pp.parseOperator(path, prefix, e, sub); err != nil {
						return err
					}
					continue
				}
				// Meant as an expression, but no such operator.
				if err := validateProjPath(op, op); err != nil {
					return mongoerr.New(mongoerr.ProjectionUnknownExpression, "Unknown expression %s", op)
				}
			}
			if err := pp.walk(path, sub); err != nil {
				return err
			}
		default:
			// A literal (or a "$field" path) is a computed field.
			if pp.typeSet && !p.inclusion {
				return mongoerr.New(mongoerr.ExclusionProjectionWithExpression, "Cannot use an expression %s in an exclusion projection", elemString(e))
			}
			if err := pp.addExpr(path, v); err != nil {
				return err
			}
			pp.typeSet, p.inclusion = true, true
		}
	}
	return nil
}

func (pp *projParser) parseOperator(path, prefix string, e bson.Element, sub bson.Doc) error {
	p := pp.p
	op := firstKey(sub)
	v, _ := sub.Lookup(op)
	if p.agg && op == "$elemMatch" {
		return mongoerr.New(mongoerr.InvalidPipelineOperator, "Cannot use $elemMatch in this context")
	}
	if !p.agg {
		switch op {
		case "$slice":
			node, err := parseFindSlice(v)
			if err == nil {
				if _, err := p.addNode(path, node); err != nil {
					return err
				}
				pp.hasSlice = true
				return nil
			}
			// Not the find() form: MongoDB tries the $slice expression.
			if xerr := pp.addOperatorExpr(path, e, sub); xerr != nil {
				me := mongoerr.As(xerr)
				fe := mongoerr.As(err)
				return mongoerr.New(me.Code, "Invalid $slice syntax. The given syntax %s did not match the find() syntax because :: %s: %s :: The given syntax did not match the expression $slice syntax. :: caused by :: %s", sub.String(), fe.CodeName(), fe.Message, me.Message)
			}
			return nil
		case "$elemMatch":
			if v.Type != bson.TypeDocument {
				return mongoerr.New(mongoerr.ElemMatchProjectionNotObject, "elemMatch: Invalid argument, object required, but got %s", typeNameForMessage(v.Type))
			}
			if p.positional != nil {
				return mongoerr.New(mongoerr.ProjectionPositionalAndElemMatch, "Cannot specify positional operator and $elemMatch.")
			}
			if prefix != "" || strings.Contains(e.Key, ".") {
				return mongoerr.New(mongoerr.ElemMatchProjectionNested, "Cannot use $elemMatch projection on a nested field.")
			}
			pr, err := pp.fp.parseElemMatch(v)
			if err != nil {
				return err
			}
			node := &projNode{kind: projElemMatch}
			switch m := pr.(*leafPred).m.(type) {
			case *elemMatchObject:
				node.elemMatch = m
			case *elemMatchValue:
				node.elemMatch = m
			}
			n, err := p.addNode(path, node)
			if err != nil {
				return err
			}
			p.tail = append(p.tail, n)
			pp.hasElemMatch = true
			return nil
		}
	}
	return pp.addOperatorExpr(path, e, sub)
}

// addOperatorExpr compiles {field: {$op: ...}} as an expression.
func (pp *projParser) addOperatorExpr(path string, e bson.Element, sub bson.Doc) error {
	p := pp.p
	op := firstKey(sub)
	v, _ := sub.Lookup(op)
	if op == "$meta" {
		if v.Type != bson.TypeString {
			return mongoerr.New(mongoerr.VariableNameBadChar, "$meta expects a string argument")
		}
		switch v.StringValue() {
		case "textScore":
			if pp.fp.opts == nil || !pp.fp.opts.TextScore {
				return mongoerr.New(mongoerr.TextScoreUnavailable, "query requires text score metadata, but it is not available")
			}
			p.meta = append(p.meta, path)
			return nil
		case "searchScore", "searchHighlights", "searchScoreDetails", "vectorSearchScore", "geoNearDistance", "geoNearPoint", "indexKey", "recordId", "sortKey", "randVal", "searchSequenceToken":
			return mongoerr.New(mongoerr.NotImplemented, "$meta %q is not supported by Cairn yet", v.StringValue())
		}
		return mongoerr.New(mongoerr.MetaUnsupported, "Unsupported argument to $meta: %s", v.StringValue())
	}
	if pp.typeSet && !p.inclusion {
		return mongoerr.New(mongoerr.ExclusionProjectionExpression, "Cannot use expression other than $meta in exclusion projection")
	}
	if err := pp.addExpr(path, bson.Value{Type: bson.TypeDocument, Data: sub}); err != nil {
		return err
	}
	pp.typeSet, p.inclusion = true, true
	return nil
}

// isProjectionExpression reports whether {op: ...} in a projection is an
// operator (find's $slice and $elemMatch, $meta, or an aggregation
// expression) rather than a sub-projection.
func isProjectionExpression(op string, agg bool) bool {
	switch op {
	case "$slice", "$elemMatch", "$meta", "$literal":
		return true
	}
	return isExpressionOperator(op)
}

// parseFindSlice parses find()'s $slice: a count or [skip, limit].
func parseFindSlice(v bson.Value) (*projNode, error) {
	node := &projNode{kind: projSlice}
	switch {
	case v.IsNumber():
		f, _ := v.AsFloat64()
		node.limit = clampInt(f)
	case v.Type == bson.TypeArray:
		vals := bson.Doc(v.Data).Values()
		if len(vals) != 2 {
			return nil, mongoerr.New(mongoerr.SliceArrayBadForm, "$slice array argument should be of form [skip, limit]")
		}
		if !vals[0].IsNumber() {
			return nil, mongoerr.New(mongoerr.SliceSkipNotNumber, "$slice expects the skip argument to be a number, got %s", typeNameForMessage(vals[0].Type))
		}
		if !vals[1].IsNumber() {
			return nil, mongoerr.New(mongoerr.SliceLimitNotNumber, "$slice expects the limit argument to be a number, got %s", typeNameForMessage(vals[1].Type))
		}
		s, _ := vals[0].AsFloat64()
		l, _ := vals[1].AsFloat64()
		node.skip, node.limit, node.hasSkip = clampInt(s), clampInt(l), true
		if node.limit <= 0 {
			return nil, mongoerr.New(mongoerr.SliceLimitNotPositive, "$slice limit must be positive, got %d", node.limit)
		}
	default:
		return nil, mongoerr.New(mongoerr.SliceBadArgument, "$slice only supports numbers and [skip, limit] arrays")
	}
	return node, nil
}

// addExpr compiles a computed field.
func (pp *projParser) addExpr(path string, v bson.Value) error {
	p := pp.p
	ep, vars, err := pp.fp.exprParser()
	if err != nil {
		return err
	}
	x, err := ep.parse(v)
	if err != nil {
		return err
	}
	p.vars = vars
	n, err := p.addNode(path, &projNode{kind: projExpr, expr: x})
	if err != nil {
		return err
	}
	p.tail = append(p.tail, n)
	return nil
}

func clampInt(f float64) int {
	switch {
	case math.IsNaN(f):
		return 0
	case f > math.MaxInt32:
		return math.MaxInt32
	case f < math.MinInt32:
		return math.MinInt32
	}
	return int(f)
}

func validateProjPath(path, key string) error {
	if key == "" || path == "" {
		return mongoerr.New(mongoerr.FieldPathEmpty, "FieldPath cannot be constructed with empty string")
	}
	if strings.Contains(path, ".$.") {
		return mongoerr.New(mongoerr.PositionalProjectionMidPath, "As of 4.4, it's illegal to specify positional operator in the middle of a path.Positional projection may only be used at the end, for example: a.b.$. If the query previously used a form like a.b.$.d, remove the parts following the '$' and the results will be equivalent.")
	}
	// A positional projection names the path before ".$".
	return validatePathNames(strings.TrimSuffix(path, ".$"))
}

// addNode inserts node at path, reporting MongoDB's path collisions.
func (p *Projection) addNode(path string, node *projNode) (*projNode, error) {
	parts := splitPath(path)
	cur := p.root
	for i, c := range parts {
		last := i == len(parts)-1
		existing := cur.child(c)
		if existing != nil {
			if last {
				return nil, mongoerr.New(mongoerr.ProjectPathCollision, "Path collision at %s", path)
			}
			if existing.kind != projSub {
				return nil, mongoerr.New(mongoerr.ProjectPathCollisionPortion, "Path collision at %s remaining portion %s", path, strings.Join(parts[i+1:], "."))
			}
			cur = existing
			continue
		}
		if last {
			node.name = c
			node.path = parts
			cur.add(node)
			return node, nil
		}
		sub := &projNode{kind: projSub, name: c, path: parts[:i+1]}
		cur.add(sub)
		cur = sub
	}
	return node, nil
}

// IsEmpty reports whether the projection returns whole documents.
func (p *Projection) IsEmpty() bool { return p.empty }
