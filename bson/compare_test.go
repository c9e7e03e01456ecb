package bson

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// orderedGroups lists values in ascending MongoDB order; values within a group
// are equal. It covers every type and the numeric edge cases.
func orderedGroups() [][]Value {
	oid0, oid1 := [12]byte{}, [12]byte{11: 1}
	oidFF := [12]byte{0: 0xff}
	return [][]Value{
		{vMissing},
		{vMinKey},
		{vUndefined},
		{vNull},
		// Numbers.
		{vDouble(math.NaN()), vDecimal("NaN"), vDecimal("-NaN"), vDouble(-math.NaN())},
		{vDouble(math.Inf(-1)), vDecimal("-Infinity")},
		{vDecimal("-9.999999999999999999999999999999999E+6144")},
		{vDouble(-math.MaxFloat64)},
		{vDouble(-1 << 64)},
		{vDecimal("-9223372036854775809")},
		{vInt64(math.MinInt64), vDouble(-1 << 63), vDecimal("-9223372036854775808")},
		{vInt64(math.MinInt64 + 1)},
		{vInt64(-(1<<53 + 1)), vDecimal("-9007199254740993")},
		{vInt64(-(1 << 53)), vDouble(-(1 << 53))},
		{vInt32(math.MinInt32), vInt64(math.MinInt32), vDouble(math.MinInt32)},
		{vInt32(-1), vInt64(-1), vDouble(-1), vDecimal("-1"), vDecimal("-1.000"), vDecimal("-0.1E1")},
		{vDouble(-0.5), vDecimal("-0.5")},
		{vDouble(-0.1)},
		{vDecimal("-0.1000000000000000055511151231257827")},
		{vDecimal("-0.1")},
		{vDouble(-math.SmallestNonzeroFloat64)},
		{vDecimal("-1E-6176")},
		{vInt32(0), vInt64(0), vDouble(0), vDouble(math.Copysign(0, -1)), vDecimal("0"), vDecimal("-0"), vDecimal("0E+300"), vDecimal("-0E-6176")},
		{vDecimal("1E-6176")},
		{vDecimal("4.940656458412465441765687928682213E-324")}, // just below the exact 4.94065645841246544176568792868221372e-324
		{vDouble(math.SmallestNonzeroFloat64)},
		{vDecimal("0.1")},
		{vDecimal("0.1000000000000000055511151231257827")},
		{vDouble(0.1)},
		{vDecimal("0.1000000000000000055511151231257828")},
		{vDouble(0.5), vDecimal("0.5"), vDecimal("5E-1"), vDecimal("0.50000")},
		{vInt32(1), vInt64(1), vDouble(1), vDecimal("1"), vDecimal("1.0"), vDecimal("0.001E3"), vDecimal("1.000000000000000000000000000000000")},
		{vDouble(1.0000000000000002)},
		{vInt32(2), vDouble(2)},
		{vInt32(math.MaxInt32), vInt64(math.MaxInt32), vDouble(math.MaxInt32), vDecimal("2147483647")},
		{vInt64(math.MaxInt32 + 1), vDouble(math.MaxInt32 + 1)},
		{vInt64(1 << 53), vDouble(1 << 53), vDecimal("9007199254740992")},
		{vInt64(1<<53 + 1), vDecimal("9007199254740993")},
		{vInt64(1<<53 + 2), vDouble(1<<53 + 2)},
		{vInt64(math.MaxInt64 - 1)},
		{vInt64(math.MaxInt64), vDecimal("9223372036854775807")},
		{vDouble(1 << 63), vDecimal("9223372036854775808"), vDecimal("9.223372036854775808E+18")},
		{vDouble(1 << 64), vDecimal("18446744073709551616")},
		{vDecimal("1E+308")},
		{vDouble(1e308)}, // exactly 1.00000000000000001097906362944045541740492309677311846336810682903157585404911491537163328978494688899061249669721172515611590283743140088328307009198146046031271664502933027185697489699588559043338384466165001178426897626212945177628091195786707458122783970171784415105291802893207873272974885715430223118336e308
		{vDouble(math.MaxFloat64)},
		{vDecimal("1E+6144")},
		{vDecimal("9.999999999999999999999999999999999E+6144")},
		{vDouble(math.Inf(1)), vDecimal("Infinity")},
		// Strings and symbols.
		{vString(""), vSymbol("")},
		{vString("\x00")},
		{vString("A")},
		{vString("a"), vSymbol("a")},
		{vString("a\x00")},
		{vString("a\x00b")},
		{vString("ab")},
		{vString("b")},
		{vString("é")},
		{vString("\xff")},
		// Objects: rank, then field name, then value.
		{vDoc(docOf())},
		{vDoc(docOf("a", vMinKey))},
		{vDoc(docOf("b", vMinKey))},
		{vDoc(docOf("a", vNull))},
		{vDoc(docOf("a", vInt32(1))), vDoc(docOf("a", vDouble(1)))},
		{vDoc(docOf("a", vInt32(1), "b", vInt32(1)))},
		{vDoc(docOf("a", vInt32(2)))},
		{vDoc(docOf("b", vInt32(1)))},
		{vDoc(docOf("a", vString("x"))), vDoc(docOf("a", vSymbol("x")))},
		{vDoc(docOf("a", vDoc(docOf())))},
		{vDoc(docOf("a", vArray(arrOf())))},
		// Arrays.
		{vArray(arrOf())},
		{vArray(arrOf(vNull))},
		{vArray(arrOf(vInt32(1))), vArray(arrOf(vInt64(1)))},
		{vArray(arrOf(vInt32(1), vInt32(2)))},
		{vArray(arrOf(vInt32(2)))},
		{vArray(arrOf(vString("a")))},
		{vArray(arrOf(vDoc(docOf())))},
		{vArray(arrOf(vArray(arrOf())))},
		// Binary: length, then subtype, then bytes.
		{vBin(0, nil)},
		{vBin(5, nil)},
		{vBin(0, []byte{0xff})},
		{vBin(4, []byte{0})},
		{vBin(0, []byte{0, 0})},
		{vBin(0, []byte{0, 1})},
		{vOID(oid0)},
		{vOID(oid1)},
		{vOID(oidFF)},
		{vBool(false)},
		{vBool(true)},
		{vDate(math.MinInt64)},
		{vDate(-1)},
		{vDate(0)},
		{vDate(1)},
		{vDate(math.MaxInt64)},
		{vTS(0, 0)},
		{vTS(0, 1)},
		{vTS(1, 0)},
		{vTS(math.MaxUint32, 0)},
		{vRegex("a", "")},
		{vRegex("a", "i")},
		{vRegex("ab", "")},
		{vRegex("b", "")},
		{vDBPointer("a", oid0)},
		{vDBPointer("a", oid1)},
		{vDBPointer("b", oid0)},
		{vDBPointer("aa", oid0)},
		{vCode("")},
		{vCode("a")},
		{vCode("b")},
		{vCodeScope("a", docOf())},
		{vCodeScope("a", docOf("x", vInt32(1))), vCodeScope("a", docOf("x", vDouble(1)))},
		{vCodeScope("b", docOf())},
		{vMaxKey},
	}
}

