package agg

import (
	"github.com/cairndb/cairn/bson"
)

// Projections before a vectorized $group
//
// A $project, $addFields or $set between the $match stages and the
// $group (ClickBench's Q29 converts a column with $toLong before summing
// it ninety times) runs vectorized when every field it computes compiles
// from the columns (vector_expr.go, vector_arith.go) and it has no nested
// field. Each computed field is evaluated once per row, in the stages'
// order, into the worker's projected values (vxScratch.refs); the group's
// _id, arguments and sum families are compiled against the projected
// document: a path to a computed field reads its value (vxRef), one to a
// field the stage passes on reads what the stage read (a column or an
// earlier stage's value), and one to a field the stage drops (an
// inclusion projection's unlisted field, an excluded field) is missing.
//
// Every computed field is evaluated on every row, whether the group
// reads it or not, because the row path evaluates it and may fail on it.
// When one is unsure of a row (a value its compiled form does not
// handle, such as a string to $toLong), the row is aggregated as the row
// path does: its narrow document is projected by the stages themselves
// (an error is the row path's error) and the group adds the projected
// document. An accumulator or _id that does not compile reads the
// projected document too, so only the fast path depends on the
// compilation.

// planProjection plans a projection stage (spec is its specification)
// before a vectorized $group: it compiles the stage's computed fields
// with cc and makes cc's field resolver that of the stage's output.
func (vp *vecPlan) planProjection(st *projectStage, spec bson.Doc, cc *vxCompiler) bool {
	pr := st.p
	var body bson.Doc // the specification's fields ($unset's is no document)
	if it := spec.Iter(); it.Next() && it.Element().Value.Type == bson.TypeDocument {
		body = it.Element().Value.Document()
	}
	prev := cc.field
	refs := map[string]int{}
	for _, f := range pr.root.fields {
		if f.child != nil {
			return false
		}
		if f.value == nil {
			continue
		}
		v, ok := bson.Value{}, body != nil
		if ok {
			v, ok = body.Lookup(f.name)
		}
		if !ok {
			return false
		}
		x, ok := cc.compile(v, false)
		if !ok {
			return false
		}
		refs[f.name] = len(vp.projX)
		vp.projX = append(vp.projX, x)
	}
	missing := func() (*vecExpr, bool) { return &vecExpr{kind: vxConst}, true }
	cc.field = func(name string) (*vecExpr, bool) {
		f := pr.root.byName[name]
		switch {
		case f != nil && f.value != nil:
			return &vecExpr{kind: vxRef, ref: refs[name]}, true
		case pr.add:
			return prev(name)
		case pr.inclusion:
			if f != nil && f.include {
				return prev(name)
			}
			return missing()
		case f != nil && f.exclude:
			return missing()
		}
		return prev(name)
	}
	vp.proj = append(vp.proj, st)
	return true
}

// planFamilies compiles the terms of the group's sum families (a family
// of a dotted path is not vectorized).
func (vp *vecPlan) planFamilies(cc *vxCompiler) bool {
	fam := vp.group.fam
	for i := range fam.Len() {
		f, ok := cc.field(fam.Path(i))
		if !ok {
			return false
		}
		vp.famX = append(vp.famX, cc.node(f))
	}
	return true
}

// evalRow computes row r's projected fields and family terms from the
// columns; it reports false when some needs the row's document.
func (w *vecWorker) evalRow(ch *ColumnChunk, r int) bool {
	for k, x := range w.vp.projX {
		v, ok := x.eval(ch, r, w.xs)
		if !ok {
			return false
		}
		w.xs.refs[k] = v
	}
	for i, x := range w.vp.famX {
		v, ok := x.eval(ch, r, w.xs)
		if !ok {
			return false
		}
		w.famV[i] = v
	}
	return true
}

// groupDoc returns the document the group reads for row r: its narrow
// document through the projection stages (as projectStage.open builds
// it).
func (w *vecWorker) groupDoc(ch *ColumnChunk, r int) (bson.Doc, error) {
	d := w.rowDoc(ch, r)
	if len(w.vp.proj) == 0 {
		return d, nil
	}
	if w.projRow == r {
		return w.projDoc, nil
	}
	w.projRow = -1
	for i, s := range w.vp.proj {
		w.projEnv.Reset()
		b := &w.projB[i]
		b.Reset(w.projBuf[i][:0])
		var err error
		switch {
		case s.p.add:
			err = s.p.root.applyAdd(b, d, d, w.projEnv)
		case s.p.inclusion:
			err = s.p.root.applyInclusion(b, d, d, w.projEnv)
		default:
			s.p.root.applyExclusion(b, d)
		}
		if err != nil {
			return nil, err
		}
		d = b.Finish()
		w.projBuf[i] = d
	}
	w.projDoc, w.projRow = d, r
	return d, nil
}
