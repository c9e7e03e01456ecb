package query

import (
	"sort"
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// eqField is an equality the filter requires of a path.
type eqField struct {
	path  string
	parts []string
	v     bson.Value
}

// equalities returns the path equalities implied by the filter's top-level
// conjunction ({a: 1}, {a: {$eq: 1}}, {a: {$in: [1]}}, inside $and and
// single-branch $or).
func (f *Filter) equalities() []eqField {
	var out []eqField
	var walk func(n node)
	walk = func(n node) {
		switch n := n.(type) {
		case andNode:
			for _, c := range n {
				walk(c)
			}
		case *leafNode:
			switch m := n.m.(type) {
			case *cmpMatcher:
				if m.op == opEQ {
					out = append(out, eqField{path: strings.Join(n.parts, "."), parts: n.parts, v: m.rhs})
				}
			case *inMatcher:
				if len(m.eqs) == 1 && len(m.regexes) == 0 {
					out = append(out, eqField{path: strings.Join(n.parts, "."), parts: n.parts, v: m.eqs[0]})
				}
			}
		}
	}
	walk(f.root)
	return out
}

// UpsertSeed appends to b the fields an upsert's new document starts with:
// the filter's equality clauses, dotted paths expanded into embedded
// documents, _id first and the rest in path order (as MongoDB does). A
// path matched twice, or matched along with a prefix of it, is an error
// (code 54).
func (f *Filter) UpsertSeed(b *bson.Builder) error {
	eqs := f.equalities()
	sort.SliceStable(eqs, func(i, j int) bool {
		ii, jj := eqs[i].parts[0] == "_id", eqs[j].parts[0] == "_id"
		if ii != jj {
			return ii
		}
		return eqs[i].path < eqs[j].path
	})
	for i := range eqs {
		for j := range eqs {
			if i == j {
				continue
			}
			a, c := eqs[i].path, eqs[j].path
			if a == c && i < j {
				return mongoerr.New(mongoerr.NotSingleValueField, "cannot infer query fields to set, path '%s' is matched twice", a)
			}
			if strings.HasPrefix(a, c+".") {
				return mongoerr.New(mongoerr.NotSingleValueField, "cannot infer query fields to set, both paths '%s' and '%s' are matched", a, c)
			}
		}
	}
	appendSeed(b, eqs, 0)
	return nil
}

// appendSeed writes eqs (sorted, grouped by their component at depth).
func appendSeed(b *bson.Builder, eqs []eqField, depth int) {
	for i := 0; i < len(eqs); {
		name := eqs[i].parts[depth]
		j := i + 1
		for j < len(eqs) && eqs[j].parts[depth] == name {
			j++
		}
		if len(eqs[i].parts) == depth+1 {
			b.AppendValue(name, eqs[i].v)
		} else {
			b.StartDocument(name)
			appendSeed(b, eqs[i:j], depth+1)
			b.End()
		}
		i = j
	}
}

// IDEquality returns the value the filter pins _id to, when it does: the
// server may then look the document up directly (by the value's key
// encoding, since equal numbers of different types match) before checking
// the whole filter. Under a collation, strings (and documents or arrays,
// which may hold strings) do not qualify.
func (f *Filter) IDEquality() (bson.Value, bool) {
	for _, e := range f.equalities() {
		if len(e.parts) != 1 || e.parts[0] != "_id" {
			continue
		}
		switch e.v.Type {
		case bson.TypeNull, bson.TypeUndefined, bson.TypeMinKey, bson.TypeMaxKey:
			continue
		case bson.TypeString, bson.TypeSymbol, bson.TypeDocument, bson.TypeArray:
			if f.coll != nil {
				continue
			}
		}
		return e.v, true
	}
	return bson.Value{}, false
}
