package agg

import (
	"encoding/binary"
	"hash/maphash"
	"slices"
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/expr"
	"github.com/cairndb/cairn/internal/hugemem"
	"github.com/cairndb/cairn/internal/mongoerr"
)

func init() {
	register("$group", stageInfo{parse: parseGroup})
}

// groupStage is a hash aggregation: one set of accumulators per distinct
// _id value (equal as MongoDB compares, under the collation).
type groupStage struct {
	id    expr.Expr
	names []string
	accs  []*expr.AccumulatorSpec
	// heavy is set when some accumulator keeps values ($push, $addToSet,
	// the N variants, $mergeObjects): memory then grows with the input.
	heavy bool
	ctx   *Context
	// seed hashes group keys (one seed, so that parallel workers' tables
	// merge without rehashing keys).
	seed maphash.Seed
	// deps are the top-level fields the _id and accumulators read (nil:
	// the whole document may be read); spilled documents keep only them.
	deps []string
	// fam groups $sum accumulators of one field plus constants (nil:
	// none), which then cost one addition per document together.
	fam *expr.SumFamilies
	// topk is the top-k $sort that follows the group, when there is one
	// keeping at most lateLimit documents: emit then hands on only the
	// results it would keep.
	topk *sortStage
	// topkIdx lists the output fields the top-k's keys read, as indexes
	// into accs, or -1 for _id (sortDoc builds them alone).
	topkIdx []int
	// firstKeys is the n of a $limit that follows the group directly
	// (at most lateLimit; 0: none). Only the groups of the first n
	// distinct keys in input order are then built, and the documents of
	// any other key are skipped: the group's output is in the order of
	// the groups' first documents, so these are the groups the $limit
	// passes, each aggregated over the whole input.
	firstKeys int
	// idRand is set when the _id expression uses $rand: evaluated twice,
	// it gives a document two keys, so the group is never fused with a
	// following $limit (firstKeySet evaluates the _id ahead of the
	// workers).
	idRand bool
}

// sortFields finds the group's output fields that the keys of a $sort
// specification read (their top-level names: "_id.k" reads _id), as
// topkIdx; ok is false for a key that is no plain field ($meta).
func (g *groupStage) sortFields(spec bson.Doc) ([]int, bool) {
	v, _ := spec.Lookup("$sort")
	if v.Type != bson.TypeDocument {
		return nil, false
	}
	var idx []int
	it := v.Document().Iter()
	for it.Next() {
		e := it.Element()
		if !e.Value.IsNumber() {
			return nil, false
		}
		f, _, _ := strings.Cut(e.Key, ".")
		i := -2 // not an output field: missing in every result
		if f == "_id" {
			i = -1
		}
		for j, n := range g.names {
			if n == f {
				i = j
			}
		}
		if i != -2 && !slices.Contains(idx, i) {
			idx = append(idx, i)
		}
	}
	return idx, true
}

// sortDoc builds into dst a document of gr's output fields that the
// top-k reads (topkIdx), enough for the top-k's key.
func (g *groupStage) sortDoc(dst []byte, gr *group) bson.Doc {
	g.settle(gr)
	dst = append(dst[:0], 0, 0, 0, 0)
	for _, i := range g.topkIdx {
		if i < 0 {
			dst = appendElem(dst, "_id", gr.id)
			continue
		}
		v := gr.accs[i].Result()
		if v.Type == 0 {
			v = bson.Value{Type: bson.TypeNull}
		}
		dst = appendElem(dst, g.names[i], v)
	}
	dst = append(dst, 0)
	binary.LittleEndian.PutUint32(dst, uint32(len(dst)))
	return dst
}

