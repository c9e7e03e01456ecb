package expr

import (
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/cairndb/cairn/bson"
)

// Decimal128 arithmetic with exact big-integer intermediate results rounded
// (half to even) to 34 significant digits, as IEEE 754-2008 decimal128
// (and so MongoDB's Intel-library-based Decimal128) does.

type decKind uint8

const (
	decFinite decKind = iota
	decInf
	decNaN
)

const (
	decDigits = 34
	decMinExp = -6176
	decMaxExp = 6111
)

type dec struct {
	neg  bool
	coef *big.Int // magnitude, for finite values
	exp  int
	kind decKind
}

var (
	bigTen  = big.NewInt(10)
	decNaNv = dec{kind: decNaN, coef: new(big.Int)}
)

func decOf(v bson.Value) dec {
	hi, lo := v.Decimal128()
	neg, coef, exp, kind := bson.DecimalParts(hi, lo)
	if coef == nil {
		coef = new(big.Int)
	}
	return dec{neg: neg, coef: coef, exp: exp, kind: decKind(kind)}
}

func decFromInt(n int64) dec {
	c := new(big.Int).SetInt64(n)
	neg := c.Sign() < 0
	return dec{neg: neg, coef: c.Abs(c)}
}

// decFromFloat converts as MongoDB's Decimal128(double) does: 15
// significant digits.
func decFromFloat(f float64) dec {
	hi, lo := bson.Decimal128FromFloat64(f)
	return decOf(bson.Value{Type: bson.TypeDecimal128, Data: decBytes(hi, lo)})
}

func decBytes(hi, lo uint64) []byte {
	b := make([]byte, 16)
	for i := 0; i < 8; i++ {
		b[i] = byte(lo >> (8 * i))
		b[8+i] = byte(hi >> (8 * i))
	}
	return b
}

// toDec converts any numeric value to a decimal.
func toDec(v bson.Value) dec {
	switch v.Type {
	case bson.TypeDecimal128:
		return decOf(v)
	case bson.TypeDouble:
		return decFromFloat(v.Double())
	case bson.TypeInt32:
		return decFromInt(int64(v.Int32()))
	case bson.TypeInt64, bson.TypeDateTime:
		return decFromInt(v.Int64())
	}
	return decNaNv
}

func (d dec) isZero() bool { return d.kind == decFinite && d.coef.Sign() == 0 }

func (d dec) signed() *big.Int {
	c := new(big.Int).Set(d.coef)
	if d.neg {
		c.Neg(c)
	}
	return c
}

func decFromSigned(c *big.Int, exp int) dec {
	neg := c.Sign() < 0
	return dec{neg: neg, coef: new(big.Int).Abs(c), exp: exp}
}

func pow10(n int) *big.Int {
	return new(big.Int).Exp(bigTen, big.NewInt(int64(n)), nil)
}

// pack rounds d to decimal128 and encodes it.
func (d dec) pack() (hi, lo uint64) {
	var sign uint64
	if d.neg {
		sign = 1 << 63
	}
	switch d.kind {
	case decNaN:
		return 0x7C00000000000000, 0
	case decInf:
		return sign | 0x7800000000000000, 0
	}
	coef := new(big.Int).Set(d.coef)
	exp := d.exp
	digits := len(coef.Text(10))
	if coef.Sign() == 0 {
		digits = 1
	}
	drop := digits - decDigits
	if exp+drop < decMinExp {
		drop = decMinExp - exp
	}
	if drop > 0 {
		coef = roundDrop(coef, drop, false, roundHalfEven)
		exp += drop
		if len(coef.Text(10)) > decDigits {
			coef.Quo(coef, bigTen)
			exp++
		}
	}
	if exp > decMaxExp {
		if coef.Sign() == 0 {
			exp = decMaxExp
		} else {
			for exp > decMaxExp && len(coef.Text(10)) < decDigits {
				coef.Mul(coef, bigTen)
				exp--
			}
			if exp > decMaxExp {
				return sign | 0x7800000000000000, 0
			}
		}
	}
	if exp < decMinExp { // zero coefficient
		exp = decMinExp
	}
	var chi, clo uint64
	words := coef.Bits()
	if strconv.IntSize == 64 {
		if len(words) > 0 {
			clo = uint64(words[0])
		}
		if len(words) > 1 {
			chi = uint64(words[1])
		}
	} else {
		lo := new(big.Int).And(coef, new(big.Int).SetUint64(math.MaxUint64))
		clo = lo.Uint64()
		chi = new(big.Int).Rsh(coef, 64).Uint64()
	}
	return sign | uint64(exp-decMinExp)<<49 | chi, clo
}

func (e *Env) dec(d dec) bson.Value {
	hi, lo := d.pack()
	return e.decimal(hi, lo)
}

type roundMode uint8

const (
	roundHalfEven roundMode = iota
	roundTrunc
	roundFloor // toward -inf
	roundCeil  // toward +inf
	roundHalfUp
)

