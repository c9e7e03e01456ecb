package bsoncolumn

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/cairndb/cairn/bson"
)

// Subtype is the BinData subtype of a BSONColumn.
const Subtype = 7

// scaleMult are the double scales of control bytes 0x9-0xD (index 0-4);
// index 5 (control 0x8) stores a double's bits.
var scaleMult = [5]float64{1, 10, 100, 10000, 100000000}

const memoryAsInteger = 5

// controlForScale is the high nibble of a run's control byte by scale.
var controlForScale = [6]byte{0x90, 0xA0, 0xB0, 0xC0, 0xD0, 0x80}

// maxSafe is 2^53, the largest integer doubles hold exactly.
const maxSafe = 1 << 53

// scaleDouble is mongod's Simple8bTypeUtil::encodeDouble: f scaled by
// scale s to an integer, when that integer divided back equals f.
func scaleDouble(f float64, s int) (int64, bool) {
	if s == memoryAsInteger {
		return int64(math.Float64bits(f)), true
	}
	x := f * scaleMult[s]
	if !(x >= -maxSafe && x <= maxSafe) {
		return 0, false
	}
	n := int64(math.Round(x))
	return n, float64(n)/scaleMult[s] == f
}

// unscaleDouble inverts scaleDouble.
func unscaleDouble(n int64, s int) float64 {
	if s == memoryAsInteger {
		return math.Float64frombits(uint64(n))
	}
	return float64(n) / scaleMult[s]
}

// exactScale reports whether f decodes bit for bit at scale s (so -0 and
// NaN only at the integer scale).
func exactScale(f float64, s int) (int64, bool) {
	n, ok := scaleDouble(f, s)
	return n, ok && math.Float64bits(unscaleDouble(n, s)) == math.Float64bits(f)
}

// minScale is the smallest scale at which f decodes bit for bit.
func minScale(f float64) int {
	for s := 0; s < memoryAsInteger; s++ {
		if _, ok := exactScale(f, s); ok {
			return s
		}
	}
	return memoryAsInteger
}

// objectIDInt is mongod's Simple8bTypeUtil::encodeObjectId: the
// timestamp and counter bytes interleaved, little-endian.
func objectIDInt(id []byte) int64 {
	var b [8]byte
	b[0], b[1], b[2], b[3], b[4], b[5], b[6] = id[3], id[11], id[2], id[10], id[1], id[9], id[0]
	return int64(binary.LittleEndian.Uint64(b[:]))
}

// objectIDFrom inverts objectIDInt with the process bytes of like.
func objectIDFrom(dst []byte, n int64, like []byte) []byte {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(n))
	dst = append(dst, b[6], b[4], b[2], b[0])
	dst = append(dst, like[4:9]...)
	return append(dst, b[5], b[3], b[1])
}

// usesDeltaOfDelta and uses128 classify literal types as mongod does.
func usesDeltaOfDelta(t bson.Type) bool {
	return t == bson.TypeObjectID || t == bson.TypeDateTime || t == bson.TypeTimestamp
}

func uses128(t bson.Type) bool {
	return t == bson.TypeDecimal128 || t == bson.TypeBinary || t == bson.TypeString || t == bson.TypeJavaScript
}

// encoder is the state of Encode.
type encoder struct {
	out   []byte
	prev  bson.Value // last value written (Type 0: none yet)
	enc   int64      // prev as an integer (scaled for doubles)
	delta int64      // last delta, for delta-of-delta types
	run   []slot
	scale int // the run's double scale; -1: not chosen yet
	words []uint64
}

// Encode compresses vals (Type 0: missing) into a BSONColumn binary
// (without the BinData header). It fails for the types BSONColumn does
// not hold: MinKey, MaxKey and code with scope.
func Encode(vals []bson.Value) ([]byte, error) {
	e := &encoder{scale: -1}
	for i, v := range vals {
		if err := e.add(vals, i, v); err != nil {
			return nil, err
		}
	}
	e.flush()
	e.out = append(e.out, 0)
	return e.out, nil
}

func (e *encoder) add(vals []bson.Value, i int, v bson.Value) error {
	switch v.Type {
	case 0:
		e.run = append(e.run, slot{missing: true})
		return nil
	case bson.TypeMinKey, bson.TypeMaxKey, bson.TypeCodeWithScope:
		return fmt.Errorf("bsoncolumn: %s values are not supported in a BSONColumn", v.Type)
	}
	if v.Type != e.prev.Type {
		e.literal(v)
		return nil
	}
	d, ok := e.delta64(vals, i, v)
	if !ok {
		e.literal(v)
		return nil
	}
	e.run = append(e.run, slot{v: d})
	e.prev = v
	return nil
}

