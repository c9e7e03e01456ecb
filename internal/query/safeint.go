package query

import (
	"math"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// SafeInt64 reads a numeric command argument as MongoDB's IDL "safeInt64"
// does: any numeric type, doubles and decimals truncated toward zero and
// clamped to int64's range; NaN is BadValue, a non-number TypeMismatch
// (callers usually replace that error with their field's own).
func SafeInt64(v bson.Value) (int64, error) {
	switch v.Type {
	case bson.TypeInt32:
		return int64(v.Int32()), nil
	case bson.TypeInt64:
		return v.Int64(), nil
	case bson.TypeDouble, bson.TypeDecimal128:
		f, _ := v.AsFloat64()
		if math.IsNaN(f) {
			return 0, mongoerr.New(mongoerr.BadValue, "NaN is not a valid integer")
		}
		if f > math.MaxInt64 {
			return math.MaxInt64, nil
		}
		if f < math.MinInt64 {
			return math.MinInt64, nil
		}
		return int64(f), nil
	}
	return 0, mongoerr.New(mongoerr.TypeMismatch, "not a number")
}
