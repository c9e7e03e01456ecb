package expr

import (
	"math"
	"strings"

	"github.com/cairndb/cairn/bson"
)

// numArg is the fast path of a $sum or $avg argument that is a number, a
// field path, or an $add of them ("$x", 1, {$add: ["$x", 3]}): it reads
// int32, int64 and double values straight from the document, without an
// Env, and gives up (ok false, the general evaluation then runs) on
// anything else: missing, null, dates, decimals, strings, arrays on the
// path, an int64 overflow.
type numArg struct {
	add   bool // an $add of terms (else terms has one element)
	terms []numTerm
}

// numTerm is a constant (path nil) or a path from $$CURRENT.
type numTerm struct {
	path   []string
	dotted string // path joined with dots, the Env's memo key
	c      bson.Value
}

// compileNum returns the fast path of x, or nil.
func compileNum(x Expr) *numArg {
	if x == nil {
		return nil
	}
	n := x.root().n
	if a, ok := n.(*addNode); ok {
		na := &numArg{add: true}
		for _, arg := range a.args {
			t, ok := numTermOf(arg)
			if !ok {
				return nil
			}
			na.terms = append(na.terms, t)
		}
		return na
	}
	t, ok := numTermOf(n)
	if !ok {
		return nil
	}
	return &numArg{terms: []numTerm{t}}
}

func numTermOf(n node) (numTerm, bool) {
	switch n := n.(type) {
	case constNode:
		switch n.v.Type {
		case bson.TypeInt32, bson.TypeInt64, bson.TypeDouble:
			return numTerm{c: n.v}, true
		}
	case *pathNode:
		if n.slot == 0 && len(n.parts) > 0 {
			return numTerm{path: n.parts, dotted: strings.Join(n.parts, ".")}, true
		}
	}
	return numTerm{}, false
}

// value returns the term's value in root: an int32, int64 or double, or
// ok false. A path's value is cached in env for the current document
// (Env.NewDocument), as the accumulators of one $group often read the
// same field.
func (t *numTerm) value(root bson.Doc, env *Env) (bson.Value, bool) {
	if t.path == nil {
		return t.c, true
	}
	m := &env.memo
	if env.doc != 0 && m.doc == env.doc && m.path == t.dotted {
		return m.v, m.ok
	}
	v, ok := t.walk(root)
	if env.doc != 0 {
		m.doc, m.path, m.v, m.ok = env.doc, t.dotted, v, ok
	}
	return v, ok
}

func (t *numTerm) walk(root bson.Doc) (bson.Value, bool) {
	v := bson.Value{Type: bson.TypeDocument, Data: root}
	for _, p := range t.path {
		if v.Type != bson.TypeDocument {
			return bson.Value{}, false
		}
		var found bool
		if v, found = lookupKey(v.Data, p); !found {
			return bson.Value{}, false
		}
	}
	switch v.Type {
	case bson.TypeInt32, bson.TypeInt64, bson.TypeDouble:
		return v, true
	}
	return bson.Value{}, false
}

// eval returns the argument's value as a type (int32, int64 or double)
// with an integer n or a double f, as $add would compute it; ok is false
// when the general evaluation must run instead.
func (a *numArg) eval(root bson.Doc, env *Env) (typ bson.Type, n int64, f float64, ok bool) {
	if !a.add {
		v, ok := a.terms[0].value(root, env)
		if !ok {
			return 0, 0, 0, false
		}
		switch v.Type {
		case bson.TypeInt32:
			return v.Type, int64(v.Int32()), 0, true
		case bson.TypeInt64:
			return v.Type, v.Int64(), 0, true
		}
		return v.Type, 0, v.Double(), true
	}
	typ = bson.TypeInt32
	for i := range a.terms {
		v, ok := a.terms[i].value(root, env)
		if !ok {
			return 0, 0, 0, false
		}
		switch v.Type {
		case bson.TypeDouble:
			if typ != bson.TypeDouble {
				typ, f = bson.TypeDouble, float64(n)
			}
			f += v.Double()
		default:
			x := toLong(v)
			if typ == bson.TypeDouble {
				f += float64(x)
				continue
			}
			if v.Type == bson.TypeInt64 {
				typ = bson.TypeInt64
			}
			var over bool
			if n, over = addInt64(n, x); over {
				return 0, 0, 0, false
			}
		}
	}
	if typ == bson.TypeInt32 && (n < math.MinInt32 || n > math.MaxInt32) {
		typ = bson.TypeInt64 // $add of int32s widens on overflow
	}
	return typ, n, f, true
}