// delta64 is v's slot after prev (same type), or false when v must be a
// literal. It updates the delta state when it succeeds.
func (e *encoder) delta64(vals []bson.Value, i int, v bson.Value) (uint64, bool) {
	p := e.prev
	switch v.Type {
	case bson.TypeDouble:
		return e.double(vals, i, v.Double())
	case bson.TypeInt32:
		return small(int64(v.Int32()) - int64(p.Int32()))
	case bson.TypeInt64:
		return small(v.Int64() - p.Int64())
	case bson.TypeBoolean:
		return small(int64(v.Data[0]) - int64(p.Data[0]))
	case bson.TypeNull, bson.TypeUndefined:
		return 0, true
	case bson.TypeDateTime, bson.TypeTimestamp:
		return e.dod(v.Int64())
	case bson.TypeObjectID:
		if !bytes.Equal(v.Data[4:9], p.Data[4:9]) {
			return 0, false
		}
		return e.dod(objectIDInt(v.Data))
	}
	// Other types (and the 128-bit ones) only repeat.
	if bytes.Equal(v.Data, p.Data) {
		return 0, true
	}
	return 0, false
}

func small(d int64) (uint64, bool) {
	z := zigzag(d)
	return z, z <= maxSlot
}

func (e *encoder) dod(n int64) (uint64, bool) {
	d := n - e.enc
	z, ok := small(d - e.delta)
	if ok {
		e.enc, e.delta = n, d
	}
	return z, ok
}

// double is the slot of f in the current run of doubles, starting a run
// (and choosing its scale) when there is none.
func (e *encoder) double(vals []bson.Value, i int, f float64) (uint64, bool) {
	if e.scale >= 0 {
		if n, ok := exactScale(f, e.scale); ok {
			if z, ok := small(n - e.enc); ok {
				e.enc = n
				return z, true
			}
		}
		e.flush() // a new run, at another scale
	}
	// The run's scale: enough for the next values, so that one run
	// holds them; the previous value must scale there too (the decoder
	// scales it at each control byte).
	s := minScale(f)
	if s < memoryAsInteger {
		for j := i + 1; j < len(vals) && j < i+60; j++ {
			if vals[j].Type == 0 {
				continue
			}
			if vals[j].Type != bson.TypeDouble {
				break
			}
			if m := minScale(vals[j].Double()); m < memoryAsInteger {
				s = max(s, m)
			}
		}
	}
	for ; s <= memoryAsInteger; s++ {
		n, ok1 := exactScale(f, s)
		pn, ok2 := scaleDouble(e.prev.Double(), s)
		if !ok1 || !ok2 {
			continue
		}
		if z, ok := small(n - pn); ok {
			e.scale, e.enc = s, n
			return z, true
		}
		break
	}
	return 0, false
}

// literal writes v as a literal, after the pending run.
func (e *encoder) literal(v bson.Value) {
	e.flush()
	e.out = append(e.out, byte(v.Type), 0)
	e.out = append(e.out, v.Data...)
	e.prev = v
	e.delta = 0
	e.enc = 0
	switch v.Type {
	case bson.TypeInt32:
		e.enc = int64(v.Int32())
	case bson.TypeInt64, bson.TypeDateTime, bson.TypeTimestamp:
		e.enc = v.Int64()
	case bson.TypeObjectID:
		e.enc = objectIDInt(v.Data)
	}
}

// flush writes the pending run as control bytes of up to 16 blocks.
func (e *encoder) flush() {
	if len(e.run) == 0 {
		e.scale = -1
		return
	}
	ctl := controlForScale[memoryAsInteger]
	if e.prev.Type == bson.TypeDouble && e.scale >= 0 {
		ctl = controlForScale[e.scale]
	}
	e.words = pack(e.words[:0], e.run)
	for w := e.words; len(w) > 0; {
		n := min(len(w), 16)
		e.out = append(e.out, ctl|byte(n-1))
		for _, x := range w[:n] {
			e.out = binary.LittleEndian.AppendUint64(e.out, x)
		}
		w = w[n:]
	}
	e.run = e.run[:0]
	e.scale = -1
}
