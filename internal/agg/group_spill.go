package agg

import (
	"bytes"
	"encoding/binary"
	"slices"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/expr"
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

// seqBytes is the length of the input position suffixed to a spilled
// item's key.
const seqBytes = 8

// groupSpill collects one goroutine's spilled documents.
type groupSpill struct {
	g        *groupStage
	sp       spiller
	items    []item
	arena    []byte // holds the items' keys and documents
	mem      int64
	runLimit int64 // pending bytes that start a run
}

// spillArena is the size of a groupSpill's arena blocks.
const spillArena = 1 << 20

func (g *groupStage) newSpill(share int) *groupSpill {
	return &groupSpill{g: g, sp: spiller{dir: g.ctx.TempDir}, runLimit: g.ctx.memLimit() / 4 / int64(max(share, 1))}
}

// add spills d, a document of the group whose key is key, read at input
// position pos.
func (s *groupSpill) add(key []byte, pos int64, d bson.Doc) error {
	need := len(key) + seqBytes + len(d)
	if cap(s.arena)-len(s.arena) < need {
		s.arena = make([]byte, 0, max(spillArena, need))
	}
	start := len(s.arena)
	s.arena = append(s.arena, key...)
	s.arena = binary.BigEndian.AppendUint64(s.arena, uint64(pos))
	mid := len(s.arena)
	s.arena = s.g.appendReduced(s.arena, d)
	it := item{key: s.arena[start:mid:mid], doc: bson.Doc(s.arena[mid:len(s.arena):len(s.arena)])}
	s.items = append(s.items, it)
	if s.mem += itemBytes(it); s.mem > s.runLimit {
		return s.flush()
	}
	return nil
}

// flush writes the pending items as a run.
func (s *groupSpill) flush() error {
	if len(s.items) == 0 {
		return nil
	}
	slices.SortFunc(s.items, func(a, b item) int { return bytes.Compare(a.key, b.key) })
	if err := s.sp.writeSorted(s.items); err != nil {
		return err
	}
	clear(s.items)
	s.items, s.arena, s.mem = s.items[:0], s.arena[:0], 0
	return nil
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

// emit returns the results of the groups in st and in the runs of sp (see
// the comment at the top of the file), closing sp at the end.
func (g *groupStage) emit(st *groupState, sp *spiller) func() (bson.Doc, error) {
	vals := make([]bson.Value, len(g.accs))
	var slab []byte
	env := expr.NewEnv(g.ctx.Expr)
	scratch := groupState{al: &expr.AccAlloc{}}
	order := st.order
	i, n := 0, 0
	var next func() (item, bool, error)
	var it item
	have, done := false, len(sp.runs) == 0
	fail := func(err error) (bson.Doc, error) {
		sp.close()
		done = true
		return nil, err
	}
	return func() (bson.Doc, error) {
		for !done {
			var err error
			if next == nil {
				if next, err = sp.merge(); err != nil {
					return fail(err)
				}
			}
			if !have {
				if it, have, err = next(); err != nil {
					return fail(err)
				}
				if !have {
					sp.close()
					done = true
					break
				}
			}
			if n++; n&1023 == 0 {
				if err := g.ctx.check(); err != nil {
					return fail(err)
				}
			}
			key := it.key[:len(it.key)-seqBytes]
			_, resident := st.tab.lookup(key)
			into := st
			if resident == nil {
				scratch.al.Reset()
				scratch.blk = scratch.blk[:0]
				into = &scratch
			}
			id, err := expr.Eval(g.id, it.doc, env)
			if err != nil {
				return fail(err)
			}
			if id.Type == 0 {
				id = bson.Value{Type: bson.TypeNull, Data: []byte{}}
			}
			gr := g.newGroup(into, key, id)
			gr.firstSeq = itemSeq(it)
			for have && bytes.Equal(it.key[:len(it.key)-seqBytes], key) {
				gr.lastSeq = itemSeq(it)
				if err := g.add(gr, it.doc, env); err != nil {
					return fail(err)
				}
				if it, have, err = next(); err != nil {
					return fail(err)
				}
			}
			if resident != nil {
				if err := g.mergeGroup(resident, gr); err != nil {
					return fail(err)
				}
				continue
			}
			return g.result(gr, vals, &slab), nil
		}
		if i < len(order) {
			gr := order[i]
			order[i] = nil
			i++
			return g.result(gr, vals, &slab), nil
		}
		return nil, nil
	}
}

// itemSeq is the input position of a spilled item.
func itemSeq(it item) int64 {
	return int64(binary.BigEndian.Uint64(it.key[len(it.key)-seqBytes:]))
}
