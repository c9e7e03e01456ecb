package agg

// The vectorized run's workers (vector.go plans it): selecting a chunk's
// rows by the leading $match stages and folding them into the groups'
// accumulators.

import (
	"encoding/binary"
	"sync"
	"sync/atomic"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/expr"
)

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