// roundDrop removes the last n digits of magnitude c (n > 0) rounding by
// mode (neg tells the sign for floor/ceil).
func roundDrop(c *big.Int, n int, neg bool, mode roundMode) *big.Int {
	p := pow10(n)
	q, r := new(big.Int).QuoRem(c, p, new(big.Int))
	if r.Sign() == 0 {
		return q
	}
	up := false
	switch mode {
	case roundTrunc:
	case roundFloor:
		up = neg
	case roundCeil:
		up = !neg
	case roundHalfEven, roundHalfUp:
		r2 := new(big.Int).Lsh(r, 1)
		switch r2.Cmp(p) {
		case 1:
			up = true
		case 0:
			up = mode == roundHalfUp || q.Bit(0) == 1
		}
	}
	if up {
		q.Add(q, big.NewInt(1))
	}
	return q
}

// roundPlaces rounds d to 'places' fractional digits and sets its exponent
// to -places, as decimal quantize does (NaN when the coefficient would need
// more than 34 digits).
func (d dec) roundPlaces(places int, mode roundMode) dec {
	if d.kind != decFinite {
		return d
	}
	if d.exp >= -places {
		shift := d.exp + places
		if shift == 0 {
			return d
		}
		if d.coef.Sign() == 0 {
			return dec{neg: d.neg, coef: new(big.Int), exp: -places}
		}
		if shift > decDigits {
			return decNaNv
		}
		c := new(big.Int).Mul(d.coef, pow10(shift))
		if len(c.Text(10)) > decDigits {
			return decNaNv
		}
		return dec{neg: d.neg, coef: c, exp: -places}
	}
	n := -places - d.exp
	if n > 7000 {
		return dec{neg: d.neg, coef: new(big.Int), exp: -places}
	}
	return dec{neg: d.neg, coef: roundDrop(d.coef, n, d.neg, mode), exp: -places}
}

// decAdd is a+b rounded to decimal128.
func decAdd(a, b dec) dec { return repack(decAddExact(a, b)) }

func decAddExact(a, b dec) dec {
	if a.kind == decNaN || b.kind == decNaN {
		return decNaNv
	}
	if a.kind == decInf || b.kind == decInf {
		if a.kind == decInf && b.kind == decInf && a.neg != b.neg {
			return decNaNv
		}
		if a.kind == decInf {
			return a
		}
		return b
	}
	// Align to the smaller exponent. When the operand with the smaller
	// exponent lies entirely below the other's 34-digit precision, it only
	// affects rounding: shrink it to a sticky digit first.
	ea, eb := a.exp, b.exp
	ca, cb := a.signed(), b.signed()
	if ea > eb {
		ca, cb, ea, eb = cb, ca, eb, ea
	}
	if diff := eb - ea; diff > 0 {
		if ca.Sign() != 0 && cb.Sign() != 0 && diff > 80 {
			top := ea + len(new(big.Int).Abs(ca).Text(10)) // exponent just above ca's digits
			if top < eb-decDigits-4 {
				shift := (eb - decDigits - 4) - ea
				ca = stickyShift(ca, shift)
				ea += shift
				diff = eb - ea
			}
		}
		cb = new(big.Int).Mul(cb, pow10(diff))
	}
	sum := new(big.Int).Add(ca, cb)
	r := decFromSigned(sum, ea)
	if sum.Sign() == 0 {
		r.neg = a.neg && b.neg
	}
	return r
}

