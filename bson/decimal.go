package bson

import (
	"math"
	"math/big"
	"strconv"
)

// Decimal128 layout (IEEE 754-2008 BID encoding, as BSON stores it): the sign
// is bit 63 of hi; combination bits then give either a 14-bit exponent and a
// 113-bit coefficient, or infinity and NaN. Exponent bias is 6176.
const decimalBias = 6176

// DecimalParts splits a decimal128 into its sign, coefficient and unbiased
// exponent. kind is 0 for finite, 1 for infinity, 2 for NaN.
func DecimalParts(hi, lo uint64) (neg bool, coef *big.Int, exp int, kind int) {
	neg = hi>>63 == 1
	switch {
	case (hi>>58)&0x1f == 0x1f:
		return neg, nil, 0, 2
	case (hi>>58)&0x1f == 0x1e:
		return neg, nil, 0, 1
	}
	_, chi, clo, exp, _ := decimalFields(hi, lo) // non-canonical coefficients read as zero
	coef = new(big.Int).SetUint64(chi)
	coef.Lsh(coef, 64)
	coef.Or(coef, new(big.Int).SetUint64(clo))
	return neg, coef, exp, 0
}

// Decimal128ToFloat64 converts a decimal128 to the nearest float64.
func Decimal128ToFloat64(hi, lo uint64) float64 {
	neg, coef, exp, kind := DecimalParts(hi, lo)
	switch kind {
	case 1:
		if neg {
			return math.Inf(-1)
		}
		return math.Inf(1)
	case 2:
		return math.NaN()
	}
	var buf [48]byte
	b := strconv.AppendInt(append(coef.Append(buf[:0], 10), 'e'), int64(exp), 10)
	f, _ := strconv.ParseFloat(unsafeString(b), 64) // out of range gives ±Inf or 0, which is the nearest float
	if neg {
		f = -f
	}
	return f
}

// Exponent range of decimal128 (unbiased, applied to the integer coefficient).
const (
	decimalMinExp = -6176
	decimalMaxExp = 6111
)

// decimalPack encodes a finite decimal128 from its sign, coefficient (at most
// 10^34-1) and unbiased exponent (within decimalMinExp..decimalMaxExp).
func decimalPack(neg bool, chi, clo uint64, exp int) (hi, lo uint64) {
	hi = chi | uint64(exp+decimalBias)<<49
	if neg {
		hi |= 1 << 63
	}
	return hi, clo
}
