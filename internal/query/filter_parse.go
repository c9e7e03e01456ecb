package query

import (
	"math"
	"strings"

	"github.com/cairndb/cairn/bson"
	jsi "github.com/cairndb/cairn/internal/js"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// Options carry the per-command settings that change how specifications
// are interpreted.
type Options struct {
	// Collation orders and compares strings; nil is simple binary
	// comparison.
	Collation *Collation
	// Let holds user variables, for $expr once expressions exist.
	Let bson.Doc
	// TextScore makes {$meta: "textScore"} available to projections (the
	// query has a $text clause); Apply then reads MatchDetails.TextScore.
	TextScore bool
	// Scripts runs the operation's server-side JavaScript: $where here,
	// $function and $accumulator in expressions. Nil: the context has none,
	// and $where is "not allowed in this context" (validators, partial
	// index filters, listCollections filters...).
	Scripts *jsi.Scripts
	// NoWhere refuses $where even with Scripts (an aggregation's $match,
	// as mongod).
	NoWhere bool
}

func (o *Options) comparer() bson.StringComparer {
	if o == nil || o.Collation == nil {
		return nil
	}
	return o.Collation
}

// Filter is a compiled query predicate. It is safe for concurrent use.
type Filter struct {
	root node
	spec bson.Doc
	coll bson.StringComparer
}

// Spec returns the filter document the Filter was compiled from.
func (f *Filter) Spec() bson.Doc { return f.spec }

// Match reports whether doc satisfies the filter.
func (f *Filter) Match(doc bson.Doc) bool { return f.root.match(doc, nil) }

// MatchDetails is Match that also records, in d, the array position the
// positional $ operator refers to.
func (f *Filter) MatchDetails(doc bson.Doc, d *MatchDetails) bool {
	return f.root.match(doc, d)
}

// parseLevel says where in the filter the parser is: operators like $expr
// and $text apply only to the whole document.
type parseLevel uint8

const (
	levelTop parseLevel = iota // the filter itself, or inside $and/$or/$nor
	levelSub                   // inside $elemMatch
)

type filterParser struct {
	coll bson.StringComparer
	opts *Options
	ep   *exprParser
	vars map[string]bson.Value
}

// exprParser returns the expression compiler for $expr, with the let
// variables evaluated once.
func (p *filterParser) exprParser() (*exprParser, map[string]bson.Value, error) {
	if p.ep == nil {
		ep, vars, err := newExprParser(p.opts)
		if err != nil {
			return nil, nil, err
		}
		p.ep, p.vars = ep, vars
	}
	return p.ep, p.vars, nil
}

// ParseFilter compiles a query filter. Errors are *mongoerr.Error with
// MongoDB's codes and messages.
func ParseFilter(filter bson.Doc, opts *Options) (*Filter, error) {
	p := &filterParser{coll: opts.comparer(), opts: opts}
	root, err := p.parse(filter, levelTop)
	if err != nil {
		return nil, err
	}
	return &Filter{root: root, spec: filter, coll: p.coll}, nil
}

func badValue(format string, args ...any) error {
	return mongoerr.New(mongoerr.BadValue, format, args...)
}

// parse compiles a query document: an implicit AND of its clauses.
func (p *filterParser) parse(d bson.Doc, level parseLevel) (node, error) {
	var and andNode
	it := d.Iter()
	for it.Next() {
		e := it.Element()
		if strings.HasPrefix(e.Key, "$") {
			n, err := p.parseTopOperator(e, level)
			if err != nil {
				return nil, err
			}
			if n != nil {
				and = append(and, n)
			}
			continue
		}
		parts := splitPath(e.Key)
		if isExpressionDoc(e.Value, false) {
			ps, err := p.parseSub(e.Key, bson.Doc(e.Value.Data), level)
			if err != nil {
				return nil, err
			}
			and = append(and, bindPath(parts, ps)...)
			continue
		}
		if e.Value.Type == bson.TypeRegex {
			m, err := newRegexMatcher(e.Value.Regex())
			if err != nil {
				return nil, err
			}
			and = append(and, &leafNode{parts: parts, m: m})
			continue
		}
		pr, err := p.cmp(opEQ, e.Key, e.Value)
		if err != nil {
			return nil, err
		}
		and = append(and, pr.bind(parts))
	}
	if it.Corrupt() {
		return nil, mongoerr.New(mongoerr.InvalidBSON, "invalid BSON in query filter")
	}
	if len(and) == 1 {
		return and[0], nil
	}
	return and, nil
}

// isDBRefDoc reports whether d looks like a DBRef: $ref and $id (or, if
// incomplete ones are allowed, any of $ref, $id, $db).
func isDBRefDoc(d bson.Doc, allowIncomplete bool) bool {
	var ref, id, db bool
	it := d.Iter()
	for it.Next() {
		switch it.Element().Key {
		case "$ref":
			ref = true
		case "$id":
			id = true
		case "$db":
			db = true
		}
	}
	if allowIncomplete {
		return ref || id || db
	}
	return ref && id
}

// isExpressionDoc reports whether v is a document of operators ({$gt: 1})
// rather than a literal to compare with.
func isExpressionDoc(v bson.Value, allowIncompleteDBRef bool) bool {
	if v.Type != bson.TypeDocument {
		return false
	}
	d := bson.Doc(v.Data)
	it := d.Iter()
	if !it.Next() {
		return false
	}
	if !strings.HasPrefix(it.Element().Key, "$") {
		return false
	}
	return !isDBRefDoc(d, allowIncompleteDBRef)
}

// pathlessOperators are the top-level operators ($and, $expr, ...); the
// value form of $elemMatch is chosen when the first key is not one of them.
var pathlessOperators = map[string]bool{
	"$and": true, "$or": true, "$nor": true, "$expr": true, "$where": true, "$text": true,
	"$comment": true, "$jsonSchema": true, "$alwaysTrue": true, "$alwaysFalse": true,
	"$id": true, "$ref": true, "$db": true, "$sampleRate": true,
}

func (p *filterParser) parseTopOperator(e bson.Element, level parseLevel) (node, error) {
	switch e.Key {
	case "$and", "$or", "$nor":
		if e.Value.Type != bson.TypeArray {
			return nil, badValue("%s must be an array", e.Key)
		}
		arr := bson.Doc(e.Value.Data)
		var children []node
		it := arr.Iter()
		for it.Next() {
			v := it.Element().Value
			if v.Type != bson.TypeDocument {
				return nil, badValue("$or/$and/$nor entries need to be full objects")
			}
			c, err := p.parse(bson.Doc(v.Data), level)
			if err != nil {
				return nil, err
			}
			children = append(children, c)
		}
		if len(children) == 0 {
			return nil, badValue("$and/$or/$nor must be a nonempty array")
		}
		switch e.Key {
		case "$and":
			if len(children) == 1 {
				return children[0], nil
			}
			return andNode(children), nil
		case "$or":
			if len(children) == 1 {
				return children[0], nil
			}
			return orNode(children), nil
		default:
			return norNode(children), nil
		}
	case "$comment":
		return nil, nil
	case "$expr":
		if level == levelSub {
			return nil, badValue("$expr can only be applied to the top-level document")
		}
		ep, _, err := p.exprParser()
		if err != nil {
			return nil, err
		}
		x, err := ep.parse(e.Value)
		if err != nil {
			return nil, err
		}
		return &exprNode{e: x}, nil
	case "$where":
		if level == levelSub {
			return nil, badValue("$elemMatch cannot contain $where expression")
		}
		return p.parseWhere(e.Value)
	case "$text":
		if level == levelSub {
			return nil, badValue("$text can only be applied to the top-level document")
		}
		return nil, mongoerr.New(mongoerr.IndexNotFound, "text index required for $text query")
	case "$jsonSchema":
		return parseJSONSchema(e.Value)
	case "$alwaysTrue", "$alwaysFalse":
		n, err := parseIntegerLong(e)
		if err != nil {
			return nil, err
		}
		if n != 1 {
			return nil, mongoerr.New(mongoerr.FailedToParse, "%s must be an integer value of 1", e.Key)
		}
		return constNode(e.Key == "$alwaysTrue"), nil
	case "$id", "$ref", "$db":
		coll := p.coll
		if e.Key != "$id" {
			coll = nil
		}
		return &leafNode{parts: []string{e.Key}, m: &cmpMatcher{op: opEQ, rhs: e.Value, coll: coll}}, nil
	}
	return nil, badValue("unknown top level operator: %s", e.Key)
}

// parseIntegerLong is MongoDB's parseIntegerElementToLong.
func parseIntegerLong(e bson.Element) (int64, error) {
	v := e.Value
	if !v.IsNumber() {
		return 0, mongoerr.New(mongoerr.FailedToParse, "Expected a number in: %s", elemString(e))
	}
	switch v.Type {
	case bson.TypeInt32:
		return int64(v.Int32()), nil
	case bson.TypeInt64:
		return v.Int64(), nil
	}
	f, _ := v.AsFloat64()
	if math.IsNaN(f) {
		return 0, mongoerr.New(mongoerr.FailedToParse, "Expected an integer, but found NaN in: %s", elemString(e))
	}
	if f >= 9.223372036854775807e18 || f < -9.223372036854775808e18 {
		return 0, mongoerr.New(mongoerr.FailedToParse, "Cannot represent as a 64-bit integer: %s", elemString(e))
	}
	if f != math.Trunc(f) {
		if v.Type == bson.TypeDecimal128 {
			return 0, mongoerr.New(mongoerr.FailedToParse, "Cannot represent as a 64-bit integer: %s", elemString(e))
		}
		return 0, mongoerr.New(mongoerr.FailedToParse, "Expected an integer: %s", elemString(e))
	}
	return int64(f), nil
}

// elemString formats an element as MongoDB's messages do ("a: 1").
func elemString(e bson.Element) string { return e.Key + ": " + e.Value.String() }

// parseSub compiles the operator document of one path ({$gt: 1, $lt: 5}).
func (p *filterParser) parseSub(path string, sub bson.Doc, level parseLevel) ([]pred, error) {
	var out []pred
	it := sub.Iter()
	for it.Next() {
		pr, err := p.parseSubField(path, sub, it.Element(), level)
		if err != nil {
			return nil, err
		}
		if pr != nil {
			out = append(out, pr)
		}
	}
	return out, nil
}

func (p *filterParser) cmp(op cmpOp, path string, v bson.Value) (pred, error) {
	if op != opEQ && v.Type == bson.TypeRegex {
		return nil, badValue("Can't have RegEx as arg to predicate over field '%s'.", path)
	}
	if v.Type == bson.TypeUndefined {
		return nil, badValue("cannot compare to undefined")
	}
	return &leafPred{m: &cmpMatcher{op: op, rhs: v, coll: p.coll}}, nil
}

func (p *filterParser) parseSubField(path string, context bson.Doc, e bson.Element, level parseLevel) (pred, error) {
	v := e.Value
	switch e.Key {
	case "$eq":
		return p.cmp(opEQ, path, v)
	case "$lt":
		return p.cmp(opLT, path, v)
	case "$lte":
		return p.cmp(opLTE, path, v)
	case "$gt":
		return p.cmp(opGT, path, v)
	case "$gte":
		return p.cmp(opGTE, path, v)
	case "$ne":
		if v.Type == bson.TypeRegex {
			return nil, badValue("Can't have regex as arg to $ne.")
		}
		eq, err := p.cmp(opEQ, path, v)
		if err != nil {
			return nil, err
		}
		return &notPred{eq}, nil
	case "$not":
		return p.parseNot(path, v, level)
	case "$in", "$nin":
		if v.Type != bson.TypeArray {
			return nil, badValue("%s needs an array", e.Key)
		}
		m, err := p.parseIn(bson.Doc(v.Data))
		if err != nil {
			return nil, err
		}
		if e.Key == "$nin" {
			return &notPred{&leafPred{m: m}}, nil
		}
		return &leafPred{m: m}, nil
	case "$exists":
		if v.Truthy() {
			return &leafPred{m: existsMatcher{}}, nil
		}
		return &notPred{&leafPred{m: existsMatcher{}}}, nil
	case "$type":
		m, err := parseTypeSet(path, v)
		if err != nil {
			return nil, err
		}
		return &leafPred{m: m}, nil
	case "$size":
		n, err := parseSize(v)
		if err != nil {
			return nil, err
		}
		return &leafPred{m: sizeMatcher{n}, mode: leafWhole}, nil
	case "$mod":
		m, err := parseMod(v)
		if err != nil {
			return nil, err
		}
		return &leafPred{m: m}, nil
	case "$regex":
		return p.parseRegexDoc(context)
	case "$options":
		it := context.Iter()
		for it.Next() {
			if it.Element().Key == "$regex" {
				return nil, nil
			}
		}
		return nil, badValue("$options needs a $regex")
	case "$elemMatch":
		return p.parseElemMatch(v)
	case "$all":
		return p.parseAll(path, v)
	case "$bitsAllSet", "$bitsAnySet", "$bitsAllClear", "$bitsAnyClear":
		m, err := parseBits(e)
		if err != nil {
			return nil, err
		}
		return &leafPred{m: m}, nil
	case "$where":
		return nil, badValue("$where cannot be applied to a field")
	case "$near", "$nearSphere", "$geoNear":
		// find and the write statements take a top-level $near out of
		// their filter and read it through a geo index; anywhere else it
		// is refused, as mongod refuses it in $match and count.
		return nil, badValue("$geoNear, $near, and $nearSphere are not allowed in this context")
	case "$geoWithin", "$within", "$geoIntersects":
		return parseGeoPred(e)
	}
	return nil, badValue("unknown operator: %s", e.Key)
}

func (p *filterParser) parseNot(path string, v bson.Value, level parseLevel) (pred, error) {
	if v.Type == bson.TypeRegex {
		m, err := newRegexMatcher(v.Regex())
		if err != nil {
			return nil, err
		}
		return &notPred{&leafPred{m: m}}, nil
	}
	if v.Type != bson.TypeDocument {
		return nil, badValue("$not needs a regex or a document")
	}
	d := bson.Doc(v.Data)
	if d.Len() == 0 {
		return nil, badValue("$not cannot be empty")
	}
	// A $not of a non-operator document ({$not: {a: 1}}) is parsed by
	// MongoDB as operators too, and so fails on the first key.
	ps, err := p.parseSub(path, d, level)
	if err != nil {
		return nil, err
	}
	return &notPred{andPred(ps)}, nil
}
