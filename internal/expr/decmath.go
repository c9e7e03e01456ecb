package expr

import (
	"math"
	"math/big"
)

// Decimal transcendental functions computed with 256-bit binary floating
// point and rounded to 34 significant digits, so decimal $exp, $ln, $log,
// $log10 and $pow agree with a correctly rounded decimal128 library.

const decPrec = 256

func bigf() *big.Float { return new(big.Float).SetPrec(decPrec) }

// decToBig converts a finite decimal to a big.Float.
func decToBig(d dec) *big.Float {
	f := bigf().SetInt(d.coef)
	if d.exp != 0 {
		p := bigf().SetInt(pow10(abs(d.exp)))
		if d.exp < 0 {
			f.Quo(f, p)
		} else {
			f.Mul(f, p)
		}
	}
	if d.neg {
		f.Neg(f)
	}
	return f
}

var (
	bigLn2  = computeLn2()
	bigLn10 = func() *big.Float { return bigLn(bigf().SetInt64(10)) }()
)

// atanhSeries computes 2*atanh(z) = ln((1+z)/(1-z)) for |z| < 1/2.
func atanhSeries(z *big.Float) *big.Float {
	sum := bigf().Set(z)
	z2 := bigf().Mul(z, z)
	term := bigf().Set(z)
	eps := bigf().SetMantExp(big.NewFloat(1), -decPrec-8)
	for n := int64(3); n < 2000; n += 2 {
		term.Mul(term, z2)
		t := bigf().Quo(term, bigf().SetInt64(n))
		sum.Add(sum, t)
		if t.Sign() == 0 || bigf().Abs(t).Cmp(eps) < 0 {
			break
		}
	}
	return sum.Mul(sum, bigf().SetInt64(2))
}

func computeLn2() *big.Float {
	// ln 2 = 2*atanh(1/3)
	return atanhSeries(bigf().Quo(bigf().SetInt64(1), bigf().SetInt64(3)))
}

// bigLn computes ln x for x > 0.
func bigLn(x *big.Float) *big.Float {
	m := bigf()
	k := x.MantExp(m) // x = m * 2^k, m in [0.5, 1)
	// ln m = 2*atanh((m-1)/(m+1))
	z := bigf().Quo(bigf().Sub(m, bigf().SetInt64(1)), bigf().Add(m, bigf().SetInt64(1)))
	r := atanhSeries(z)
	return r.Add(r, bigf().Mul(bigLn2, bigf().SetInt64(int64(k))))
}

// bigExp computes e^x; ok is false when the result overflows decimal128.
func bigExp(x *big.Float) (*big.Float, bool) {
	xf, _ := x.Float64()
	if xf > 14200 {
		return nil, false
	}
	if xf < -14300 {
		return bigf(), true
	}
	// x = k ln2 + r, |r| <= ln2/2
	kf := bigf().Quo(x, bigLn2)
	ki, _ := kf.Float64()
	k := int64(math.Round(ki))
	r := bigf().Sub(x, bigf().Mul(bigLn2, bigf().SetInt64(k)))
	sum := bigf().SetInt64(1)
	term := bigf().SetInt64(1)
	eps := bigf().SetMantExp(big.NewFloat(1), -decPrec-8)
	for n := int64(1); n < 500; n++ {
		term.Mul(term, r)
		term.Quo(term, bigf().SetInt64(n))
		sum.Add(sum, term)
		if term.Sign() == 0 || bigf().Abs(term).Cmp(eps) < 0 {
			break
		}
	}
	return sum.SetMantExp(sum, int(k)), true
}

func decInfOf(neg bool) dec { return dec{kind: decInf, neg: neg, coef: new(big.Int)} }

// decExp is e^d.
func decExp(d dec) dec {
	switch d.kind {
	case decNaN:
		return d
	case decInf:
		if d.neg {
			return dec{coef: new(big.Int)}
		}
		return d
	}
	r, ok := bigExp(decToBig(d))
	if !ok {
		return decInfOf(false)
	}
	return decFromBigFloat(r)
}

// decLn is ln d for d > 0 (NaN for negative, -Infinity for zero).
func decLn(d dec) dec {
	switch {
	case d.kind == decNaN:
		return d
	case d.neg && !d.isZero():
		return decNaNv
	case d.isZero():
		return decInfOf(true)
	case d.kind == decInf:
		return d
	}
	return decFromBigFloat(bigLn(decToBig(d)))
}

// decLogBase is log_b(d) = ln d / ln b.
func decLogBase(d dec, base *big.Float) dec {
	if d.kind != decFinite || d.neg || d.isZero() {
		return decLn(d)
	}
	return decFromBigFloat(bigf().Quo(bigLn(decToBig(d)), base))
}

// decPow is b^e for decimals: exact repeated multiplication for small
// integral exponents, exp(e ln b) otherwise.
func decPow(b, e dec) dec {
	if b.kind != decFinite || e.kind != decFinite {
		return decFromFloatFull(math.Pow(b.float(), e.float()))
	}
	if e.isInteger() {
		if n, ok := e.int64(roundTrunc); ok && n >= 0 && n <= 1000 {
			r := decFromInt(1)
			for i := int64(0); i < n; i++ {
				r = decMul(r, b)
			}
			return r
		}
		if n, ok := e.int64(roundTrunc); ok && n < 0 && n >= -1000 {
			r := decFromInt(1)
			for i := int64(0); i < -n; i++ {
				r = decMul(r, b)
			}
			return decDiv(decFromInt(1), r)
		}
	}
	if b.isZero() {
		if e.neg {
			return decInfOf(false)
		}
		return dec{coef: new(big.Int)}
	}
	if b.neg {
		if !e.isInteger() {
			return decNaNv
		}
		odd := false
		if n, ok := e.int64(roundTrunc); ok {
			odd = n%2 != 0
		}
		r := decPow(dec{coef: b.coef, exp: b.exp}, e)
		r.neg = odd
		return r
	}
	lnb := bigLn(decToBig(b))
	r, ok := bigExp(bigf().Mul(lnb, decToBig(e)))
	if !ok {
		return decInfOf(false)
	}
	return decFromBigFloat(r)
}

// repack rounds d to decimal128 precision (keeps intermediate results of
// repeated multiplication at 34 digits, as the decimal library does).
func repack(d dec) dec {
	hi, lo := d.pack()
	return decOf(valueDec(hi, lo))
}

// decLog10 is log10 d; exact for powers of ten.
func decLog10(d dec) dec {
	if d.kind == decFinite && !d.neg && !d.isZero() {
		c := new(big.Int).Set(d.coef)
		exp := d.exp
		r := new(big.Int)
		for {
			q, m := new(big.Int).QuoRem(c, bigTen, r)
			if m.Sign() != 0 {
				break
			}
			c = q
			exp++
		}
		if c.Cmp(big.NewInt(1)) == 0 {
			return decFromInt(int64(exp))
		}
	}
	return decLogBase(d, bigLn10)
}
