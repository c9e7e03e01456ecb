package expr

import (
	"math"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// Merger is implemented by accumulators whose partial states can be
// combined, so a $group can run over partitions in parallel: Merge folds
// other (an accumulator of the same spec, over a later partition of the
// input) into the receiver.
type Merger interface {
	Merge(other Accumulator) error
}

// Merge folds another $sum.
func (a *sumAcc) Merge(other Accumulator) error {
	o := other.(*sumAcc)
	a.s.merge(&o.s)
	return nil
}

func (s *sumState) merge(o *sumState) {
	s.flushDec()
	o.flushDec()
	if o.typ == 0 {
		return
	}
	if s.typ == 0 {
		*s = *o
		return
	}
	if numRank(o.typ) > numRank(s.typ) {
		s.typ = o.typ
	}
	if o.haveDec {
		if s.haveDec {
			s.dsum = decAdd(s.dsum, o.dsum)
		} else {
			s.dsum, s.haveDec = o.dsum, true
		}
	}
	if !s.iover && !o.iover {
		if r, over := addInt64(s.isum, o.isum); !over {
			s.isum = r
			return
		}
	}
	s.toFloat()
	of := sumState{isum: o.isum, iover: o.iover, fsum: o.fsum, fcomp: o.fcomp}
	of.toFloat()
	s.addFloat(of.fsum)
	s.addFloat(of.fcomp)
}

// Merge folds another $count.
func (a *countAcc) Merge(other Accumulator) error {
	a.n += other.(*countAcc).n
	return nil
}

// Merge folds another $avg.
func (a *avgAcc) Merge(other Accumulator) error {
	o := other.(*avgAcc)
	a.s.merge(&o.s)
	a.count += o.count
	return nil
}

// Merge folds another $min or $max.
func (a *minMaxAcc) Merge(other Accumulator) error {
	o := other.(*minMaxAcc)
	if o.cur.Type != 0 && (a.cur.Type == 0 || a.sign*bson.CompareCollated(o.cur, a.cur, a.spec.opts.Collation) > 0) {
		a.cur = o.cur
	}
	return nil
}

// Merge folds another $first or $last over a later partition.
func (a *firstLastAcc) Merge(other Accumulator) error {
	o := other.(*firstLastAcc)
	if o.seen && (!a.first || !a.seen) {
		a.cur, a.seen = o.cur, true
	}
	return nil
}

// Merge folds another $push or $addToSet.
func (a *pushAcc) Merge(other Accumulator) error {
	for _, v := range other.(*pushAcc).vals {
		if a.set && !a.insertKey(v) {
			continue
		}
		a.bytes += len(v.Data) + 16
		if a.bytes > maxAccumulatorBytes {
			return errf(mongoerr.ExceededMemoryLimit, "%s used too much memory and cannot spill to disk. Memory limit: %d bytes", a.spec.Op, maxAccumulatorBytes)
		}
		a.vals = append(a.vals, v)
	}
	return nil
}

// insertKey records v in the $addToSet index; false when an equal value
// (under the collation) is already there.
func (a *pushAcc) insertKey(v bson.Value) bool {
	if a.index == nil {
		a.index = bson.NewValueSet(a.spec.opts.Collation)
	}
	return a.index.Add(v)
}

// Merge folds another $stdDevPop/$stdDevSamp (Chan et al.'s parallel
// variance update).
func (a *stdDevAcc) Merge(other Accumulator) error {
	o := other.(*stdDevAcc)
	if o.n == 0 {
		return nil
	}
	if a.n == 0 {
		a.n, a.mean, a.m2, a.nonFinite = o.n, o.mean, o.m2, o.nonFinite
		return nil
	}
	n := a.n + o.n
	d := o.mean - a.mean
	a.mean += d * float64(o.n) / float64(n)
	a.m2 += o.m2 + d*d*float64(a.n)*float64(o.n)/float64(n)
	a.n = n
	a.nonFinite = a.nonFinite || o.nonFinite || math.IsNaN(a.m2)
	return nil
}

// Merge folds another $mergeObjects.
func (a *mergeAcc) Merge(other Accumulator) error {
	o := other.(*mergeAcc)
	for i, k := range o.f.keys {
		if err := a.put(k, o.f.vals[i]); err != nil {
			return err
		}
	}
	return nil
}

// Merge folds another $maxN/$minN.
func (a *minMaxNAcc) Merge(other Accumulator) error {
	o := other.(*minMaxNAcc)
	if a.n == 0 {
		a.n = o.n
	}
	for _, v := range o.vals {
		a.insert(v)
	}
	return nil
}