func parseGroup(c *Context, v bson.Value) (stage, error) {
	if v.Type != bson.TypeDocument {
		return nil, mongoerr.New(mongoerr.GroupNotObject, "a group's fields must be specified in an object")
	}
	g := &groupStage{ctx: c, seed: maphash.MakeSeed()}
	it := v.Document().Iter()
	for it.Next() {
		e := it.Element()
		if e.Key == "_id" {
			if g.id != nil {
				return nil, mongoerr.New(mongoerr.GroupIDRepeated, "a group's _id may only be specified once")
			}
			id, err := parseGroupID(c, e.Value)
			if err != nil {
				return nil, err
			}
			g.id, g.idRand = id, usesOperator(e.Value, "$rand")
			continue
		}
		spec, err := parseAccField(c, e)
		if err != nil {
			return nil, err
		}
		switch spec.Op {
		case "$push", "$addToSet", "$mergeObjects", "$topN", "$bottomN", "$firstN", "$lastN", "$maxN", "$minN":
			g.heavy = true
		}
		g.names = append(g.names, e.Key)
		g.accs = append(g.accs, spec)
	}
	if g.id == nil {
		return nil, mongoerr.New(mongoerr.GroupMissingID, "a group specification must include an _id")
	}
	g.deps = topLevelDeps(v)
	g.fam = expr.PlanSumFamilies(g.accs)
	return g, nil
}

// parseGroupID parses the _id expression; an object of expressions is an
// object expression (its fields may not be operators).
func parseGroupID(c *Context, v bson.Value) (expr.Expr, error) {
	return expr.Parse(v, c.Expr)
}

// parseAccField parses one "name: {$acc: arg}" field of $group (and
// $bucket/$bucketAuto output).
func parseAccField(c *Context, e bson.Element) (*expr.AccumulatorSpec, error) {
	if strings.HasPrefix(e.Key, "$") {
		return nil, mongoerr.New(mongoerr.GroupFieldOperatorName, "The field name '%s' cannot be an operator name", e.Key)
	}
	if strings.Contains(e.Key, ".") {
		return nil, mongoerr.New(mongoerr.GroupFieldContainsDot, "The field name '%s' cannot contain '.'", e.Key)
	}
	if e.Value.Type != bson.TypeDocument {
		return nil, mongoerr.New(mongoerr.GroupFieldNotAccumulator, "The field '%s' must be an accumulator object", e.Key)
	}
	if e.Value.Document().Len() != 1 {
		return nil, mongoerr.New(mongoerr.GroupFieldAccumulatorCount, "The field '%s' must specify one accumulator", e.Key)
	}
	ait := e.Value.Document().Iter()
	ait.Next()
	op := ait.Element()
	return expr.ParseAccumulator(op.Key, op.Value, c.Expr)
}

func (g *groupStage) open(in Iterator) (Iterator, error) {
	var out func() (bson.Doc, error)
	return FuncIterator(func() (bson.Doc, error) {
		if out == nil {
			var err error
			if out, err = g.run(in); err != nil {
				return nil, err
			}
		}
		return out()
	}), nil
}

type group struct {
	key  string // the encoded _id (groupKey)
	hash uint64 // of key, set by groupTable.insert
	// merged is set on a partial group of a parallel run once folded
	// into another.
	merged bool
	id     bson.Value
	accs   []expr.Accumulator
	fam    []expr.FamilyState // with groupStage.fam
	// firstSeq and lastSeq order the group's first and last documents in
	// the input (parallel runs merge partial groups by them).
	firstSeq, lastSeq int64
}

// groupState is the in-memory part of a $group run.
type groupState struct {
	tab   groupTable
	order []*group // in the order of their first documents
	mem   int64
	// al and blk hold the groups' accumulators, keys and _id values in
	// shared blocks.
	al  *expr.AccAlloc
	blk []group
}

func (g *groupStage) newGroupState() groupState {
	return groupState{tab: newGroupTable(g.seed), al: &expr.AccAlloc{}}
}

