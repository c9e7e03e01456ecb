package agg

import (
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/expr"
)

// FilteredScanner is implemented by catalogs that can serve a scan from an
// index: ScanFiltered returns at least every document of db.coll that
// matches filter (possibly more; the pipeline filters again).
type FilteredScanner interface {
	ScanFiltered(db, coll string, filter bson.Doc) (Iterator, error)
}

// PipelineRunner is implemented by catalogs that can run a pipeline over
// one of their collections better than over a plain scan: through an
// index in the order of its leading $sort (Pipeline.RunSorted), or with
// parallel workers (Pipeline.RunParallel) reading an index or a column
// cache. ok is false when they do neither (nothing is run).
type PipelineRunner interface {
	RunPipeline(db, coll string, p *Pipeline) (it Iterator, ok bool, err error)
}

// IndexFilter returns a query filter selecting a superset of the documents
// the pipeline's leading $match keeps, for the catalog to serve from an
// index, or nil. It is the $match without $expr, plus each
// {$eq: ["$path", c]} conjunct of $expr whose c is a variable or literal
// with a scalar value, as {path: c}: query equality matches whatever the
// expression's equality matches (and more: array elements, missing for null).
func (p *Pipeline) IndexFilter() bson.Doc {
	if len(p.stages) == 0 {
		return nil
	}
	m, ok := p.stages[0].(*matchStage)
	if !ok {
		return nil
	}
	var b bson.Builder
	n := 0
	if it := m.plain.Iter(); m.plain != nil {
		for it.Next() {
			b.AppendElement(it.Element())
			n++
		}
	}
	if m.exprSpec.Type == bson.TypeDocument {
		for _, c := range exprConjuncts(m.exprSpec) {
			if path, v, ok := p.eqConstant(c); ok {
				b.AppendValue(path, v)
				n++
			}
		}
	}
	if n == 0 {
		return nil
	}
	return b.Finish()
}

// exprConjuncts splits {$and: [a, b]} into its terms (any other expression
// is one term).
func exprConjuncts(v bson.Value) []bson.Value {
	if v.Type != bson.TypeDocument {
		return []bson.Value{v}
	}
	d := v.Document()
	if and, ok := d.Lookup("$and"); ok && d.Len() == 1 && and.Type == bson.TypeArray {
		var out []bson.Value
		it := and.Document().Iter()
		for it.Next() {
			out = append(out, exprConjuncts(it.Element().Value)...)
		}
		return out
	}
	return []bson.Value{v}
}

// eqConstant recognizes {$eq: ["$path", c]} (either order) where c is a
// variable ($$name) or a literal, and returns the path and c's value when
// it is a scalar.
func (p *Pipeline) eqConstant(v bson.Value) (string, bson.Value, bool) {
	if v.Type != bson.TypeDocument || v.Document().Len() != 1 {
		return "", bson.Value{}, false
	}
	args, ok := v.Document().Lookup("$eq")
	if !ok || args.Type != bson.TypeArray || args.Document().Len() != 2 {
		return "", bson.Value{}, false
	}
	a, _ := args.Document().Lookup("0")
	c, _ := args.Document().Lookup("1")
	path, ok := fieldRef(a)
	if !ok {
		if path, ok = fieldRef(c); !ok {
			return "", bson.Value{}, false
		}
		a, c = c, a
	}
	if c.Type == bson.TypeString {
		s := c.StringValue()
		if strings.HasPrefix(s, "$") && !strings.HasPrefix(s, "$$") {
			return "", bson.Value{}, false
		}
		if name, ok := strings.CutPrefix(s, "$$"); ok && (name == "" || name == "ROOT" || name == "CURRENT" || strings.Contains(name, ".") || name == "REMOVE") {
			return "", bson.Value{}, false
		}
	} else if c.Type == bson.TypeDocument || c.Type == bson.TypeArray {
		return "", bson.Value{}, false
	}
	x, err := expr.Parse(c, p.ctx.Expr)
	if err != nil {
		return "", bson.Value{}, false
	}
	val, err := expr.Eval(x, bson.EmptyDoc, expr.NewEnv(p.ctx.Expr))
	if err != nil {
		return "", bson.Value{}, false
	}
	switch val.Type {
	case bson.TypeInt32, bson.TypeInt64, bson.TypeDouble, bson.TypeDecimal128, bson.TypeString,
		bson.TypeBoolean, bson.TypeDateTime, bson.TypeObjectID:
		return path, expr.CopyValue(val), true
	}
	return "", bson.Value{}, false
}

// fieldRef reads "$path" (not a variable).
func fieldRef(v bson.Value) (string, bool) {
	if v.Type != bson.TypeString {
		return "", false
	}
	s := v.StringValue()
	if len(s) < 2 || s[0] != '$' || s[1] == '$' {
		return "", false
	}
	return s[1:], true
}
