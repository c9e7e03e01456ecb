package expr

import (
	"math"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// The single-argument numeric operators ($abs, $ceil, $floor, $exp, $ln,
// $log10, $sqrt, ...) and $round and $trunc.

// ---- single-argument numeric operators ----

func numericUnary(name string, fn func(e *Env, v bson.Value) (bson.Value, error)) func(e *Env, v bson.Value) (bson.Value, error) {
	return func(e *Env, v bson.Value) (bson.Value, error) {
		if nullish(v) {
			return vNull, nil
		}
		if !v.IsNumber() {
			return missing, errf(mongoerr.ArithmeticNotNumeric, "%s only supports numeric types, not %s", name, typeName(v))
		}
		return fn(e, v)
	}
}

func absNum(e *Env, v bson.Value) (bson.Value, error) {
	switch v.Type {
	case bson.TypeDouble:
		return e.double(math.Abs(v.Double())), nil
	case bson.TypeDecimal128:
		d := decOf(v)
		d.neg = false
		return e.dec(d), nil
	}
	n := toLong(v)
	if n == math.MinInt64 {
		return missing, errf(mongoerr.AbsOfMinLong, "can't take $abs of long long min")
	}
	if v.Type == bson.TypeInt64 {
		return e.int64(absI64(n)), nil
	}
	return e.intOrLong(absI64(n)), nil
}

func roundingUnary(e *Env, v bson.Value, mode roundMode, f func(float64) float64) (bson.Value, error) {
	switch v.Type {
	case bson.TypeDouble:
		return e.double(f(v.Double())), nil
	case bson.TypeDecimal128:
		return e.dec(decOf(v).roundPlaces(0, mode)), nil
	}
	return v, nil
}

func expNum(e *Env, v bson.Value) (bson.Value, error) {
	if v.Type == bson.TypeDecimal128 {
		return e.dec(decExp(decOf(v))), nil
	}
	return e.double(math.Exp(toFloat(v))), nil
}

// logNum is $ln and $log10 (name): the logarithm of a positive number or
// NaN, decLog's for a decimal and log's for the others; anything else is
// refused with code.
func logNum(name string, code int32, decLog func(dec) dec, log func(float64) float64) func(e *Env, v bson.Value) (bson.Value, error) {
	return func(e *Env, v bson.Value) (bson.Value, error) {
		if v.Type == bson.TypeDecimal128 {
			d := decOf(v)
			if d.kind == decNaN || !d.neg && !d.isZero() {
				return e.dec(decLog(d)), nil
			}
		}
		f := toFloat(v)
		if !(f > 0 || math.IsNaN(f)) {
			return missing, errf(code, "%s's argument must be a positive number, but is %s", name, fmtDouble(f))
		}
		return e.double(log(f)), nil
	}
}

func sqrtNum(e *Env, v bson.Value) (bson.Value, error) {
	if v.Type == bson.TypeDecimal128 {
		d := decOf(v)
		if d.neg && !d.isZero() && d.kind != decNaN {
			return missing, errf(mongoerr.SqrtNegative, "$sqrt's argument must be greater than or equal to 0")
		}
		return e.dec(decSqrt(d)), nil
	}
	f := toFloat(v)
	if !(f >= 0 || math.IsNaN(f)) {
		return missing, errf(mongoerr.SqrtNegative, "$sqrt's argument must be greater than or equal to 0")
	}
	return e.double(math.Sqrt(f)), nil
}

// decFromFloatFull converts a double result of a transcendental function
// to decimal with 34-digit rounding of its binary value.
func decFromFloatFull(f float64) dec { return decExactFloat(f) }

func evalLog(e *Env, a, b bson.Value) (bson.Value, error) {
	if nullish(a) || nullish(b) {
		return vNull, nil
	}
	if !a.IsNumber() {
		return missing, errf(mongoerr.LogArgNotNumeric, "$log's argument must be numeric, not %s", typeName(a))
	}
	if !b.IsNumber() {
		return missing, errf(mongoerr.LogBaseNotNumeric, "$log's base must be numeric, not %s", typeName(b))
	}
	if a.Type == bson.TypeDecimal128 || b.Type == bson.TypeDecimal128 {
		da, db := toDec(a), toDec(b)
		if da.kind != decNaN && !da.neg && !da.isZero() && db.kind != decNaN && !db.neg && !db.isZero() && decCmp(db, decFromInt(1)) != 0 {
			if da.kind == decFinite && db.kind == decFinite {
				// MongoDB divides the two decimal logarithms
				return e.dec(decDiv(repack(decLn(da)), repack(decLn(db)))), nil
			}
			return e.dec(decFromFloatFull(math.Log(da.float()) / math.Log(db.float()))), nil
		}
	}
	x, base := toFloat(a), toFloat(b)
	if !(x > 0 || math.IsNaN(x)) {
		return missing, errf(mongoerr.LogArgNotPositive, "$log's argument must be a positive number, but is %s", fmtDouble(x))
	}
	if !(base > 0 && base != 1 || math.IsNaN(base)) {
		return missing, errf(mongoerr.LogBaseInvalid, "$log's base must be a positive number not equal to 1, but is %s", fmtDouble(base))
	}
	return e.double(math.Log(x) / math.Log(base)), nil
}

func evalPow(e *Env, a, b bson.Value) (bson.Value, error) {
	if nullish(a) || nullish(b) {
		return vNull, nil
	}
	if !a.IsNumber() {
		return missing, errf(mongoerr.PowBaseNotNumeric, "$pow's base must be numeric, not %s", typeName(a))
	}
	if !b.IsNumber() {
		return missing, errf(mongoerr.PowExponentNotNumeric, "$pow's exponent must be numeric, not %s", typeName(b))
	}
	if a.Type == bson.TypeDecimal128 || b.Type == bson.TypeDecimal128 {
		da, db := toDec(a), toDec(b)
		if da.isZero() && db.neg && !db.isZero() {
			return missing, errf(mongoerr.PowZeroNegativeExponent, "$pow cannot take a base of 0 and a negative exponent")
		}
		return e.dec(decPow(da, db)), nil
	}
	base, exp := toFloat(a), toFloat(b)
	if base == 0 && exp < 0 {
		return missing, errf(mongoerr.PowZeroNegativeExponent, "$pow cannot take a base of 0 and a negative exponent")
	}
	if a.Type == bson.TypeDouble || b.Type == bson.TypeDouble {
		return e.double(math.Pow(base, exp)), nil
	}
	bl, el := toLong(a), toLong(b)
	if el < 0 && bl != 1 && bl != -1 {
		return e.double(math.Pow(base, exp)), nil
	}
	r, ok := powInt(bl, el)
	if !ok {
		return e.double(math.Pow(base, exp)), nil
	}
	if a.Type == bson.TypeInt32 && b.Type == bson.TypeInt32 {
		return e.intOrLong(r), nil
	}
	return e.int64(r), nil
}

// powInt computes base^exp for exp >= 0 or base ±1, reporting overflow.
func powInt(base, exp int64) (int64, bool) {
	switch base {
	case 1:
		return 1, true
	case -1:
		if exp%2 == 0 {
			return 1, true
		}
		return -1, true
	case 0:
		if exp == 0 {
			return 1, true
		}
		return 0, true
	}
	r := int64(1)
	for i := int64(0); i < exp; i++ {
		var over bool
		r, over = mulInt64(r, base)
		if over {
			return 0, false
		}
	}
	return r, true
}

// ---- $round, $trunc ----

func parseRoundTrunc(mode roundMode) opParser {
	return func(p *parser, name string, arg bson.Value) (node, error) {
		args, err := p.rangeArgs(name, arg, 1, 2)
		if err != nil {
			return nil, err
		}
		return &naryNode{args: args, fn: func(e *Env, vals []bson.Value) (bson.Value, error) {
			return roundTruncEval(e, name, mode, vals)
		}}, nil
	}
}

func roundTruncEval(e *Env, name string, mode roundMode, vals []bson.Value) (bson.Value, error) {
	v := vals[0]
	prec := bson.Value{}
	if len(vals) > 1 {
		prec = vals[1]
		if nullish(prec) {
			return vNull, nil
		}
	}
	if nullish(v) {
		return vNull, nil
	}
	if !v.IsNumber() {
		return missing, errf(mongoerr.RoundNotNumeric, "%s only supports numeric types, not %s", name, typeName(v))
	}
	places := int64(0)
	if prec.Type != 0 {
		if !isIntegral32(prec) {
			return missing, errf(mongoerr.RoundPrecisionNotIntegral, "precision argument to  %s must be a integral value", name)
		}
		places = toLong(prec)
		if places < -20 || places > 100 {
			return missing, errf(mongoerr.RoundPrecisionOutOfRange, "cannot apply %s with precision value %d value must be in [-20, 100]", name, places)
		}
	}
	switch v.Type {
	case bson.TypeDecimal128:
		return e.dec(decOf(v).roundPlaces(int(places), mode)), nil
	case bson.TypeDouble:
		f := v.Double()
		if math.IsNaN(f) || math.IsInf(f, 0) || f == 0 {
			return v, nil
		}
		r := decExactFloat(f).roundPlaces(int(places), mode)
		return e.double(r.float()), nil
	}
	if places >= 0 {
		return v, nil
	}
	n := toLong(v)
	d := decFromInt(n).roundPlaces(int(places), mode)
	r, ok := d.int64(roundTrunc)
	if !ok {
		return missing, errf(mongoerr.RoundDecimalConversion, "invalid conversion from Decimal128 result in %s resulting from arguments: [%s, %d]", name, v.String(), places)
	}
	if v.Type == bson.TypeInt64 {
		return e.int64(r), nil
	}
	return e.intOrLong(r), nil
}
