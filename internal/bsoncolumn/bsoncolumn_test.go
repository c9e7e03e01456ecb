package bsoncolumn

import (
	"bytes"
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/cairndb/cairn/bson"
)

func val(f func(b *bson.Builder)) bson.Value {
	var b bson.Builder
	f(&b)
	v, _ := b.Finish().Lookup("v")
	return v
}

func dbl(f float64) bson.Value { return val(func(b *bson.Builder) { b.AppendDouble("v", f) }) }
func i32(n int32) bson.Value   { return val(func(b *bson.Builder) { b.AppendInt32("v", n) }) }
func i64(n int64) bson.Value   { return val(func(b *bson.Builder) { b.AppendInt64("v", n) }) }
func date(ms int64) bson.Value { return val(func(b *bson.Builder) { b.AppendDateTime("v", ms) }) }
func str(s string) bson.Value  { return val(func(b *bson.Builder) { b.AppendString("v", s) }) }
func boolean(x bool) bson.Value {
	return val(func(b *bson.Builder) { b.AppendBool("v", x) })
}
func null() bson.Value { return val(func(b *bson.Builder) { b.AppendNull("v") }) }
func oid(ts uint32, proc byte, ctr uint32) bson.Value {
	var id [12]byte
	binary.BigEndian.PutUint32(id[:4], ts)
	for i := 4; i < 9; i++ {
		id[i] = proc
	}
	id[9], id[10], id[11] = byte(ctr>>16), byte(ctr>>8), byte(ctr)
	return val(func(b *bson.Builder) { b.AppendObjectID("v", id) })
}
func ts(t, i uint32) bson.Value { return val(func(b *bson.Builder) { b.AppendTimestamp("v", t, i) }) }
func doc(k string, n int32) bson.Value {
	return val(func(b *bson.Builder) { b.StartDocument("v"); b.AppendInt32(k, n); b.End() })
}
func dec(hi, lo uint64) bson.Value {
	return val(func(b *bson.Builder) { b.AppendDecimal128("v", hi, lo) })
}

var missing = bson.Value{}

