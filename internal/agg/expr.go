package agg

import (
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// Expr is a compiled aggregation expression.
type Expr interface {
	// Eval evaluates the expression against doc ($$ROOT and $$CURRENT).
	// A zero Value means "missing".
	Eval(doc bson.Doc) (bson.Value, error)
}

// literal is a constant.
type literal struct{ v bson.Value }

func (l literal) Eval(bson.Doc) (bson.Value, error) { return l.v, nil }

// fieldPath is "$a.b.c": the value at a dotted path; arrays along the way
// map the rest of the path over their elements, as MongoDB does.
type fieldPath struct{ parts []string }

func (f fieldPath) Eval(doc bson.Doc) (bson.Value, error) {
	return walkPath(bson.Value{Type: bson.TypeDocument, Data: doc}, f.parts), nil
}

func walkPath(v bson.Value, parts []string) bson.Value {
	for i, p := range parts {
		switch v.Type {
		case bson.TypeDocument:
			nv, ok := v.Document().Lookup(p)
			if !ok {
				return bson.Value{}
			}
			v = nv
		case bson.TypeArray:
			var b bson.Builder
			b.StartArray("a")
			n := 0
			it := v.Document().Iter()
			for it.Next() {
				e := it.Element().Value
				if e.Type != bson.TypeDocument && e.Type != bson.TypeArray {
					continue
				}
				r := walkPath(e, parts[i:])
				if r.Type == 0 {
					continue
				}
				b.AppendValue(bson.Index(n), r)
				n++
			}
			b.End()
			out, _ := b.Finish().Lookup("a")
			return out
		default:
			return bson.Value{}
		}
	}
	return v
}

// object is {field: expr, ...} evaluated to a new document.
type object struct {
	keys  []string
	exprs []Expr
}

func (o object) Eval(doc bson.Doc) (bson.Value, error) {
	var b bson.Builder
	for i, k := range o.keys {
		v, err := o.exprs[i].Eval(doc)
		if err != nil {
			return bson.Value{}, err
		}
		if v.Type == 0 {
			continue
		}
		b.AppendValue(k, v)
	}
	return bson.Value{Type: bson.TypeDocument, Data: b.Finish()}, nil
}

// ParseExpr compiles an aggregation expression. Cairn's expression
// evaluator currently knows field paths, literals, $literal and documents of
// expressions; other operators answer an error naming them.
func ParseExpr(v bson.Value) (Expr, error) {
	switch v.Type {
	case bson.TypeString:
		s := v.StringValue()
		if strings.HasPrefix(s, "$$") {
			return nil, mongoerr.New(mongoerr.NotImplemented, "variable %s is not supported by Cairn yet", s)
		}
		if strings.HasPrefix(s, "$") {
			if len(s) == 1 {
				return nil, mongoerr.New(16872, "'$' by itself is not a valid FieldPath")
			}
			return fieldPath{parts: strings.Split(strings.Clone(s[1:]), ".")}, nil
		}
		return literal{v}, nil
	case bson.TypeDocument:
		d := v.Document()
		it := d.Iter()
		var o object
		for it.Next() {
			e := it.Element()
			if strings.HasPrefix(e.Key, "$") {
				if d.Len() != 1 {
					return nil, mongoerr.New(15983, "an expression specification must contain exactly one field, the name of the expression. Found %d fields in %s", d.Len(), d.String())
				}
				if e.Key == "$literal" {
					return literal{e.Value}, nil
				}
				return nil, mongoerr.New(mongoerr.NotImplemented, "expression %s is not supported by Cairn yet", e.Key)
			}
			sub, err := ParseExpr(e.Value)
			if err != nil {
				return nil, err
			}
			o.keys = append(o.keys, strings.Clone(e.Key))
			o.exprs = append(o.exprs, sub)
		}
		return o, nil
	case bson.TypeArray:
		return nil, mongoerr.New(mongoerr.NotImplemented, "array expressions are not supported by Cairn yet")
	}
	return literal{v}, nil
}
