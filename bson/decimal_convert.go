package bson

import "math"

// Decimal128FromInt64 returns n as a decimal128 with exponent 0.
func Decimal128FromInt64(n int64) (hi, lo uint64) {
	mag := uint64(n)
	if n < 0 {
		mag = -mag
	}
	return decimalPack(n < 0, 0, mag, 0)
}

// Decimal128FromFloat64 converts a double as MongoDB's $toDecimal (and
// $convert to decimal) does: the exact value rounded half-to-even to 34
// significant digits and then to 15, keeping trailing zeros, so 2.5 becomes
// 2.50000000000000 and 0.1 becomes 0.100000000000000. Zeros keep their sign with exponent 0;
// infinities and NaN map to their decimal counterparts.
func Decimal128FromFloat64(f float64) (hi, lo uint64) {
	var buf [maxNumDigits]byte
	digits, class, exp := appendFloatDigits(buf[:0], f)
	switch class {
	case numNaN:
		return decimalNaN(false), 0
	case numPosInf:
		return 0x7800000000000000, 0
	case numNegInf:
		return 0xF800000000000000, 0
	case numZero:
		return decimalPack(math.Signbit(f), 0, 0, 0)
	}
	// MongoDB converts to a 34-digit decimal first and then quantizes, so
	// round twice to reproduce its double rounding exactly.
	digits, exp = roundDigits(digits, exp, 34)
	digits, exp = roundDigits(digits, exp, 15)
	const sig = 15
	var coef uint64
	for i := 0; i < sig; i++ {
		coef *= 10
		if i < len(digits) {
			coef += uint64(digits[i] - '0')
		}
	}
	q := exp - sig
	return decimalPack(class == numNeg, 0, coef, q)
}

// CompareDecimal128 compares two decimal128 values exactly, with NaN equal
// to NaN and below every other value, and -0 equal to 0.
func CompareDecimal128(ahi, alo, bhi, blo uint64) int {
	return compareNumbers(decimalValueArray(ahi, alo), decimalValueArray(bhi, blo))
}

func decimalValueArray(hi, lo uint64) Value {
	var d [16]byte
	putDecimal(d[:], hi, lo)
	return Value{Type: TypeDecimal128, Data: d[:]}
}

func putDecimal(d []byte, hi, lo uint64) {
	for i := 0; i < 8; i++ {
		d[i] = byte(lo >> (8 * i))
		d[8+i] = byte(hi >> (8 * i))
	}
}

// roundDigits rounds the significant digits d (ASCII, no trailing zeros) of
// 0.d × 10^exp to at most n digits, half to even, in place. The result has no
// trailing zeros; a carry out of the first digit yields "1" and exp+1.
func roundDigits(d []byte, exp, n int) ([]byte, int) {
	if len(d) <= n {
		return d, exp
	}
	next := d[n]
	up := next > '5' || next == '5' && (len(d) > n+1 || (d[n-1]-'0')%2 == 1)
	d = d[:n]
	if up {
		i := n - 1
		for ; i >= 0 && d[i] == '9'; i-- {
			d[i] = '0'
		}
		if i < 0 {
			d = append(d[:0], '1')
			exp++
		} else {
			d[i]++
		}
	}
	for len(d) > 1 && d[len(d)-1] == '0' {
		d = d[:len(d)-1]
	}
	return d, exp
}
