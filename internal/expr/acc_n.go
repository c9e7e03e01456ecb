package expr

import (
	"math"
	"sort"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// The accumulators that keep several values: $top, $bottom, $topN,
// $bottomN, $firstN, $lastN, $maxN, $minN, and $median and $percentile.

// nOnce sets *n, an N accumulator's n, from the group's first document
// (n is 0 until then).
func (s *AccumulatorSpec) nOnce(n *int, root bson.Doc, env *Env) error {
	if *n != 0 {
		return nil
	}
	v, err := s.evalN(root, env)
	if err != nil {
		return err
	}
	*n = v
	return nil
}

// insertBest inserts v at i in s, a list sorted best first that keeps
// its n best (i is where sort.Search places v): inserted is false, and s
// unchanged, when v ranks n-th or below.
func insertBest[T any](s []T, i, n int, v T) (_ []T, inserted bool) {
	if i >= n {
		return s, false
	}
	var zero T
	s = append(s, zero)
	copy(s[i+1:], s[i:])
	s[i] = v
	if len(s) > n {
		s = s[:n]
	}
	return s, true
}

// ---- $top, $bottom, $topN, $bottomN ----

type ranked struct {
	key bson.Value // the sort key document {k0: v0, ...} (heap)
	out bson.Value
	seq int
}

type topAcc struct {
	spec   *AccumulatorSpec
	bottom bool
	single bool
	n      int
	items  []ranked
	seq    int
	bytes  int
}

func (a *topAcc) less(x, y ranked) bool {
	for i, k := range a.spec.sort {
		kx := sortKeyAt(x.key, i)
		ky := sortKeyAt(y.key, i)
		c := bson.CompareCollated(kx, ky, a.spec.opts.Collation)
		if k.desc {
			c = -c
		}
		if a.bottom {
			c = -c
		}
		if c != 0 {
			return c < 0
		}
	}
	if a.bottom {
		return x.seq > y.seq
	}
	return x.seq < y.seq
}

func sortKeyAt(key bson.Value, i int) bson.Value {
	it := key.Document().Iter()
	for j := 0; it.Next(); j++ {
		if j == i {
			return it.Element().Value
		}
	}
	return vNull
}

func (a *topAcc) Add(root bson.Doc, env *Env) error {
	defer env.release(env.mark())
	if a.single {
		a.n = 1
	} else if err := a.spec.nOnce(&a.n, root, env); err != nil {
		return err
	}
	out, err := EvalKeep(a.spec.out, root, env)
	if err != nil {
		return err
	}
	if out.Type == 0 {
		out = vNull
	}
	out = copyValue(out)
	var b bson.Builder
	for i, k := range a.spec.sort {
		b.AppendValue(bson.Index(i), sortKeyValue(bson.Value{Type: bson.TypeDocument, Data: root}, k.path, k.desc))
	}
	item := ranked{key: bson.Value{Type: bson.TypeDocument, Data: b.Finish()}, out: out, seq: a.seq}
	a.seq++
	i := sort.Search(len(a.items), func(i int) bool { return a.less(item, a.items[i]) })
	var inserted bool
	if a.items, inserted = insertBest(a.items, i, a.n, item); !inserted {
		return nil
	}
	a.bytes += len(out.Data) + len(item.key.Data)
	if a.bytes > maxAccumulatorBytes && len(a.items) == a.n {
		a.bytes = 0
		for _, it := range a.items {
			a.bytes += len(it.out.Data) + len(it.key.Data)
		}
	}
	if a.bytes > maxAccumulatorBytes {
		return errf(mongoerr.ExceededMemoryLimit, "%s used too much memory and cannot spill to disk. Memory limit: %d bytes", a.spec.Op, maxAccumulatorBytes)
	}
	return nil
}

func (a *topAcc) Result() bson.Value {
	if a.single {
		if len(a.items) == 0 {
			return vNull
		}
		return a.items[0].out
	}
	vals := make([]bson.Value, len(a.items))
	for i, it := range a.items {
		if a.bottom {
			vals[len(vals)-1-i] = it.out // $bottomN lists in sort order
		} else {
			vals[i] = it.out
		}
	}
	e := resultEnv()
	return e.array(vals)
}

// ---- $firstN, $lastN ----

type firstNAcc struct {
	heldValues
	spec *AccumulatorSpec
	last bool
	n    int
}

func (a *firstNAcc) Add(root bson.Doc, env *Env) error {
	defer env.release(env.mark())
	if err := a.spec.nOnce(&a.n, root, env); err != nil {
		return err
	}
	if !a.last && len(a.vals) >= a.n {
		return nil
	}
	v, err := EvalKeep(a.spec.arg, root, env)
	if err != nil {
		return err
	}
	if v.Type == 0 {
		v = vNull
	}
	a.vals = append(a.vals, copyValue(v))
	if a.last && len(a.vals) > a.n {
		copy(a.vals, a.vals[1:])
		a.vals = a.vals[:a.n]
	}
	return nil
}

// ---- $maxN, $minN ----

type minMaxNAcc struct {
	heldValues // vals sorted best first
	spec       *AccumulatorSpec
	max        bool
	n          int
}

func (a *minMaxNAcc) Add(root bson.Doc, env *Env) error {
	defer env.release(env.mark())
	if err := a.spec.nOnce(&a.n, root, env); err != nil {
		return err
	}
	v, err := EvalKeep(a.spec.arg, root, env)
	if err != nil {
		return err
	}
	if nullish(v) {
		return nil
	}
	a.insert(copyValue(v))
	return nil
}

func (a *minMaxNAcc) insert(v bson.Value) {
	better := func(x, y bson.Value) bool {
		c := bson.CompareCollated(x, y, a.spec.opts.Collation)
		if a.max {
			return c > 0
		}
		return c < 0
	}
	i := sort.Search(len(a.vals), func(i int) bool { return better(v, a.vals[i]) })
	a.vals, _ = insertBest(a.vals, i, a.n, v)
}

// ---- $median, $percentile ----

func (s *AccumulatorSpec) parsePercentile(arg bson.Value) error {
	p := &parser{opts: s.opts}
	n, err := parsePercentile(s.Op)(p, s.Op, arg)
	if err != nil {
		return err
	}
	pn := n.(*percentileNode)
	s.arg = &compiled{n: pn.input, nslots: p.nslots}
	s.ps = pn.ps
	return nil
}

type percentileAcc struct {
	spec *AccumulatorSpec
	xs   []float64
}

func (a *percentileAcc) Add(root bson.Doc, env *Env) error {
	defer env.release(env.mark())
	v, err := EvalKeep(a.spec.arg, root, env)
	if err != nil {
		return err
	}
	if v.IsNumber() && !math.IsNaN(toFloat(v)) {
		if len(a.xs) >= maxAccumulatorBytes/8 {
			return errf(mongoerr.ExceededMemoryLimit, "%s used too much memory and cannot spill to disk. Memory limit: %d bytes", a.spec.Op, maxAccumulatorBytes)
		}
		a.xs = append(a.xs, toFloat(v))
	}
	return nil
}

// Merge folds another $median/$percentile.
func (a *percentileAcc) Merge(other Accumulator) error {
	a.xs = append(a.xs, other.(*percentileAcc).xs...)
	return nil
}

func (a *percentileAcc) Result() bson.Value {
	sort.Float64s(a.xs)
	e := resultEnv()
	if a.spec.ps == nil {
		return percentileOf(e, a.xs, 0.5)
	}
	vals := make([]bson.Value, len(a.spec.ps))
	for i, p := range a.spec.ps {
		vals[i] = percentileOf(e, a.xs, p)
	}
	return e.array(vals)
}
