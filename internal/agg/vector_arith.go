package agg

import (
	"encoding/binary"
	"math"

	"github.com/cairndb/cairn/bson"
)

// Arithmetic and numeric conversions compiled from the columns
// (vector_expr.go): $add, $subtract, $toInt, $toLong and $toDouble. Each
// answers only for the value types whose result the expression engine
// (internal/expr's addState, evalSubtract and convert) computes without
// an error and without a decimal or a date: integers and doubles, null
// and missing. The integer arithmetic follows the engine's type rules
// exactly (int32 while every operand is an int32 and the result fits,
// int64 once an operand is an int64 or an int32 result overflows, a
// double once an operand is a double); the rare case of an int64
// overflow, where the engine turns to a double, answers unsure. Any other
// operand (a string, a decimal, a date, an array) answers unsure, so the
// engine raises the row's error or computes the row's result on its
// document.

// convertTargets are the conversions vxConvert compiles.
var convertTargets = map[string]bson.Type{"$toInt": bson.TypeInt32, "$toLong": bson.TypeInt64, "$toDouble": bson.TypeDouble}

// convert computes $toInt, $toLong or $toDouble of e's argument.
func (e *vecExpr) convert(ch *ColumnChunk, r int, s vxScratch) (bson.Value, bool) {
	v, ok := e.args[0].eval(ch, r, s)
	if !ok {
		return v, false
	}
	switch v.Type {
	case 0, bson.TypeNull, bson.TypeUndefined:
		return vxNull, true
	case e.to:
		return v, true
	}
	if e.to == bson.TypeDouble {
		switch v.Type {
		case bson.TypeInt32:
			return e.double(s, float64(v.Int32())), true
		case bson.TypeInt64, bson.TypeDateTime:
			return e.double(s, float64(v.Int64())), true
		case bson.TypeBoolean:
			if v.Boolean() {
				return e.double(s, 1), true
			}
			return e.double(s, 0), true
		}
		return v, false
	}
	var n int64
	switch v.Type {
	case bson.TypeInt32:
		n = int64(v.Int32())
	case bson.TypeInt64:
		n = v.Int64()
	case bson.TypeBoolean:
		if v.Boolean() {
			n = 1
		}
	case bson.TypeDouble:
		f := v.Double()
		// NaN, infinities and values out of range fail the conversion.
		if e.to == bson.TypeInt32 && !(f >= math.MinInt32 && f <= math.MaxInt32) ||
			e.to == bson.TypeInt64 && !(f >= math.MinInt64 && f < 9.223372036854775807e18) {
			return v, false
		}
		n = int64(f)
	default:
		return v, false
	}
	if e.to == bson.TypeInt32 {
		if n < math.MinInt32 || n > math.MaxInt32 {
			return v, false
		}
		return e.int32(s, int32(n)), true
	}
	return e.int64(s, n), true
}

// add computes $add of e's arguments.
func (e *vecExpr) add(ch *ColumnChunk, r int, s vxScratch) (bson.Value, bool) {
	long, any64 := int64(0), false
	var dbl float64
	isDouble := false
	for _, a := range e.args {
		v, ok := a.eval(ch, r, s)
		if !ok {
			return v, false
		}
		var x int64
		switch v.Type {
		case 0, bson.TypeNull, bson.TypeUndefined:
			return vxNull, true // before any later argument is evaluated
		case bson.TypeInt32:
			x = int64(v.Int32())
		case bson.TypeInt64:
			x, any64 = v.Int64(), true
		case bson.TypeDouble:
			if !isDouble {
				isDouble, dbl = true, float64(long)
			}
			dbl += v.Double()
			continue
		default:
			return v, false
		}
		if isDouble {
			dbl += float64(x)
			continue
		}
		sum := long + x
		if (long >= 0) == (x >= 0) && (sum >= 0) != (long >= 0) {
			return v, false // the engine turns to a double
		}
		long = sum
	}
	switch {
	case isDouble:
		return e.double(s, dbl), true
	case any64 || long < math.MinInt32 || long > math.MaxInt32:
		return e.int64(s, long), true
	}
	return e.int32(s, int32(long)), true
}

// subtract computes $subtract of two numbers.
func (e *vecExpr) subtract(ch *ColumnChunk, r int, s vxScratch) (bson.Value, bool) {
	a, ok := e.args[0].eval(ch, r, s)
	if !ok {
		return a, false
	}
	// a aliases the first argument's scratch buffer, which evaluating
	// the second does not touch.
	b, ok := e.args[1].eval(ch, r, s)
	if !ok {
		return b, false
	}
	num := func(v bson.Value) (int64, float64, int) {
		switch v.Type {
		case bson.TypeInt32:
			return int64(v.Int32()), float64(v.Int32()), 1
		case bson.TypeInt64:
			return v.Int64(), float64(v.Int64()), 2
		case bson.TypeDouble:
			return 0, v.Double(), 3
		}
		return 0, 0, 0
	}
	x, fx, ra := num(a)
	y, fy, rb := num(b)
	switch {
	case ra == 0 || rb == 0:
		return a, false // null, dates, decimals and errors: the engine
	case ra == 3 || rb == 3:
		return e.double(s, fx-fy), true
	}
	d := x - y
	if (x >= 0) != (y >= 0) && (d >= 0) != (x >= 0) {
		return a, false // the engine turns to a double
	}
	if ra == 2 || rb == 2 || d < math.MinInt32 || d > math.MaxInt32 {
		return e.int64(s, d), true
	}
	return e.int32(s, int32(d)), true
}

func (e *vecExpr) int64(s vxScratch, n int64) bson.Value {
	b := binary.LittleEndian.AppendUint64(s.buf[e.slot][:0], uint64(n))
	s.buf[e.slot] = b
	return bson.Value{Type: bson.TypeInt64, Data: b}
}

func (e *vecExpr) double(s vxScratch, f float64) bson.Value {
	b := binary.LittleEndian.AppendUint64(s.buf[e.slot][:0], math.Float64bits(f))
	s.buf[e.slot] = b
	return bson.Value{Type: bson.TypeDouble, Data: b}
}
