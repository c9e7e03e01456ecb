package bson

import (
	"bytes"
	"cmp"
	"math"
	"math/bits"
)

// Every int32, int64, double and decimal128 has a finite decimal expansion, so
// the exact value of any BSON number can be written as
//
//	sign × 0.d₁d₂…dₙ × 10^exp   (d₁ ≠ 0, dₙ ≠ 0)
//
// Comparing two such forms compares the numbers exactly, whatever their BSON
// types, and the order-preserving key encoding stores this form so that equal
// numbers of different types encode identically. This file computes the form
// without allocating.

// Numeric classes, in ascending order. MongoDB sorts NaN below every other
// number.
const (
	numNaN    uint8 = 1
	numNegInf uint8 = 2
	numNeg    uint8 = 3
	numZero   uint8 = 4
	numPos    uint8 = 5
	numPosInf uint8 = 6
)

// maxNumDigits bounds the digits appendExactDigits writes before trimming:
// a float64 fraction expands to at most 1074 digits (in 19-digit chunks), a
// decimal128 34, an int64 19.
const maxNumDigits = 1100

// decimalMaxCoef is the largest canonical decimal128 coefficient, 10^34-1, as
// its high and low 64-bit halves.
const (
	decimalMaxCoefHi = 0x0001ed09bead87c0
	decimalMaxCoefLo = 0x378d8e63ffffffff
)

// limbs is a little-endian big natural number sized for the integers a
// float64 can hold (below 2^1024).
type limbs struct {
	n int
	w [18]uint64
}

func (z *limbs) setUint64(x uint64) {
	z.n = 0
	if x != 0 {
		z.w[0] = x
		z.n = 1
	}
}

// shl shifts z left by s bits in place.
func (z *limbs) shl(s uint) {
	if z.n == 0 {
		return
	}
	words, sh := int(s/64), s%64
	if sh != 0 {
		var carry uint64
		for i := 0; i < z.n; i++ {
			w := z.w[i]
			z.w[i] = w<<sh | carry
			carry = w >> (64 - sh)
		}
		if carry != 0 {
			z.w[z.n] = carry
			z.n++
		}
	}
	if words > 0 {
		for i := z.n - 1; i >= 0; i-- {
			z.w[i+words] = z.w[i]
		}
		for i := 0; i < words; i++ {
			z.w[i] = 0
		}
		z.n += words
	}
}

// divmod divides z by d in place and returns the remainder.
func (z *limbs) divmod(d uint64) uint64 {
	var rem uint64
	for i := z.n - 1; i >= 0; i-- {
		z.w[i], rem = bits.Div64(rem, z.w[i], d)
	}
	for z.n > 0 && z.w[z.n-1] == 0 {
		z.n--
	}
	return rem
}

const (
	pow10_19 = 10000000000000000000
)

const digitPairs = "00010203040506070809101112131415161718192021222324252627282930313233343536373839" +
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879" +
	"8081828384858687888990919293949596979899"

// appendUintDigits appends the decimal digits of x (no leading zeros; nothing
// for 0) as ASCII.
func appendUintDigits(dst []byte, x uint64) []byte {
	var buf [20]byte
	i := len(buf)
	for x >= 100 {
		q := x / 100
		r := x - q*100
		i -= 2
		buf[i], buf[i+1] = digitPairs[2*r], digitPairs[2*r+1]
		x = q
	}
	if x >= 10 {
		i -= 2
		buf[i], buf[i+1] = digitPairs[2*x], digitPairs[2*x+1]
	} else if x > 0 {
		i--
		buf[i] = byte('0' + x)
	}
	return append(dst, buf[i:]...)
}

// appendChunk19 appends x < 10^19 as exactly 19 digits, zero-padded.
func appendChunk19(dst []byte, x uint64) []byte {
	var buf [19]byte
	for i := 17; i >= 1; i -= 2 {
		q := x / 100
		r := x - q*100
		buf[i], buf[i+1] = digitPairs[2*r], digitPairs[2*r+1]
		x = q
	}
	buf[0] = byte('0' + x)
	return append(dst, buf[:]...)
}

