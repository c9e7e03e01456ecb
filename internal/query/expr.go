package query

import (
	"strings"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// A small aggregation-expression evaluator: enough for $expr filters,
// computed projection fields and pipeline-style updates until the
// aggregation framework owns expressions. It covers field paths,
// variables ($$ROOT, $$CURRENT, $$REMOVE, $$NOW and let variables),
// literals, object and array construction, comparisons ($eq $ne $gt $gte
// $lt $lte $cmp), logic ($and $or $not $cond $ifNull), $in, $literal,
// $getField, $setField, $add, $subtract, $multiply, $concat, $size,
// $isArray and $type. Other operators fail with NotImplemented.

type expr interface {
	eval(c *evalCtx) (bson.Value, error)
}

type evalCtx struct {
	root bson.Doc
	vars map[string]bson.Value
	coll bson.StringComparer
	now  time.Time
}

// exprParser compiles expressions, checking variable references.
type exprParser struct {
	vars map[string]bool
	coll bson.StringComparer
}

var missing = bson.Value{}

func exprErr(format string, args ...any) error {
	return mongoerr.New(mongoerr.InvalidPipelineOperator, format, args...)
}

// compileLet evaluates a command's let variables (constant expressions).
func compileLet(opts *Options) (map[string]bson.Value, error) {
	vars := map[string]bson.Value{}
	if opts == nil || len(opts.Let) == 0 {
		return vars, nil
	}
	p := &exprParser{vars: map[string]bool{}, coll: opts.comparer()}
	it := opts.Let.Iter()
	for it.Next() {
		e := it.Element()
		if err := validateVarName(e.Key); err != nil {
			return nil, err
		}
		x, err := p.parse(e.Value)
		if err != nil {
			return nil, err
		}
		v, err := x.eval(&evalCtx{root: bson.EmptyDoc, vars: vars, coll: p.coll, now: time.Now()})
		if err != nil {
			return nil, err
		}
		vars[e.Key] = v
	}
	return vars, nil
}

func validateVarName(name string) error {
	if name == "" {
		return mongoerr.New(16866, "empty variable names are not allowed")
	}
	c := name[0]
	if !(c >= 'a' && c <= 'z' || c >= 0x80) {
		return mongoerr.New(16867, "'%s' starts with an invalid character for a user variable name", name)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c >= 0x80) {
			return mongoerr.New(16868, "'%s' contains an invalid character for a variable name: '%c'", name, c)
		}
	}
	return nil
}

func newExprParser(opts *Options) (*exprParser, map[string]bson.Value, error) {
	vars, err := compileLet(opts)
	if err != nil {
		return nil, nil, err
	}
	p := &exprParser{vars: map[string]bool{}, coll: opts.comparer()}
	for k := range vars {
		p.vars[k] = true
	}
	return p, vars, nil
}

type litExpr struct{ v bson.Value }

func (e litExpr) eval(*evalCtx) (bson.Value, error) { return e.v, nil }

type pathExpr struct {
	variable string // "" for $$CURRENT
	parts    []string
}

func (e *pathExpr) eval(c *evalCtx) (bson.Value, error) {
	var base bson.Value
	switch e.variable {
	case "", "ROOT", "CURRENT":
		base = bson.Value{Type: bson.TypeDocument, Data: c.root}
	case "REMOVE":
		return missing, nil
	case "NOW":
		base = mkValue(func(b *bson.Builder) { b.AppendDateTime("v", c.now.UnixMilli()) })
	default:
		base = c.vars[e.variable]
	}
	return traverseFieldPath(base, e.parts), nil
}

// traverseFieldPath follows an aggregation field path: through documents,
// mapping over arrays (dropping elements where the path is missing).
func traverseFieldPath(v bson.Value, parts []string) bson.Value {
	for i, p := range parts {
		switch v.Type {
		case bson.TypeDocument:
			x, ok := bson.Doc(v.Data).Lookup(p)
			if !ok {
				return missing
			}
			v = x
		case bson.TypeArray:
			rest := parts[i:]
			return mkValue(func(b *bson.Builder) {
				b.StartArray("v")
				n := 0
				it := bson.Doc(v.Data).Iter()
				for it.Next() {
					x := it.Element().Value
					if x.Type != bson.TypeDocument && x.Type != bson.TypeArray {
						continue
					}
					r := traverseFieldPath(x, rest)
					if r.Type == 0 {
						continue
					}
					b.AppendValue(bson.Index(n), r)
					n++
				}
				b.End()
			})
		default:
			return missing
		}
	}
	return v
}

// mkValue builds a standalone value with a builder under key "v".
func mkValue(f func(b *bson.Builder)) bson.Value {
	var b bson.Builder
	f(&b)
	v, _ := b.Finish().Lookup("v")
	return v
}

type objExpr struct {
	keys  []string
	exprs []expr
}

func (e *objExpr) eval(c *evalCtx) (bson.Value, error) {
	vals := make([]bson.Value, len(e.exprs))
	for i, x := range e.exprs {
		v, err := x.eval(c)
		if err != nil {
			return missing, err
		}
		vals[i] = v
	}
	return mkValue(func(b *bson.Builder) {
		b.StartDocument("v")
		for i, v := range vals {
			if v.Type != 0 {
				b.AppendValue(e.keys[i], v)
			}
		}
		b.End()
	}), nil
}

type arrExpr []expr

func (e arrExpr) eval(c *evalCtx) (bson.Value, error) {
	vals, err := evalAll(c, e)
	if err != nil {
		return missing, err
	}
	return arrayValue(vals), nil
}

func arrayValue(vals []bson.Value) bson.Value {
	return mkValue(func(b *bson.Builder) {
		b.StartArray("v")
		for i, v := range vals {
			if v.Type == 0 {
				b.AppendNull(bson.Index(i))
			} else {
				b.AppendValue(bson.Index(i), v)
			}
		}
		b.End()
	})
}

