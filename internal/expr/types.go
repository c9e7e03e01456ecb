package expr

import (
	"encoding/hex"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// $type, $isNumber, $convert and its $toX shorthands.

// ConversionFailure is MongoDB's code for a failed $convert.
const ConversionFailure = mongoerr.ConversionFailure

func init() {
	regUnary("$type", func(e *Env, v bson.Value) (bson.Value, error) { return e.str(typeName(v)), nil })
	regUnary("$isNumber", func(e *Env, v bson.Value) (bson.Value, error) { return vBool(v.IsNumber()), nil })
	register("$convert", parseConvert)
	for name, t := range map[string]bson.Type{
		"$toString": bson.TypeString, "$toInt": bson.TypeInt32, "$toLong": bson.TypeInt64,
		"$toDouble": bson.TypeDouble, "$toDecimal": bson.TypeDecimal128, "$toDate": bson.TypeDateTime,
		"$toBool": bson.TypeBoolean, "$toObjectId": bson.TypeObjectID,
	} {
		t := t
		fn := func(e *Env, v bson.Value) (bson.Value, error) {
			if nullish(v) {
				return vNull, nil
			}
			return e.convert(v, t)
		}
		register(name, func(p *parser, name string, arg bson.Value) (node, error) {
			vals := argList(arg)
			if len(vals) != 1 {
				return nil, errf(mongoerr.AccumulatorSingleArgument, "%s requires a single argument, got %d", name, len(vals))
			}
			x, err := p.parse(vals[0])
			if err != nil {
				return nil, err
			}
			return p.fold(&unaryNode{arg: x, fn: fn}, x), nil
		})
	}
}

type convertNode struct {
	input, to, onError, onNull node
}

func parseConvert(p *parser, name string, arg bson.Value) (node, error) {
	m, err := namedArgs(p, arg, []string{"input", "to", "onError", "onNull"}, func() error {
		return errf(mongoerr.FailedToParse, "$convert expects an object of named arguments but found: %s", typeName(arg))
	}, func(key string) error {
		return errf(mongoerr.FailedToParse, "$convert found an unknown argument: %s", key)
	})
	if err != nil {
		return nil, err
	}
	n := &convertNode{input: m["input"], to: m["to"], onError: m["onError"], onNull: m["onNull"]}
	if n.input == nil {
		return nil, errf(mongoerr.FailedToParse, "Missing 'input' parameter to $convert")
	}
	if n.to == nil {
		return nil, errf(mongoerr.FailedToParse, "Missing 'to' parameter to $convert")
	}
	return n, nil
}

// targetType resolves $convert's 'to' value.
func targetType(v bson.Value) (bson.Type, error) {
	switch {
	case v.Type == bson.TypeString:
		s := v.StringValue()
		if s == "missing" || s == "number" {
			return 0, errf(mongoerr.BadValue, "Unknown type name: %s", s)
		}
		t, ok := bson.TypeByAlias(s)
		if !ok {
			return 0, errf(mongoerr.BadValue, "Unknown type name: %s", s)
		}
		return t, nil
	case v.IsNumber():
		if !isIntegral32(v) {
			return 0, errf(mongoerr.FailedToParse, "In $convert, numeric 'to' argument is not an integer")
		}
		code := toLong(v)
		t := bson.Type(code)
		if code == -1 {
			t = bson.TypeMinKey
		}
		if _, ok := bson.TypeByAlias(t.String()); !ok || code < -1 || code > 127 {
			return 0, errf(mongoerr.FailedToParse, "In $convert, numeric value for 'to' does not correspond to a BSON type: %d", code)
		}
		return t, nil
	}
	return 0, errf(mongoerr.FailedToParse, "$convert's 'to' argument must be a string or number, but is %s", typeName(v))
}

func (n *convertNode) eval(e *Env) (bson.Value, error) {
	in, err := n.input.eval(e)
	if err != nil {
		return missing, err
	}
	tv, err := n.to.eval(e)
	if err != nil {
		return missing, err
	}
	if nullish(tv) {
		return vNull, nil
	}
	t, err := targetType(tv)
	if err != nil {
		return missing, err
	}
	if nullish(in) {
		if n.onNull != nil {
			return n.onNull.eval(e)
		}
		return vNull, nil
	}
	out, err := e.convert(in, t)
	if err != nil && n.onError != nil && errCodeOf(err) == ConversionFailure {
		return n.onError.eval(e)
	}
	return out, err
}

func errCodeOf(err error) int32 {
	if me, ok := err.(*mongoerr.Error); ok {
		return me.Code
	}
	return 0
}

func convFail(format string, args ...any) error {
	return errf(ConversionFailure, format, args...)
}

func unsupported(from bson.Value, to bson.Type) error {
	return convFail("Unsupported conversion from %s to %s in $convert with no onError value", typeName(from), to.String())
}

// convert converts a non-null value to type t as $convert does.
func (e *Env) convert(v bson.Value, t bson.Type) (bson.Value, error) {
	if v.Type == t {
		return v, nil
	}
	switch t {
	case bson.TypeDouble:
		return e.toDouble(v)
	case bson.TypeString:
		return e.toString(v)
	case bson.TypeInt32, bson.TypeInt64:
		return e.toInteger(v, t)
	case bson.TypeDecimal128:
		return e.toDecimal(v)
	case bson.TypeBoolean:
		return vBool(toBool(v)), nil
	case bson.TypeDateTime:
		return e.toDate(v)
	case bson.TypeObjectID:
		if v.Type == bson.TypeString {
			s := v.StringValue()
			if len(s) != 24 {
				return missing, convFail("Failed to parse objectId '%s' in $convert with no onError value: Invalid string length for parsing to OID, expected 24 but found %d", s, len(s))
			}
			b, err := hex.DecodeString(s)
			if err != nil {
				return missing, convFail("Failed to parse objectId '%s' in $convert with no onError value: Invalid character found in hex string: %s", s, s)
			}
			var id [12]byte
			copy(id[:], b)
			return e.objectID(id), nil
		}
	}
	return missing, unsupported(v, t)
}

func toBool(v bson.Value) bool {
	switch v.Type {
	case bson.TypeBoolean, bson.TypeInt32, bson.TypeInt64, bson.TypeDouble, bson.TypeDecimal128:
		return Truthy(v)
	}
	return true
}

func (e *Env) toDouble(v bson.Value) (bson.Value, error) {
	switch v.Type {
	case bson.TypeInt32, bson.TypeInt64:
		return e.double(toFloat(v)), nil
	case bson.TypeDecimal128:
		d := decOf(v)
		f := d.float()
		if d.kind == decFinite && (math.IsInf(f, 0) || f == 0 && !d.isZero()) {
			return missing, convFail("Conversion would overflow target type in $convert with no onError value: %s", d.String())
		}
		return e.double(f), nil
	case bson.TypeBoolean:
		if v.Boolean() {
			return e.double(1), nil
		}
		return e.double(0), nil
	case bson.TypeDateTime:
		return e.double(float64(v.Int64())), nil
	case bson.TypeString:
		s := v.StringValue()
		if err := checkHex(s); err != nil {
			return missing, err
		}
		f, ok := parseDoubleString(s)
		if !ok {
			return missing, convFail("Failed to parse number '%s' in $convert with no onError value: Did not consume whole string.", s)
		}
		return e.double(f), nil
	}
	return missing, unsupported(v, bson.TypeDouble)
}

func checkHex(s string) error {
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		return convFail("Illegal hexadecimal input in $convert with no onError value: %s", s)
	}
	return nil
}