// newGroup makes the group of id (key is its encoding), without entering
// it in st.tab.
func (g *groupStage) newGroup(st *groupState, key []byte, id bson.Value) *group {
	if len(st.blk) == cap(st.blk) {
		st.blk = hugemem.Block[group](cap(st.blk), 8)
	}
	st.blk = st.blk[:len(st.blk)+1]
	gr := &st.blk[len(st.blk)-1]
	*gr = group{} // a reset scratch state hands out used groups again
	gr.id = st.al.Value(id)
	gr.accs = st.al.Accumulators(len(g.accs))
	for i, a := range g.accs {
		gr.accs[i] = a.NewIn(st.al)
	}
	gr.key = st.al.String(key)
	if g.fam != nil {
		gr.fam = g.fam.States()
	}
	return gr
}

func (g *groupStage) add(gr *group, d bson.Doc, env *expr.Env) error {
	env.NewDocument()
	if g.fam != nil {
		return g.fam.Add(gr.fam, gr.accs, d, env)
	}
	for _, a := range gr.accs {
		if err := a.Add(d, env); err != nil {
			return err
		}
	}
	return nil
}

// settle brings gr's accumulators up to date with its sum families.
func (g *groupStage) settle(gr *group) {
	if g.fam != nil {
		g.fam.Flush(gr.fam, gr.accs)
	}
}

// result builds the output document of gr in memory from slab (see
// slabBytes); vals is scratch space.
func (g *groupStage) result(gr *group, vals []bson.Value, slab *[]byte) bson.Doc {
	g.settle(gr)
	n := 4 + 1 + 1 + len("_id") + 1 + len(gr.id.Data)
	for i, a := range gr.accs {
		v := a.Result()
		if v.Type == 0 {
			v = bson.Value{Type: bson.TypeNull}
		}
		vals[i] = v
		n += 1 + len(g.names[i]) + 1 + len(v.Data)
	}
	buf := appendElem(append(slabBytes(slab, n), 0, 0, 0, 0), "_id", gr.id)
	for i, v := range vals[:len(gr.accs)] {
		buf = appendElem(buf, g.names[i], v)
		vals[i] = bson.Value{}
	}
	buf = append(buf, 0)
	binary.LittleEndian.PutUint32(buf, uint32(len(buf)))
	return buf
}

// appendElem appends the element key: v to a document's bytes.
func appendElem(buf []byte, key string, v bson.Value) []byte {
	buf = append(buf, byte(v.Type))
	buf = append(buf, key...)
	buf = append(buf, 0)
	return append(buf, v.Data...)
}

// idKey evaluates the group's _id for d (null when missing) and encodes
// it into key[:0] (groupKey).
func (g *groupStage) idKey(key []byte, d bson.Doc, env *expr.Env) (bson.Value, []byte, error) {
	id, err := expr.Eval(g.id, d, env)
	if err != nil {
		return id, key, err
	}
	if id.Type == 0 {
		id = bson.Value{Type: bson.TypeNull, Data: []byte{}}
	}
	return id, g.groupKey(key[:0], id), nil
}

// groupKey encodes id for hashing: equal values (under the collation)
// encode equally.
func (g *groupStage) groupKey(dst []byte, id bson.Value) []byte {
	if c := g.ctx.collation(); c != nil {
		return bson.AppendKeyCollated(dst, id, false, c)
	}
	return bson.AppendKey(dst, id, false)
}