func seq(n int, f func(i int) bson.Value) []bson.Value {
	out := make([]bson.Value, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

func TestRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		vals []bson.Value
		// maxBytes, when set, bounds the encoded size.
		maxBytes int
	}{
		{"empty", nil, 1},
		{"one int32", []bson.Value{i32(7)}, 0},
		{"int32 steps", seq(1000, func(i int) bson.Value { return i32(int32(i * 3)) }), 200},
		{"int32 extremes", []bson.Value{i32(math.MinInt32), i32(math.MaxInt32), i32(0), i32(-1)}, 0},
		{"int64 extremes", []bson.Value{i64(math.MinInt64), i64(math.MaxInt64), i64(0), i64(math.MinInt64 + 1), i64(1 << 62)}, 0},
		{"int64 random walk", seq(500, func(i int) bson.Value { return i64(int64(i*i%97) - 40) }), 0},
		{"doubles 2 decimals", seq(1000, func(i int) bson.Value { return dbl(math.Round((20+math.Sin(float64(i)/10))*100) / 100) }), 1200},
		{"doubles mixed scales", []bson.Value{dbl(1), dbl(1.5), dbl(1.25), dbl(3.125), dbl(1e-9), dbl(123456.789), dbl(2)}, 0},
		{"doubles NaN -0 Inf", []bson.Value{dbl(0), dbl(math.Copysign(0, -1)), dbl(math.NaN()), dbl(math.Inf(1)), dbl(math.Inf(-1)), dbl(0), dbl(math.Copysign(0, -1)), dbl(5)}, 0},
		{"doubles huge", []bson.Value{dbl(1e300), dbl(-1e300), dbl(math.MaxFloat64), dbl(math.SmallestNonzeroFloat64), dbl(1e300)}, 0},
		{"dates 1s", seq(1000, func(i int) bson.Value { return date(1767225600000 + int64(i)*1000) }), 60},
		{"dates irregular", []bson.Value{date(0), date(-1000), date(math.MaxInt64), date(math.MinInt64), date(5), date(6)}, 0},
		{"timestamps", seq(300, func(i int) bson.Value { return ts(uint32(1700000000+i), uint32(i%3)) }), 0},
		{"objectids same process", seq(1000, func(i int) bson.Value { return oid(uint32(1767225600+i/100), 9, uint32(5000+i)) }), 300},
		{"objectids other process", []bson.Value{oid(1, 1, 1), oid(1, 2, 2), oid(1, 2, 3), oid(0, 2, 0xFFFFFF)}, 0},
		{"strings", []bson.Value{str("a"), str("a"), str("b"), str(""), str(""), str(strings.Repeat("x", 40))}, 0},
		{"bools", []bson.Value{boolean(true), boolean(false), boolean(false), boolean(true), boolean(true)}, 0},
		{"nulls", []bson.Value{null(), null(), null()}, 0},
		{"decimals", []bson.Value{dec(1, 2), dec(1, 2), dec(3, 4)}, 0},
		{"nested docs", []bson.Value{doc("a", 1), doc("a", 1), doc("a", 2), doc("b", 2)}, 0},
		{"missing only", []bson.Value{missing, missing, missing}, 0},
		{"missing around", []bson.Value{missing, i32(1), missing, missing, i32(2), missing, dbl(1.5), missing, dbl(2.5), str("s"), missing, str("s"), missing}, 0},
		{"types interleaved", []bson.Value{i32(1), i64(1), dbl(1), date(1), str("1"), boolean(true), null(), oid(1, 1, 1), doc("x", 1), i32(2)}, 0},
		{"many skips", seq(3000, func(i int) bson.Value {
			if i%7 == 0 {
				return i64(int64(i))
			}
			return missing
		}), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			col, err := Encode(tt.vals)
			if err != nil {
				t.Fatal(err)
			}
			if tt.maxBytes > 0 && len(col) > tt.maxBytes {
				t.Errorf("encoded %d values into %d bytes, want at most %d", len(tt.vals), len(col), tt.maxBytes)
			}
			got, err := Decode(nil, col)
			if err != nil {
				t.Fatalf("decode: %v (column %x)", err, col)
			}
			if len(got) != len(tt.vals) {
				t.Fatalf("decoded %d values, want %d", len(got), len(tt.vals))
			}
			for i := range got {
				if got[i].Type != tt.vals[i].Type || !bytes.Equal(got[i].Data, tt.vals[i].Data) {
					t.Fatalf("value %d: got %v (%x), want %v (%x)", i, got[i], got[i].Data, tt.vals[i], tt.vals[i].Data)
				}
			}
		})
	}
}

func TestEncodeUnsupported(t *testing.T) {
	for _, v := range []bson.Value{val(func(b *bson.Builder) { b.AppendMinKey("v") }), val(func(b *bson.Builder) { b.AppendMaxKey("v") })} {
		if _, err := Encode([]bson.Value{i32(1), v}); err == nil {
			t.Errorf("Encode(%v) succeeded", v.Type)
		}
	}
}

