package agg

import (
	"math"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/expr"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// Numeric window functions: $covariancePop, $covarianceSamp, $derivative,
// $integral and $expMovingAvg.
var numericFns = map[string]bool{"$covariancePop": true, "$covarianceSamp": true, "$derivative": true, "$integral": true, "$expMovingAvg": true}

// windowedNumericFns accept a 'window'.
var windowedNumericFns = map[string]bool{"$covariancePop": true, "$covarianceSamp": true, "$derivative": true, "$integral": true}

var unitMillis = map[string]float64{"millisecond": 1, "second": 1e3, "minute": 60e3, "hour": 3600e3, "day": 86400e3, "week": 7 * 86400e3}

func (s *setWindowFieldsStage) parseNumericFn(c *Context, o *windowOutput, arg bson.Value, hasWindow bool) error {
	switch o.fn {
	case "$covariancePop", "$covarianceSamp":
		if arg.Type != bson.TypeArray || arg.Document().Len() != 2 {
			return mongoerr.New(mongoerr.FailedToParse, "%s requires an array of two expressions", o.fn)
		}
		vals := arg.Document().Values()
		var err error
		if o.arg, err = expr.Parse(vals[0], c.Expr); err != nil {
			return err
		}
		o.arg2, err = expr.Parse(vals[1], c.Expr)
		return err
	case "$derivative", "$integral":
		if arg.Type != bson.TypeDocument {
			return mongoerr.New(mongoerr.FailedToParse, "%s expects an object, but got a %s", o.fn, arg.Type)
		}
		var input bson.Value
		it := arg.Document().Iter()
		for it.Next() {
			e := it.Element()
			switch e.Key {
			case "input":
				input = e.Value
			case "unit":
				if e.Value.Type != bson.TypeString {
					return mongoerr.New(mongoerr.FailedToParse, "%s 'unit' must be a string", o.fn)
				}
				o.unit = e.Value.StringValue()
				if _, ok := unitMillis[o.unit]; !ok {
					return mongoerr.New(mongoerr.WindowUnknownUnit, "unit must be one of: week, day, hour, minute, second, millisecond; got '%s'", o.unit)
				}
			default:
				return mongoerr.New(mongoerr.FailedToParse, "%s got unexpected argument: %s", o.fn, e.Key)
			}
		}
		if input.Type == 0 {
			return mongoerr.New(mongoerr.FailedToParse, "%s requires an 'input' expression", o.fn)
		}
		var err error
		if o.arg, err = expr.Parse(input, c.Expr); err != nil {
			return err
		}
		if s.sortBy == nil || s.sortKeys != 1 {
			return mongoerr.New(mongoerr.FailedToParse, "%s requires a sortBy that consists of exactly one field", o.fn)
		}
		if o.fn == "$derivative" && !hasWindow {
			return mongoerr.New(mongoerr.DerivativeRequiresBounds, "$derivative requires explicit window bounds")
		}
	case "$expMovingAvg":
		if arg.Type != bson.TypeDocument {
			return mongoerr.New(mongoerr.FailedToParse, "$expMovingAvg must have exactly one argument that is an object")
		}
		var input bson.Value
		hasN, hasAlpha := false, false
		it := arg.Document().Iter()
		for it.Next() {
			e := it.Element()
			switch e.Key {
			case "input":
				input = e.Value
			case "N":
				n, ok := e.Value.AsFloat64()
				if !ok || n != math.Trunc(n) || n <= 0 {
					return mongoerr.New(mongoerr.FailedToParse, "'N' field must be an integer, but found type %s", e.Value.Type)
				}
				o.alpha, hasN = 2/(n+1), true
			case "alpha":
				a, ok := e.Value.AsFloat64()
				if !ok || a <= 0 || a >= 1 {
					return mongoerr.New(mongoerr.FailedToParse, "'alpha' must be between 0 and 1 (exclusive), found alpha: %s", e.Value.String())
				}
				o.alpha, hasAlpha = a, true
			default:
				return mongoerr.New(mongoerr.FailedToParse, "Got unrecognized field in $expMovingAvg, $expMovingAvg sub object must have exactly two fields: An 'input' field, and either an 'N' field or an 'alpha' field")
			}
		}
		if input.Type == 0 || hasN == hasAlpha {
			return mongoerr.New(mongoerr.FailedToParse, "$expMovingAvg sub object must have exactly two fields: An 'input' field, and either an 'N' field or an 'alpha' field")
		}
		var err error
		if o.arg, err = expr.Parse(input, c.Expr); err != nil {
			return err
		}
		if s.sortBy == nil {
			return mongoerr.New(mongoerr.FailedToParse, "$expMovingAvg requires an explicit 'sortBy'")
		}
		if hasWindow {
			return mongoerr.New(mongoerr.FailedToParse, "$expMovingAvg does not accept a 'window' field")
		}
	}
	return nil
}

func doubleValue(f float64) bson.Value {
	var b bson.Builder
	b.AppendDouble("v", f)
	v, _ := b.Finish().Lookup("v")
	return v
}

var nullValue = bson.Value{Type: bson.TypeNull, Data: []byte{}}

// numbers evaluates x for each row: the value and whether it is a number.
func numbers(x expr.Expr, rows []windowRow, env *expr.Env) ([]float64, []bool, error) {
	fs := make([]float64, len(rows))
	ok := make([]bool, len(rows))
	for i, r := range rows {
		v, err := expr.Eval(x, r.doc, env)
		if err != nil {
			return nil, nil, err
		}
		if v.IsNumber() {
			fs[i], _ = v.AsFloat64()
			ok[i] = true
		}
	}
	return fs, ok, nil
}

func (s *setWindowFieldsStage) computeNumeric(o *windowOutput, rows []windowRow, env *expr.Env) ([]bson.Value, error) {
	res := make([]bson.Value, len(rows))
	xs, xok, err := numbers(o.arg, rows, env)
	if err != nil {
		return nil, err
	}
	if o.fn == "$expMovingAvg" {
		started := false
		var avg float64
		for i := range rows {
			if !xok[i] {
				res[i] = nullValue
				continue
			}
			if !started {
				avg, started = xs[i], true
			} else {
				avg = o.alpha*xs[i] + (1-o.alpha)*avg
			}
			res[i] = doubleValue(avg)
		}
		return res, nil
	}
	var bounds [][2]int
	if o.win == nil || (o.win.lo == nil && o.win.hi == nil) {
		bounds = make([][2]int, len(rows))
		for i := range bounds {
			bounds[i] = [2]int{0, len(rows) - 1}
		}
	} else if bounds, err = s.bounds(o.win, rows); err != nil {
		return nil, err
	}
	var ys []float64
	var yok []bool
	switch o.fn {
	case "$covariancePop", "$covarianceSamp":
		if ys, yok, err = numbers(o.arg2, rows, env); err != nil {
			return nil, err
		}
	default:
		// The sortBy values are the x axis; the input is y.
		ys, yok, xs, xok = xs, xok, make([]float64, len(rows)), make([]bool, len(rows))
		for i, r := range rows {
			v := lookupPath(r.doc, s.sortField)
			switch {
			case o.unit != "" && v.Type == bson.TypeDateTime:
				xs[i], xok[i] = float64(v.DateTime())/unitMillis[o.unit], true
			case o.unit == "" && v.IsNumber():
				xs[i], _ = v.AsFloat64()
				xok[i] = true
			case o.unit != "":
				return nil, mongoerr.New(mongoerr.WindowUnitSortByNotDate, "%s with 'unit' expects the sortBy field to be a Date", o.fn)
			case v.Type == bson.TypeDateTime:
				return nil, mongoerr.New(mongoerr.DerivativeRequiresBounds, "%s where the sortBy is a Date requires an 'unit'", o.fn)
			default:
				return nil, mongoerr.New(mongoerr.WindowSortByNotNumeric, "%s requires the sortBy field to be numeric, found %s", o.fn, typeName(v))
			}
		}
	}
	for i, b := range bounds {
		switch o.fn {
		case "$covariancePop", "$covarianceSamp":
			var n, mx, my, c float64
			for j := b[0]; j <= b[1]; j++ {
				if !xok[j] || !yok[j] {
					continue
				}
				n++
				dx := xs[j] - mx
				mx += dx / n
				my += (ys[j] - my) / n
				c += dx * (ys[j] - my)
			}
			switch {
			case n == 0, o.fn == "$covarianceSamp" && n < 2:
				res[i] = nullValue
			case o.fn == "$covarianceSamp":
				res[i] = doubleValue(c / (n - 1))
			default:
				res[i] = doubleValue(c / n)
			}
		case "$derivative":
			if b[1]-b[0] < 1 || !yok[b[0]] || !yok[b[1]] || xs[b[1]] == xs[b[0]] {
				res[i] = nullValue
				continue
			}
			res[i] = doubleValue((ys[b[1]] - ys[b[0]]) / (xs[b[1]] - xs[b[0]]))
		case "$integral":
			sum := 0.0
			for j := b[0] + 1; j <= b[1]; j++ {
				if !yok[j] || !yok[j-1] {
					return nil, mongoerr.New(mongoerr.IntegralBadInput, "The input value of $integral window function must be a vector of 2 value, the first value must be numeric or date type and the second must be numeric.")
				}
				sum += (ys[j] + ys[j-1]) / 2 * (xs[j] - xs[j-1])
			}
			if b[1] < b[0] {
				res[i] = nullValue
			} else {
				res[i] = doubleValue(sum)
			}
		}
	}
	return res, nil
}