func evalAll(c *evalCtx, xs []expr) ([]bson.Value, error) {
	out := make([]bson.Value, len(xs))
	for i, x := range xs {
		v, err := x.eval(c)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// parse compiles an expression.
func (p *exprParser) parse(v bson.Value) (expr, error) {
	switch v.Type {
	case bson.TypeString:
		s := v.StringValue()
		if !strings.HasPrefix(s, "$") {
			return litExpr{v}, nil
		}
		return p.parsePath(s)
	case bson.TypeArray:
		var out arrExpr
		it := bson.Doc(v.Data).Iter()
		for it.Next() {
			x, err := p.parse(it.Element().Value)
			if err != nil {
				return nil, err
			}
			out = append(out, x)
		}
		return out, nil
	case bson.TypeDocument:
		d := bson.Doc(v.Data)
		k := firstKey(d)
		if strings.HasPrefix(k, "$") {
			if n := d.Len(); n != 1 {
				return nil, mongoerr.New(15983, "an expression specification must contain exactly one field, the name of the expression. Found %d fields in %s, while parsing object %s", n, d.String(), d.String())
			}
			arg, _ := d.Lookup(k)
			return p.parseOperator(k, arg)
		}
		o := &objExpr{}
		it := d.Iter()
		for it.Next() {
			e := it.Element()
			if strings.HasPrefix(e.Key, "$") {
				return nil, mongoerr.New(16410, "FieldPath field names may not start with '$'. Consider using $getField or $setField.")
			}
			if strings.Contains(e.Key, ".") {
				return nil, mongoerr.New(16412, "FieldPath field names may not contain '.'. Consider using $getField or $setField.")
			}
			x, err := p.parse(e.Value)
			if err != nil {
				return nil, err
			}
			o.keys = append(o.keys, e.Key)
			o.exprs = append(o.exprs, x)
		}
		return o, nil
	}
	return litExpr{v}, nil
}

func (p *exprParser) parsePath(s string) (expr, error) {
	if s == "$" {
		return nil, mongoerr.New(16872, "'$' by itself is not a valid FieldPath")
	}
	if strings.HasPrefix(s, "$$") {
		parts := splitPath(s[2:])
		name := parts[0]
		switch name {
		case "ROOT", "CURRENT", "REMOVE", "NOW":
		default:
			if !p.vars[name] {
				if err := validateVarName(name); err != nil {
					return nil, err
				}
				return nil, mongoerr.New(17276, "Use of undefined variable: %s", name)
			}
		}
		return &pathExpr{variable: name, parts: parts[1:]}, nil
	}
	parts := splitPath(s[1:])
	for _, c := range parts {
		if c == "" {
			return nil, mongoerr.New(15998, "FieldPath field names may not be empty strings.")
		}
		if strings.HasPrefix(c, "$") {
			return nil, mongoerr.New(16410, "FieldPath field names may not start with '$'. Consider using $getField or $setField.")
		}
	}
	return &pathExpr{parts: parts}, nil
}

// args parses an operator's argument list: an array, or one value.
func (p *exprParser) args(arg bson.Value) ([]expr, error) {
	if arg.Type != bson.TypeArray {
		x, err := p.parse(arg)
		if err != nil {
			return nil, err
		}
		return []expr{x}, nil
	}
	var out []expr
	it := bson.Doc(arg.Data).Iter()
	for it.Next() {
		x, err := p.parse(it.Element().Value)
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, nil
}

func arity(op string, xs []expr, n int) error {
	if len(xs) != n {
		return mongoerr.New(16020, "Expression %s takes exactly %d arguments. %d were passed in.", op, n, len(xs))
	}
	return nil
}

type opExpr struct {
	op   string
	args []expr
	fn   func(c *evalCtx, vals []bson.Value) (bson.Value, error)
	lazy func(c *evalCtx, args []expr) (bson.Value, error)
}

func (e *opExpr) eval(c *evalCtx) (bson.Value, error) {
	if e.lazy != nil {
		return e.lazy(c, e.args)
	}
	vals, err := evalAll(c, e.args)
	if err != nil {
		return missing, err
	}
	return e.fn(c, vals)
}

func boolValue(b bool) bson.Value {
	if b {
		return bson.Value{Type: bson.TypeBoolean, Data: []byte{1}}
	}
	return bson.Value{Type: bson.TypeBoolean, Data: []byte{0}}
}

func int32Value(n int32) bson.Value {
	return mkValue(func(b *bson.Builder) { b.AppendInt32("v", n) })
}

// cmpValues compares as aggregation does: missing equals undefined.
func cmpValues(a, b bson.Value, coll bson.StringComparer) int {
	if a.Type == 0 {
		a = bson.Value{Type: bson.TypeUndefined}
	}
	if b.Type == 0 {
		b = bson.Value{Type: bson.TypeUndefined}
	}
	return bson.CompareCollated(a, b, coll)
}

func nullish(v bson.Value) bool {
	return v.Type == 0 || v.Type == bson.TypeNull || v.Type == bson.TypeUndefined
}

// exprNode is $expr in a filter: the document matches when the expression
// is truthy. An evaluation error is reported in MatchDetails.Err.
type exprNode struct {
	e    expr
	vars map[string]bson.Value
	coll bson.StringComparer
}

func (n *exprNode) match(d bson.Doc, md *MatchDetails) bool {
	v, err := n.e.eval(&evalCtx{root: d, vars: n.vars, coll: n.coll, now: time.Now()})
	if err != nil {
		if md != nil && md.Err == nil {
			md.Err = err
		}
		return false
	}
	return v.Truthy()
}