func TestCompareOrder(t *testing.T) {
	groups := orderedGroups()
	type item struct {
		g int
		v Value
	}
	var all []item
	for g, vs := range groups {
		for _, v := range vs {
			all = append(all, item{g, v})
		}
	}
	for _, a := range all {
		for _, b := range all {
			want := cmpInt(a.g, b.g)
			if got := Compare(a.v, b.v); got != want {
				t.Errorf("Compare(%s %s, %s %s) = %d, want %d", a.v.Type, a.v, b.v.Type, b.v, got, want)
			}
			if got := Equal(a.v, b.v); got != (want == 0) {
				t.Errorf("Equal(%s, %s) = %v", a.v, b.v, got)
			}
			ka, kb := AppendKey(nil, a.v, false), AppendKey(nil, b.v, false)
			if got := bytes.Compare(ka, kb); got != want {
				t.Errorf("key order (%s %s, %s %s) = %d, want %d\n%x\n%x", a.v.Type, a.v, b.v.Type, b.v, got, want, ka, kb)
			}
			da, db := AppendKey(nil, a.v, true), AppendKey(nil, b.v, true)
			if got := bytes.Compare(da, db); got != -want {
				t.Errorf("desc key order (%s, %s) = %d, want %d", a.v, b.v, got, -want)
			}
		}
	}
}

func TestCanonicalRank(t *testing.T) {
	order := []Type{0, TypeMinKey, TypeUndefined, TypeNull, TypeDouble, TypeString, TypeDocument, TypeArray,
		TypeBinary, TypeObjectID, TypeBoolean, TypeDateTime, TypeTimestamp, TypeRegex, TypeDBPointer,
		TypeJavaScript, TypeCodeWithScope, TypeMaxKey}
	for i := 1; i < len(order); i++ {
		if CanonicalRank(order[i-1]) >= CanonicalRank(order[i]) {
			t.Errorf("rank(%s) >= rank(%s)", order[i-1], order[i])
		}
	}
	for _, n := range []Type{TypeInt32, TypeInt64, TypeDecimal128} {
		if CanonicalRank(n) != CanonicalRank(TypeDouble) {
			t.Errorf("rank(%s) differs from double", n)
		}
	}
	if CanonicalRank(TypeSymbol) != CanonicalRank(TypeString) {
		t.Error("symbol and string ranks differ")
	}
}

