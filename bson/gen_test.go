package bson

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
)

// Test helpers that construct single values and random values of every type.

func one(f func(b *Builder)) Value {
	var b Builder
	f(&b)
	d := b.Finish()
	it := d.Iter()
	if !it.Next() {
		panic("one: empty")
	}
	return it.Element().Value
}

func vInt32(n int32) Value     { return one(func(b *Builder) { b.AppendInt32("", n) }) }
func vInt64(n int64) Value     { return one(func(b *Builder) { b.AppendInt64("", n) }) }
func vDouble(f float64) Value  { return one(func(b *Builder) { b.AppendDouble("", f) }) }
func vString(s string) Value   { return one(func(b *Builder) { b.AppendString("", s) }) }
func vBool(t bool) Value       { return one(func(b *Builder) { b.AppendBool("", t) }) }
func vDate(ms int64) Value     { return one(func(b *Builder) { b.AppendDateTime("", ms) }) }
func vTS(t, i uint32) Value    { return one(func(b *Builder) { b.AppendTimestamp("", t, i) }) }
func vOID(id [12]byte) Value   { return one(func(b *Builder) { b.AppendObjectID("", id) }) }
func vRegex(p, o string) Value { return one(func(b *Builder) { b.AppendRegex("", p, o) }) }
func vBin(st byte, d []byte) Value {
	return one(func(b *Builder) { b.AppendBinary("", st, d) })
}
func vDoc(d Doc) Value   { return Value{Type: TypeDocument, Data: d} }
func vArray(d Doc) Value { return Value{Type: TypeArray, Data: d} }

var (
	vMissing   = Value{}
	vMinKey    = Value{Type: TypeMinKey}
	vMaxKey    = Value{Type: TypeMaxKey}
	vNull      = Value{Type: TypeNull}
	vUndefined = Value{Type: TypeUndefined}
)

func strData(s string) []byte {
	d := binary.LittleEndian.AppendUint32(nil, uint32(len(s)+1))
	return append(append(d, s...), 0)
}

func vSymbol(s string) Value { return Value{Type: TypeSymbol, Data: strData(s)} }
func vCode(s string) Value   { return Value{Type: TypeJavaScript, Data: strData(s)} }

func vDBPointer(ns string, id [12]byte) Value {
	return Value{Type: TypeDBPointer, Data: append(strData(ns), id[:]...)}
}

func vCodeScope(code string, scope Doc) Value {
	s := strData(code)
	d := binary.LittleEndian.AppendUint32(nil, uint32(4+len(s)+len(scope)))
	d = append(d, s...)
	return Value{Type: TypeCodeWithScope, Data: append(d, scope...)}
}

func vDecimal(s string) Value {
	hi, lo, err := ParseDecimal128(s)
	if err != nil {
		panic(err)
	}
	return decimalValue(hi, lo)
}

// docOf builds a document from alternating keys and values.
func docOf(kv ...any) Doc {
	var b Builder
	for i := 0; i < len(kv); i += 2 {
		b.AppendValue(kv[i].(string), kv[i+1].(Value))
	}
	return b.Finish()
}

// arrOf builds an array document.
func arrOf(vs ...Value) Doc {
	var b Builder
	for i, v := range vs {
		b.AppendValue(Index(i), v)
	}
	return b.Finish()
}

// specialFloats are doubles at the edges of exact comparison.
var specialFloats = []float64{
	0, math.Copysign(0, -1), 1, -1, 0.5, 0.1, 0.2, 0.3, 1.5, -2.5, 1e15, 1e16, 1e17,
	1 << 53, 1<<53 + 2, -(1 << 53), 1 << 63, -(1 << 63), 1 << 64, 1e300, -1e300,
	math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64,
	math.Inf(1), math.Inf(-1), math.NaN(), 2147483647, -2147483648, 2147483648, 1e-300,
	9.223372036854775e18, 123.456, 0.30000000000000004,
}

var specialInts = []int64{
	0, 1, -1, 2, 10, 100, math.MaxInt32, math.MinInt32, math.MaxInt32 + 1, 1 << 53, 1<<53 + 1,
	1<<53 + 2, -(1<<53 + 1), math.MaxInt64, math.MinInt64, math.MaxInt64 - 1, math.MinInt64 + 1,
	1e18, 1e15, 123,
}

