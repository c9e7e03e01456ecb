package agg

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/expr"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
)

func init() {
	register("$match", stageInfo{parse: parseMatch})
}

// matchStage filters with a query predicate. A top-level $expr is evaluated
// with the full expression language (internal/expr) and the rest of the
// filter by internal/query.
type matchStage struct {
	f   *query.Filter
	exp expr.Expr
	ctx *Context
	// plain is the specification without $expr; exprSpec is $expr's.
	plain    bson.Doc
	exprSpec bson.Value
}

func parseMatch(c *Context, v bson.Value) (stage, error) {
	if v.Type != bson.TypeDocument {
		return nil, mongoerr.New(mongoerr.MatchNotObject, "the match filter must be an expression in an object")
	}
	spec := v.Document()
	m := &matchStage{ctx: c}
	if ev, ok := spec.Lookup("$expr"); ok {
		x, err := expr.Parse(ev, c.Expr)
		if err != nil {
			return nil, err
		}
		m.exp = x
		m.exprSpec = ev
		var b bson.Builder
		it := spec.Iter()
		for it.Next() {
			if it.Element().Key != "$expr" {
				b.AppendElement(it.Element())
			}
		}
		spec = b.Finish()
	}
	f, err := query.ParseFilter(spec, noWhere(c.Query))
	if err != nil {
		return nil, err
	}
	m.f, m.plain = f, spec
	return m, nil
}

func (m *matchStage) open(in Iterator) (Iterator, error) {
	env := expr.NewEnv(m.ctx.Expr)
	return FuncIterator(func() (bson.Doc, error) {
		for {
			d, err := in.Next()
			if d == nil || err != nil {
				return nil, err
			}
			ok, err := m.match(d, env)
			if err != nil {
				return nil, err
			}
			if ok {
				return d, nil
			}
		}
	}), nil
}

func (m *matchStage) match(d bson.Doc, env *expr.Env) (bool, error) {
	if !m.f.Match(d) {
		return false, nil
	}
	if m.exp == nil {
		return true, nil
	}
	v, err := expr.Eval(m.exp, d, env)
	if err != nil {
		return false, err
	}
	return expr.Truthy(v), nil
}

// noWhere is o for a $match: $where is not allowed there, as in mongod
// (BadValue), even where the command runs JavaScript for $function.
func noWhere(o *query.Options) *query.Options {
	if o == nil {
		return &query.Options{NoWhere: true}
	}
	c := *o
	c.NoWhere = true
	return &c
}
