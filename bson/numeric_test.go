package bson

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// refNumber is an independent exact model of a BSON number for checking
// compareNumbers: class (as the num* constants) and exact rational value.
func refNumber(v Value) (uint8, *big.Rat) {
	switch v.Type {
	case TypeInt32:
		return refClass(new(big.Rat).SetInt64(int64(v.Int32())))
	case TypeInt64:
		return refClass(new(big.Rat).SetInt64(v.Int64()))
	case TypeDouble:
		f := v.Double()
		switch {
		case math.IsNaN(f):
			return numNaN, nil
		case math.IsInf(f, 1):
			return numPosInf, nil
		case math.IsInf(f, -1):
			return numNegInf, nil
		}
		return refClass(new(big.Rat).SetFloat64(f))
	case TypeDecimal128:
		hi, lo := v.Decimal128()
		neg, coef, exp, kind := DecimalParts(hi, lo)
		switch {
		case kind == 2:
			return numNaN, nil
		case kind == 1 && neg:
			return numNegInf, nil
		case kind == 1:
			return numPosInf, nil
		}
		r := new(big.Rat).SetInt(coef)
		p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(max(exp, -exp))), nil)
		if exp >= 0 {
			r.Mul(r, new(big.Rat).SetInt(p))
		} else {
			r.Quo(r, new(big.Rat).SetInt(p))
		}
		if neg {
			r.Neg(r)
		}
		return refClass(r)
	}
	panic("not a number")
}

func refClass(r *big.Rat) (uint8, *big.Rat) {
	switch r.Sign() {
	case 0:
		return numZero, r
	case 1:
		return numPos, r
	}
	return numNeg, r
}

func refCompare(a, b Value) int {
	ca, ra := refNumber(a)
	cb, rb := refNumber(b)
	if ca != cb {
		if (ca == numNeg || ca == numZero || ca == numPos) && (cb == numNeg || cb == numZero || cb == numPos) {
			return ra.Cmp(rb)
		}
		return cmpInt(int(ca), int(cb))
	}
	if ra == nil {
		return 0
	}
	return ra.Cmp(rb)
}

func TestCompareNumbersAgainstReference(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	var vals []Value
	for _, f := range specialFloats {
		vals = append(vals, vDouble(f), vDouble(math.Nextafter(f, math.Inf(1))))
	}
	for _, n := range specialInts {
		vals = append(vals, vInt64(n), vDouble(float64(n)))
		if n >= math.MinInt32 && n <= math.MaxInt32 {
			vals = append(vals, vInt32(int32(n)))
		}
	}
	for _, s := range specialDecimals {
		vals = append(vals, vDecimal(s))
	}
	for i := 0; i < 300; i++ {
		vals = append(vals, randNumber(r))
	}
	for _, a := range vals {
		for _, b := range vals {
			if got, want := Compare(a, b), refCompare(a, b); got != want {
				t.Fatalf("Compare(%s %s, %s %s) = %d, reference %d", a.Type, a, b.Type, b, got, want)
			}
		}
	}
}

func TestExactDigits(t *testing.T) {
	cases := []struct {
		v      Value
		digits string
		exp    int
		class  uint8
	}{
		{vInt32(120), "12", 3, numPos},
		{vInt64(math.MinInt64), "9223372036854775808", 19, numNeg},
		{vDouble(0.5), "5", 0, numPos},
		{vDouble(0.1), "1000000000000000055511151231257827021181583404541015625", 0, numPos},
		{vDouble(1 << 70), "1180591620717411303424", 22, numPos},
		{vDecimal("-1.2300E+5"), "123", 6, numNeg},
		{vDecimal("0.00"), "", 0, numZero},
	}
	for _, c := range cases {
		d, class, exp := appendExactDigits(nil, c.v)
		if string(d) != c.digits || class != c.class || (class == numPos || class == numNeg) && exp != c.exp {
			t.Errorf("%s: digits %s exp %d class %d; want %s %d %d", c.v, d, exp, class, c.digits, c.exp, c.class)
		}
	}
	// The smallest subnormal has 751 significant digits.
	d, _, exp := appendExactDigits(nil, vDouble(math.SmallestNonzeroFloat64))
	if len(d) != 751 || exp != -323 || string(d[:10]) != "4940656458" {
		t.Errorf("smallest subnormal: %d digits, exp %d, %s...", len(d), exp, d[:10])
	}
}

func TestScaledKeyMatchesDigitKey(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	var vals []Value
	for _, f := range specialFloats {
		vals = append(vals, vDouble(f))
	}
	for _, n := range specialInts {
		vals = append(vals, vInt64(n))
	}
	for _, s := range specialDecimals {
		vals = append(vals, vDecimal(s))
	}
	for i := 0; i < 5000; i++ {
		vals = append(vals, randNumber(r))
	}
	fast := 0
	for _, v := range vals {
		if _, ok := smallNumber(v); !ok {
			continue
		}
		fast++
		a := appendNumberKey(nil, v)
		b := appendNumberKeyDigits(nil, v)
		if string(a) != string(b) {
			t.Fatalf("%s %s: fast key %x, digit key %x", v.Type, v, a, b)
		}
	}
	if fast < 1000 {
		t.Fatalf("only %d values took the fast path", fast)
	}
}