func parseDoubleString(s string) (float64, bool) {
	switch strings.ToLower(strings.TrimLeft(s, "+-")) {
	case "inf", "infinity", "nan":
		f, err := strconv.ParseFloat(s, 64)
		return f, err == nil
	}
	if s == "" || strings.ContainsAny(s, "_xXpP") {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return f, !math.IsInf(f, 0) // underflow to 0 is fine, overflow is not
		}
		return 0, false
	}
	return f, true
}

func (e *Env) toString(v bson.Value) (bson.Value, error) {
	switch v.Type {
	case bson.TypeInt32, bson.TypeInt64:
		e.scratch = strconv.AppendInt(e.scratch[:0], toLong(v), 10)
		return e.strBytes(e.scratch), nil
	case bson.TypeDouble, bson.TypeDecimal128, bson.TypeDateTime:
		s, err := coerceToString(v)
		if err != nil {
			return missing, convFail("Unsupported conversion from date to string in $convert with no onError value")
		}
		return e.str(s), nil
	case bson.TypeBoolean:
		if v.Boolean() {
			return e.str("true"), nil
		}
		return e.str("false"), nil
	case bson.TypeObjectID:
		return e.str(hex.EncodeToString(v.Data)), nil
	case bson.TypeSymbol:
		return e.str(v.StringValue()), nil
	}
	return missing, unsupported(v, bson.TypeString)
}