var specialDecimals = []string{
	"0", "-0", "0E+10", "0E-6176", "1", "1.0", "1.00000000000000000000000000000000", "-1", "0.1", "0.5",
	"1E-6176", "-1E-6176", "9.999999999999999999999999999999999E+6144", "1E+6144",
	"-9.999999999999999999999999999999999E+6144", "NaN", "Infinity", "-Infinity",
	"9223372036854775807", "9223372036854775808", "-9223372036854775808", "9007199254740993",
	"0.1000000000000000055511151231257827", "0.1000000000000000055511151231257828",
	"123.456", "1E+15", "2147483647", "1E+308", "1.797693134862315708145274237317044E+308",
	"4.940656458412465441765687928682213E-324",
}

// randNumber returns a number of a random type, often equal in value to a
// number of another type.
func randNumber(r *rand.Rand) Value {
	switch r.IntN(9) {
	case 0:
		return vInt32(int32(specialInts[r.IntN(len(specialInts))]))
	case 1:
		return vInt64(specialInts[r.IntN(len(specialInts))])
	case 2:
		return vDouble(specialFloats[r.IntN(len(specialFloats))])
	case 3:
		return vDecimal(specialDecimals[r.IntN(len(specialDecimals))])
	case 4:
		return vInt32(int32(r.IntN(21) - 10))
	case 5:
		n := int64(r.IntN(21) - 10)
		switch r.IntN(3) {
		case 0:
			return vInt64(n)
		case 1:
			return vDouble(float64(n) / float64(int64(1)<<r.IntN(4)))
		}
		hi, lo := decimalPack(n < 0, 0, uint64(max(n, -n))*uint64(pow10u(r.IntN(4))), -r.IntN(4))
		return decimalValue(hi, lo)
	case 6:
		return vDouble(math.Float64frombits(r.Uint64()))
	case 7:
		return vInt64(int64(r.Uint64()))
	}
	c := r.Uint64() >> r.IntN(64)
	hi, lo := decimalPack(r.IntN(2) == 0, 0, c, r.IntN(80)-40)
	return decimalValue(hi, lo)
}

func pow10u(k int) uint64 {
	p := uint64(1)
	for ; k > 0; k-- {
		p *= 10
	}
	return p
}

var randStrings = []string{"", "a", "a\x00", "a\x00b", "ab", "b", "\x00", "\xff", "é", "A", "abc"}

// randValue returns a random value of any type, nesting up to depth.
func randValue(r *rand.Rand, depth int) Value {
	k := r.IntN(24)
	if depth <= 0 && (k == 6 || k == 7 || k == 18) {
		k = 0
	}
	switch k {
	case 0, 1, 2, 3:
		return randNumber(r)
	case 4:
		return vString(randStrings[r.IntN(len(randStrings))])
	case 5:
		return vSymbol(randStrings[r.IntN(len(randStrings))])
	case 6:
		var b Builder
		for i, n := 0, r.IntN(4); i < n; i++ {
			b.AppendValue(randStrings[r.IntN(4)+1][:1], randValue(r, depth-1))
		}
		return vDoc(b.Finish())
	case 7:
		var b Builder
		for i, n := 0, r.IntN(4); i < n; i++ {
			b.AppendValue(Index(i), randValue(r, depth-1))
		}
		return vArray(b.Finish())
	case 8:
		d := make([]byte, r.IntN(3))
		for i := range d {
			d[i] = byte(r.IntN(3))
		}
		return vBin(byte(r.IntN(2)*4), d)
	case 9:
		var id [12]byte
		id[11] = byte(r.IntN(3))
		id[0] = byte(r.IntN(2) * 255)
		return vOID(id)
	case 10:
		return vBool(r.IntN(2) == 0)
	case 11:
		return vDate([]int64{math.MinInt64, -1, 0, 1, math.MaxInt64, 1700000000000}[r.IntN(6)])
	case 12:
		return vTS(uint32(r.IntN(3))<<(r.IntN(2)*31), uint32(r.IntN(3)))
	case 13:
		return vRegex(randStrings[r.IntN(3)+1][:1], []string{"", "i", "im"}[r.IntN(3)])
	case 14:
		var id [12]byte
		id[5] = byte(r.IntN(2))
		return vDBPointer([]string{"a", "b", "db.c"}[r.IntN(3)], id)
	case 15:
		return vCode(randStrings[r.IntN(len(randStrings))])
	case 16:
		return []Value{vMinKey, vMaxKey, vNull, vUndefined}[r.IntN(4)]
	case 17:
		return vString(string(rune('a' + r.IntN(3))))
	case 18:
		scope := docOf()
		if r.IntN(2) == 0 {
			scope = docOf("x", randValue(r, depth-1))
		}
		return vCodeScope([]string{"f", "g"}[r.IntN(2)], scope)
	}
	return randNumber(r)
}
