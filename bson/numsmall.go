package bson

import (
	"math"
	"math/bits"
)

// Most numbers in practice are ±mag × 10^exp10 with mag fitting in 64 bits:
// every int32 and int64, integral doubles below 2^64, doubles like 0.5 or
// 2.375 whose binary fraction is short, and decimals with a coefficient below
// 2^64. Those compare and key-encode without expanding digits.

// scaledNum is a number in that form. For classes other than numNeg and
// numPos, mag and exp10 are unused.
type scaledNum struct {
	class uint8
	mag   uint64
	exp10 int
}

// smallNumber returns v as a scaledNum when it fits; ok is false when the
// exact value needs more than 64 bits of coefficient (or v is not a number).
func smallNumber(v Value) (n scaledNum, ok bool) {
	switch v.Type {
	case TypeInt32:
		return scaledInt(int64(v.Int32())), true
	case TypeInt64:
		return scaledInt(v.Int64()), true
	case TypeDouble:
		return scaledFloat(v.Double())
	case TypeDecimal128:
		hi, lo := v.Decimal128()
		_, chi, clo, q, class := decimalFields(hi, lo)
		if class != numNeg && class != numPos {
			return scaledNum{class: class}, true
		}
		if chi != 0 {
			return scaledNum{}, false
		}
		return scaledNum{class: class, mag: clo, exp10: q}, true
	}
	return scaledNum{}, false
}

func scaledInt(n int64) scaledNum {
	switch {
	case n > 0:
		return scaledNum{class: numPos, mag: uint64(n)}
	case n < 0:
		return scaledNum{class: numNeg, mag: -uint64(n)}
	}
	return scaledNum{class: numZero}
}

func scaledFloat(f float64) (scaledNum, bool) {
	b := math.Float64bits(f)
	e := int(b>>52) & 0x7ff
	m := b & (1<<52 - 1)
	switch {
	case e == 0x7ff && m != 0:
		return scaledNum{class: numNaN}, true
	case e == 0x7ff && b>>63 != 0:
		return scaledNum{class: numNegInf}, true
	case e == 0x7ff:
		return scaledNum{class: numPosInf}, true
	case e == 0 && m == 0:
		return scaledNum{class: numZero}, true
	case e == 0:
		e = -1074
	default:
		m |= 1 << 52
		e -= 1075
	}
	class := numPos
	if b>>63 != 0 {
		class = numNeg
	}
	tz := bits.TrailingZeros64(m)
	m >>= uint(tz)
	e += tz
	switch {
	case e >= 0 && e+bits.Len64(m) <= 64:
		return scaledNum{class: class, mag: m << uint(e)}, true
	case e < 0 && -e < len(pow5Table):
		// m × 2^e = m × 5^-e × 10^e.
		if hi, lo := bits.Mul64(m, pow5Table[-e]); hi == 0 {
			return scaledNum{class: class, mag: lo, exp10: e}, true
		}
	}
	return scaledNum{}, false
}

// compareScaled compares two scaledNums exactly.
func compareScaled(a, b scaledNum) int {
	if a.class != b.class {
		return cmpInt(int(a.class), int(b.class))
	}
	if a.class != numPos && a.class != numNeg {
		return 0
	}
	r := compareMagnitudes(a.mag, a.exp10, b.mag, b.exp10)
	if a.class == numNeg {
		r = -r
	}
	return r
}

// compareMagnitudes compares ma × 10^ea with mb × 10^eb (ma, mb > 0).
func compareMagnitudes(ma uint64, ea int, mb uint64, eb int) int {
	da, db := digitCount(ma), digitCount(mb)
	// Position of the leading digit decides unless equal.
	if r := cmpInt(da+ea, db+eb); r != 0 {
		return r
	}
	// Same leading position, so |ea-eb| = |db-da| <= 19: scale the one with
	// the larger exponent into 128 bits and compare.
	switch {
	case ea > eb:
		hi, lo := bits.Mul64(ma, pow10Table[ea-eb])
		if hi != 0 {
			return 1
		}
		return cmpUint64(lo, mb)
	case eb > ea:
		hi, lo := bits.Mul64(mb, pow10Table[eb-ea])
		if hi != 0 {
			return -1
		}
		return cmpUint64(ma, lo)
	}
	return cmpUint64(ma, mb)
}

// appendScaledKey appends the number key body (class, exponent, packed
// digits) of n, identical to what the general digit expansion produces.
func appendScaledKey(dst []byte, n scaledNum) []byte {
	start := len(dst)
	dst = append(dst, n.class)
	if n.class != numPos && n.class != numNeg {
		return dst
	}
	mag := n.mag
	exp := digitCount(mag) + n.exp10
	for mag%10 == 0 {
		mag /= 10
	}
	dst = append(dst, byte(uint16(exp+0x8000)>>8), byte(exp+0x8000))
	// Pairs of digits, most significant first; an odd last digit d packs as
	// d*10+1. Fill from the least significant end.
	var buf [11]byte
	i := len(buf) - 1
	buf[i] = 0 // terminator
	if digitCount(mag)%2 == 1 {
		i--
		buf[i] = byte(mag%10)*10 + 1
		mag /= 10
	}
	for mag > 0 {
		q := mag / 100
		i--
		buf[i] = byte(mag-q*100) + 1
		mag = q
	}
	dst = append(dst, buf[i:]...)
	if n.class == numNeg {
		invert(dst[start+1:])
	}
	return dst
}
