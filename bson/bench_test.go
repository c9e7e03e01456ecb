package bson

import (
	"math"
	"testing"
)

func BenchmarkCompare(b *testing.B) {
	cases := []struct {
		name string
		a, b Value
	}{
		{"int32", vInt32(1), vInt32(2)},
		{"string", vString("hello"), vString("help")},
		{"double", vDouble(1.5), vDouble(2.5)},
		{"int64-double", vInt64(math.MaxInt64), vDouble(1 << 63)},
		{"decimal-decimal", vDecimal("1.25"), vDecimal("1.26")},
		{"decimal-double", vDecimal("0.1"), vDouble(0.1)},
		{"doc", vDoc(docOf("a", vInt32(1), "b", vString("x"))), vDoc(docOf("a", vInt32(1), "b", vString("y")))},
		{"mixed-types", vString("x"), vInt32(1)},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Compare(c.a, c.b)
			}
		})
	}
}

func BenchmarkAppendKey(b *testing.B) {
	cases := []struct {
		name string
		v    Value
	}{
		{"int32", vInt32(123456)},
		{"int64", vInt64(math.MaxInt64)},
		{"double-1.5", vDouble(1.5)},
		{"double-0.1", vDouble(0.1)},
		{"double-subnormal", vDouble(math.SmallestNonzeroFloat64)},
		{"decimal", vDecimal("1234.5678")},
		{"string", vString("hello world")},
		{"objectid", vOID([12]byte{1, 2, 3})},
		{"doc", vDoc(docOf("a", vInt32(1), "b", vString("x")))},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			buf := make([]byte, 0, 1024)
			for b.Loop() {
				buf = AppendKey(buf[:0], c.v, false)
			}
		})
	}
}
