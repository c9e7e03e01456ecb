package expr

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

type constNode struct{ v bson.Value }

func (c constNode) eval(*Env) (bson.Value, error) { return c.v, nil }

// errNode fails when evaluated (for errors MongoDB raises at run time).
type errNode struct{ err error }

func (n errNode) eval(*Env) (bson.Value, error) { return bson.Value{}, n.err }

// pathNode reads a variable slot (0 = $$CURRENT, -1 = $$ROOT) and walks a
// field path from it.
type pathNode struct {
	slot  int
	parts []string
}

func (n *pathNode) eval(e *Env) (bson.Value, error) {
	var base bson.Value
	if n.slot < 0 {
		base = bson.Value{Type: bson.TypeDocument, Data: e.rootD}
	} else {
		base = e.vars[n.slot]
	}
	if len(n.parts) == 0 {
		return base, nil
	}
	return e.walk(base, n.parts), nil
}

type constPathNode struct {
	v     bson.Value
	parts []string
}

func (n *constPathNode) eval(e *Env) (bson.Value, error) { return e.walk(n.v, n.parts), nil }

// walk follows parts from v as MongoDB's ExpressionFieldPath does: through
// documents; an array maps the rest of the path over its document elements
// (other elements, nested arrays included, and missing results are
// dropped). The parts hold no NUL byte (parsePath rejects them).
func (e *Env) walk(v bson.Value, parts []string) bson.Value {
	for i, p := range parts {
		switch v.Type {
		case bson.TypeDocument:
			nv, ok := lookupKey(v.Data, p)
			if !ok {
				return missing
			}
			v = nv
		case bson.TypeArray:
			return e.walkArray(v, parts[i:])
		default:
			return missing
		}
	}
	return v
}

func (e *Env) walkArray(arr bson.Value, parts []string) bson.Value {
	start := len(e.vs)
	it := bson.Doc(arr.Data).Iter()
	for it.Next() {
		el := it.Element().Value
		if el.Type != bson.TypeDocument {
			continue
		}
		if r := e.walk(el, parts); r.Type != 0 {
			e.vs = append(e.vs, r)
		}
	}
	out := e.array(e.vs[start:])
	e.vs = e.vs[:start]
	return out
}

// objectNode builds {k: v, ...}, dropping missing values.
type objectNode struct {
	keys []string
	vals []node
}

func (n *objectNode) eval(e *Env) (bson.Value, error) {
	start, err := e.pushEvals(n.vals)
	if err != nil {
		return missing, err
	}
	out := e.document(n.keys, e.vs[start:])
	e.vs = e.vs[:start]
	return out, nil
}

// arrayNode builds [v, ...]; missing values become null.
type arrayNode struct{ elems []node }

func (n *arrayNode) eval(e *Env) (bson.Value, error) {
	start, err := e.pushEvals(n.elems)
	if err != nil {
		return missing, err
	}
	out := e.array(e.vs[start:])
	e.vs = e.vs[:start]
	return out, nil
}

// naryFn computes an operator's result from its evaluated operands. It
// must not keep args.
type naryFn func(e *Env, args []bson.Value) (bson.Value, error)

// naryNode evaluates every operand, then applies fn.
type naryNode struct {
	args []node
	fn   naryFn
}

func (n *naryNode) eval(e *Env) (bson.Value, error) {
	start, err := e.pushEvals(n.args)
	if err != nil {
		return missing, err
	}
	r, err := n.fn(e, e.vs[start:len(e.vs):len(e.vs)])
	e.vs = e.vs[:start]
	return r, err
}

// unaryNode is naryNode for one operand, without the value stack.
type unaryNode struct {
	arg node
	fn  func(e *Env, v bson.Value) (bson.Value, error)
}

func (n *unaryNode) eval(e *Env) (bson.Value, error) {
	v, err := n.arg.eval(e)
	if err != nil {
		return missing, err
	}
	return n.fn(e, v)
}

// binaryNode is naryNode for two operands.
type binaryNode struct {
	a, b node
	fn   func(e *Env, a, b bson.Value) (bson.Value, error)
}

func (n *binaryNode) eval(e *Env) (bson.Value, error) {
	a, err := n.a.eval(e)
	if err != nil {
		return missing, err
	}
	b, err := n.b.eval(e)
	if err != nil {
		return missing, err
	}
	return n.fn(e, a, b)
}

// Registration helpers.

func regNary(name string, min, max int, fn naryFn) {
	register(name, func(p *parser, name string, arg bson.Value) (node, error) {
		var args []node
		var err error
		switch {
		case min == max:
			args, err = p.exactArgs(name, arg, min)
		case max < 0:
			args, err = p.parseAll(argList(arg))
			if err == nil && len(args) < min {
				err = errf(mongoerr.ExpressionWrongArgCount, "Expression %s takes at least %d arguments. %d were passed in.", name, min, len(args))
			}
		default:
			args, err = p.rangeArgs(name, arg, min, max)
		}
		if err != nil {
			return nil, err
		}
		return p.fold(&naryNode{args: args, fn: fn}, args...), nil
	})
}

func regUnary(name string, fn func(e *Env, v bson.Value) (bson.Value, error)) {
	register(name, func(p *parser, name string, arg bson.Value) (node, error) {
		args, err := p.exactArgs(name, arg, 1)
		if err != nil {
			return nil, err
		}
		return p.fold(&unaryNode{arg: args[0], fn: fn}, args...), nil
	})
}

func regBinary(name string, fn func(e *Env, a, b bson.Value) (bson.Value, error)) {
	register(name, func(p *parser, name string, arg bson.Value) (node, error) {
		args, err := p.exactArgs(name, arg, 2)
		if err != nil {
			return nil, err
		}
		return p.fold(&binaryNode{a: args[0], b: args[1], fn: fn}, args...), nil
	})
}

// fold evaluates n at parse time when all its operands are constants
// (MongoDB's constant folding). When that fails, n is kept so the error
// is raised only if the expression is actually evaluated.
func (p *parser) fold(n node, args ...node) node {
	for _, a := range args {
		if _, ok := a.(constNode); !ok {
			return n
		}
	}
	env := NewEnv(p.opts)
	env.vars = make([]bson.Value, 1)
	env.rootD = bson.EmptyDoc
	v, err := n.eval(env)
	if err != nil || env.over {
		return n // the error (or the memory limit) is met at evaluation
	}
	return constNode{copyValue(v)}
}
