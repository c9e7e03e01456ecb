package agg

import (
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

type groupStage struct {
	id   Expr
	accs []accSpec
}

func parseGroup(v bson.Value) (stage, error) {
	if v.Type != bson.TypeDocument {
		return nil, mongoerr.New(15947, "a group's fields must be specified in an object")
	}
	g := &groupStage{}
	hasID := false
	it := v.Document().Iter()
	for it.Next() {
		e := it.Element()
		if e.Key == "_id" {
			id, err := ParseExpr(e.Value)
			if err != nil {
				return nil, err
			}
			g.id, hasID = id, true
			continue
		}
		if strings.HasPrefix(e.Key, "$") {
			return nil, mongoerr.New(40236, "The field name '%s' cannot be an operator name", e.Key)
		}
		if strings.Contains(e.Key, ".") {
			return nil, mongoerr.New(40235, "The field name '%s' cannot contain '.'", e.Key)
		}
		if e.Value.Type != bson.TypeDocument || e.Value.Document().Len() != 1 {
			return nil, mongoerr.New(40234, "The field '%s' must be an accumulator object", e.Key)
		}
		ait := e.Value.Document().Iter()
		ait.Next()
		op := ait.Element()
		if _, err := newAccumulator(op.Key); err != nil {
			return nil, err
		}
		spec := accSpec{name: strings.Clone(e.Key), op: strings.Clone(op.Key)}
		if op.Key == "$count" {
			if op.Value.Type != bson.TypeDocument || op.Value.Document().Len() != 0 {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "$count takes no arguments, i.e. $count:{}")
			}
		} else {
			arg, err := ParseExpr(op.Value)
			if err != nil {
				return nil, err
			}
			spec.arg = arg
		}
		g.accs = append(g.accs, spec)
	}
	if !hasID {
		return nil, mongoerr.New(15955, "a group specification must include an _id")
	}
	return g, nil
}

func (g *groupStage) wrap(in Iterator) Iterator {
	var out *SliceIterator
	return FuncIterator(func() (bson.Doc, error) {
		if out == nil {
			docs, err := g.run(in)
			if err != nil {
				return nil, err
			}
			out = &SliceIterator{Docs: docs}
		}
		return out.Next()
	})
}

type group struct {
	id   bson.Value
	accs []accumulator
}

// run groups every input document by the _id expression (equal values, as
// MongoDB compares them, share a group) and returns one document per group
// in first-seen order.
func (g *groupStage) run(in Iterator) ([]bson.Doc, error) {
	groups := map[string]*group{}
	var order []*group
	var key []byte
	for {
		d, err := in.Next()
		if err != nil {
			return nil, err
		}
		if d == nil {
			break
		}
		id, err := g.id.Eval(d)
		if err != nil {
			return nil, err
		}
		if id.Type == 0 {
			id = bson.Value{Type: bson.TypeNull}
		}
		key = bson.AppendKey(key[:0], id, false)
		gr := groups[string(key)]
		if gr == nil {
			gr = &group{id: cloneValue(id)}
			for _, a := range g.accs {
				acc, _ := newAccumulator(a.op)
				gr.accs = append(gr.accs, acc)
			}
			groups[string(key)] = gr
			order = append(order, gr)
		}
		for i, a := range g.accs {
			var v bson.Value
			if a.arg != nil {
				if v, err = a.arg.Eval(d); err != nil {
					return nil, err
				}
			}
			if err := gr.accs[i].add(v); err != nil {
				return nil, err
			}
		}
	}
	out := make([]bson.Doc, 0, len(order))
	for _, gr := range order {
		var b bson.Builder
		b.AppendValue("_id", gr.id)
		for i, a := range g.accs {
			b.AppendValue(a.name, gr.accs[i].result())
		}
		out = append(out, b.Finish())
	}
	return out, nil
}
