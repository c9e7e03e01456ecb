package expr

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// Comparison, boolean and conditional operators.

func init() {
	regBinary("$eq", func(e *Env, a, b bson.Value) (bson.Value, error) { return vBool(e.compare(a, b) == 0), nil })
	regBinary("$ne", func(e *Env, a, b bson.Value) (bson.Value, error) { return vBool(e.compare(a, b) != 0), nil })
	regBinary("$gt", func(e *Env, a, b bson.Value) (bson.Value, error) { return vBool(e.compare(a, b) > 0), nil })
	regBinary("$gte", func(e *Env, a, b bson.Value) (bson.Value, error) { return vBool(e.compare(a, b) >= 0), nil })
	regBinary("$lt", func(e *Env, a, b bson.Value) (bson.Value, error) { return vBool(e.compare(a, b) < 0), nil })
	regBinary("$lte", func(e *Env, a, b bson.Value) (bson.Value, error) { return vBool(e.compare(a, b) <= 0), nil })
	register("$cmp", parseCmp)
	register("$and", parseAndOr(true))
	register("$or", parseAndOr(false))
	regUnary("$not", func(e *Env, v bson.Value) (bson.Value, error) { return vBool(!Truthy(v)), nil })
	register("$cond", parseCond)
	register("$ifNull", parseIfNull)
	register("$switch", parseSwitch)
}

// compare compares with the expression's collation; missing compares as
// missing (below null), as in MongoDB's Value comparison.
func (e *Env) compare(a, b bson.Value) int {
	return bson.CompareCollated(a, b, e.opts.Collation)
}

var (
	vMinusOne = bson.Value{Type: bson.TypeInt32, Data: []byte{0xff, 0xff, 0xff, 0xff}}
	vZero     = bson.Value{Type: bson.TypeInt32, Data: []byte{0, 0, 0, 0}}
	vOne      = bson.Value{Type: bson.TypeInt32, Data: []byte{1, 0, 0, 0}}
)

func parseCmp(p *parser, name string, arg bson.Value) (node, error) {
	args, err := p.exactArgs(name, arg, 2)
	if err != nil {
		return nil, err
	}
	return &binaryNode{a: args[0], b: args[1], fn: func(e *Env, a, b bson.Value) (bson.Value, error) {
		switch c := e.compare(a, b); {
		case c < 0:
			return vMinusOne, nil
		case c > 0:
			return vOne, nil
		}
		return vZero, nil
	}}, nil
}

type andOrNode struct {
	args []node
	and  bool
}

func parseAndOr(and bool) opParser {
	return func(p *parser, name string, arg bson.Value) (node, error) {
		args, err := p.parseAll(argList(arg))
		if err != nil {
			return nil, err
		}
		return &andOrNode{args: args, and: and}, nil
	}
}

func (n *andOrNode) eval(e *Env) (bson.Value, error) {
	for _, x := range n.args {
		v, err := x.eval(e)
		if err != nil {
			return missing, err
		}
		if Truthy(v) != n.and {
			return vBool(!n.and), nil
		}
	}
	return vBool(n.and), nil
}

type condNode struct{ cond, then, els node }

func (n *condNode) eval(e *Env) (bson.Value, error) {
	c, err := n.cond.eval(e)
	if err != nil {
		return missing, err
	}
	if Truthy(c) {
		return n.then.eval(e)
	}
	return n.els.eval(e)
}

func parseCond(p *parser, name string, arg bson.Value) (node, error) {
	if arg.Type != bson.TypeDocument {
		args, err := p.exactArgs(name, arg, 3)
		if err != nil {
			return nil, err
		}
		return &condNode{args[0], args[1], args[2]}, nil
	}
	m, err := namedArgs(p, arg, []string{"if", "then", "else"}, nil, func(key string) error {
		return errf(mongoerr.CondUnknownParameter, "Unrecognized parameter to $cond: %s", key)
	})
	if err != nil {
		return nil, err
	}
	c, t, f := m["if"], m["then"], m["else"]
	switch {
	case c == nil:
		return nil, errf(mongoerr.CondMissingIf, "Missing 'if' parameter to $cond")
	case t == nil:
		return nil, errf(mongoerr.CondMissingThen, "Missing 'then' parameter to $cond")
	case f == nil:
		return nil, errf(mongoerr.CondMissingElse, "Missing 'else' parameter to $cond")
	}
	return &condNode{c, t, f}, nil
}

type ifNullNode struct{ args []node }

func parseIfNull(p *parser, name string, arg bson.Value) (node, error) {
	vals := argList(arg)
	if len(vals) < 2 {
		return nil, errf(mongoerr.IfNullTooFewArgs, "$ifNull needs at least two arguments, had: %d", len(vals))
	}
	args, err := p.parseAll(vals)
	if err != nil {
		return nil, err
	}
	return &ifNullNode{args: args}, nil
}

func (n *ifNullNode) eval(e *Env) (bson.Value, error) {
	for i, x := range n.args {
		v, err := x.eval(e)
		if err != nil {
			return missing, err
		}
		if !nullish(v) || i == len(n.args)-1 {
			return v, nil
		}
	}
	return missing, nil
}

type switchNode struct {
	cases []node // case, then pairs
	def   node
}

func parseSwitch(p *parser, name string, arg bson.Value) (node, error) {
	if arg.Type != bson.TypeDocument {
		return nil, errf(mongoerr.SwitchNotObject, "$switch requires an object as an argument, found: %s", arg.Type.String())
	}
	n := &switchNode{}
	it := arg.Document().Iter()
	for it.Next() {
		el := it.Element()
		switch el.Key {
		case "branches":
			if el.Value.Type != bson.TypeArray {
				return nil, errf(mongoerr.SwitchBranchesNotArray, "$switch expected an array for 'branches', found: %s", el.Value.Type.String())
			}
			bi := el.Value.Document().Iter()
			for bi.Next() {
				b := bi.Element().Value
				if b.Type != bson.TypeDocument {
					return nil, errf(mongoerr.SwitchBranchNotObject, "$switch expected each branch to be an object, found: %s", b.Type.String())
				}
				m, err := namedArgs(p, b, []string{"case", "then"}, nil, func(key string) error {
					return errf(mongoerr.SwitchBranchUnknownArgument, "$switch found an unknown argument to a branch: %s", key)
				})
				if err != nil {
					return nil, err
				}
				c, t := m["case"], m["then"]
				if c == nil {
					return nil, errf(mongoerr.SwitchBranchMissingCase, "$switch requires each branch have a 'case' expression")
				}
				if t == nil {
					return nil, errf(mongoerr.SwitchBranchMissingThen, "$switch requires each branch have a 'then' expression.")
				}
				n.cases = append(n.cases, c, t)
			}
		case "default":
			x, err := p.parse(el.Value)
			if err != nil {
				return nil, err
			}
			n.def = x
		default:
			return nil, errf(mongoerr.SwitchUnknownArgument, "$switch found an unknown argument: %s", el.Key)
		}
	}
	if len(n.cases) == 0 {
		return nil, errf(mongoerr.SwitchNoBranches, "$switch requires at least one branch.")
	}
	return n, nil
}

func (n *switchNode) eval(e *Env) (bson.Value, error) {
	for i := 0; i < len(n.cases); i += 2 {
		c, err := n.cases[i].eval(e)
		if err != nil {
			return missing, err
		}
		if Truthy(c) {
			return n.cases[i+1].eval(e)
		}
	}
	if n.def == nil {
		return missing, errf(mongoerr.SwitchNoMatchingBranch, "$switch could not find a matching branch for an input, and no default was specified.")
	}
	return n.def.eval(e)
}
