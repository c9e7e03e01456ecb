package expr

import (
	"math"
	"math/big"
	"strconv"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// Arithmetic operators with MongoDB's type promotion: int32 results widen to
// int64 on overflow, int64 to double; any double makes a double and any
// decimal a decimal.

func init() {
	register("$add", parseAdd)
	regBinary("$subtract", evalSubtract)
	register("$multiply", parseMultiply)
	regBinary("$divide", evalDivide)
	regBinary("$mod", evalMod)
	regUnary("$abs", numericUnary("$abs", absNum))
	regUnary("$ceil", numericUnary("$ceil", func(e *Env, v bson.Value) (bson.Value, error) { return roundingUnary(e, v, roundCeil, math.Ceil) }))
	regUnary("$floor", numericUnary("$floor", func(e *Env, v bson.Value) (bson.Value, error) { return roundingUnary(e, v, roundFloor, math.Floor) }))
	regUnary("$exp", numericUnary("$exp", expNum))
	regUnary("$ln", numericUnary("$ln", logNum("$ln", mongoerr.LnArgNotPositive, decLn, math.Log)))
	regUnary("$log10", numericUnary("$log10", logNum("$log10", mongoerr.Log10ArgNotPositive, decLog10, math.Log10)))
	regUnary("$sqrt", numericUnary("$sqrt", sqrtNum))
	regBinary("$log", evalLog)
	regBinary("$pow", evalPow)
	register("$round", parseRoundTrunc(roundHalfEven))
	register("$trunc", parseRoundTrunc(roundTrunc))
}

// numRank orders the numeric types for promotion.
func numRank(t bson.Type) int {
	switch t {
	case bson.TypeInt32:
		return 1
	case bson.TypeInt64:
		return 2
	case bson.TypeDouble:
		return 3
	case bson.TypeDecimal128:
		return 4
	}
	return 0
}

func widest(a, b bson.Type) bson.Type {
	if numRank(a) == 0 || numRank(b) == 0 {
		return 0
	}
	if numRank(a) >= numRank(b) {
		return a
	}
	return b
}

func toFloat(v bson.Value) float64 {
	f, _ := v.AsFloat64()
	return f
}

// toLong is Value::coerceToLong: doubles truncate.
func toLong(v bson.Value) int64 {
	switch v.Type {
	case bson.TypeInt32:
		return int64(v.Int32())
	case bson.TypeInt64, bson.TypeDateTime:
		return v.Int64()
	case bson.TypeDouble:
		f := v.Double()
		if math.IsNaN(f) || f >= 9.223372036854775807e18 || f < -9.223372036854775808e18 {
			return math.MinInt64
		}
		return int64(f)
	case bson.TypeDecimal128:
		n, ok := decOf(v).int64(roundTrunc)
		if !ok {
			return math.MinInt64
		}
		return n
	}
	return 0
}

func isZeroNum(v bson.Value) bool {
	switch v.Type {
	case bson.TypeInt32:
		return v.Int32() == 0
	case bson.TypeInt64:
		return v.Int64() == 0
	case bson.TypeDouble:
		return v.Double() == 0
	case bson.TypeDecimal128:
		return decOf(v).isZero()
	}
	return false
}

// isIntegral reports whether a numeric value has an integral value that
// fits an int64 (Value::integral64Bit semantics for doubles/decimals).
func isIntegral(v bson.Value) bool {
	switch v.Type {
	case bson.TypeInt32, bson.TypeInt64:
		return true
	case bson.TypeDouble:
		f := v.Double()
		return f == math.Trunc(f) && f >= -9.223372036854775808e18 && f < 9.223372036854775807e18
	case bson.TypeDecimal128:
		d := decOf(v)
		if !d.isInteger() {
			return false
		}
		_, ok := d.int64(roundTrunc)
		return ok
	}
	return false
}

// isIntegral32 is Value::integral(): integral and fits an int32.
func isIntegral32(v bson.Value) bool {
	if !isIntegral(v) {
		return false
	}
	n := toLong(v)
	return n >= math.MinInt32 && n <= math.MaxInt32
}

// fmtDouble formats a double as a C++ ostream does by default (%g, 6 digits).
func fmtDouble(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return strconv.FormatFloat(f, 'g', 6, 64)
}

// ---- $add ----

type addNode struct{ args []node }

func parseAdd(p *parser, name string, arg bson.Value) (node, error) {
	args, err := p.parseAll(argList(arg))
	if err != nil {
		return nil, err
	}
	return p.fold(&addNode{args: args}, args...), nil
}

// sumState accumulates numbers as MongoDB's $add and $sum do.
type sumState struct {
	typ     bson.Type // narrowest type so far: int32, int64, double, decimal
	isum    int64
	iover   bool // integer sum overflowed
	fsum    float64
	fcomp   float64 // Neumaier compensation
	dsum    dec
	haveDec bool
	fast    *decFastSum // exact running sum of small same-exponent decimals
}

// decFastSum adds decimals whose coefficients fit 64 bits and share one
// exponent exactly, without allocating; flushed into dsum before the sum
// could need rounding (or when another exponent arrives). The result equals
// rounding after every addition, since no partial sum needs rounding.
type decFastSum struct {
	active bool
	exp    int
	sum    big.Int
	tmp    big.Int
}

// decFields128 decodes a decimal128 quickly: ok is false for NaN,
// infinities and coefficients of 64 bits or more.
func decFields128(v bson.Value) (neg bool, coef uint64, exp int, ok bool) {
	hi, lo := v.Decimal128()
	if (hi>>61)&3 == 3 {
		return false, 0, 0, false
	}
	if hi&(1<<49-1) != 0 {
		return false, 0, 0, false
	}
	return hi>>63 == 1, lo, int((hi>>49)&0x3fff) + decMinExp, true
}

func (s *sumState) addDecimal(v bson.Value) {
	if neg, c, exp, ok := decFields128(v); ok {
		if s.fast == nil {
			s.fast = &decFastSum{}
		}
		f := s.fast
		if f.active && f.exp != exp {
			s.flushDec()
		}
		if !f.active {
			f.active, f.exp = true, exp
			f.sum.SetInt64(0)
		}
		f.tmp.SetUint64(c)
		if neg {
			f.sum.Sub(&f.sum, &f.tmp)
		} else {
			f.sum.Add(&f.sum, &f.tmp)
		}
		if f.sum.BitLen() > 100 {
			s.flushDec()
		}
		return
	}
	s.flushDec()
	s.addDec(decOf(v))
}

func (s *sumState) addDec(d dec) {
	if s.haveDec {
		s.dsum = decAdd(s.dsum, d)
	} else {
		s.dsum, s.haveDec = d, true
	}
}

// flushDec moves the fast sum into dsum.
func (s *sumState) flushDec() {
	f := s.fast
	if f == nil || !f.active {
		return
	}
	f.active = false
	c := new(big.Int).Set(&f.sum)
	s.addDec(dec{neg: c.Sign() < 0, coef: c.Abs(c), exp: f.exp})
}

func (s *sumState) addFloat(f float64) {
	t := s.fsum + f
	if math.Abs(s.fsum) >= math.Abs(f) {
		s.fcomp += (s.fsum - t) + f
	} else {
		s.fcomp += (f - t) + s.fsum
	}
	s.fsum = t
}

// addInt adds n exactly to isum until that overflows; from then on the
// total is a double.
func (s *sumState) addInt(n int64) {
	if !s.iover {
		r, over := addInt64(s.isum, n)
		if !over {
			s.isum = r
			return
		}
		s.toFloat()
	}
	s.addFloat(float64(n))
}

// toFloat moves the exact integer total into the double total (fsum and
// fcomp hold only doubles until then) and sets iover. Both halves of the
// split are exact doubles, so the sum stays exact as long as the double
// sum does (MongoDB's DoubleDoubleSummation adds longs exactly).
func (s *sumState) toFloat() {
	if s.iover {
		return
	}
	s.iover = true
	s.addFloat(float64(s.isum &^ (1<<32 - 1)))
	s.addFloat(float64(s.isum & (1<<32 - 1)))
}

func subInt64(a, b int64) (int64, bool) {
	r := a - b
	return r, (a >= 0) != (b >= 0) && (r >= 0) != (a >= 0)
}

func addInt64(a, b int64) (int64, bool) {
	r := a + b
	return r, (a >= 0) == (b >= 0) && (r >= 0) != (a >= 0)
}

// add folds one numeric value; it reports false for non-numbers.
func (s *sumState) add(v bson.Value) bool {
	if s.typ == 0 {
		s.typ = bson.TypeInt32
	}
	switch v.Type {
	case bson.TypeDecimal128:
		s.addDecimal(v)
		s.typ = bson.TypeDecimal128
	case bson.TypeDouble:
		s.addNum(bson.TypeDouble, 0, v.Double())
	case bson.TypeInt64:
		s.addNum(bson.TypeInt64, v.Int64(), 0)
	case bson.TypeInt32:
		s.addNum(bson.TypeInt32, int64(v.Int32()), 0)
	default:
		return false
	}
	return true
}

// addNum folds an int32 or int64 n, or a double f, as add does.
func (s *sumState) addNum(typ bson.Type, n int64, f float64) {
	if s.typ == 0 {
		s.typ = bson.TypeInt32
	}
	switch typ {
	case bson.TypeDouble:
		s.toFloat() // the integer sum is no longer the total
		s.addFloat(f)
		if s.typ != bson.TypeDecimal128 {
			s.typ = bson.TypeDouble
		}
	case bson.TypeInt64:
		s.addInt(n)
		if s.typ == bson.TypeInt32 {
			s.typ = bson.TypeInt64
		}
	default:
		s.addInt(n)
	}
}

func (s *sumState) float() float64 {
	f := s.fsum + s.fcomp
	if math.IsNaN(f) && !math.IsNaN(s.fsum) {
		return s.fsum // infinities
	}
	return f
}

// nonDecimal returns the non-decimal part as a decimal.
func (s *sumState) nonDecimal() dec {
	s.flushDec()
	if !s.iover {
		return decFromInt(s.isum)
	}
	return decExactFloat(s.float())
}

func (s *sumState) result(e *Env) bson.Value {
	s.flushDec()
	switch s.typ {
	case bson.TypeDecimal128:
		return e.dec(decAdd(s.dsum, s.nonDecimal()))
	case bson.TypeInt64:
		if !s.iover {
			return e.int64(s.isum)
		}
		return e.double(s.float())
	case bson.TypeInt32:
		if !s.iover {
			return e.intOrLong(s.isum)
		}
		return e.double(s.float())
	case bson.TypeDouble:
		return e.double(s.float())
	}
	return e.int32(0)
}

// addState is MongoDB's $add: separate long, double and decimal totals
// with the widest type so far; a date switches to a long millisecond total.
type addState struct {
	typ    bson.Type
	long   int64
	double float64
	dec    dec
	isDate bool
}

func (s *addState) value(e *Env) bson.Value {
	if s.isDate {
		return e.date(s.long)
	}
	switch s.typ {
	case bson.TypeInt64:
		return e.int64(s.long)
	case bson.TypeDouble:
		return e.double(s.double)
	case bson.TypeDecimal128:
		return e.dec(s.dec)
	}
	return e.intOrLong(s.long)
}

var errDateOverflow = errf(mongoerr.Overflow, "date overflow")

func (s *addState) addToDate(v bson.Value) error {
	var n int64
	switch v.Type {
	case bson.TypeInt32, bson.TypeInt64:
		n = toLong(v)
	case bson.TypeDouble:
		f := v.Double()
		if !(f >= -9.223372036854775808e18 && f < 9.223372036854775807e18) {
			return errDateOverflow
		}
		n = int64(math.Round(f))
	case bson.TypeDecimal128:
		d := decOf(v)
		r, ok := d.int64(roundHalfEven)
		if !ok || !d.isInteger() {
			return errDateOverflow
		}
		n = r
	}
	r, over := addInt64(s.long, n)
	if over {
		return errDateOverflow
	}
	s.long = r
	return nil
}

func (s *addState) add(e *Env, v bson.Value) error {
	if v.Type == bson.TypeDateTime {
		if s.isDate {
			return errf(mongoerr.AddMultipleDates, "only one date allowed in an $add expression")
		}
		old := s.value(e)
		s.long = 0
		if err := s.addToDate(old); err != nil {
			return err
		}
		s.isDate = true
		return s.addToDate(e.int64(v.Int64()))
	}
	if s.isDate {
		return s.addToDate(v)
	}
	old := s.typ
	s.typ = widest(s.typ, v.Type)
	if old != s.typ {
		switch s.typ {
		case bson.TypeDouble:
			s.double = float64(s.long)
		case bson.TypeDecimal128:
			if old == bson.TypeDouble {
				s.dec = decFromFloat(s.double)
			} else {
				s.dec = decFromInt(s.long)
			}
		}
	}
	switch s.typ {
	case bson.TypeInt32, bson.TypeInt64:
		r, over := addInt64(s.long, toLong(v))
		if over {
			s.typ = bson.TypeDouble
			s.double = float64(s.long) + toFloat(v)
		} else {
			s.long = r
		}
	case bson.TypeDouble:
		s.double += toFloat(v)
	case bson.TypeDecimal128:
		s.dec = decAdd(s.dec, toDec(v))
	}
	return nil
}

func (n *addNode) eval(e *Env) (bson.Value, error) {
	s := addState{typ: bson.TypeInt32}
	for _, x := range n.args {
		v, err := x.eval(e)
		if err != nil {
			return missing, err
		}
		if nullish(v) {
			return vNull, nil
		}
		if !v.IsNumber() && v.Type != bson.TypeDateTime {
			return missing, errf(mongoerr.TypeMismatch, "$add only supports numeric or date types, not %s", typeName(v))
		}
		if err := s.add(e, v); err != nil {
			return missing, err
		}
	}
	return s.value(e), nil
}
