package query

import "github.com/cairndb/cairn/bson"

// groupNode evaluates several operators on one path ({a.b: {$gte: 1,
// $lt: 10}}) with a single lookup when the path meets no array: then the
// path designates exactly one value (or none), every operator sees that
// value alone, and no array position is involved. When an array is met it
// falls back to evaluating each operator's own node, which walks the
// arrays with MongoDB's existential semantics.
type groupNode struct {
	parts []string
	items []groupItem
	nodes []node // the same operators bound one by one, for the fallback
}

type groupItem struct {
	m      valueMatcher
	negate bool
}

// bindPath binds the operators parsed for one path, grouping the simple
// ones.
func bindPath(parts []string, ps []pred) []node {
	g := &groupNode{parts: parts}
	for _, pr := range ps {
		it, ok := groupable(pr)
		if !ok {
			g = nil
			break
		}
		g.items = append(g.items, it)
		g.nodes = append(g.nodes, pr.bind(parts))
	}
	if g != nil && len(g.items) >= 2 {
		return []node{g}
	}
	// Only a path whose operators are all plain is grouped, so that the
	// order in which positions are recorded never changes.
	out := make([]node, len(ps))
	for i, pr := range ps {
		out[i] = pr.bind(parts)
	}
	return out
}

// groupable reports whether pr is a plain operator (or its negation) whose
// result on a single value is its matcher's answer.
func groupable(pr pred) (groupItem, bool) {
	switch p := pr.(type) {
	case *leafPred:
		if _, rec := p.m.(keyRecorder); rec {
			return groupItem{}, false
		}
		return groupItem{m: p.m}, true
	case *notPred:
		if lp, ok := p.p.(*leafPred); ok {
			if _, rec := lp.m.(keyRecorder); !rec {
				return groupItem{m: lp.m, negate: true}, true
			}
		}
	}
	return groupItem{}, false
}

func (g *groupNode) match(d bson.Doc, md *MatchDetails) bool {
	v, simple := lookupNoArrays(d, g.parts)
	if !simple {
		for _, n := range g.nodes {
			if !n.match(d, md) {
				return false
			}
		}
		return true
	}
	for _, it := range g.items {
		if it.m.matchValue(v) == it.negate {
			return false
		}
	}
	return true
}

// lookupNoArrays returns the single value a path designates (the zero
// Value when missing, as walkDoc offers it), or simple=false when an array
// is met along the path or at its end.
func lookupNoArrays(d bson.Doc, parts []string) (v bson.Value, simple bool) {
	for i, p := range parts {
		x, ok := d.Lookup(p)
		if !ok {
			return bson.Value{}, true
		}
		switch x.Type {
		case bson.TypeArray:
			return bson.Value{}, false
		case bson.TypeDocument:
			if i == len(parts)-1 {
				return x, true
			}
			d = bson.Doc(x.Data)
		default:
			if i == len(parts)-1 {
				return x, true
			}
			return bson.Value{}, true
		}
	}
	return bson.Value{}, true
}
