package expr

import (
	"unsafe"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/hugemem"
)

// AccAlloc hands out the accumulators of many groups, and the bytes of
// values they keep, from shared blocks: a $group with a million groups
// then makes a few thousand allocations instead of several per group.
// Everything it hands out lives as long as any of it is referenced. It is
// not safe for concurrent use; the zero value is ready.
type AccAlloc struct {
	sums   []sumAcc
	counts []countAcc
	avgs   []avgAcc
	minmax []minMaxAcc
	firsts []firstLastAcc
	ifaces []Accumulator
	bytes  []byte
}

// Blocks of every kind start small and double up to hugemem.MaxBlock
// bytes (hugemem.Block), so that a few groups take little memory (a $group
// that spilled aggregates its spilled groups one at a time in one
// AccAlloc, Reset between groups) while a million groups sit in a few
// large blocks that the kernel may back with huge pages.

// allocBlock bounds the accumulators handed out together from the block
// of interfaces; more get their own allocation.
const allocBlock = 1024

// byteBlock bounds, as byteBlock/8, the values copied into a block of
// bytes; larger values get their own allocation.
const byteBlock = 32 << 10

// take returns a zeroed element from the block *s, starting a new block
// (hugemem.Block) when it is full. An
// element of a block that Reset emptied is zeroed again here.
func take[T any](s *[]T) *T {
	if len(*s) == cap(*s) {
		*s = hugemem.Block[T](cap(*s), 8)
	}
	*s = (*s)[:len(*s)+1]
	p := &(*s)[len(*s)-1]
	var zero T
	*p = zero
	return p
}

// Reset lets a's current blocks be handed out again (earlier blocks are
// left to the garbage collector). Only for a caller that no longer uses
// anything a handed out: a spilled $group aggregates one group at a time
// and resets between groups, once the group's result is built.
func (a *AccAlloc) Reset() {
	a.sums, a.counts, a.avgs = a.sums[:0], a.counts[:0], a.avgs[:0]
	a.minmax, a.firsts = a.minmax[:0], a.firsts[:0]
	a.ifaces = a.ifaces[:0] // every slot handed out again is set by its caller
	a.bytes = a.bytes[:0]
}

// Accumulators returns a slice of n accumulators, from a shared block.
func (a *AccAlloc) Accumulators(n int) []Accumulator {
	if n > allocBlock/4 {
		return make([]Accumulator, n)
	}
	if cap(a.ifaces)-len(a.ifaces) < n {
		a.ifaces = hugemem.Block[Accumulator](cap(a.ifaces), max(8, n))
	}
	l := len(a.ifaces)
	a.ifaces = a.ifaces[:l+n]
	return a.ifaces[l : l+n : l+n]
}

// Bytes returns a copy of b that shares a block with other copies; it is
// never written again.
func (a *AccAlloc) Bytes(b []byte) []byte {
	if len(b) > byteBlock/8 {
		return append([]byte(nil), b...)
	}
	if cap(a.bytes)-len(a.bytes) < len(b) {
		a.bytes = hugemem.Block[byte](cap(a.bytes), max(256, len(b)))
	}
	l := len(a.bytes)
	a.bytes = append(a.bytes, b...)
	return a.bytes[l : l+len(b) : l+len(b)]
}

// String is Bytes as a string.
func (a *AccAlloc) String(b []byte) string {
	c := a.Bytes(b)
	return unsafe.String(unsafe.SliceData(c), len(c))
}

// Value returns a copy of v (as CopyValue does) in a shared block.
func (a *AccAlloc) Value(v bson.Value) bson.Value {
	if v.Type == 0 {
		return v
	}
	return bson.Value{Type: v.Type, Data: a.Bytes(v.Data)}
}

// NewIn is New with the accumulator taken from al (nil: allocated alone).
func (s *AccumulatorSpec) NewIn(al *AccAlloc) Accumulator {
	if al == nil {
		return s.New()
	}
	switch s.kind {
	case accSum:
		a := take(&al.sums)
		a.spec = s
		return a
	case accCount:
		return take(&al.counts)
	case accAvg:
		a := take(&al.avgs)
		a.spec = s
		return a
	case accMin, accMax:
		a := take(&al.minmax)
		a.spec, a.sign = s, -1
		if s.kind == accMax {
			a.sign = 1
		}
		return a
	case accFirst, accLast:
		a := take(&al.firsts)
		a.spec, a.first, a.al = s, s.kind == accFirst, al
		return a
	}
	return s.New()
}

// accKind names the accumulators NewIn takes from blocks.
type accKind uint8

const (
	accOther accKind = iota
	accSum
	accCount
	accAvg
	accMin
	accMax
	accFirst
	accLast
)

var accKinds = map[string]accKind{
	"$sum": accSum, "$count": accCount, "$avg": accAvg, "$min": accMin, "$max": accMax, "$first": accFirst, "$last": accLast,
}

// resultEnv returns an Env for building an accumulator's result: its
// arena starts empty, so each value built in it gets an allocation of its
// own that no later evaluation reuses.
func resultEnv() *Env { return &Env{unlimited: true} }