func TestCompareDocs(t *testing.T) {
	a := docOf("a", vInt32(1), "b", vString("x"))
	b := docOf("a", vDouble(1), "b", vSymbol("x"))
	if CompareDocs(a, b) != 0 {
		t.Error("equal documents compare unequal")
	}
	if CompareDocs(a, docOf("a", vInt32(1))) != 1 || CompareDocs(EmptyDoc, a) != -1 {
		t.Error("prefix ordering wrong")
	}
}

// foldComparer compares ASCII case-insensitively, as a stand-in collation.
type foldComparer struct{}

func (foldComparer) CompareStrings(a, b string) int {
	return strings.Compare(strings.ToLower(a), strings.ToLower(b))
}

func (foldComparer) Key(dst []byte, s string) []byte {
	return append(dst, strings.ToLower(s)...)
}

func TestCompareCollated(t *testing.T) {
	c := foldComparer{}
	cases := []struct {
		a, b Value
		want int
	}{
		{vString("ABC"), vString("abc"), 0},
		{vString("ABC"), vSymbol("abd"), -1},
		{vDoc(docOf("k", vString("X"))), vDoc(docOf("k", vString("x"))), 0},
		{vArray(arrOf(vString("B"))), vArray(arrOf(vString("a"))), 1},
		{vDoc(docOf("K", vString("x"))), vDoc(docOf("k", vString("x"))), -1}, // field names stay binary
		{vRegex("A", ""), vRegex("a", ""), -1},                               // regexes stay binary
		{vCode("A"), vCode("a"), -1},                                         // code stays binary
		{vCodeScope("f", docOf("s", vString("A"))), vCodeScope("f", docOf("s", vString("a"))), -1},
	}
	for _, tc := range cases {
		if got := CompareCollated(tc.a, tc.b, c); got != tc.want {
			t.Errorf("CompareCollated(%s, %s) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		ka := AppendKeyCollated(nil, tc.a, false, c)
		kb := AppendKeyCollated(nil, tc.b, false, c)
		if got := bytes.Compare(ka, kb); got != tc.want {
			t.Errorf("collated keys (%s, %s) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
	if CompareCollated(vString("A"), vString("a"), nil) != -1 {
		t.Error("nil comparer is not binary")
	}
}

// zeroKeyer returns sort keys full of zero bytes, to exercise escaping.
type zeroKeyer struct{}

func (zeroKeyer) Key(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		dst = append(dst, 0, s[i], 0)
	}
	return dst
}

func TestCollatedKeyEscaping(t *testing.T) {
	strs := []string{"", "a", "ab", "b", "\x00", "a\x00"}
	for _, a := range strs {
		for _, b := range strs {
			ka := AppendKeyCollated([]byte{9}, vString(a), false, zeroKeyer{})
			kb := AppendKeyCollated([]byte{9}, vString(b), false, zeroKeyer{})
			want := bytes.Compare(zeroKeyer{}.Key(nil, a), zeroKeyer{}.Key(nil, b))
			if got := bytes.Compare(ka, kb); got != want {
				t.Errorf("%q vs %q: %d, want %d (%x %x)", a, b, got, want, ka, kb)
			}
		}
	}
	if _, _, err := DecodeKey(AppendKeyCollated(nil, vString("a"), false, zeroKeyer{})); err == nil {
		t.Error("collated key decoded")
	}
}

func TestCompareRandomConsistency(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	vals := make([]Value, 400)
	for i := range vals {
		vals[i] = randValue(r, 3)
	}
	for _, a := range vals {
		if Compare(a, a) != 0 {
			t.Fatalf("Compare(%s, itself) != 0", a)
		}
		for _, b := range vals {
			ab, ba := Compare(a, b), Compare(b, a)
			if ab != -ba {
				t.Fatalf("antisymmetry: Compare(%s, %s)=%d, reverse %d", a, b, ab, ba)
			}
		}
	}
}

func TestCompareNoAlloc(t *testing.T) {
	a, b := vInt32(1), vInt32(2)
	s1, s2 := vString("hello"), vString("help")
	d1, d2 := vDouble(0.1), vDecimal("0.1")
	doc1 := vDoc(docOf("a", vInt32(1), "b", vString("x")))
	doc2 := vDoc(docOf("a", vInt32(1), "b", vString("y")))
	l, f := vInt64(math.MaxInt64), vDouble(1<<63)
	n := testing.AllocsPerRun(100, func() {
		Compare(a, b)
		Compare(s1, s2)
		Compare(d1, d2)
		Compare(doc1, doc2)
		Compare(l, f)
	})
	if n != 0 {
		t.Fatalf("Compare allocates %v times", n)
	}
	buf := make([]byte, 0, 4096)
	vals := []Value{a, s1, d1, d2, doc1, vDouble(math.SmallestNonzeroFloat64), vDouble(math.MaxFloat64)}
	n = testing.AllocsPerRun(100, func() {
		for _, v := range vals {
			buf = AppendKey(buf[:0], v, true)
		}
	})
	if n != 0 {
		t.Fatalf("AppendKey allocates %v times", n)
	}
}
