package bson

import "strconv"

// FormatDecimal128 returns the canonical string of a decimal128 as the BSON
// decimal128 specification defines it: "NaN", "Infinity", "-Infinity";
// otherwise the coefficient with its trailing zeros, in plain notation when
// the exponent is at most 0 and the adjusted exponent is at least -6, and in
// scientific notation ("1.23E+5", "1E-7") otherwise.
func FormatDecimal128(hi, lo uint64) string {
	var buf [64]byte
	return string(AppendDecimal128(buf[:0], hi, lo))
}

// AppendDecimal128 appends FormatDecimal128(hi, lo) to dst.
func AppendDecimal128(dst []byte, hi, lo uint64) []byte {
	neg, chi, clo, exp, class := decimalFields(hi, lo)
	switch class {
	case numNaN:
		return append(dst, "NaN"...)
	case numPosInf:
		return append(dst, "Infinity"...)
	case numNegInf:
		return append(dst, "-Infinity"...)
	}
	if neg {
		dst = append(dst, '-')
	}
	var dbuf [40]byte
	digits := appendUint128Digits(dbuf[:0], chi, clo)
	if len(digits) == 0 {
		digits = append(digits, '0')
	}
	adjusted := exp + len(digits) - 1
	switch {
	case exp == 0:
		return append(dst, digits...)
	case exp < 0 && adjusted >= -6:
		point := len(digits) + exp
		if point <= 0 {
			dst = append(dst, "0."...)
			for ; point < 0; point++ {
				dst = append(dst, '0')
			}
			return append(dst, digits...)
		}
		dst = append(dst, digits[:point]...)
		dst = append(dst, '.')
		return append(dst, digits[point:]...)
	}
	dst = append(dst, digits[0])
	if len(digits) > 1 {
		dst = append(dst, '.')
		dst = append(dst, digits[1:]...)
	}
	dst = append(dst, 'E')
	if adjusted >= 0 {
		dst = append(dst, '+')
	}
	return strconv.AppendInt(dst, int64(adjusted), 10)
}
