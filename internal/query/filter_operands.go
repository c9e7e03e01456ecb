package query

// The operands of query operators that take more than a value to compare:
// $in's list, $regex with $options, $elemMatch, $all, $size, $mod and the
// bit tests (filter_parse.go dispatches to them).

import (
	"math"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

func (p *filterParser) parseIn(arr bson.Doc) (*inMatcher, error) {
	m := &inMatcher{coll: p.coll}
	it := arr.Iter()
	for it.Next() {
		v := it.Element().Value
		if isExpressionDoc(v, false) {
			return nil, badValue("cannot nest $ under $in")
		}
		switch v.Type {
		case bson.TypeRegex:
			r, err := newRegexMatcher(v.Regex())
			if err != nil {
				return nil, err
			}
			m.regexes = append(m.regexes, r)
		case bson.TypeUndefined:
			return nil, badValue("InMatchExpression equality cannot be undefined")
		case bson.TypeNull:
			m.hasNull = true
			m.eqs = append(m.eqs, v)
		default:
			m.eqs = append(m.eqs, v)
		}
	}
	m.prepare()
	return m, nil
}

func (p *filterParser) parseRegexDoc(context bson.Doc) (pred, error) {
	var pattern, options string
	var optSet bool
	it := context.Iter()
	for it.Next() {
		e := it.Element()
		switch e.Key {
		case "$regex":
			switch e.Value.Type {
			case bson.TypeString:
				pattern = e.Value.StringValue()
			case bson.TypeRegex:
				pat, opt := e.Value.Regex()
				pattern = pat
				if opt != "" {
					if optSet {
						return nil, mongoerr.New(mongoerr.RegexOptionsTwice, "options set in both $regex and $options")
					}
					options, optSet = opt, true
				}
			default:
				return nil, badValue("$regex has to be a string")
			}
		case "$options":
			if e.Value.Type != bson.TypeString {
				return nil, badValue("$options has to be a string")
			}
			if optSet {
				return nil, mongoerr.New(mongoerr.RegexOptionsTwiceInRegex, "options set in both $regex and $options")
			}
			options, optSet = e.Value.StringValue(), true
		}
	}
	m, err := newRegexMatcher(pattern, options)
	if err != nil {
		return nil, err
	}
	return &leafPred{m: m}, nil
}

func (p *filterParser) parseElemMatch(v bson.Value) (pred, error) {
	if v.Type != bson.TypeDocument {
		return nil, badValue("$elemMatch needs an Object")
	}
	d := bson.Doc(v.Data)
	valueForm := false
	if isExpressionDoc(v, true) {
		it := d.Iter()
		it.Next()
		valueForm = !pathlessOperators[it.Element().Key]
	}
	if valueForm {
		ps, err := p.parseSub("", d, levelSub)
		if err != nil {
			return nil, err
		}
		return &leafPred{m: &elemMatchValue{preds: ps}, mode: leafWhole}, nil
	}
	sub, err := p.parse(d, levelSub)
	if err != nil {
		return nil, err
	}
	return &leafPred{m: &elemMatchObject{sub: sub}, mode: leafWhole}, nil
}

func (p *filterParser) parseAll(path string, v bson.Value) (pred, error) {
	if v.Type != bson.TypeArray {
		return nil, badValue("$all needs an array")
	}
	arr := bson.Doc(v.Data)
	var out andPred
	it := arr.Iter()
	first := true
	elemMatchForm := false
	for it.Next() {
		x := it.Element().Value
		if first {
			first = false
			elemMatchForm = x.Type == bson.TypeDocument && firstKey(bson.Doc(x.Data)) == "$elemMatch"
		}
		if elemMatchForm {
			if x.Type != bson.TypeDocument {
				return nil, badValue("$all/$elemMatch has to be consistent")
			}
			d := bson.Doc(x.Data)
			if firstKey(d) != "$elemMatch" {
				return nil, badValue("$all/$elemMatch has to be consistent")
			}
			fv, _ := d.Lookup("$elemMatch")
			pr, err := p.parseElemMatch(fv)
			if err != nil {
				return nil, err
			}
			out = append(out, pr)
			continue
		}
		switch {
		case x.Type == bson.TypeRegex:
			m, err := newRegexMatcher(x.Regex())
			if err != nil {
				return nil, err
			}
			out = append(out, &leafPred{m: m})
		case x.Type == bson.TypeDocument && isPathOperator(firstKey(bson.Doc(x.Data))):
			return nil, badValue("no $ expressions in $all")
		default:
			pr, err := p.cmp(opEQ, path, x)
			if err != nil {
				return nil, err
			}
			out = append(out, pr)
		}
	}
	if len(out) == 0 {
		return constPred(false), nil
	}
	return out, nil
}

func firstKey(d bson.Doc) string {
	it := d.Iter()
	if it.Next() {
		return it.Element().Key
	}
	return ""
}

// isPathOperator reports whether name is an operator that applies to a
// path ($gt, $in, ...), as MongoDB's parsePathAcceptingKeyword.
func isPathOperator(name string) bool {
	switch name {
	case "$eq", "$lt", "$lte", "$gt", "$gte", "$ne", "$in", "$nin", "$exists", "$type", "$size",
		"$mod", "$regex", "$options", "$elemMatch", "$all", "$bitsAllSet", "$bitsAnySet",
		"$bitsAllClear", "$bitsAnyClear", "$near", "$nearSphere", "$geoNear", "$geoWithin",
		"$within", "$geoIntersects", "$not":
		return true
	}
	return false
}

func parseSize(v bson.Value) (int, error) {
	var n int64
	switch v.Type {
	case bson.TypeInt32:
		n = int64(v.Int32())
	case bson.TypeInt64:
		n = v.Int64()
		if n != int64(int32(n)) {
			return 0, badValue("$size must be representable as a 32-bit integer")
		}
	case bson.TypeDouble:
		f := v.Double()
		if f != math.Trunc(f) || f > math.MaxInt32 || f < math.MinInt32 {
			return 0, badValue("$size must be a whole number")
		}
		n = int64(f)
	case bson.TypeDecimal128:
		f, _ := v.AsFloat64()
		if f != math.Trunc(f) || f > math.MaxInt32 || f < math.MinInt32 {
			return 0, badValue("$size must be a whole number")
		}
		n = int64(f)
	default:
		return 0, badValue("$size needs a number")
	}
	if n < 0 {
		return 0, badValue("$size may not be negative")
	}
	return int(n), nil
}

func parseMod(v bson.Value) (valueMatcher, error) {
	if v.Type != bson.TypeArray {
		return nil, badValue("malformed mod, needs to be an array")
	}
	vals := bson.Doc(v.Data).Values()
	if len(vals) < 2 {
		return nil, badValue("malformed mod, not enough elements")
	}
	if len(vals) > 2 {
		return nil, badValue("malformed mod, too many elements")
	}
	if !vals[0].IsNumber() {
		return nil, badValue("malformed mod, divisor not a number")
	}
	if !vals[1].IsNumber() {
		return nil, badValue("malformed mod, remainder not a number")
	}
	d, err := coerceModArg(vals[0], "divisor")
	if err != nil {
		return nil, err
	}
	r, err := coerceModArg(vals[1], "remainder")
	if err != nil {
		return nil, err
	}
	if d == 0 {
		return nil, badValue("divisor cannot be 0")
	}
	return modMatcher{divisor: d, remainder: r}, nil
}

func coerceModArg(v bson.Value, what string) (int64, error) {
	f, _ := v.AsFloat64()
	if v.Type == bson.TypeDouble || v.Type == bson.TypeDecimal128 {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, badValue("malformed mod, %s value is invalid :: caused by :: Unable to coerce NaN/Inf to integral type", what)
		}
		if f >= 9.223372036854775807e18 || f < -9.223372036854775808e18 {
			return 0, badValue("malformed mod, %s value is invalid :: caused by :: Out of bounds coercing to integral value", what)
		}
	}
	n, _ := truncToInt64(v)
	return n, nil
}

