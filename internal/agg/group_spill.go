package agg

import (
	"bytes"
	"container/heap"
	"encoding/binary"
	"slices"
	"sync"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/expr"
	"github.com/cairndb/cairn/internal/extsort"
)

// Spilling $group
//
// A $group keeps its groups in memory up to the memory limit. Past it
// (with allowDiskUse) the groups in memory still take the documents of
// their keys, and the document of any other key is spilled: cut to the
// fields the group reads and kept, with its key, in a groupSpill, which
// writes sorted runs to temporary files. A spilled item's sort key is the
// group key followed by the document's input position (8 bytes, big
// endian), so merging the runs delivers each spilled group's documents
// together and in input order, whoever spilled them.
//
// A parallel run spills in every worker: a worker spills the documents of
// keys its own table lacks, so a key may be in memory in one worker and
// spilled by another. emit therefore streams the spilled groups first,
// each aggregated on its own in a scratch state that is reset between
// groups, and folds a spilled group whose key is also in memory into the
// in-memory group (by input position, as mergeWorkers folds partial
// groups, so $first and $last stay right); the in-memory groups follow
// once every run is consumed.
//
// The spilled items are partitioned by the hash of their key, one
// partition per worker, so that the spilled groups aggregate in parallel
// too: a partition holds every spilled document of its keys, whichever
// worker spilled them, and no two partitions touch the same in-memory
// group. emit runs in rounds: each partition's goroutine builds the
// results of up to emitRound groups, and once all are done the round's
// results are served partition by partition (so the order does not
// depend on timing). No goroutine outlives the call that started it, so
// a consumer that stops reading leaves nothing running.

// seqBytes is the length of the input position suffixed to a spilled
// item's key.
const seqBytes = 8

// emitRound is how many groups a partition aggregates per round (a
// variable for tests).
var emitRound = 2048

// groupSpill collects one goroutine's spilled documents, in partitions.
type groupSpill struct {
	g     *groupStage
	parts []spillPart
}

// spillPart is one partition of a groupSpill.
type spillPart struct {
	sp       spiller
	items    []extsort.Item
	arena    []byte // holds the items' keys and documents
	mem      int64
	runLimit int64 // pending bytes that start a run
}

// spillArena is the size of a partition's arena blocks.
const spillArena = 1 << 20

// newSpill returns a spill of share goroutines' spills, each in share
// partitions.
func (g *groupStage) newSpill(share int) *groupSpill {
	share = max(share, 1)
	s := &groupSpill{g: g, parts: make([]spillPart, share)}
	for i := range s.parts {
		s.parts[i] = spillPart{sp: spiller{dir: g.ctx.TempDir, stats: g.ctx.Spill}, runLimit: g.ctx.memLimit() / 4 / int64(share*share)}
	}
	return s
}

// add spills d, a document of the group whose key is key (of hash h) and
// whose _id evaluated to id, read at input position pos. The spilled
// document is {i: id, d: the fields of d the group reads} (spilledParts):
// the group's _id is not evaluated again when the spilled group is
// aggregated, so it is the value its key was made from even when the
// expression is not deterministic ($rand).
func (s *groupSpill) add(h uint64, key []byte, pos int64, id bson.Value, d bson.Doc) error {
	p := &s.parts[(h>>32)%uint64(len(s.parts))]
	// The wrapper adds 11 bytes: its length, two element headers ("i",
	// "d") and its terminator; the reduced document is at most d.
	need := len(key) + seqBytes + len(d) + len(id.Data) + 11
	if cap(p.arena)-len(p.arena) < need {
		p.arena = make([]byte, 0, max(spillArena, need))
	}
	start := len(p.arena)
	p.arena = append(p.arena, key...)
	p.arena = binary.BigEndian.AppendUint64(p.arena, uint64(pos))
	mid := len(p.arena)
	p.arena = append(p.arena, 0, 0, 0, 0)
	p.arena = appendElem(p.arena, "i", id)
	p.arena = append(p.arena, byte(bson.TypeDocument), 'd', 0)
	p.arena = s.g.appendReduced(p.arena, d)
	p.arena = append(p.arena, 0)
	binary.LittleEndian.PutUint32(p.arena[mid:], uint32(len(p.arena)-mid))
	it := extsort.Item{Key: p.arena[start:mid:mid], Val: p.arena[mid:len(p.arena):len(p.arena)]}
	p.items = append(p.items, it)
	if p.mem += int64(len(it.Key)+len(it.Val)) + extsort.ItemOverhead; p.mem > p.runLimit {
		return p.flush()
	}
	return nil
}