func (e *Env) toInteger(v bson.Value, t bson.Type) (bson.Value, error) {
	lo, hi := int64(math.MinInt32), int64(math.MaxInt32)
	if t == bson.TypeInt64 {
		lo, hi = math.MinInt64, math.MaxInt64
	}
	mk := func(n int64) bson.Value {
		if t == bson.TypeInt32 {
			return e.int32(int32(n))
		}
		return e.int64(n)
	}
	switch v.Type {
	case bson.TypeInt32, bson.TypeInt64:
		n := toLong(v)
		if n < lo || n > hi {
			return missing, convFail("Conversion would overflow target type in $convert with no onError value: ")
		}
		return mk(n), nil
	case bson.TypeDouble:
		f := v.Double()
		if math.IsNaN(f) {
			return missing, convFail("Attempt to convert NaN value to integer type in $convert with no onError value")
		}
		if math.IsInf(f, 0) {
			return missing, convFail("Attempt to convert infinity value to integer type in $convert with no onError value")
		}
		if f < float64(lo) || (t == bson.TypeInt32 && f > float64(hi)) || (t == bson.TypeInt64 && f >= 9.223372036854775807e18) {
			return missing, convFail("Conversion would overflow target type in $convert with no onError value: %s", fmtDouble(f))
		}
		return mk(int64(f)), nil
	case bson.TypeDecimal128:
		d := decOf(v)
		switch d.kind {
		case decNaN:
			return missing, convFail("Attempt to convert NaN value to integer type in $convert with no onError value")
		case decInf:
			return missing, convFail("Attempt to convert infinity value to integer type in $convert with no onError value")
		}
		n, ok := d.int64(roundTrunc)
		if !ok || n < lo || n > hi {
			return missing, convFail("Conversion would overflow target type in $convert with no onError value: %s", d.String())
		}
		return mk(n), nil
	case bson.TypeBoolean:
		if v.Boolean() {
			return mk(1), nil
		}
		return mk(0), nil
	case bson.TypeDateTime:
		if t == bson.TypeInt64 {
			return e.int64(v.Int64()), nil
		}
	case bson.TypeString:
		s := v.StringValue()
		if err := checkHex(s); err != nil {
			return missing, err
		}
		digits := strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
		if digits == "" {
			return missing, convFail("Failed to parse number '%s' in $convert with no onError value: No digits", s)
		}
		for i := 0; i < len(digits); i++ {
			if digits[i] < '0' || digits[i] > '9' {
				return missing, convFail("Failed to parse number '%s' in $convert with no onError value: Did not consume whole string.", s)
			}
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < lo || n > hi {
			return missing, convFail("Failed to parse number '%s' in $convert with no onError value: Overflow", s)
		}
		return mk(n), nil
	}
	return missing, unsupported(v, t)
}

func (e *Env) toDecimal(v bson.Value) (bson.Value, error) {
	switch v.Type {
	case bson.TypeInt32, bson.TypeInt64, bson.TypeDateTime:
		hi, lo := bson.Decimal128FromInt64(toLong(v))
		return e.decimal(hi, lo), nil
	case bson.TypeDouble:
		hi, lo := bson.Decimal128FromFloat64(v.Double())
		return e.decimal(hi, lo), nil
	case bson.TypeBoolean:
		if v.Boolean() {
			return e.dec(decFromInt(1)), nil
		}
		return e.dec(decFromInt(0)), nil
	case bson.TypeString:
		s := v.StringValue()
		if err := checkHex(s); err != nil {
			return missing, err
		}
		hi, lo, err := bson.ParseDecimal128(s)
		if err == bson.ErrDecimal128Inexact {
			d, ok := parseDecLoose(s)
			if ok {
				return e.dec(d), nil
			}
		} else if err == nil {
			return e.decimal(hi, lo), nil
		}
		return missing, convFail("Failed to parse number '%s' in $convert with no onError value: Failed to parse string to decimal", s)
	}
	return missing, unsupported(v, bson.TypeDecimal128)
}

// parseDecLoose parses a decimal string that needs rounding.
func parseDecLoose(s string) (dec, bool) {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimLeft(s, "+-")
	mant, expS, hasExp := strings.Cut(strings.ToLower(s), "e")
	exp := 0
	if hasExp {
		n, err := strconv.Atoi(expS)
		if err != nil {
			return dec{}, false
		}
		exp = n
	}
	ip, fp, _ := strings.Cut(mant, ".")
	digits := ip + fp
	if digits == "" {
		return dec{}, false
	}
	c, ok := new(big.Int).SetString(digits, 10)
	if !ok {
		return dec{}, false
	}
	return dec{neg: neg, coef: c, exp: exp - len(fp)}, true
}

func (e *Env) toDate(v bson.Value) (bson.Value, error) {
	switch v.Type {
	case bson.TypeInt64:
		return e.date(v.Int64()), nil
	case bson.TypeDouble:
		f := v.Double()
		if math.IsNaN(f) || math.IsInf(f, 0) || f < -9.223372036854775808e18 || f >= 9.223372036854775807e18 {
			return missing, convFail("Conversion would overflow target type in $convert with no onError value: %s", fmtDouble(f))
		}
		return e.date(int64(f)), nil
	case bson.TypeDecimal128:
		n, ok := decOf(v).int64(roundTrunc)
		if !ok {
			return missing, convFail("Conversion would overflow target type in $convert with no onError value: %s", decOf(v).String())
		}
		return e.date(n), nil
	case bson.TypeObjectID:
		secs := uint32(v.Data[0])<<24 | uint32(v.Data[1])<<16 | uint32(v.Data[2])<<8 | uint32(v.Data[3])
		return e.date(int64(secs) * 1000), nil
	case bson.TypeTimestamp:
		t, _ := v.Timestamp()
		return e.date(int64(t) * 1000), nil
	case bson.TypeString:
		ms, err := parseDateString(v.StringValue(), nil, "")
		if err != nil {
			return missing, convFail("%s", err.Error())
		}
		return e.date(ms), nil
	}
	return missing, unsupported(v, bson.TypeDateTime)
}
