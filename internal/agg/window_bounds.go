package agg

// $setWindowFields' window bounds (documents and range windows over a
// sorted partition) and $linearFill (window.go parses and runs the stage).

import (
	"math"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/expr"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// bounds returns, for each row, the inclusive index range of its window
// (empty when lo > hi).
func (s *setWindowFieldsStage) bounds(w *window, rows []windowRow) ([][2]int, error) {
	n := len(rows)
	out := make([][2]int, n)
	if !w.rangeBased {
		for i := range rows {
			lo, hi := 0, n-1
			if w.lo != nil {
				lo = max(0, i+int(*w.lo))
			}
			if w.hi != nil {
				hi = min(n-1, i+int(*w.hi))
			}
			out[i] = [2]int{lo, hi}
		}
		return out, nil
	}
	keys := make([]float64, n)
	for i, r := range rows {
		v := lookupPath(r.doc, s.sortField)
		switch {
		case w.unit != "" && v.Type == bson.TypeDateTime:
			keys[i] = float64(v.DateTime())
		case w.unit == "" && v.IsNumber():
			keys[i], _ = v.AsFloat64()
		case w.unit != "":
			return nil, mongoerr.New(mongoerr.WindowRangeSortByNotDate, "Invalid range: Expected the sortBy field to be a Date, but it was %s", typeName(v))
		case v.Type == bson.TypeDateTime:
			return nil, mongoerr.New(mongoerr.WindowRangeRequiresUnit, "Invalid range: For windows that involve date or time ranges, a unit must be provided.")
		default:
			return nil, mongoerr.New(mongoerr.WindowRangeUnitNotInteger, "Invalid range: Expected the sortBy field to be a number, but it was %s", typeName(v))
		}
	}
	// shift moves a position on the sortBy axis by n window units.
	shift := func(x, n float64) float64 {
		switch w.unit {
		case "", "millisecond":
			return x + n
		case "second":
			return x + n*1e3
		case "minute":
			return x + n*60e3
		case "hour":
			return x + n*3600e3
		case "day":
			return x + n*86400e3
		case "week":
			return x + n*7*86400e3
		}
		months := int(n)
		switch w.unit {
		case "quarter":
			months *= 3
		case "year":
			months *= 12
		}
		return float64(time.UnixMilli(int64(x)).UTC().AddDate(0, months, 0).UnixMilli())
	}
	// Rows are in sortBy order; with a descending sort the window's
	// "before" is the larger values: the search runs on negated keys.
	sign := 1.0
	if n > 1 && keys[0] > keys[n-1] {
		sign = -1
	}
	for i := range rows {
		lo, hi := math.Inf(-1), math.Inf(1)
		if w.lo != nil {
			lo = sign * shift(keys[i], sign**w.lo)
		}
		if w.hi != nil {
			hi = sign * shift(keys[i], sign**w.hi)
		}
		a := sortSearch(n, func(j int) bool { return sign*keys[j] >= lo })
		b := sortSearch(n, func(j int) bool { return sign*keys[j] > hi }) - 1
		// "current" is the current document itself, not its value.
		if w.current[0] {
			a = i
		}
		if w.current[1] {
			b = i
		}
		if a > b {
			a, b = 1, 0
		}
		out[i] = [2]int{a, b}
	}
	return out, nil
}

func (s *setWindowFieldsStage) linearFill(o *windowOutput, rows []windowRow, env *expr.Env) ([]bson.Value, error) {
	n := len(rows)
	vals := make([]bson.Value, n)
	xs := make([]float64, n)
	for i, r := range rows {
		v, err := expr.Eval(o.arg, r.doc, env)
		if err != nil {
			return nil, err
		}
		if v.Type != 0 && v.Type != bson.TypeNull && !v.IsNumber() {
			return nil, mongoerr.New(mongoerr.TypeMismatch, "Expected the $linearFill input to evaluate to numeric or nullish value, but it evaluated to %s", typeName(v))
		}
		vals[i] = expr.CopyValue(v)
		x := lookupPath(r.doc, s.sortField)
		switch {
		case x.IsNumber():
			xs[i], _ = x.AsFloat64()
		case x.Type == bson.TypeDateTime:
			xs[i] = float64(x.DateTime())
		default:
			return nil, mongoerr.New(mongoerr.TypeMismatch, "The sortBy field of $linearFill must be numeric or a date, but found %s", typeName(x))
		}
	}
	res := make([]bson.Value, n)
	prev := -1
	for i := 0; i < n; i++ {
		if vals[i].IsNumber() {
			res[i] = vals[i]
			prev = i
			continue
		}
		next := -1
		for j := i + 1; j < n; j++ {
			if vals[j].IsNumber() {
				next = j
				break
			}
		}
		if prev < 0 || next < 0 {
			res[i] = bson.Value{Type: bson.TypeNull, Data: []byte{}}
			continue
		}
		y0, _ := vals[prev].AsFloat64()
		y1, _ := vals[next].AsFloat64()
		f := y0 + (y1-y0)*(xs[i]-xs[prev])/(xs[next]-xs[prev])
		var b bson.Builder
		b.AppendDouble("v", f)
		res[i], _ = b.Finish().Lookup("v")
	}
	return res, nil
}

func intValue(n int64) bson.Value {
	var b bson.Builder
	if n >= math.MinInt32 && n <= math.MaxInt32 {
		b.AppendInt32("v", int32(n))
	} else {
		b.AppendInt64("v", n)
	}
	v, _ := b.Finish().Lookup("v")
	return v
}