// flush writes every partition's pending items as runs.
func (s *groupSpill) flush() error {
	for i := range s.parts {
		if err := s.parts[i].flush(); err != nil {
			return err
		}
	}
	return nil
}

func (s *groupSpill) close() {
	for i := range s.parts {
		s.parts[i].sp.close()
	}
}

// flush writes the pending items as a run.
func (p *spillPart) flush() error {
	if len(p.items) == 0 {
		return nil
	}
	extsort.SortItems(p.items)
	if err := p.sp.writeSorted(p.items); err != nil {
		return err
	}
	clear(p.items)
	p.items, p.arena, p.mem = p.items[:0], p.arena[:0], 0
	return nil
}

// partitions gathers the runs of spills (one per goroutine, with the same
// number of partitions) by partition, leaving out empty ones.
func partitions(spills []*groupSpill) []*spiller {
	var out []*spiller
	for i := range spills[0].parts {
		sp := &spiller{}
		for _, s := range spills {
			sp.runs = append(sp.runs, s.parts[i].sp.runs...)
		}
		if len(sp.runs) > 0 {
			out = append(out, sp)
		}
	}
	return out
}

// spilledParts splits a document groupSpill.add wrote into the group's
// _id and the spilled fields.
func spilledParts(doc bson.Doc) (id bson.Value, d bson.Doc) {
	it := doc.Iter()
	if it.Next() {
		id = it.Element().Value
	}
	if it.Next() {
		d = it.Element().Value.Document()
	}
	return id, d
}

// appendReduced appends to dst the fields of d the group reads.
func (g *groupStage) appendReduced(dst []byte, d bson.Doc) []byte {
	if g.deps == nil {
		return append(dst, d...)
	}
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	it := d.Iter()
	for it.Next() {
		e := it.Element()
		for _, f := range g.deps {
			if e.Key == f {
				dst = append(dst, byte(e.Value.Type))
				dst = append(dst, e.Key...)
				dst = append(dst, 0)
				dst = append(dst, e.Value.Data...)
				break
			}
		}
	}
	dst = append(dst, 0)
	binary.LittleEndian.PutUint32(dst[start:], uint32(len(dst)-start))
	return dst
}

// partEmitter aggregates the spilled groups of one partition.
type partEmitter struct {
	g       *groupStage
	st      *groupState // the in-memory groups: read, and folded into
	sp      *spiller
	next    func() (item, bool, error)
	it      item
	have    bool
	done    bool
	env     *expr.Env
	scratch groupState // the current spilled group's, reset between groups
	keep    groupState // spilled parts folded into in-memory groups
	vals    []bson.Value
	slab    []byte
	key     []byte // the current group's key
	n       int
	out     []bson.Doc // the round's results
	err     error
	parts   int        // how many partitions merge at once
	idx     int        // the partition's index (its place in the stream)
	keeper  *topKeeper // with groupStage.topk: the best results so far
}

func (g *groupStage) newPartEmitter(st *groupState, sp *spiller) *partEmitter {
	return &partEmitter{g: g, st: st, sp: sp, env: expr.NewEnv(g.ctx.Expr),
		scratch: groupState{al: &expr.AccAlloc{}}, keep: groupState{al: &expr.AccAlloc{}},
		vals: make([]bson.Value, len(g.accs))}
}

