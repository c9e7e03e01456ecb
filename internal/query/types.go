package query

import (
	"math"
	"strconv"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// validTypeCode reports whether n is a BSON type code $type accepts.
func validTypeCode(n int64) bool {
	switch {
	case n >= 1 && n <= 19:
		return true
	case n == -1 || n == 127:
		return true
	}
	return false
}

// parseTypeSet parses $type's argument: a type number, an alias, "number",
// or an array of those.
func parseTypeSet(path string, v bson.Value) (*typeMatcher, error) {
	m := &typeMatcher{}
	if v.Type == bson.TypeArray {
		it := bson.Doc(v.Data).Iter()
		n := 0
		for it.Next() {
			if err := m.add(it.Element().Value); err != nil {
				return nil, err
			}
			n++
		}
		if n == 0 {
			return nil, mongoerr.New(mongoerr.FailedToParse, "%s must match at least one type", path)
		}
		return m, nil
	}
	if err := m.add(v); err != nil {
		return nil, err
	}
	return m, nil
}

func (m *typeMatcher) add(v bson.Value) error {
	switch {
	case v.Type == bson.TypeString:
		s := v.StringValue()
		if s == "number" {
			m.allNumbers = true
			return nil
		}
		t, ok := bson.TypeByAlias(s)
		if !ok {
			return badValue("Unknown type name alias: %s", s)
		}
		m.types[t] = true
		return nil
	case v.IsNumber():
		f, _ := v.AsFloat64()
		if math.IsNaN(f) || f != math.Trunc(f) || f > math.MaxInt32 || f < math.MinInt32 {
			return badValue("Invalid numerical type code: %s", formatNumber(v))
		}
		n := int64(f)
		if !validTypeCode(n) {
			return badValue("Invalid numerical type code: %d", n)
		}
		m.types[bson.Type(byte(int8(n)))] = true
		return nil
	}
	return mongoerr.New(mongoerr.TypeMismatch, "type must be represented as a number or a string")
}

// formatNumber prints a number as MongoDB's messages do.
func formatNumber(v bson.Value) string {
	switch v.Type {
	case bson.TypeInt32:
		return strconv.Itoa(int(v.Int32()))
	case bson.TypeInt64:
		return strconv.FormatInt(v.Int64(), 10)
	}
	f, _ := v.AsFloat64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}
