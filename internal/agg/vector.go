package agg

import (
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/expr"
)

// Vectorized runs (RunVector) execute a pipeline's leading $match stages
// and its $group or $count over a ColumnSource's chunks instead of
// documents. A worker takes a chunk at a time and walks it in vectors of
// vecRows rows:
//
//   - the $match predicates that compile (vector_match.go) narrow a
//     selection vector of row numbers, predicate by predicate, reading
//     only their column; rows some predicate is unsure of, and every row
//     of a stage with conditions that did not compile, are matched by the
//     stage itself on their narrow document (late materialisation);
//   - $count adds up the rows selected;
//   - $group computes each selected row's key from its column (a field
//     path _id) or once (a constant _id), looks its group up in the
//     worker's hash table, and folds the accumulators of field-path and
//     constant arguments from the columns (expr.ArgAdder); an _id or an
//     argument of another expression is evaluated on the row's narrow
//     document, built once per row that needs it;
//   - projections between the $match stages and the $group compute their
//     fields from the columns once per row, and the group reads them
//     (vector_project.go); a group's sum families (expr.SumFamilies)
//     fold their term's value once per row whatever their number of
//     members.
//
// The groups are those of the parallel run (parallel.go): the same
// tables, memory accounting, spilling past the limit and merge by first
// input position, so the output is the row path's document for document
// and in the same order. A row's input position is its chunk's number
// times vecChunkSpan plus its row number.

// vecRows is the length of a selection vector.
const vecRows = 2048

// vecChunkSpan spaces the input positions of consecutive chunks.
const vecChunkSpan = 1 << 24

// vecAcc is how a worker folds one accumulator.
type vecAcc struct {
	col   int        // the column of a "$field" argument, or -1
	cnst  bson.Value // a constant argument (with col < 0 and !doc)
	x     *vecExpr   // an argument compiled from the columns (vector_expr.go)
	doc   bool       // the argument is another expression: Add on the document
	fixed bool       // constant argument
}

// vecPlan is a pipeline's vectorized prefix and terminal stage.
type vecPlan struct {
	p       *Pipeline
	ti      int
	matches []vecMatch
	group   *groupStage
	count   *countStage
	// For the group: how its _id and accumulators read the columns.
	idCol   int        // the column of a "$field" _id, or -1
	idConst bson.Value // a constant _id (with idCol < 0 and !idDoc)
	idDoc   bool       // the _id is another expression
	// idCols and idKeys: an _id that is a document of field paths
	// ({k: "$f", ...}): per key, its column and its element key (with
	// the NUL).
	idCols []int
	idKeys [][]byte
	// idExpr is an _id compiled from the columns (vector_expr.go); rows
	// it is unsure of evaluate the _id on their document.
	idExpr *vecExpr
	accs   []vecAcc
	slots  int // the compiled expressions' scratch buffers
	// proj are the projection stages before the group (vector_project.go)
	// and projX their computed fields compiled from the columns, in
	// order; famX are the terms of the group's sum families.
	proj  []*projectStage
	projX []*vecExpr
	famX  []*vecExpr
	// allAccs numbers the accumulators, plainAccs those of no family.
	allAccs, plainAccs []int
	// fields are the source's columns; names their element keys' lengths.
	fields []string
}

// vecMatch is a $match stage compiled for a vectorized run.
type vecMatch struct {
	m        *matchStage
	preds    []vecPred
	residual bool
}

