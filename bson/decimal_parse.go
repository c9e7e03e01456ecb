package bson

import (
	"errors"
	"fmt"
)

// ErrDecimal128Syntax reports a string that is not a decimal number.
var ErrDecimal128Syntax = errors.New("bson: invalid decimal128 string")

// ErrDecimal128Inexact reports a number that decimal128 cannot hold exactly
// (more than 34 significant digits, or an exponent out of range).
var ErrDecimal128Inexact = errors.New("bson: decimal128 value would be rounded")

// ParseDecimal128 parses a decimal string as the BSON decimal128 and Extended
// JSON specifications require: an optional sign, digits with an optional
// decimal point, an optional exponent (e or E, optional sign, digits), or
// the case-insensitive specials "NaN", "Inf" and "Infinity" (optionally
// signed). The coefficient keeps its trailing zeros ("1.00" has exponent
// -2). Values are clamped into range when that is exact (a large exponent
// pads the coefficient with zeros, zeros take the nearest exponent);
// anything needing rounding is rejected with ErrDecimal128Inexact.
func ParseDecimal128(s string) (hi, lo uint64, err error) {
	hi, lo, err = parseDecimal128(s)
	if err != nil {
		return 0, 0, fmt.Errorf("parse decimal128 %q: %w", s, err)
	}
	return hi, lo, nil
}

func parseDecimal128(s string) (hi, lo uint64, err error) {
	neg := false
	rest := s
	if len(rest) > 0 && (rest[0] == '+' || rest[0] == '-') {
		neg = rest[0] == '-'
		rest = rest[1:]
	}
	switch {
	case equalFold(rest, "nan"):
		return decimalNaN(neg), 0, nil
	case equalFold(rest, "inf"), equalFold(rest, "infinity"):
		if neg {
			return 0xF800000000000000, 0, nil
		}
		return 0x7800000000000000, 0, nil
	}

	// Significand: digits with at most one point; collect significant digits.
	var digits [34]byte
	nd := 0          // significant digits kept in digits
	dropped := false // a non-zero digit beyond the 34th was seen
	extra := 0       // integer-part digits beyond the 34th (raise the exponent)
	frac := 0        // digits after the point that were kept or were leading zeros
	sawDigit, sawPoint := false, false
	i := 0
	for ; i < len(rest); i++ {
		c := rest[i]
		if c == '.' {
			if sawPoint {
				return 0, 0, ErrDecimal128Syntax
			}
			sawPoint = true
			continue
		}
		if c < '0' || c > '9' {
			break
		}
		sawDigit = true
		switch {
		case nd == 0 && c == '0':
			if sawPoint {
				frac++
			}
		case nd < len(digits):
			digits[nd] = c
			nd++
			if sawPoint {
				frac++
			}
		default:
			if c != '0' {
				dropped = true
			}
			if !sawPoint {
				extra++
			}
		}
	}
	if !sawDigit {
		return 0, 0, ErrDecimal128Syntax
	}
	exp := 0
	if i < len(rest) {
		if rest[i] != 'e' && rest[i] != 'E' {
			return 0, 0, ErrDecimal128Syntax
		}
		e, ok := parseExponent(rest[i+1:])
		if !ok {
			return 0, 0, ErrDecimal128Syntax
		}
		exp = e
	}
	if dropped {
		return 0, 0, ErrDecimal128Inexact
	}
	exp += extra - frac

	if nd == 0 {
		exp = min(max(exp, decimalMinExp), decimalMaxExp)
		hi, lo = decimalPack(neg, 0, 0, exp)
		return hi, lo, nil
	}
	for exp > decimalMaxExp && nd < len(digits) {
		digits[nd] = '0'
		nd++
		exp--
	}
	for exp < decimalMinExp && nd > 0 && digits[nd-1] == '0' {
		nd--
		exp++
	}
	if exp > decimalMaxExp || exp < decimalMinExp {
		return 0, 0, ErrDecimal128Inexact
	}
	var chi, clo uint64
	for _, c := range digits[:nd] {
		chi, clo = mul128by10add(chi, clo, uint64(c-'0'))
	}
	hi, lo = decimalPack(neg, chi, clo, exp)
	return hi, lo, nil
}

func decimalNaN(neg bool) uint64 {
	if neg {
		return 0xFC00000000000000
	}
	return 0x7C00000000000000
}

// parseExponent parses [+-]digits, saturating far outside decimal128's range.
func parseExponent(s string) (int, bool) {
	neg := false
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if len(s) == 0 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if n < 1_000_000 {
			n = n*10 + int(c-'0')
		}
	}
	if neg {
		n = -n
	}
	return n, true
}

// equalFold reports whether s equals the lower-case ASCII word w, ignoring
// ASCII case.
func equalFold(s, w string) bool {
	if len(s) != len(w) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != w[i] {
			return false
		}
	}
	return true
}
