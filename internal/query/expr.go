package query

import (
	"sync"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/expr"
)

// Aggregation expressions — $expr in filters, computed projection fields
// and update pipelines — are compiled and evaluated by internal/expr, the
// same evaluator the aggregation pipeline uses. This file adapts it to the
// query package's compiled nodes.

type compiledExpr interface {
	eval(c *evalCtx) (bson.Value, error)
}

// evalCtx is what an expression is evaluated against: the document as
// $$ROOT and $$CURRENT (let variables, $$NOW and the collation were bound
// when the expression was compiled).
type evalCtx struct {
	root bson.Doc
}

// exprParser compiles expressions with one set of options (let variables,
// collation, $$NOW), shared by every expression of one specification.
type exprParser struct {
	opts *expr.Options
	envs *sync.Pool // of *expr.Env for these options
}

// newExprParser validates and evaluates the let variables and returns the
// compiler and the variables' values.
func newExprParser(opts *Options) (*exprParser, map[string]bson.Value, error) {
	if opts == nil {
		opts = &Options{}
	}
	eo := &expr.Options{Collation: opts.comparer(), Let: opts.Let, Scripts: opts.Scripts}
	vals, err := eo.LetValues()
	if err != nil {
		return nil, nil, err
	}
	p := &exprParser{opts: eo}
	p.envs = &sync.Pool{New: func() any { return expr.NewEnv(eo) }}
	return p, vals, nil
}

func (p *exprParser) parse(v bson.Value) (compiledExpr, error) {
	x, err := expr.Parse(v, p.opts)
	if err != nil {
		return nil, err
	}
	return &exprAdapter{x: x, envs: p.envs}, nil
}

// exprAdapter evaluates an internal/expr expression with a pooled Env and
// copies the result out of the Env's arena.
type exprAdapter struct {
	x    expr.Expr
	envs *sync.Pool
}

func (e *exprAdapter) eval(c *evalCtx) (bson.Value, error) {
	env := e.envs.Get().(*expr.Env)
	v, err := expr.Eval(e.x, c.root, env)
	if err == nil && v.Type != 0 {
		v = expr.CopyValue(v)
	}
	e.envs.Put(env)
	return v, err
}

// isExpressionOperator reports whether op names an aggregation expression
// operator.
func isExpressionOperator(op string) bool { return expr.IsOperator(op) }

// exprNode is $expr in a filter: the document matches when the expression
// is truthy. An evaluation error is reported in MatchDetails.Err.
type exprNode struct {
	e compiledExpr
}

func (n *exprNode) match(d bson.Doc, md *MatchDetails) bool {
	v, err := n.e.eval(&evalCtx{root: d})
	if err != nil {
		if md != nil && md.Err == nil {
			md.Err = err
		}
		return false
	}
	return expr.Truthy(v)
}
