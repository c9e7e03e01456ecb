package expr

import (
	"math"
	"math/bits"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// $subtract, $multiply, $divide and $mod, with the type promotion of
// arith.go.

// ---- $subtract ----

func evalSubtract(e *Env, a, b bson.Value) (bson.Value, error) {
	switch widest(a.Type, b.Type) {
	case bson.TypeDecimal128:
		return e.dec(decSub(toDec(a), toDec(b))), nil
	case bson.TypeDouble:
		return e.double(toFloat(a) - toFloat(b)), nil
	case bson.TypeInt64:
		x, y := toLong(a), toLong(b)
		r := x - y
		if (x >= 0) != (y >= 0) && (r >= 0) != (x >= 0) {
			return e.double(float64(x) - float64(y)), nil
		}
		return e.int64(r), nil
	case bson.TypeInt32:
		return e.intOrLong(toLong(a) - toLong(b)), nil
	}
	if nullish(a) || nullish(b) {
		return vNull, nil
	}
	if a.Type == bson.TypeDateTime {
		switch b.Type {
		case bson.TypeDateTime:
			return e.int64(a.Int64() - b.Int64()), nil
		case bson.TypeInt32, bson.TypeInt64, bson.TypeDouble, bson.TypeDecimal128:
			var nb bson.Value
			switch b.Type {
			case bson.TypeDouble:
				f := b.Double()
				if !(f >= -9.223372036854775808e18 && f < 9.223372036854775807e18) {
					return missing, errDateOverflow
				}
				r, over := subInt64(a.Int64(), int64(math.Round(f)))
				if over {
					return missing, errDateOverflow
				}
				return e.date(r), nil
			case bson.TypeDecimal128:
				d := decOf(b)
				n, ok := d.int64(roundHalfEven)
				if !ok || !d.isInteger() {
					return missing, errDateOverflow
				}
				nb = e.int64(n)
			default:
				nb = b
			}
			r, over := subInt64(a.Int64(), toLong(nb))
			if over {
				return missing, errDateOverflow
			}
			return e.date(r), nil
		}
		return missing, errf(mongoerr.TypeMismatch, "can't $subtract %s from Date", typeName(b))
	}
	return missing, errf(mongoerr.TypeMismatch, "can't $subtract %s from %s", typeName(b), typeName(a))
}

// ---- $multiply ----

type mulNode struct{ args []node }

func parseMultiply(p *parser, name string, arg bson.Value) (node, error) {
	args, err := p.parseAll(argList(arg))
	if err != nil {
		return nil, err
	}
	return p.fold(&mulNode{args: args}, args...), nil
}

func (n *mulNode) eval(e *Env) (bson.Value, error) {
	typ := bson.TypeInt32
	var iprod int64 = 1
	var fprod float64 = 1
	var dprod dec
	haveDec, iover := false, false
	for _, x := range n.args {
		v, err := x.eval(e)
		if err != nil {
			return missing, err
		}
		if !v.IsNumber() {
			if nullish(v) {
				return vNull, nil
			}
			return missing, errf(mongoerr.TypeMismatch, "$multiply only supports numeric types, not %s", typeName(v))
		}
		switch v.Type {
		case bson.TypeDecimal128:
			if !haveDec {
				// fold what we have so far into the decimal product
				if typ == bson.TypeDouble || iover {
					dprod = decFromFloat(fprod)
				} else {
					dprod = decFromInt(iprod)
				}
				haveDec = true
			}
			dprod = decMul(dprod, decOf(v))
			typ = bson.TypeDecimal128
			continue
		case bson.TypeDouble:
			if typ != bson.TypeDecimal128 {
				typ = bson.TypeDouble
			}
		case bson.TypeInt64:
			if typ == bson.TypeInt32 {
				typ = bson.TypeInt64
			}
		}
		if haveDec {
			dprod = decMul(dprod, toDec(v))
			continue
		}
		fprod *= toFloat(v)
		if v.Type != bson.TypeDouble && !iover {
			r, over := mulInt64(iprod, toLong(v))
			if over {
				iover = true
			} else {
				iprod = r
			}
		}
	}
	switch typ {
	case bson.TypeDecimal128:
		return e.dec(dprod), nil
	case bson.TypeDouble:
		return e.double(fprod), nil
	case bson.TypeInt64:
		if iover {
			return e.double(fprod), nil
		}
		return e.int64(iprod), nil
	}
	if iover {
		return e.double(fprod), nil
	}
	return e.intOrLong(iprod), nil
}

func mulInt64(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, false
	}
	hi, lo := bits.Mul64(uint64(absI64(a)), uint64(absI64(b)))
	neg := (a < 0) != (b < 0)
	if hi != 0 || lo > 1<<63 || lo == 1<<63 && !neg || a == math.MinInt64 || b == math.MinInt64 {
		if (a == math.MinInt64 && b == 1) || (b == math.MinInt64 && a == 1) {
			return math.MinInt64, false
		}
		if hi == 0 && lo == 1<<63 && neg {
			return math.MinInt64, false
		}
		return 0, true
	}
	if neg {
		return -int64(lo), false
	}
	return int64(lo), false
}

func absI64(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// ---- $divide, $mod ----

func evalDivide(e *Env, a, b bson.Value) (bson.Value, error) {
	if a.IsNumber() && b.IsNumber() {
		if isZeroNum(b) {
			return missing, errf(mongoerr.BadValue, "can't $divide by zero")
		}
		if a.Type == bson.TypeDecimal128 || b.Type == bson.TypeDecimal128 {
			return e.dec(decDiv(toDec(a), toDec(b))), nil
		}
		return e.double(toFloat(a) / toFloat(b)), nil
	}
	if nullish(a) || nullish(b) {
		return vNull, nil
	}
	return missing, errf(mongoerr.TypeMismatch, "$divide only supports numeric types, not %s and %s", typeName(a), typeName(b))
}

func evalMod(e *Env, a, b bson.Value) (bson.Value, error) {
	if a.IsNumber() && b.IsNumber() {
		if a.Type == bson.TypeDecimal128 || b.Type == bson.TypeDecimal128 {
			db := toDec(b)
			if db.isZero() {
				return missing, errf(mongoerr.ModByZeroDecimal, "can't $mod by zero")
			}
			return e.dec(decMod(toDec(a), db)), nil
		}
		rf := toFloat(b)
		if rf == 0 {
			return missing, errf(mongoerr.ModByZero, "can't $mod by zero")
		}
		if a.Type == bson.TypeDouble || b.Type == bson.TypeDouble {
			return e.double(math.Mod(toFloat(a), rf)), nil
		}
		x, y := toLong(a), toLong(b)
		r := int64(0)
		if y != -1 {
			r = x % y
		}
		if a.Type == bson.TypeInt64 || b.Type == bson.TypeInt64 {
			return e.int64(r), nil
		}
		return e.int32(int32(r)), nil
	}
	if nullish(a) || nullish(b) {
		return vNull, nil
	}
	return missing, errf(mongoerr.ModNotNumeric, "$mod only supports numeric types, not %s and %s", typeName(a), typeName(b))
}
