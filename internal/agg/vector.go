package agg

import (
	"encoding/binary"
	"strings"
	"sync"
	"sync/atomic"

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

// vecWorker is one goroutine's state of a vectorized run.
type vecWorker struct {
	vp     *vecPlan
	env    *expr.Env
	sel    []int32
	unsure []bool
	doc    []byte // the current row's narrow document, when built
	idBuf  []byte // the current row's _id of field paths
	docRow int    // the row doc holds, or -1
	xs     vxScratch
	famV   []bson.Value // the row's family terms (evalRow)
	// The row's projected document (groupDoc), built by the projection
	// stages with their own environment and builders.
	projRow int
	projDoc bson.Doc
	projEnv *expr.Env
	projB   []bson.Builder
	projBuf [][]byte
}

func (vp *vecPlan) newWorker() *vecWorker {
	return &vecWorker{vp: vp, env: expr.NewEnv(vp.p.ctx.Expr), sel: make([]int32, 0, vecRows), unsure: make([]bool, vecRows),
		xs:   vxScratch{buf: make([][]byte, vp.slots), refs: make([]bson.Value, len(vp.projX))},
		famV: make([]bson.Value, len(vp.famX)), projRow: -1, projEnv: expr.NewEnv(vp.p.ctx.Expr),
		projB: make([]bson.Builder, len(vp.proj)), projBuf: make([][]byte, len(vp.proj))}
}

// rowDoc returns row r's narrow document (base: the vector's first row).
func (w *vecWorker) rowDoc(ch *ColumnChunk, r int) bson.Doc {
	if w.docRow != r {
		w.doc = ch.Doc(w.doc[:0], r)
		w.docRow = r
	}
	return w.doc
}

// selectRows fills w.sel with the rows of [base, base+n) of ch that pass
// the $match stages.
func (w *vecWorker) selectRows(ch *ColumnChunk, base, n int) error {
	sel := w.sel[:0]
	for r := base; r < base+n; r++ {
		sel = append(sel, int32(r))
	}
	for mi := range w.vp.matches {
		vm := &w.vp.matches[mi]
		check := vm.residual
		if !check {
			clear(w.unsure[:n])
		}
		for pi := range vm.preds {
			pr := &vm.preds[pi]
			c := &ch.Cols[pr.col]
			j := 0
			for _, r := range sel {
				switch pr.test(c, int(r)) {
				case vecYes:
					sel[j] = r
					j++
				case vecUnsure:
					sel[j] = r
					j++
					w.unsure[int(r)-base] = true
					check = true
				}
			}
			sel = sel[:j]
		}
		if !check {
			continue
		}
		j := 0
		for _, r := range sel {
			if vm.residual || w.unsure[int(r)-base] {
				w.env.NewDocument()
				ok, err := vm.m.match(w.rowDoc(ch, int(r)), w.env)
				if err != nil {
					return err
				}
				if !ok {
					continue
				}
			}
			sel[j] = r
			j++
		}
		sel = sel[:j]
	}
	w.sel = sel
	return nil
}

// eachChunk runs fn for every chunk of src on workers goroutines, each
// taking the next chunk in order, until the chunks end, a call fails or
// stop reports true.
func (vp *vecPlan) eachChunk(src ColumnSource, ws []*vecWorker, fn func(w int, ci int, ch *ColumnChunk) error, stop func() bool) error {
	var next atomic.Int64
	var failed atomic.Bool
	errs := make([]error, len(ws))
	n := src.ColumnChunks()
	var wg sync.WaitGroup
	for i := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !failed.Load() && !stop() {
				ci := int(next.Add(1) - 1)
				if ci >= n {
					return
				}
				if err := vp.p.ctx.check(); err != nil {
					errs[i] = err
					failed.Store(true)
					return
				}
				ch := src.ColumnChunk(ci)
				ws[i].docRow, ws[i].projRow = -1, -1
				if err := fn(i, ci, &ch); err != nil {
					errs[i] = err
					failed.Store(true)
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// runCount counts the rows that pass the $match stages.
func (vp *vecPlan) runCount(src ColumnSource, workers int) (func() (bson.Doc, error), error) {
	ws := make([]*vecWorker, workers)
	counts := make([]int64, workers)
	for i := range ws {
		ws[i] = vp.newWorker()
	}
	err := vp.eachChunk(src, ws, func(i, _ int, ch *ColumnChunk) error {
		if len(vp.matches) == 0 {
			counts[i] += int64(ch.Rows)
			return nil
		}
		for base := 0; base < ch.Rows; base += vecRows {
			if err := ws[i].selectRows(ch, base, min(vecRows, ch.Rows-base)); err != nil {
				return err
			}
			counts[i] += int64(len(ws[i].sel))
		}
		return nil
	}, func() bool { return false })
	if err != nil {
		return nil, err
	}
	var n int64
	for _, k := range counts {
		n += k
	}
	return vp.count.result(n), nil
}

// runGroup folds the selected rows into groups, one table per worker,
// and merges them as a parallel run does.
func (vp *vecPlan) runGroup(src ColumnSource, workers int) (func() (bson.Doc, error), error) {
	g := vp.group
	gws := make([]*groupWorker, workers)
	ws := make([]*vecWorker, workers)
	for i := range ws {
		gw, err := g.newWorker(nil, nil, workers)
		if err != nil {
			return nil, err
		}
		gws[i], ws[i] = gw, vp.newWorker()
	}
	var mem atomic.Int64
	limit := g.ctx.memLimit()
	err := vp.eachChunk(src, ws, func(i, ci int, ch *ColumnChunk) error {
		for base := 0; base < ch.Rows; base += vecRows {
			if err := ws[i].selectRows(ch, base, min(vecRows, ch.Rows-base)); err != nil {
				return err
			}
			grown, err := ws[i].fold(gws[i], ch, int64(ci)*vecChunkSpan, mem.Load() > limit)
			mem.Add(grown)
			if err != nil {
				return err
			}
		}
		return nil
	}, func() bool { return !g.ctx.AllowDiskUse && mem.Load() > limit })
	return g.finishParallel(gws, mem.Load(), err)
}

// fold adds the selected rows of ch to gw's groups; seq is the input
// position of the chunk's first row. When full is set the rows of keys
// gw does not hold are spilled. It returns the memory its new groups
// take.
func (w *vecWorker) fold(gw *groupWorker, ch *ColumnChunk, seq int64, full bool) (int64, error) {
	vp, g := w.vp, w.vp.group
	var grown int64
	var id bson.Value
	key := gw.key
	// A constant _id's group is looked up once per vector.
	constID := !vp.idDoc && vp.idCol < 0 && vp.idCols == nil
	var cgr *group
	if constID {
		id = vp.idConst
		key = g.groupKey(key[:0], id)
		_, cgr = gw.st.tab.lookup(key)
	}
	for _, r32 := range w.sel {
		r := int(r32)
		pos := seq + int64(r)
		needEnv := true
		// slow: a projected field or a family term needs the row's
		// document, and the group adds the projected document.
		slow := !w.evalRow(ch, r)
		switch {
		case constID:
		case vp.idCol >= 0:
			if id = ch.Cols[vp.idCol].Value(r); id.Type == 0 {
				id = bson.Value{Type: bson.TypeNull, Data: []byte{}}
			}
			key = g.groupKey(key[:0], id)
		case vp.idCols != nil:
			id = w.fieldDoc(ch, r)
			key = g.groupKey(key[:0], id)
		default:
			if vp.idExpr != nil && !slow {
				if v, ok := vp.idExpr.eval(ch, r, w.xs); ok {
					if id = v; id.Type == 0 {
						id = bson.Value{Type: bson.TypeNull, Data: []byte{}}
					}
					key = g.groupKey(key[:0], id)
					break
				}
			}
			d, err := w.groupDoc(ch, r)
			if err != nil {
				return grown, err
			}
			w.env.NewDocument()
			needEnv = false
			if id, key, err = g.idKey(key, d, w.env); err != nil {
				return grown, err
			}
		}
		var h uint64
		gr := cgr
		if gr == nil {
			h, gr = gw.st.tab.lookup(key)
		}
		if gr == nil {
			if full {
				d, err := w.groupDoc(ch, r)
				if err != nil {
					return grown, err
				}
				if err := gw.spill.add(h, key, pos, id, d); err != nil {
					return grown, err
				}
				continue
			}
			gr = g.newGroup(&gw.st, key, id)
			gw.st.tab.insert(h, gr)
			gw.st.order = append(gw.st.order, gr)
			gr.firstSeq = pos
			grown += g.groupBytes(key, id)
			if constID {
				cgr = gr
			}
		}
		gr.lastSeq = pos
		if g.heavy {
			grown += int64(w.docLen(ch, r))
		}
		if slow {
			d, err := w.groupDoc(ch, r)
			if err == nil {
				err = g.add(gr, d, w.env)
			}
			if err != nil {
				return grown, err
			}
			continue
		}
		if err := w.addAccs(gr, ch, r, needEnv); err != nil {
			return grown, err
		}
	}
	gw.key = key
	return grown, nil
}

// addAccs folds row r into gr's accumulators (the row's projected fields
// and family terms computed by evalRow); env is set when the expression
// environment has not yet been moved to the row.
func (w *vecWorker) addAccs(gr *group, ch *ColumnChunk, r int, needEnv bool) error {
	vp := w.vp
	fam := vp.group.fam
	on := len(vp.famX) > 0
	for i := range vp.famX {
		fam.AddValue(gr.fam, gr.accs, i, w.famV[i])
		on = on && !fam.Off(gr.fam, i)
	}
	idx := vp.plainAccs // the accumulators of no family, while all fold
	if !on {
		idx = vp.allAccs
	}
	for _, ai := range idx {
		if !on && fam != nil {
			if fi := fam.FamilyOf(ai); fi >= 0 && !fam.Off(gr.fam, fi) {
				continue // the family folded it
			}
		}
		va := &vp.accs[ai]
		var err error
		switch {
		case va.x != nil:
			if v, ok := va.x.eval(ch, r, w.xs); ok {
				err = gr.accs[ai].(expr.ArgAdder).AddArg(v)
				break
			}
			fallthrough
		case va.doc:
			var d bson.Doc
			if d, err = w.groupDoc(ch, r); err != nil {
				return err
			}
			if needEnv {
				w.env.NewDocument()
				needEnv = false
			}
			err = gr.accs[ai].Add(d, w.env)
		case va.col >= 0:
			err = gr.accs[ai].(expr.ArgAdder).AddArg(ch.Cols[va.col].Value(r))
		default:
			err = gr.accs[ai].(expr.ArgAdder).AddArg(va.cnst)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// fieldDoc builds row r's _id of field paths: the document of the keys
// whose columns the row has, in the specification's order (a missing
// value leaves its key out, as an object expression does).
func (w *vecWorker) fieldDoc(ch *ColumnChunk, r int) bson.Value {
	buf := append(w.idBuf[:0], 0, 0, 0, 0)
	for k, c := range w.vp.idCols {
		col := &ch.Cols[c]
		lo, hi := col.Off[r], col.Off[r+1]
		if lo == hi {
			continue
		}
		buf = append(buf, col.Data[lo])
		buf = append(buf, w.vp.idKeys[k]...)
		buf = append(buf, col.Data[lo+1:hi]...)
	}
	buf = append(buf, 0)
	binary.LittleEndian.PutUint32(buf, uint32(len(buf)))
	w.idBuf = buf
	return bson.Value{Type: bson.TypeDocument, Data: buf}
}

// docLen is the length of row r's narrow document, as the row path
// counts a heavy group's input.
func (w *vecWorker) docLen(ch *ColumnChunk, r int) int {
	n := 5
	for f := range ch.Cols {
		c := &ch.Cols[f]
		if lo, hi := c.Off[r], c.Off[r+1]; hi > lo {
			n += len(w.vp.fields[f]) + 1 + int(hi-lo)
		}
	}
	return n
}
