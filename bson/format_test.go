package bson

import (
	"math"
	"strings"
	"testing"
)

func TestValueString(t *testing.T) {
	oid := [12]byte{0x5f, 0x1d, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}
	cases := []struct {
		v    Value
		want string
	}{
		{vInt32(1), "1"},
		{vInt64(-5), "-5"},
		{vDouble(1), "1.0"},
		{vDouble(2.5), "2.5"},
		{vDouble(0.1), "0.1"},
		{vDouble(1e20), "1e+20.0"},
		{vDouble(math.Inf(1)), "inf.0"},
		{vDouble(math.NaN()), "nan.0"},
		{vDecimal("1.50"), "1.50"},
		{vBin(4, []byte{0x73, 0xff, 0xd2, 0x64, 0x44, 0xb3, 0x4c, 0x69, 0x90, 0xe8, 0xe7, 0xd1, 0xdf, 0xc0, 0x35, 0xd4}), `UUID("73ffd264-44b3-4c69-90e8-e7d1dfc035d4")`},
		{vBin(2, []byte{2, 0, 0, 0, 0xab, 0xcd}), "BinData(2, ABCD)"},
		{vDBPointer("db.c", oid), "DBRef('db.c',5f1d00000000000000000001)"},
		{vCode("function(){}"), "function(){}"},
		{vString("abc"), `"abc"`},
		{vSymbol("s"), `"s"`},
		{vDoc(docOf("a", vInt32(1), "b", vString("x"))), `{ a: 1, b: "x" }`},
		{vDoc(docOf()), "{}"},
		{vArray(arrOf(vInt32(1), vInt32(2))), "[ 1, 2 ]"},
		{vArray(arrOf()), "[]"},
		{vOID(oid), "ObjectId('5f1d00000000000000000001')"},
		{vBool(true), "true"},
		{vDate(1000), "new Date(1000)"},
		{vNull, "null"},
		{vUndefined, "undefined"},
		{vMinKey, "MinKey"},
		{vMaxKey, "MaxKey"},
		{vTS(1, 2), "Timestamp(1, 2)"},
		{vBin(0, []byte("Hi")), "BinData(0, 4869)"},
		{vRegex("^a", "i"), "/^a/i"},
		{vMissing, "EOO"},
	}
	for _, c := range cases {
		if got := c.v.String(); got != c.want {
			t.Errorf("String() = %s, want %s", got, c.want)
		}
	}
	long := vString(strings.Repeat("x", 200))
	if s := long.String(); len(s) != 150+5 || !strings.HasSuffix(s, `..."`) {
		t.Errorf("long string printed as %d bytes: %s", len(s), s)
	}
	if s := docOf("_id", vInt32(1)).String(); s != "{ _id: 1 }" {
		t.Errorf("Doc.String = %s", s)
	}
}