// round aggregates up to emitRound groups into e.out (replacing what it
// held); at the end of the partition, or on an error (e.err), it closes
// the runs and sets e.done.
func (e *partEmitter) round(round uint64) {
	e.out = e.out[:0]
	n := 0
	for n < emitRound && !e.done {
		gr, err := e.nextGroup()
		switch {
		case err != nil:
			e.err, e.done = err, true
		case gr == nil:
			e.done = true
		case e.keeper != nil:
			e.keeper.offer(e.g, gr, streamPos(round, e.idx, n), e.vals, &e.slab)
			n++
		default:
			e.out = append(e.out, e.g.result(gr, e.vals, &e.slab))
			n++
		}
	}
	if e.done {
		e.sp.close()
	}
}

// nextGroup returns the next spilled group that is not folded into an
// in-memory one (valid until the next call), or nil at the end.
func (e *partEmitter) nextGroup() (*group, error) {
	g := e.g
	for {
		var err error
		if e.next == nil {
			if e.next, err = e.sp.mergeLazy(g.ctx.memLimit()/4/int64(e.parts), checker{g.ctx}); err != nil {
				return nil, err
			}
		}
		if !e.have {
			if e.it, e.have, err = e.next(); err != nil || !e.have {
				return nil, err
			}
		}
		if e.n++; e.n&1023 == 0 {
			if err := g.ctx.check(); err != nil {
				return nil, err
			}
		}
		it := e.it
		// The item is valid until the next one is read: keep its key.
		e.key = append(e.key[:0], it.key[:len(it.key)-seqBytes]...)
		key := e.key
		_, resident := e.st.tab.lookup(key)
		into := &e.keep
		if resident == nil {
			e.scratch.al.Reset()
			e.scratch.blk = e.scratch.blk[:0]
			into = &e.scratch
		}
		id, _ := spilledParts(it.doc)
		gr := g.newGroup(into, key, id)
		gr.firstSeq = itemSeq(it)
		for e.have && bytes.Equal(it.key[:len(it.key)-seqBytes], key) {
			gr.lastSeq = itemSeq(it)
			_, d := spilledParts(it.doc)
			if err := g.add(gr, d, e.env); err != nil {
				return nil, err
			}
			if it, e.have, err = e.next(); err != nil {
				return nil, err
			}
		}
		e.it = it
		if resident != nil {
			if err := g.mergeGroup(resident, gr); err != nil {
				return nil, err
			}
			continue
		}
		return gr, nil
	}
}