// appendLimbsDigits appends the decimal digits of z (destroying z).
func appendLimbsDigits(dst []byte, z *limbs) []byte {
	var chunks [20]uint64 // 2^1024 < 10^(19×17)
	nc := 0
	for z.n > 0 {
		chunks[nc] = z.divmod(pow10_19)
		nc++
	}
	if nc == 0 {
		return dst
	}
	dst = appendUintDigits(dst, chunks[nc-1])
	for i := nc - 2; i >= 0; i-- {
		dst = appendChunk19(dst, chunks[i])
	}
	return dst
}

// appendUint128Digits appends the decimal digits of hi:lo.
func appendUint128Digits(dst []byte, hi, lo uint64) []byte {
	if hi == 0 {
		return appendUintDigits(dst, lo)
	}
	q1, r := bits.Div64(0, hi, pow10_19)
	q0, r := bits.Div64(r, lo, pow10_19)
	// hi:lo < 2^128 < 10^39, so the quotient q1:q0 < 10^20 and fits one more split.
	qq, r2 := bits.Div64(q1, q0, pow10_19) // q1 < 1e19 so no overflow
	if qq != 0 {
		dst = appendUintDigits(dst, qq)
		dst = appendChunk19(dst, r2)
	} else {
		dst = appendUintDigits(dst, r2)
	}
	return appendChunk19(dst, r)
}

// trimZeros removes trailing '0' digits from dst[start:] and returns dst.
func trimZeros(dst []byte, start int) []byte {
	for len(dst) > start && dst[len(dst)-1] == '0' {
		dst = dst[:len(dst)-1]
	}
	return dst
}

// appendExactDigits analyses numeric v. For finite non-zero values it appends
// the significant digits (ASCII, no leading or trailing zeros) to dst and
// returns exp such that |v| = 0.digits × 10^exp. class is one of the num*
// constants; for non-numeric v it is 0.
func appendExactDigits(dst []byte, v Value) (out []byte, class uint8, exp int) {
	switch v.Type {
	case TypeInt32:
		return appendIntDigits(dst, int64(v.Int32()))
	case TypeInt64:
		return appendIntDigits(dst, v.Int64())
	case TypeDouble:
		return appendFloatDigits(dst, v.Double())
	case TypeDecimal128:
		hi, lo := v.Decimal128()
		return appendDecimalDigits(dst, hi, lo)
	}
	return dst, 0, 0
}

func appendIntDigits(dst []byte, n int64) ([]byte, uint8, int) {
	if n == 0 {
		return dst, numZero, 0
	}
	class, mag := numPos, uint64(n)
	if n < 0 {
		class, mag = numNeg, -uint64(n)
	}
	start := len(dst)
	dst = appendUintDigits(dst, mag)
	exp := len(dst) - start
	return trimZeros(dst, start), class, exp
}