// run groups the whole input. Groups are kept in memory up to the memory
// limit; past it (with allowDiskUse) the documents of groups not in
// memory are spilled (group_spill.go).
func (g *groupStage) run(in Iterator) (func() (bson.Doc, error), error) {
	st := g.newGroupState()
	var key []byte
	env := expr.NewEnv(g.ctx.Expr)
	spill := g.newSpill(1)
	full := false
	var pos int64
	for ; ; pos++ {
		d, err := in.Next()
		if err != nil {
			spill.close()
			return nil, err
		}
		if d == nil {
			break
		}
		if pos&1023 == 1023 {
			if err := g.ctx.check(); err != nil {
				spill.close()
				return nil, err
			}
		}
		var id bson.Value
		if id, key, err = g.idKey(key, d, env); err != nil {
			spill.close()
			return nil, err
		}
		h, gr := st.tab.lookup(key)
		if gr == nil {
			if g.firstKeys > 0 && len(st.order) >= g.firstKeys {
				continue
			}
			if full {
				if err := spill.add(h, key, pos, id, d); err != nil {
					spill.close()
					return nil, err
				}
				continue
			}
			gr = g.newGroup(&st, key, id)
			gr.firstSeq = pos
			st.tab.insert(h, gr)
			st.order = append(st.order, gr)
			st.mem += g.groupBytes(key, id)
		}
		gr.lastSeq = pos
		if g.heavy {
			st.mem += int64(len(d))
		}
		if err := g.add(gr, d, env); err != nil {
			spill.close()
			return nil, err
		}
		if st.mem > g.ctx.memLimit() && !full {
			if !g.ctx.AllowDiskUse {
				spill.close()
				return nil, errMemory("$group")
			}
			full = true
		}
	}
	if err := spill.flush(); err != nil {
		spill.close()
		return nil, err
	}
	return g.emit(&st, partitions([]*groupSpill{spill}), 1), nil
}

// groupBytes is the memory a new group of id (encoded as key) is counted
// as taking.
func (g *groupStage) groupBytes(key []byte, id bson.Value) int64 {
	return int64(2*len(key)+len(id.Data)) + 64 + 48*int64(len(g.accs))
}

// usesOperator reports whether the expression spec v names operator op
// anywhere.
func usesOperator(v bson.Value, op string) bool {
	if v.Type != bson.TypeDocument && v.Type != bson.TypeArray {
		return false
	}
	it := v.Document().Iter()
	for it.Next() {
		e := it.Element()
		if (v.Type == bson.TypeDocument && e.Key == op) || usesOperator(e.Value, op) {
			return true
		}
	}
	return false
}

// topLevelDeps lists the top-level fields the expressions in spec read
// ("$a.b" reads a), or nil when they may read the whole document
// ($$ROOT, $$CURRENT, $getField and its kin read it implicitly).
func topLevelDeps(spec bson.Value) []string {
	seen := map[string]bool{}
	var deps []string
	whole := false
	var walk func(v bson.Value)
	walk = func(v bson.Value) {
		switch v.Type {
		case bson.TypeString:
			s := v.StringValue()
			if strings.HasPrefix(s, "$$") {
				name, _, _ := strings.Cut(s[2:], ".")
				if name == "ROOT" || name == "CURRENT" {
					whole = true
				}
				return
			}
			if f, ok := strings.CutPrefix(s, "$"); ok && f != "" {
				f, _, _ = strings.Cut(f, ".")
				if !seen[f] {
					seen[f] = true
					deps = append(deps, f)
				}
			}
		case bson.TypeDocument, bson.TypeArray:
			it := v.Document().Iter()
			for it.Next() {
				e := it.Element()
				switch e.Key {
				case "$getField", "$setField", "$unsetField", "$let":
					whole = true
				}
				walk(e.Value)
			}
		}
	}
	walk(spec)
	if whole {
		return nil
	}
	return deps
}

// slabSize is the size of the blocks slabBytes carves.
const slabSize = 64 << 10

// slabBytes returns an empty slice with capacity n carved from the block
// *slab (a new block when it has too little room), so that many small
// results share one allocation. A block stays alive while any slice of it
// does, so it suits results most of which are dropped soon.
func slabBytes(slab *[]byte, n int) []byte {
	if n > slabSize/8 {
		return make([]byte, 0, n)
	}
	if cap(*slab)-len(*slab) < n {
		*slab = make([]byte, 0, slabSize)
	}
	l := len(*slab)
	*slab = (*slab)[:l+n]
	return (*slab)[l : l : l+n]
}

// accErr is the error of an accumulator result that failed ($accumulator's
// finalize): the stage fails with it.
func (g *groupStage) accErr() error {
	for _, a := range g.accs {
		if err := a.Err(); err != nil {
			return err
		}
	}
	return nil
}
