package query

import (
	"math"
	"math/big"
	"strconv"

	"github.com/cairndb/cairn/bson"
)

// numResult is the outcome of $inc/$mul arithmetic.
type numResult struct {
	t        bson.Type
	i        int64
	f        float64
	dhi, dlo uint64
	overflow bool
}

func (r numResult) append(b *bson.Builder, key string) {
	switch r.t {
	case bson.TypeInt32:
		b.AppendInt32(key, int32(r.i))
	case bson.TypeInt64:
		b.AppendInt64(key, r.i)
	case bson.TypeDouble:
		b.AppendDouble(key, r.f)
	default:
		b.AppendDecimal128(key, r.dhi, r.dlo)
	}
}

func numKind(a, b bson.Value) bson.Type {
	switch {
	case a.Type == bson.TypeDecimal128 || b.Type == bson.TypeDecimal128:
		return bson.TypeDecimal128
	case a.Type == bson.TypeDouble || b.Type == bson.TypeDouble:
		return bson.TypeDouble
	case a.Type == bson.TypeInt64 || b.Type == bson.TypeInt64:
		return bson.TypeInt64
	}
	return bson.TypeInt32
}

func intOf(v bson.Value) int64 {
	if v.Type == bson.TypeInt32 {
		return int64(v.Int32())
	}
	return v.Int64()
}

// addNumbers adds as MongoDB's SafeNum does: int32 overflow widens to
// int64, int64 overflow fails, doubles and decimals follow their types.
func addNumbers(a, b bson.Value) numResult {
	switch k := numKind(a, b); k {
	case bson.TypeDecimal128:
		return decimalOp(a, b, false)
	case bson.TypeDouble:
		x, _ := a.AsFloat64()
		y, _ := b.AsFloat64()
		return numResult{t: k, f: x + y}
	default:
		x, y := intOf(a), intOf(b)
		s := x + y
		if (x > 0 && y > 0 && s < 0) || (x < 0 && y < 0 && s >= 0) {
			return numResult{overflow: true}
		}
		if k == bson.TypeInt32 && s != int64(int32(s)) {
			k = bson.TypeInt64
		}
		return numResult{t: k, i: s}
	}
}

func mulNumbers(a, b bson.Value) numResult {
	switch k := numKind(a, b); k {
	case bson.TypeDecimal128:
		return decimalOp(a, b, true)
	case bson.TypeDouble:
		x, _ := a.AsFloat64()
		y, _ := b.AsFloat64()
		return numResult{t: k, f: x * y}
	default:
		x, y := intOf(a), intOf(b)
		if x != 0 && y != 0 {
			p := x * y
			if p/y != x || (x == -1 && y == math.MinInt64) || (y == -1 && x == math.MinInt64) {
				return numResult{overflow: true}
			}
		}
		p := x * y
		if k == bson.TypeInt32 && p != int64(int32(p)) {
			k = bson.TypeInt64
		}
		return numResult{t: k, i: p}
	}
}

// toDecimal converts a number to decimal128 halves.
func toDecimal(v bson.Value) (hi, lo uint64) {
	switch v.Type {
	case bson.TypeDecimal128:
		return v.Decimal128()
	case bson.TypeDouble:
		return bson.Decimal128FromFloat64(v.Double())
	}
	return bson.Decimal128FromInt64(intOf(v))
}

// decimalOp adds or multiplies two numbers as decimal128, exactly then
// rounded to 34 digits by the decimal parser.
func decimalOp(a, b bson.Value, mul bool) numResult {
	ahi, alo := toDecimal(a)
	bhi, blo := toDecimal(b)
	an, ac, ae, ak := bson.DecimalParts(ahi, alo)
	bn, bc, be, bk := bson.DecimalParts(bhi, blo)
	var s string
	switch {
	case ak == 2 || bk == 2:
		s = "NaN"
	case ak == 1 || bk == 1:
		switch {
		case mul && ((ak == 1 && bk == 0 && bc.Sign() == 0) || (bk == 1 && ak == 0 && ac.Sign() == 0)):
			s = "NaN"
		case mul:
			s = infString(an != bn)
		case ak == 1 && bk == 1 && an != bn:
			s = "NaN"
		case ak == 1:
			s = infString(an)
		default:
			s = infString(bn)
		}
	default:
		if an {
			ac.Neg(ac)
		}
		if bn {
			bc.Neg(bc)
		}
		var r *big.Int
		var e int
		if mul {
			r = new(big.Int).Mul(ac, bc)
			e = ae + be
		} else {
			e = min(ae, be)
			x := new(big.Int).Mul(ac, pow10(ae-e))
			y := new(big.Int).Mul(bc, pow10(be-e))
			r = x.Add(x, y)
		}
		s = r.String() + "E" + strconv.Itoa(e)
		if r.Sign() == 0 && ((mul && an != bn) || (!mul && an && bn)) {
			s = "-" + s
		}
	}
	hi, lo, err := bson.ParseDecimal128(s)
	if err != nil {
		return numResult{overflow: true}
	}
	return numResult{t: bson.TypeDecimal128, dhi: hi, dlo: lo}
}

func infString(neg bool) string {
	if neg {
		return "-Infinity"
	}
	return "Infinity"
}

func pow10(n int) *big.Int {
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)
}

// safeNumString prints a number as MongoDB's SafeNum debug string.
func safeNumString(v bson.Value) string {
	switch v.Type {
	case bson.TypeInt32:
		return "(NumberInt)" + v.String()
	case bson.TypeInt64:
		return "(NumberLong)" + strconv.FormatInt(v.Int64(), 10)
	case bson.TypeDouble:
		return "(NumberDouble)" + v.String()
	}
	return "(NumberDecimal)" + v.String()
}