// stickyShift divides c by 10^n, setting the last digit odd-ish if any
// nonzero digits were dropped so that half-even rounding stays correct.
func stickyShift(c *big.Int, n int) *big.Int {
	q, r := new(big.Int).QuoRem(c, pow10(n), new(big.Int))
	q.Mul(q, bigTen)
	if r.Sign() != 0 {
		if c.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return q
}

func decNeg(a dec) dec {
	a.neg = !a.neg
	return a
}

func decSub(a, b dec) dec { return decAdd(a, decNeg(b)) }

func decMul(a, b dec) dec {
	neg := a.neg != b.neg
	if a.kind == decNaN || b.kind == decNaN {
		return decNaNv
	}
	if a.kind == decInf || b.kind == decInf {
		if a.isZero() || b.isZero() {
			return decNaNv
		}
		return dec{kind: decInf, neg: neg, coef: new(big.Int)}
	}
	return repack(dec{neg: neg, coef: new(big.Int).Mul(a.coef, b.coef), exp: a.exp + b.exp})
}

func decDiv(a, b dec) dec {
	neg := a.neg != b.neg
	switch {
	case a.kind == decNaN || b.kind == decNaN:
		return decNaNv
	case a.kind == decInf && b.kind == decInf:
		return decNaNv
	case a.kind == decInf:
		return dec{kind: decInf, neg: neg, coef: new(big.Int)}
	case b.kind == decInf:
		return dec{neg: neg, coef: new(big.Int), exp: 0}
	case b.isZero():
		if a.isZero() {
			return decNaNv
		}
		return dec{kind: decInf, neg: neg, coef: new(big.Int)}
	case a.isZero():
		return dec{neg: neg, coef: new(big.Int), exp: a.exp - b.exp}
	}
	ideal := a.exp - b.exp
	la, lb := len(a.coef.Text(10)), len(b.coef.Text(10))
	shift := decDigits + 2 + lb - la
	if shift < 0 {
		shift = 0
	}
	num := new(big.Int).Mul(a.coef, pow10(shift))
	q, r := new(big.Int).QuoRem(num, b.coef, new(big.Int))
	exp := ideal - shift
	if r.Sign() != 0 {
		// sticky digit for correct rounding
		q.Mul(q, bigTen)
		q.Add(q, big.NewInt(1))
		exp--
		return dec{neg: neg, coef: q, exp: exp}
	}
	// exact: remove trailing zeros down to the ideal exponent
	rem := new(big.Int)
	for exp < ideal {
		q2, r2 := new(big.Int).QuoRem(q, bigTen, rem)
		if r2.Sign() != 0 {
			break
		}
		q = q2
		exp++
	}
	return dec{neg: neg, coef: q, exp: exp}
}

// decMod is the remainder with the dividend's sign (fmod).
func decMod(a, b dec) dec {
	if a.kind != decFinite || b.kind == decNaN || b.isZero() {
		return decNaNv
	}
	if b.kind == decInf {
		return a
	}
	e := min(a.exp, b.exp)
	if max(a.exp, b.exp)-e > 7000 {
		return decNaNv
	}
	ca := new(big.Int).Mul(a.coef, pow10(a.exp-e))
	cb := new(big.Int).Mul(b.coef, pow10(b.exp-e))
	r := new(big.Int).Rem(ca, cb)
	return dec{neg: a.neg, coef: r, exp: e}
}

func decCmp(a, b dec) int {
	ah, al := a.pack()
	bh, bl := b.pack()
	return bson.CompareDecimal128(ah, al, bh, bl)
}

func (d dec) float() float64 {
	hi, lo := d.pack()
	return bson.Decimal128ToFloat64(hi, lo)
}

// isInteger reports whether d is a finite integral value.
func (d dec) isInteger() bool {
	if d.kind != decFinite {
		return false
	}
	if d.exp >= 0 || d.coef.Sign() == 0 {
		return true
	}
	if -d.exp > 40 {
		return false
	}
	return new(big.Int).Rem(d.coef, pow10(-d.exp)).Sign() == 0
}

// int64 converts a finite d rounding by mode; ok is false when out of
// range or not finite.
func (d dec) int64(mode roundMode) (int64, bool) {
	if d.kind != decFinite {
		return 0, false
	}
	r := d.roundPlaces(0, mode)
	if r.kind != decFinite {
		return 0, false
	}
	c := new(big.Int).Set(r.coef)
	if r.exp > 0 {
		if r.exp > 20 {
			if c.Sign() == 0 {
				return 0, true
			}
			return 0, false
		}
		c.Mul(c, pow10(r.exp))
	}
	if r.neg {
		c.Neg(c)
	}
	if !c.IsInt64() {
		return 0, false
	}
	return c.Int64(), true
}

func (d dec) String() string {
	hi, lo := d.pack()
	return bson.FormatDecimal128(hi, lo)
}

// decSqrt computes the square root to 34 digits.
func decSqrt(d dec) dec {
	if d.kind == decNaN || d.neg && !d.isZero() {
		return decNaNv
	}
	if d.kind == decInf || d.isZero() {
		return d
	}
	f := new(big.Float).SetPrec(240).SetInt(d.coef)
	scale := new(big.Float).SetPrec(240).SetInt(pow10(abs(d.exp)))
	if d.exp < 0 {
		f.Quo(f, scale)
	} else {
		f.Mul(f, scale)
	}
	f.Sqrt(f)
	return decFromBigFloat(f)
}

func decFromBigFloat(f *big.Float) dec {
	s := f.Text('e', decDigits+4)
	mant, exps, _ := strings.Cut(s, "e")
	neg := strings.HasPrefix(mant, "-")
	digits := strings.Replace(strings.TrimPrefix(mant, "-"), ".", "", 1)
	exp, _ := strconv.Atoi(exps)
	c, ok := new(big.Int).SetString(digits, 10)
	if !ok {
		return decNaNv
	}
	r := dec{neg: neg, coef: c, exp: exp - (len(digits) - 1)}
	hi, lo := r.pack()
	return decOf(bson.Value{Type: bson.TypeDecimal128, Data: decBytes(hi, lo)})
}

// decExactFloat converts a double to the decimal of its exact binary value
// rounded to 34 digits (Decimal128(double, kRoundTo34Digits)).
func decExactFloat(f float64) dec {
	switch {
	case math.IsNaN(f):
		return decNaNv
	case math.IsInf(f, 0):
		return dec{kind: decInf, neg: f < 0, coef: new(big.Int)}
	case f == 0:
		return dec{neg: math.Signbit(f), coef: new(big.Int)}
	}
	return decFromBigFloat(new(big.Float).SetPrec(64).SetFloat64(f))
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

func valueDec(hi, lo uint64) bson.Value {
	return bson.Value{Type: bson.TypeDecimal128, Data: decBytes(hi, lo)}
}