// TestDecodeMongod decodes columns laid out by hand as mongod writes them:
// run-length and extended-selector blocks, which Encode does not write.
func TestDecodeMongod(t *testing.T) {
	lit := []byte{byte(bson.TypeInt64), 0, 10, 0, 0, 0, 0, 0, 0, 0}
	block := func(words ...uint64) []byte {
		b := []byte{0x80 | byte(len(words)-1)}
		for _, w := range words {
			b = binary.LittleEndian.AppendUint64(b, w)
		}
		return b
	}
	tests := []struct {
		name string
		col  []byte
		want []int64 // -1: missing
	}{
		// selector 14: one 60-bit slot holding zigzag(+5) = 10.
		{"selector 14", append(append(append([]byte{}, lit...), block(14|10<<4)...), 0), []int64{10, 15}},
		// selector 1 then RLE: 60 zero deltas, then 120 repeats of the last slot.
		{"rle", append(append(append([]byte{}, lit...), block(1, rleSelector)...), 0), append([]int64{10}, repeat(10, 180)...)},
		// selector 7 extension 1: 2 value bits, 4 count bits; slot value 1
		// shifted by 4 zeros = 16 = zigzag(8): +8, then 8 missing slots.
		{"selector 7 extended", append(append(append([]byte{}, lit...), block(7|1<<4|(1<<4|4)<<8|(1<<48-1)<<14)...), 0),
			[]int64{10, 18, -1, -1, -1, -1, -1, -1, -1, -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Decode(nil, tt.col)
			if err != nil {
				t.Fatal(err)
			}
			var ns []int64
			for _, v := range got {
				if v.Type == 0 {
					ns = append(ns, -1)
				} else {
					ns = append(ns, v.Int64())
				}
			}
			if len(ns) != len(tt.want) {
				t.Fatalf("got %d values %v, want %d", len(ns), ns, len(tt.want))
			}
			for i := range ns {
				if ns[i] != tt.want[i] {
					t.Fatalf("value %d: got %d, want %d (all: %v)", i, ns[i], tt.want[i], ns)
				}
			}
		})
	}
}

func repeat(n int64, k int) []int64 {
	out := make([]int64, k)
	for i := range out {
		out[i] = n
	}
	return out
}

func TestDecodeErrors(t *testing.T) {
	for _, col := range [][]byte{
		nil,
		{0x80},
		{byte(bson.TypeInt32), 0, 1},
		{byte(bson.TypeInt32), 'a', 0, 1, 0, 0, 0, 0},
		{0xF1, 0},
		{0xE0, 0},
		{byte(bson.TypeString), 0, 2, 0, 0, 0, 'a', 0, 0x80, 14 | 4<<4, 0, 0, 0, 0, 0, 0, 0, 0},
	} {
		if _, err := Decode(nil, col); err == nil {
			t.Errorf("Decode(%x) succeeded", col)
		}
	}
}

func FuzzDecode(f *testing.F) {
	for _, vals := range [][]bson.Value{
		{i32(1), i32(2), missing, i32(9)},
		seq(200, func(i int) bson.Value { return dbl(float64(i) / 4) }),
		seq(100, func(i int) bson.Value { return date(int64(i) * 1000) }),
		seq(100, func(i int) bson.Value { return oid(uint32(i), 3, uint32(i)) }),
		{str("a"), str("a"), doc("x", 1), boolean(true), boolean(false)},
	} {
		col, err := Encode(vals)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(col)
	}
	f.Fuzz(func(t *testing.T, col []byte) {
		vals, err := Decode(nil, col)
		if err != nil {
			return
		}
		// What decodes re-encodes to the same values.
		again, err := Encode(vals)
		if err != nil {
			return // MinKey and the like
		}
		vals2, err := Decode(nil, again)
		if err != nil {
			t.Fatalf("re-encoded column does not decode: %v", err)
		}
		if len(vals2) != len(vals) {
			t.Fatalf("re-encoded %d values, decoded %d", len(vals), len(vals2))
		}
		for i := range vals {
			if vals[i].Type != vals2[i].Type || !bytes.Equal(vals[i].Data, vals2[i].Data) {
				t.Fatalf("value %d changed: %v -> %v", i, vals[i], vals2[i])
			}
		}
	})
}

func BenchmarkDecode(b *testing.B) {
	vals := seq(1000, func(i int) bson.Value { return dbl(math.Round((20+math.Sin(float64(i)/10))*100) / 100) })
	col, err := Encode(vals)
	if err != nil {
		b.Fatal(err)
	}
	var dst []bson.Value
	var d Decoder
	b.ReportAllocs()
	for b.Loop() {
		dst, err = d.Decode(dst[:0], col)
		if err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncode(b *testing.B) {
	vals := seq(1000, func(i int) bson.Value { return dbl(math.Round((20+math.Sin(float64(i)/10))*100) / 100) })
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Encode(vals); err != nil {
			b.Fatal(err)
		}
	}
}