func parseBits(e bson.Element) (valueMatcher, error) {
	m := &bitsMatcher{
		set: e.Key == "$bitsAllSet" || e.Key == "$bitsAnySet",
		all: e.Key == "$bitsAllSet" || e.Key == "$bitsAllClear",
	}
	v := e.Value
	switch {
	case v.Type == bson.TypeArray:
		it := bson.Doc(v.Data).Iter()
		for it.Next() {
			x := it.Element()
			if !x.Value.IsNumber() {
				return nil, badValue("bit positions must be an integer but got: %s", elemString(x))
			}
			var n int64
			switch x.Value.Type {
			case bson.TypeInt32:
				n = int64(x.Value.Int32())
			case bson.TypeInt64:
				n = x.Value.Int64()
				if n > math.MaxInt32 || n < math.MinInt32 {
					return nil, badValue("bit positions cannot be represented as a 32-bit signed integer: %s", elemString(x))
				}
			default:
				f, _ := x.Value.AsFloat64()
				if math.IsNaN(f) {
					return nil, badValue("bit positions cannot take a NaN: %s", elemString(x))
				}
				if f > math.MaxInt32 || f < math.MinInt32 {
					return nil, badValue("bit positions cannot be represented as a 32-bit signed integer: %s", elemString(x))
				}
				if f != math.Trunc(f) {
					return nil, badValue("bit positions must be an integer but got: %s", elemString(x))
				}
				n = int64(f)
			}
			if n < 0 {
				return nil, badValue("bit positions must be >= 0 but got: %s", elemString(x))
			}
			m.positions = append(m.positions, uint32(n))
		}
	case v.IsNumber():
		n, err := parseIntegerLong(e)
		if err != nil {
			return nil, err
		}
		if n < 0 {
			return nil, mongoerr.New(mongoerr.FailedToParse, "Expected a positive number in: %s", elemString(e))
		}
		for i := uint32(0); i < 63; i++ {
			if n&(1<<i) != 0 {
				m.positions = append(m.positions, i)
			}
		}
	case v.Type == bson.TypeBinary:
		_, data := v.Binary()
		for i, b := range data {
			for j := uint32(0); j < 8; j++ {
				if b&(1<<j) != 0 {
					m.positions = append(m.positions, uint32(i)*8+j)
				}
			}
		}
	default:
		return nil, badValue("%s takes an Array, a number, or a BinData but received: %s", e.Key, elemString(e))
	}
	return m, nil
}