// emit returns the results of the groups in st and in the partitions'
// runs (see the comment at the top of the file), closing the runs at the
// end. With g.topk set (a top-k $sort follows the group) it returns only
// the results that top-k keeps, in the order they would have come: each
// worker keeps the best of the results it builds, by the sort's key and
// the result's position in the stream (round, worker, index), so the
// $sort that follows sees the same candidates, ties included, without
// the others crossing to it one by one.
func (g *groupStage) emit(st *groupState, parts []*spiller, workers int) func() (bson.Doc, error) {
	es := make([]*partEmitter, len(parts))
	for i, sp := range parts {
		es[i] = g.newPartEmitter(st, sp)
		es[i].parts, es[i].idx = len(parts), i
	}
	workers = max(workers, 1)
	vals := make([][]bson.Value, workers)
	slabs := make([][]byte, workers)
	keepers := make([]*topKeeper, workers)
	for w := range vals {
		vals[w] = make([]bson.Value, len(g.accs))
		if g.topk != nil {
			keepers[w] = &topKeeper{s: g.topk}
		}
	}
	for _, e := range es {
		if g.topk != nil {
			e.keeper = &topKeeper{s: g.topk}
		}
	}
	all := slices.Clone(es)
	order := st.order
	i := 0
	var round uint64
	var ready []bson.Doc // results of the current round, in order
	var failed error
	finished := false
	closeAll := func() {
		for _, e := range es {
			e.sp.close()
		}
	}
	return func() (bson.Doc, error) {
		if failed != nil {
			return nil, failed
		}
		for len(ready) == 0 && len(es) > 0 {
			round++
			if len(es) == 1 {
				es[0].round(round)
			} else {
				var wg sync.WaitGroup
				for _, e := range es {
					wg.Add(1)
					go func() {
						defer wg.Done()
						e.round(round)
					}()
				}
				wg.Wait()
			}
			ready = ready[:0]
			live := es[:0]
			for _, e := range es {
				if e.err != nil && failed == nil {
					failed = e.err
				}
				ready = append(ready, e.out...)
				if !e.done {
					live = append(live, e)
				}
			}
			es = live
			if failed != nil {
				closeAll()
				return nil, failed
			}
		}
		for len(ready) == 0 && i < len(order) {
			// The in-memory groups' results, built a round at a time,
			// each worker a contiguous share, in order.
			round++
			n := min(len(order)-i, workers*emitRound)
			chunk := order[i : i+n]
			ready = ready[:0]
			for range chunk {
				ready = append(ready, nil)
			}
			share := (n + workers - 1) / workers
			var wg sync.WaitGroup
			for w := 0; w*share < n; w++ {
				lo, hi := w*share, min((w+1)*share, n)
				build := func() {
					for k := lo; k < hi; k++ {
						if keepers[w] != nil {
							keepers[w].offer(g, chunk[k], streamPos(round, w, k-lo), vals[w], &slabs[w])
							continue
						}
						ready[k] = g.result(chunk[k], vals[w], &slabs[w])
					}
				}
				if hi-lo == n {
					build()
					break
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					build()
				}()
			}
			wg.Wait()
			clear(chunk)
			i += n
			if g.topk != nil {
				ready = ready[:0]
			}
		}
		if len(ready) == 0 && g.topk != nil && !finished {
			finished = true
			var ks []*topKeeper
			for _, e := range all {
				ks = append(ks, e.keeper)
			}
			ready = mergeKeepers(append(ks, keepers...), g.topk.limit)
		}
		if err := g.accErr(); err != nil {
			closeAll()
			return nil, err
		}
		if len(ready) > 0 {
			d := ready[0]
			ready = ready[1:]
			return d, nil
		}
		return nil, nil
	}
}

// streamPos orders results as the stream of an unfused emit would: by
// round, then worker (or partition), then index within the worker's share.
func streamPos(round uint64, worker, i int) uint64 {
	return round<<40 | uint64(worker)<<32 | uint64(i)
}

// topKeeper keeps the best limit results offered to it, by the top-k
// $sort's key and their stream position (the tie-break the $sort itself
// would apply). A group's key is computed from a document of only the
// fields the sort reads (groupStage.sortDoc); its whole result is built
// only when it enters the top-k.
type topKeeper struct {
	s    *sortStage
	h    maxHeap
	k    []byte
	tiny []byte
}

func (t *topKeeper) offer(g *groupStage, gr *group, pos uint64, vals []bson.Value, slab *[]byte) {
	t.tiny = g.sortDoc(t.tiny, gr)
	t.k = t.s.key(t.k[:0], t.tiny, pos)
	if int64(len(t.h)) < t.s.limit {
		heap.Push(&t.h, item{key: bytes.Clone(t.k), doc: cloneDoc(g.result(gr, vals, slab))})
		return
	}
	if bytes.Compare(t.k, t.h[0].key) < 0 {
		top := &t.h[0]
		top.key = append(top.key[:0], t.k...)
		top.doc = append(top.doc[:0], g.result(gr, vals, slab)...)
		heap.Fix(&t.h, 0)
	}
}

// mergeKeepers returns the best limit results of all keepers, in stream
// order.
func mergeKeepers(ks []*topKeeper, limit int64) []bson.Doc {
	var items []item
	for _, k := range ks {
		if k != nil {
			items = append(items, k.h...)
		}
	}
	sortItems(items)
	if int64(len(items)) > limit {
		items = items[:limit]
	}
	slices.SortFunc(items, func(a, b item) int {
		return bytes.Compare(a.key[len(a.key)-8:], b.key[len(b.key)-8:])
	})
	out := make([]bson.Doc, len(items))
	for i, it := range items {
		out[i] = it.doc
	}
	return out
}

// itemSeq is the input position of a spilled item.
func itemSeq(it item) int64 {
	return int64(binary.BigEndian.Uint64(it.key[len(it.key)-seqBytes:]))
}