// planVector checks that the pipeline's parallel prefix can run
// vectorized over columns fields, and plans it.
func (p *Pipeline) planVector(fields []string) (*vecPlan, bool) {
	ti := p.parallelTerminal()
	if ti < 0 || p.ctx.collation() != nil {
		return nil, false
	}
	if readFields(p.stages[:ti+1], p.stageSpecs[:ti+1]) == nil {
		return nil, false
	}
	colOf := map[string]int{}
	for i, f := range fields {
		colOf[f] = i
	}
	// The fields the $match and projection stages read must be columns
	// (the group's are checked through the projections below).
	for _, f := range readFields(p.stages[:ti], p.stageSpecs[:ti]) {
		if _, ok := colOf[f]; !ok {
			return nil, false
		}
	}
	col := func(f string) int {
		if i, ok := colOf[f]; ok {
			return i
		}
		return -1
	}
	vp := &vecPlan{p: p, ti: ti, fields: fields, idCol: -1}
	switch st := p.stages[ti].(type) {
	case *groupStage:
		if st.firstKeys > 0 {
			return nil, false
		}
		vp.group = st
	case *countStage:
		vp.count = st
	default:
		return nil, false
	}
	cc := &vxCompiler{field: colField(col)}
	for i, s := range p.stages[:ti] {
		switch st := s.(type) {
		case *matchStage:
			if len(vp.proj) > 0 {
				return nil, false // it reads the projected document
			}
			vm := vecMatch{m: st, residual: st.exp != nil}
			var res bool
			vm.preds, res = compileMatch(st.plain, col)
			vm.residual = vm.residual || res
			vp.matches = append(vp.matches, vm)
		case *projectStage:
			if vp.count != nil {
				// A projection of no computed field changes no count.
				if !computesNothing(st.p.root) {
					return nil, false
				}
				vp.proj = append(vp.proj, st)
				continue
			}
			if !vp.planProjection(st, p.stageSpecs[i], cc) {
				return nil, false
			}
		default:
			return nil, false
		}
	}
	if g := vp.group; g != nil {
		if len(vp.proj) > 0 && g.heavy {
			// A heavy group counts its input documents' sizes: those of
			// the projected documents.
			return nil, false
		}
		for _, d := range g.deps {
			if _, ok := cc.field(d); !ok {
				return nil, false
			}
		}
		if len(vp.proj) > 0 {
			// The _id and the arguments read the projected fields:
			// compiled through cc.field, never from a column directly.
			col = func(string) int { return -1 }
		}
		if path, ok := expr.FieldPath(g.id); ok && col(path) >= 0 {
			vp.idCol = col(path)
		} else if cols, keys, ok := fieldDocID(p.stageSpecs[ti], col); ok {
			vp.idCols, vp.idKeys = cols, keys
		} else if c, ok := expr.Constant(g.id); ok {
			vp.idConst = c
			if vp.idConst.Type == 0 {
				vp.idConst = bson.Value{Type: bson.TypeNull, Data: []byte{}}
			}
		} else {
			vp.idDoc = true
		}
		idSpec, argSpecs := groupSpecParts(p.stageSpecs[ti])
		if vp.idDoc {
			vp.idExpr, _ = cc.compile(idSpec, true)
		}
		if g.fam != nil && !vp.planFamilies(cc) {
			return nil, false
		}
		probe := expr.AccAlloc{}
		for ai, a := range g.accs {
			va := vecAcc{col: -1}
			_, adds := a.NewIn(&probe).(expr.ArgAdder)
			arg := a.Arg()
			switch {
			case !adds:
				va.doc = true
			case arg == nil:
				va.fixed = true // $count
			default:
				if path, ok := expr.FieldPath(arg); ok && col(path) >= 0 {
					va.col = col(path)
				} else if c, ok := expr.Constant(arg); ok {
					va.cnst, va.fixed = c, true
				} else {
					va.doc = true
					// $first evaluates its argument until it has a
					// value only: the engine's Add keeps that.
					if ai < len(argSpecs) && a.Op != "$first" {
						va.x, _ = cc.compile(argSpecs[ai], true)
					}
				}
			}
			vp.allAccs = append(vp.allAccs, ai)
			if g.fam == nil || g.fam.FamilyOf(ai) < 0 {
				vp.plainAccs = append(vp.plainAccs, ai)
			}
			vp.accs = append(vp.accs, va)
		}
	}
	vp.slots = cc.slots
	return vp, true
}

// groupSpecParts returns a $group specification's _id and, in order, its
// accumulators' arguments.
func groupSpecParts(spec bson.Doc) (bson.Value, []bson.Value) {
	var id bson.Value
	var args []bson.Value
	g, ok := spec.Lookup("$group")
	if !ok || g.Type != bson.TypeDocument {
		return id, nil
	}
	it := g.Document().Iter()
	for it.Next() {
		e := it.Element()
		if e.Key == "_id" {
			id = e.Value
			continue
		}
		var arg bson.Value
		if e.Value.Type == bson.TypeDocument {
			ait := e.Value.Document().Iter()
			if ait.Next() {
				arg = ait.Element().Value
			}
		}
		args = append(args, arg)
	}
	return id, args
}

// fieldDocID recognizes a $group specification whose _id is a document
// of paths to top-level columns ({k: "$f", ...}, as ClickBench's "count
// distinct" pipelines group), and returns each key's column and element
// key.
func fieldDocID(spec bson.Doc, col func(string) int) ([]int, [][]byte, bool) {
	g, ok := spec.Lookup("$group")
	if !ok || g.Type != bson.TypeDocument {
		return nil, nil, false
	}
	id, ok := g.Document().Lookup("_id")
	if !ok || id.Type != bson.TypeDocument {
		return nil, nil, false
	}
	var cols []int
	var keys [][]byte
	it := id.Document().Iter()
	for it.Next() {
		e := it.Element()
		if strings.HasPrefix(e.Key, "$") || e.Value.Type != bson.TypeString {
			return nil, nil, false
		}
		path := e.Value.StringValue()
		if !strings.HasPrefix(path, "$") || strings.HasPrefix(path, "$$") || strings.Contains(path, ".") || col(path[1:]) < 0 {
			return nil, nil, false
		}
		cols = append(cols, col(path[1:]))
		keys = append(keys, append([]byte(e.Key), 0))
	}
	return cols, keys, len(cols) > 0
}

// computesNothing reports whether a projection computes nothing (it then
// cannot fail on any document).
func computesNothing(n *projNode) bool {
	for _, f := range n.fields {
		if f.value != nil || (f.child != nil && !computesNothing(f.child)) {
			return false
		}
	}
	return true
}

// CanRunVector reports whether RunVector applies to the pipeline over a
// source of the columns fields.
func (p *Pipeline) CanRunVector(fields []string) bool {
	_, ok := p.planVector(fields)
	return ok
}

// RunVector runs the pipeline with its leading $match stages and its
// $group or $count vectorized over src's chunks, on the given number of
// goroutines, and the stages after them as RunParallel does. It reports
// false, and runs nothing, when CanRunVector is false.
func (p *Pipeline) RunVector(src ColumnSource, workers int) (Iterator, bool, error) {
	vp, ok := p.planVector(src.ColumnFields())
	if !ok {
		return nil, false, nil
	}
	workers = max(workers, 1)
	var out func() (bson.Doc, error)
	var in Iterator = FuncIterator(func() (bson.Doc, error) {
		if out == nil {
			var err error
			if vp.group != nil {
				out, err = vp.runGroup(src, workers)
			} else {
				out, err = vp.runCount(src, workers)
			}
			if err != nil {
				return nil, err
			}
		}
		return out()
	})
	in, err := openAfterParallel(in, p.stages[vp.ti+1:], workers)
	return in, true, err
}