func appendFloatDigits(dst []byte, f float64) ([]byte, uint8, int) {
	b := math.Float64bits(f)
	neg := b>>63 != 0
	e := int(b>>52) & 0x7ff
	m := b & (1<<52 - 1)
	switch {
	case e == 0x7ff && m != 0:
		return dst, numNaN, 0
	case e == 0x7ff:
		if neg {
			return dst, numNegInf, 0
		}
		return dst, numPosInf, 0
	case e == 0 && m == 0:
		return dst, numZero, 0
	case e == 0:
		e = -1074
	default:
		m |= 1 << 52
		e -= 1075
	}
	class := numPos
	if neg {
		class = numNeg
	}
	tz := bits.TrailingZeros64(m)
	m >>= uint(tz)
	e += tz
	start := len(dst)
	switch {
	case e >= 0 && e+bits.Len64(m) <= 64:
		dst = appendUintDigits(dst, m<<uint(e))
		return trimZeros(dst, start), class, len(dst) - start
	case e >= 0:
		var z limbs
		z.setUint64(m)
		z.shl(uint(e))
		dst = appendLimbsDigits(dst, &z)
		exp := len(dst) - start
		return trimZeros(dst, start), class, exp
	}
	// A fraction: m × 2^-s has an integer part and exactly s fractional
	// binary digits, which expand to exactly s fractional decimal digits.
	s := -e
	var intPart, frac uint64
	if s < 64 {
		intPart, frac = m>>uint(s), m&(1<<uint(s)-1)
	} else {
		frac = m
	}
	if intPart > 0 {
		dst = appendUintDigits(dst, intPart)
		exp := len(dst) - start
		dst = appendFracDigits(dst, frac, s)
		return trimZeros(dst, start), class, exp
	}
	dst = appendFracDigits(dst, frac, s)
	lz := 0
	for dst[start+lz] == '0' {
		lz++
	}
	n := copy(dst[start:], dst[start+lz:])
	dst = dst[:start+n]
	return trimZeros(dst, start), class, -lz
}

// appendFracDigits appends the decimal digits of the fraction frac / 2^s
// (frac < 2^s, 1 <= s <= 1074) in zero-padded 19-digit chunks until the
// remainder is zero. The fraction is held left-aligned in L = ceil(s/64)
// limbs, so multiplying by 10^19 carries the next chunk out of the top limb.
func appendFracDigits(dst []byte, frac uint64, s int) []byte {
	var w [18]uint64
	l := (s + 63) / 64
	sh := uint(64*l - s)
	w[0] = frac << sh
	if sh > 0 {
		w[1] = frac >> (64 - sh)
	}
	low := 0
	for {
		for low < l && w[low] == 0 {
			low++
		}
		if low == l {
			return dst
		}
		var carry uint64
		for i := low; i < l; i++ {
			hi, lo := bits.Mul64(w[i], pow10_19)
			var c uint64
			w[i], c = bits.Add64(lo, carry, 0)
			carry = hi + c
		}
		dst = appendChunk19(dst, carry)
	}
}

// pow5Table[k] is 5^k for 0 <= k <= 27 (the largest power of 5 below 2^64).
var pow5Table = func() (t [28]uint64) {
	t[0] = 1
	for i := 1; i < len(t); i++ {
		t[i] = t[i-1] * 5
	}
	return t
}()

// pow10Table[k] is 10^k for 0 <= k <= 19.
var pow10Table = func() (t [20]uint64) {
	t[0] = 1
	for i := 1; i < len(t); i++ {
		t[i] = t[i-1] * 10
	}
	return t
}()

// digitCount returns the number of decimal digits of x > 0.
func digitCount(x uint64) int {
	n := (bits.Len64(x) * 1233) >> 12 // floor(log10(2) * bitlen)
	if n < len(pow10Table) && x >= pow10Table[n] {
		n++
	}
	return n
}

// decimalFields splits a decimal128 into sign, coefficient halves and
// unbiased exponent, with class numNaN/numNegInf/numPosInf for specials.
// Non-canonical coefficients (above 10^34-1) are returned as zero, as the
// decimal128 specification requires.
func decimalFields(hi, lo uint64) (neg bool, chi, clo uint64, exp int, class uint8) {
	neg = hi>>63 != 0
	switch {
	case (hi>>58)&0x1f == 0x1f:
		return neg, 0, 0, 0, numNaN
	case (hi>>58)&0x1f == 0x1e:
		if neg {
			return neg, 0, 0, 0, numNegInf
		}
		return neg, 0, 0, 0, numPosInf
	case (hi>>61)&0x3 == 0x3:
		return neg, 0, 0, int((hi>>47)&0x3fff) - decimalBias, numZero
	}
	exp = int((hi>>49)&0x3fff) - decimalBias
	chi, clo = hi&(1<<49-1), lo
	if chi > decimalMaxCoefHi || (chi == decimalMaxCoefHi && clo > decimalMaxCoefLo) {
		chi, clo = 0, 0
	}
	if chi == 0 && clo == 0 {
		return neg, 0, 0, exp, numZero
	}
	if neg {
		return neg, chi, clo, exp, numNeg
	}
	return neg, chi, clo, exp, numPos
}

