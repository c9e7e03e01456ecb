package expr

import (
	"strings"
	"unsafe"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// $filter, $map and $reduce: the array operators that bind a variable to
// each element in turn.

// ---- $filter, $map, $reduce ----

// arrayInput evaluates input, the array an operator reads: null reports
// a null or missing value (the operator's answer is then null); anything
// else that is not an array is refused with notArray's error.
func arrayInput(e *Env, input node, notArray func(v bson.Value) error) (in bson.Value, null bool, err error) {
	if in, err = input.eval(e); err != nil {
		return missing, false, err
	}
	if nullish(in) {
		return missing, true, nil
	}
	if in.Type != bson.TypeArray {
		return missing, false, notArray(in)
	}
	return in, false, nil
}

type filterNode struct {
	input, cond, limit node
	slot               int
}

func parseFilter(p *parser, name string, arg bson.Value) (node, error) {
	m, err := namedValues(arg, []string{"input", "as", "cond", "limit"}, func() error {
		return errf(mongoerr.FilterNotObject, "$filter only supports an object as its argument")
	}, func(key string) error {
		return errf(mongoerr.FilterUnknownParameter, "Unrecognized parameter to $filter: %s", key)
	})
	if err != nil {
		return nil, err
	}
	if _, ok := m["input"]; !ok {
		return nil, errf(mongoerr.FilterMissingInput, "Missing 'input' parameter to $filter")
	}
	if _, ok := m["cond"]; !ok {
		return nil, errf(mongoerr.FilterMissingCond, "Missing 'cond' parameter to $filter")
	}
	n := &filterNode{}
	if n.input, err = p.parse(m["input"]); err != nil {
		return nil, err
	}
	if n.limit, err = p.optNode(m, "limit"); err != nil {
		return nil, err
	}
	as, err := asName(m, "$filter")
	if err != nil {
		return nil, err
	}
	n.slot = p.declare(as)
	n.cond, err = p.parse(m["cond"])
	p.popScope(1)
	if err != nil {
		return nil, err
	}
	return n, nil
}

func asName(m map[string]bson.Value, op string) (string, error) {
	v, ok := m["as"]
	if !ok {
		return "this", nil
	}
	if v.Type != bson.TypeString {
		return "", errf(mongoerr.UserVariableNameEmpty, "empty variable names are not allowed")
	}
	name := v.StringValue()
	if err := validateVarWrite(name); err != nil {
		return "", err
	}
	return strings.Clone(name), nil
}

func (n *filterNode) eval(e *Env) (bson.Value, error) {
	in, null, err := arrayInput(e, n.input, func(v bson.Value) error {
		return errf(mongoerr.FilterInputNotArray, "input to $filter must be an array not %s", typeName(v))
	})
	if err != nil || null {
		return vNull, err
	}
	if len(in.Data) <= 5 {
		return in, nil
	}
	limit := -1
	if n.limit != nil {
		lv, err := n.limit.eval(e)
		if err != nil {
			return missing, err
		}
		if !nullish(lv) {
			if !isIntegral32(lv) {
				return missing, errf(mongoerr.FilterLimitNotInt32, "$filter: limit must be represented as a 32-bit integral value: %s", lv.String())
			}
			limit = int(toLong(lv))
			if limit < 1 {
				return missing, errf(mongoerr.FilterLimitNotPositive, "$filter: limit must be greater than 0: %s", lv.String())
			}
		}
	}
	start := len(e.vs)
	it := in.Document().Iter()
	for it.Next() && limit != 0 {
		el := it.Element().Value
		if err := e.step(); err != nil {
			e.vs = e.vs[:start]
			return missing, err
		}
		e.vars[n.slot] = el
		c, err := n.cond.eval(e)
		if err != nil {
			e.vs = e.vs[:start]
			return missing, err
		}
		if Truthy(c) {
			e.vs = append(e.vs, el)
			limit--
		}
	}
	out := e.array(e.vs[start:])
	e.vs = e.vs[:start]
	return out, nil
}

type mapNode struct {
	input, in node
	slot      int
}

func parseMap(p *parser, name string, arg bson.Value) (node, error) {
	m, err := namedValues(arg, []string{"input", "as", "in"}, func() error {
		return errf(mongoerr.MapNotObject, "$map only supports an object as its argument")
	}, func(key string) error {
		return errf(mongoerr.MapUnknownParameter, "Unrecognized parameter to $map: %s", key)
	})
	if err != nil {
		return nil, err
	}
	if _, ok := m["input"]; !ok {
		return nil, errf(mongoerr.MapMissingInput, "Missing 'input' parameter to $map")
	}
	if _, ok := m["in"]; !ok {
		return nil, errf(mongoerr.MapMissingIn, "Missing 'in' parameter to $map")
	}
	n := &mapNode{}
	if n.input, err = p.parse(m["input"]); err != nil {
		return nil, err
	}
	as, err := asName(m, "$map")
	if err != nil {
		return nil, err
	}
	n.slot = p.declare(as)
	n.in, err = p.parse(m["in"])
	p.popScope(1)
	if err != nil {
		return nil, err
	}
	return n, nil
}

func (n *mapNode) eval(e *Env) (bson.Value, error) {
	in, null, err := arrayInput(e, n.input, func(v bson.Value) error {
		return errf(mongoerr.MapInputNotArray, "input to $map must be an array not %s", typeName(v))
	})
	if err != nil || null {
		return vNull, err
	}
	start := len(e.vs)
	it := in.Document().Iter()
	for it.Next() {
		if err := e.step(); err != nil {
			e.vs = e.vs[:start]
			return missing, err
		}
		e.vars[n.slot] = it.Element().Value
		v, err := n.in.eval(e)
		if err != nil {
			e.vs = e.vs[:start]
			return missing, err
		}
		e.vs = append(e.vs, v)
	}
	out := e.array(e.vs[start:])
	e.vs = e.vs[:start]
	return out, e.checkArena()
}

type reduceNode struct {
	input, init, in     node
	thisSlot, valueSlot int
}

func parseReduce(p *parser, name string, arg bson.Value) (node, error) {
	m, err := namedValues(arg, []string{"input", "initialValue", "in"}, func() error {
		return errf(mongoerr.ReduceNotObject, "$reduce requires an object as an argument, found: %s", typeName(arg))
	}, func(key string) error {
		return errf(mongoerr.ReduceUnknownArgument, "$reduce found an unknown argument: %s", key)
	})
	if err != nil {
		return nil, err
	}
	for _, k := range []struct {
		name string
		code int32
	}{{"input", mongoerr.ReduceMissingInput}, {"initialValue", mongoerr.ReduceMissingInitialValue}, {"in", mongoerr.ReduceMissingIn}} {
		if _, ok := m[k.name]; !ok {
			return nil, errf(k.code, "$reduce requires '%s' to be specified", k.name)
		}
	}
	n := &reduceNode{}
	if n.input, err = p.parse(m["input"]); err != nil {
		return nil, err
	}
	if n.init, err = p.parse(m["initialValue"]); err != nil {
		return nil, err
	}
	n.thisSlot = p.declare("this")
	n.valueSlot = p.declare("value")
	n.in, err = p.parse(m["in"])
	p.popScope(2)
	if err != nil {
		return nil, err
	}
	return n, nil
}

func (n *reduceNode) eval(e *Env) (bson.Value, error) {
	in, null, err := arrayInput(e, n.input, func(v bson.Value) error {
		return errf(mongoerr.ReduceInputNotArray, "$reduce requires that 'input' be an array, found: %s", v.String())
	})
	if err != nil || null {
		return vNull, err
	}
	m := e.mark()
	acc, err := n.init.eval(e)
	if err != nil {
		return missing, err
	}
	it := in.Document().Iter()
	for it.Next() {
		e.vars[n.thisSlot] = it.Element().Value
		e.vars[n.valueSlot] = acc
		if acc, err = n.in.eval(e); err != nil {
			return missing, err
		}
		if err := e.step(); err != nil {
			return missing, err
		}
		if garbage := len(e.arena) - m.arena - len(acc.Data); garbage > min(reduceCompactMin, maxArena/16) {
			acc = e.compact(m, acc)
		}
	}
	return acc, nil
}

// reduceCompactMin is the memory a $reduce may hold besides its
// accumulated value before it frees the values of its earlier iterations.
const reduceCompactMin = 1 << 20

// compact keeps v and drops everything else built since m: a $reduce that
// grows a string or an array ($concat, $concatArrays of $$value) would
// otherwise hold every intermediate value, memory quadratic in the
// result's size. Only the accumulated value outlives an iteration (the
// variables its expression bound are out of scope), so nothing else built
// since m is referenced. A v built since m moves down to m (one memmove);
// a v from elsewhere (the input, a constant) stays where it is.
func (e *Env) compact(m envMark, v bson.Value) bson.Value {
	base := uintptr(unsafe.Pointer(unsafe.SliceData(e.arena)))
	from, to := base+uintptr(m.arena), base+uintptr(len(e.arena))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(v.Data)))
	if len(v.Data) == 0 || p < from || p >= to {
		e.release(m)
		return v
	}
	off := int(p - base)
	n := copy(e.arena[m.arena:], e.arena[off:off+len(v.Data)])
	e.release(m)
	e.arena = e.arena[:m.arena+n]
	return bson.Value{Type: v.Type, Data: e.arena[m.arena : m.arena+n : m.arena+n]}
}
