package bson

import (
	"errors"
	"math"
	"testing"
)

func TestParseFormatDecimal128(t *testing.T) {
	cases := []struct{ in, out string }{
		{"0", "0"},
		{"-0", "-0"},
		{"1.23E+5", "1.23E+5"},
		{"123000", "123000"},
		{"0.001", "0.001"},
		{"0.0000001", "1E-7"},
		{"1.000", "1.000"},
		{"+12.76", "12.76"},
		{".5", "0.5"},
		{"1E+6144", "1.000000000000000000000000000000000E+6144"}, // clamped: coefficient padded
		{"0E+9999", "0E+6111"},
		{"0E-9999", "0E-6176"},
		{"1.1111111111111111111111111111123450", "1.111111111111111111111111111112345"},
		{"inf", "Infinity"},
		{"-Infinity", "-Infinity"},
		{"nan", "NaN"},
		{"-NaN", "NaN"},
		{"9.999999999999999999999999999999999E+6144", "9.999999999999999999999999999999999E+6144"},
		{"1E-6176", "1E-6176"},
		{"10E-6177", "1E-6176"},
	}
	for _, c := range cases {
		hi, lo, err := ParseDecimal128(c.in)
		if err != nil {
			t.Errorf("ParseDecimal128(%q): %v", c.in, err)
			continue
		}
		if got := FormatDecimal128(hi, lo); got != c.out {
			t.Errorf("FormatDecimal128(ParseDecimal128(%q)) = %q, want %q", c.in, got, c.out)
		}
	}
	for _, bad := range []string{"", "1e", "E1", "1.2.3", " 1", "1E-6177", "1E+6145", "12345678901234567890123456789012345", "Infinit", "0x10"} {
		if _, _, err := ParseDecimal128(bad); err == nil {
			t.Errorf("ParseDecimal128(%q) succeeded", bad)
		}
	}
	_, _, err := ParseDecimal128("1E-6177")
	if !errors.Is(err, ErrDecimal128Inexact) {
		t.Errorf("inexact error = %v", err)
	}
}

func TestDecimal128FromInt64(t *testing.T) {
	for _, n := range []int64{0, 1, -1, math.MaxInt64, math.MinInt64} {
		hi, lo := Decimal128FromInt64(n)
		if Compare(decimalValue(hi, lo), vInt64(n)) != 0 {
			t.Errorf("Decimal128FromInt64(%d) = %s", n, FormatDecimal128(hi, lo))
		}
	}
	hi, lo := Decimal128FromInt64(math.MinInt64)
	if s := FormatDecimal128(hi, lo); s != "-9223372036854775808" {
		t.Errorf("MinInt64 = %s", s)
	}
}

func TestDecimal128FromFloat64(t *testing.T) {
	cases := []struct {
		f    float64
		want string
	}{
		{2.5, "2.50000000000000"},
		{0.1, "0.100000000000000"},
		{1, "1.00000000000000"},
		{-1.5, "-1.50000000000000"},
		{1e20, "1.00000000000000E+20"},
		{123456789012345678, "1.23456789012346E+17"},
		{0.30000000000000004, "0.300000000000000"},
		{9.9999999999999995, "10.0000000000000"},
		{0, "0"},
		{math.Copysign(0, -1), "-0"},
		{math.Inf(1), "Infinity"},
		{math.Inf(-1), "-Infinity"},
		{math.NaN(), "NaN"},
		{math.SmallestNonzeroFloat64, "4.94065645841247E-324"},
		{0.125, "0.125000000000000"},
		{2.0000000000000005, "2.00000000000000"},
	}
	for _, c := range cases {
		hi, lo := Decimal128FromFloat64(c.f)
		if got := FormatDecimal128(hi, lo); got != c.want {
			t.Errorf("Decimal128FromFloat64(%v) = %s, want %s", c.f, got, c.want)
		}
	}
}

func TestDecimal128ToFloat64(t *testing.T) {
	for _, s := range []string{"0.1", "1E+400", "-1E-400", "123.456"} {
		hi, lo, _ := ParseDecimal128(s)
		got := Decimal128ToFloat64(hi, lo)
		want := map[string]float64{"0.1": 0.1, "1E+400": math.Inf(1), "-1E-400": math.Copysign(0, -1), "123.456": 123.456}[s]
		if got != want || math.Signbit(got) != math.Signbit(want) {
			t.Errorf("Decimal128ToFloat64(%s) = %v, want %v", s, got, want)
		}
	}
	// A non-canonical coefficient (above 10^34-1) reads as zero.
	if f := Decimal128ToFloat64(0x3041ed09bead87c0, 0x378d8e6400000000); f != 0 {
		t.Errorf("non-canonical decimal = %v", f)
	}
}

func TestCompareDecimal128(t *testing.T) {
	a1, a0, _ := ParseDecimal128("1.0")
	b1, b0, _ := ParseDecimal128("1.00")
	c1, c0, _ := ParseDecimal128("NaN")
	if CompareDecimal128(a1, a0, b1, b0) != 0 || CompareDecimal128(c1, c0, a1, a0) != -1 {
		t.Error("CompareDecimal128 wrong")
	}
}

func TestRoundDigits(t *testing.T) {
	cases := []struct {
		in     string
		exp, n int
		out    string
		outExp int
	}{
		{"125", 1, 2, "12", 1},   // tie to even (down)
		{"135", 1, 2, "14", 1},   // tie to even (up)
		{"1251", 1, 2, "13", 1},  // above the tie
		{"995", 3, 2, "1", 4},    // carry out
		{"1049", 0, 3, "105", 0}, // no trailing zero kept
		{"12", 0, 5, "12", 0},
		{"4999999999999999999", 0, 1, "5", 0},
	}
	for _, c := range cases {
		d, e := roundDigits([]byte(c.in), c.exp, c.n)
		if string(d) != c.out || e != c.outExp {
			t.Errorf("roundDigits(%s, %d, %d) = %s, %d; want %s, %d", c.in, c.exp, c.n, d, e, c.out, c.outExp)
		}
	}
}