func appendDecimalDigits(dst []byte, hi, lo uint64) ([]byte, uint8, int) {
	_, chi, clo, q, class := decimalFields(hi, lo)
	if class != numNeg && class != numPos {
		return dst, class, 0
	}
	start := len(dst)
	dst = appendUint128Digits(dst, chi, clo)
	exp := len(dst) - start + q
	return trimZeros(dst, start), class, exp
}

// compareExact compares two analysed numbers.
func compareExact(ca uint8, ea int, da []byte, cb uint8, eb int, db []byte) int {
	if ca != cb {
		return cmpInt(int(ca), int(cb))
	}
	if ca != numPos && ca != numNeg {
		return 0
	}
	r := cmpInt(ea, eb)
	if r == 0 {
		r = bytes.Compare(da, db)
	}
	if ca == numNeg {
		r = -r
	}
	return r
}

// compareNumbers compares two numeric values exactly, with MongoDB's rules:
// NaN equals NaN and sorts below all other numbers; -0 equals 0.
func compareNumbers(a, b Value) int {
	switch a.Type {
	case TypeInt32:
		switch b.Type {
		case TypeInt32:
			return cmpInt64(int64(a.Int32()), int64(b.Int32()))
		case TypeInt64:
			return cmpInt64(int64(a.Int32()), b.Int64())
		case TypeDouble:
			return cmpFloat64(float64(a.Int32()), b.Double())
		}
	case TypeInt64:
		switch b.Type {
		case TypeInt32:
			return cmpInt64(a.Int64(), int64(b.Int32()))
		case TypeInt64:
			return cmpInt64(a.Int64(), b.Int64())
		case TypeDouble:
			return cmpInt64Float64(a.Int64(), b.Double())
		}
	case TypeDouble:
		switch b.Type {
		case TypeInt32:
			return cmpFloat64(a.Double(), float64(b.Int32()))
		case TypeInt64:
			return -cmpInt64Float64(b.Int64(), a.Double())
		case TypeDouble:
			return cmpFloat64(a.Double(), b.Double())
		}
	}
	if na, ok := smallNumber(a); ok {
		if nb, ok := smallNumber(b); ok {
			return compareScaled(na, nb)
		}
	}
	return compareNumbersSlow(a, b)
}

// compareNumbersSlow compares through the full digit expansion; it is kept
// out of line so the common paths keep a small stack frame.
//
//go:noinline
func compareNumbersSlow(a, b Value) int {
	var bufA, bufB [maxNumDigits]byte
	da, ca, ea := appendExactDigits(bufA[:0], a)
	db, cb, eb := appendExactDigits(bufB[:0], b)
	return compareExact(ca, ea, da, cb, eb, db)
}

func cmpInt(a, b int) int         { return cmp.Compare(a, b) }
func cmpInt64(a, b int64) int     { return cmp.Compare(a, b) }
func cmpUint64(a, b uint64) int   { return cmp.Compare(a, b) }
func cmpFloat64(a, b float64) int { return cmp.Compare(a, b) } // NaN equals NaN, below all else

// cmpInt64Float64 compares an int64 with a double exactly.
func cmpInt64Float64(i int64, f float64) int {
	switch {
	case f != f:
		return 1
	case f >= 0x1p63:
		return -1
	case f < -0x1p63:
		return 1
	}
	t := math.Trunc(f) // in [-2^63, 2^63): exactly representable as int64
	if r := cmpInt64(i, int64(t)); r != 0 {
		return r
	}
	switch {
	case f > t:
		return -1
	case f < t:
		return 1
	}
	return 0
}
