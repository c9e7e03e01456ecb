package agg

import (
	"math"
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

func init() {
	register("$limit", stageInfo{parse: parseLimit})
	register("$skip", stageInfo{parse: parseSkip})
	register("$count", stageInfo{parse: parseCount})
}

// stageInt reads the numeric argument of $limit/$skip/$sample's size: any
// number with an integral value representable as a 64-bit integer.
func stageInt(v bson.Value, name string) (int64, error) {
	if !v.IsNumber() {
		return 0, mongoerr.New(mongoerr.LimitNotNumber, "the %s must be specified as a number", name)
	}
	f, _ := v.AsFloat64()
	n, _ := v.AsInt64()
	if v.Type == bson.TypeDouble || v.Type == bson.TypeDecimal128 {
		if f != math.Trunc(f) || math.IsNaN(f) || f >= 9.223372036854775807e18 || f < -9.223372036854775808e18 {
			return 0, mongoerr.New(mongoerr.FailedToParse, "invalid argument to %s stage: Cannot represent as a 64-bit integer: %s: %s", name, name, v.String())
		}
		n = int64(f)
	}
	return n, nil
}

type limitStage struct{ n int64 }

func parseLimit(_ *Context, v bson.Value) (stage, error) {
	if !v.IsNumber() {
		return nil, mongoerr.New(mongoerr.LimitNotNumber, "the limit must be specified as a number")
	}
	n, err := stageInt(v, "$limit")
	if err != nil {
		return nil, err
	}
	if n <= 0 {
		return nil, mongoerr.New(mongoerr.LimitNotPositive, "the limit must be positive")
	}
	return &limitStage{n: n}, nil
}

func (s *limitStage) open(in Iterator) (Iterator, error) {
	left := s.n
	return FuncIterator(func() (bson.Doc, error) {
		if left <= 0 {
			return nil, nil
		}
		left--
		return in.Next()
	}), nil
}

type skipStage struct{ n int64 }

func parseSkip(_ *Context, v bson.Value) (stage, error) {
	if !v.IsNumber() {
		return nil, mongoerr.New(mongoerr.SkipNotNumber, "Argument to $skip must be a number")
	}
	n, err := stageInt(v, "$skip")
	if err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, mongoerr.New(mongoerr.SkipNegative, "Argument to $skip cannot be negative")
	}
	return &skipStage{n: n}, nil
}

func (s *skipStage) open(in Iterator) (Iterator, error) {
	left := s.n
	return FuncIterator(func() (bson.Doc, error) {
		for left > 0 {
			d, err := in.Next()
			if d == nil || err != nil {
				return nil, err
			}
			left--
		}
		return in.Next()
	}), nil
}

// countStage is $count: one document {field: n}, none for empty input.
type countStage struct{ field string }

func parseCount(_ *Context, v bson.Value) (stage, error) {
	if v.Type != bson.TypeString {
		return nil, mongoerr.New(mongoerr.CountFieldNotString, "the count field must be a non-empty string")
	}
	s := v.StringValue()
	switch {
	case s == "":
		return nil, mongoerr.New(mongoerr.CountFieldEmpty, "the count field must be a non-empty string")
	case strings.HasPrefix(s, "$"):
		return nil, mongoerr.New(mongoerr.CountFieldDollarPrefix, "the count field cannot be a $-prefixed path")
	case strings.Contains(s, "."):
		return nil, mongoerr.New(mongoerr.CountFieldContainsDot, "the count field cannot contain '.'")
	case strings.ContainsRune(s, 0):
		return nil, mongoerr.New(mongoerr.CountFieldNullByte, "the count field cannot contain a null byte")
	}
	return &countStage{field: s}, nil
}

func (s *countStage) open(in Iterator) (Iterator, error) {
	done := false
	return FuncIterator(func() (bson.Doc, error) {
		if done {
			return nil, nil
		}
		done = true
		var n int64
		for {
			d, err := in.Next()
			if err != nil {
				return nil, err
			}
			if d == nil {
				break
			}
			n++
		}
		if n == 0 {
			return nil, nil
		}
		var b bson.Builder
		if n <= math.MaxInt32 {
			b.AppendInt32(s.field, int32(n))
		} else {
			b.AppendInt64(s.field, n)
		}
		return b.Finish(), nil
	}), nil
}
