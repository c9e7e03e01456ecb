package expr

import (
	"math"
	"sort"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// Bitwise and trigonometric operators, the accumulator-like expressions
// ($sum, $avg, $min, $max, $stdDevPop, $stdDevSamp, $median, $percentile,
// $firstN, $lastN, $maxN, $minN), sizes, timestamps, $sampleRate, and the
// operators Cairn knows but does not run ($meta, $function, ...).

func init() {
	regNary("$bitAnd", 0, -1, bitOp("$bitAnd", func(a, b int64) int64 { return a & b }, -1))
	regNary("$bitOr", 0, -1, bitOp("$bitOr", func(a, b int64) int64 { return a | b }, 0))
	regNary("$bitXor", 0, -1, bitOp("$bitXor", func(a, b int64) int64 { return a ^ b }, 0))
	regUnary("$bitNot", numericUnary("$bitNot", bitNot))

	trig := []struct {
		name   string
		f      func(float64) float64
		lo, hi float64
		loOpen bool
	}{
		{"$sin", math.Sin, math.Inf(-1), math.Inf(1), true},
		{"$cos", math.Cos, math.Inf(-1), math.Inf(1), true},
		{"$tan", math.Tan, math.Inf(-1), math.Inf(1), true},
		{"$asin", math.Asin, -1, 1, false},
		{"$acos", math.Acos, -1, 1, false},
		{"$atan", math.Atan, math.Inf(-1), math.Inf(1), false},
		{"$sinh", math.Sinh, math.Inf(-1), math.Inf(1), false},
		{"$cosh", math.Cosh, math.Inf(-1), math.Inf(1), false},
		{"$tanh", math.Tanh, math.Inf(-1), math.Inf(1), false},
		{"$asinh", math.Asinh, math.Inf(-1), math.Inf(1), false},
		{"$acosh", math.Acosh, 1, math.Inf(1), false},
		{"$atanh", math.Atanh, -1, 1, false},
		{"$degreesToRadians", func(x float64) float64 { return x * math.Pi / 180 }, math.Inf(-1), math.Inf(1), false},
		{"$radiansToDegrees", func(x float64) float64 { return x * 180 / math.Pi }, math.Inf(-1), math.Inf(1), false},
	}
	for _, t := range trig {
		t := t
		regUnary(t.name, numericUnary(t.name, func(e *Env, v bson.Value) (bson.Value, error) {
			x := toFloat(v)
			if !math.IsNaN(x) {
				bad := x < t.lo || x > t.hi || t.loOpen && math.IsInf(x, 0)
				if bad {
					rng := "[" + fmtDouble(t.lo) + "," + fmtDouble(t.hi) + "]"
					if t.loOpen {
						rng = "(-inf,inf)"
					}
					return missing, errf(mongoerr.TrigonometricOutOfRange, "cannot apply %s to %s, value must be in %s", t.name, v.String(), rng)
				}
			}
			if v.Type == bson.TypeDecimal128 {
				return e.dec(decExactFloat(t.f(x))), nil
			}
			return e.double(t.f(x)), nil
		}))
	}
	regBinary("$atan2", func(e *Env, a, b bson.Value) (bson.Value, error) {
		if nullish(a) {
			return vNull, nil
		}
		if !a.IsNumber() {
			return missing, errf(mongoerr.Atan2FirstNotNumeric, "$atan2 only supports numeric types, not %s", typeName(a))
		}
		if nullish(b) {
			return vNull, nil
		}
		if !b.IsNumber() {
			return missing, errf(mongoerr.Atan2SecondNotNumeric, "$atan2 only supports numeric types, not %s", typeName(b))
		}
		r := math.Atan2(toFloat(a), toFloat(b))
		if a.Type == bson.TypeDecimal128 || b.Type == bson.TypeDecimal128 {
			return e.dec(decExactFloat(r)), nil
		}
		return e.double(r), nil
	})

	for _, name := range []string{"$sum", "$avg", "$min", "$max", "$stdDevPop", "$stdDevSamp"} {
		register(name, parseAccExpr)
	}
	register("$median", parsePercentile("$median"))
	register("$percentile", parsePercentile("$percentile"))
	for _, name := range []string{"$firstN", "$lastN", "$maxN", "$minN"} {
		register(name, parseNExpr)
	}

	regUnary("$binarySize", func(e *Env, v bson.Value) (bson.Value, error) {
		switch v.Type {
		case 0, bson.TypeNull, bson.TypeUndefined:
			return vNull, nil
		case bson.TypeString:
			return e.int32(int32(len(v.Data) - 5)), nil
		case bson.TypeBinary:
			return e.int32(int32(len(v.Data) - 5)), nil
		}
		return missing, errf(mongoerr.BinarySizeBadType, "$binarySize requires a string or BinData argument, found: %s", typeName(v))
	})
	regUnary("$bsonSize", func(e *Env, v bson.Value) (bson.Value, error) {
		switch v.Type {
		case 0, bson.TypeNull, bson.TypeUndefined:
			return vNull, nil
		case bson.TypeDocument:
			return e.int32(int32(len(v.Data))), nil
		}
		return missing, errf(mongoerr.BSONSizeNotDocument, "$bsonSize requires a document input, found: %s", typeName(v))
	})
	regUnary("$tsSecond", func(e *Env, v bson.Value) (bson.Value, error) {
		if nullish(v) {
			return vNull, nil
		}
		if v.Type != bson.TypeTimestamp {
			return missing, errf(mongoerr.TsSecondNotTimestamp, " Argument to $tsSecond must be a timestamp, but is %s", typeName(v))
		}
		t, _ := v.Timestamp()
		return e.int64(int64(t)), nil
	})
	regUnary("$tsIncrement", func(e *Env, v bson.Value) (bson.Value, error) {
		if nullish(v) {
			return vNull, nil
		}
		if v.Type != bson.TypeTimestamp {
			return missing, errf(mongoerr.TsIncrementNotTimestamp, " Argument to $tsIncrement must be a timestamp, but is %s", typeName(v))
		}
		_, i := v.Timestamp()
		return e.int64(int64(i)), nil
	})
	register("$sampleRate", func(p *parser, name string, arg bson.Value) (node, error) {
		if !arg.IsNumber() || !(toFloat(arg) >= 0 && toFloat(arg) <= 1) {
			return nil, errf(mongoerr.SampleRateOutOfRange, "$sampleRate expects a numeric value between 0 and 1 inclusive")
		}
		rate := toFloat(arg)
		return &unaryNode{arg: constNode{arg}, fn: func(e *Env, _ bson.Value) (bson.Value, error) {
			return vBool(e.rand() < rate), nil
		}}, nil
	})
	register("$meta", func(p *parser, name string, arg bson.Value) (node, error) {
		if arg.Type != bson.TypeString {
			return nil, errf(mongoerr.MetaExpressionNotString, "$meta only supports string arguments")
		}
		switch m := arg.StringValue(); m {
		case "textScore":
			var cell *float64
			if p.opts != nil && !p.letMode {
				cell = p.opts.TextScore
			}
			if cell == nil {
				return nil, errf(mongoerr.TextScoreUnavailable, "query requires text score metadata, but it is not available")
			}
			return textScoreNode{cell}, nil
		case "randVal", "searchScore", "searchHighlights", "geoNearDistance", "geoNearPoint",
			"recordId", "indexKey", "sortKey", "searchScoreDetails", "searchSequenceToken", "vectorSearchScore":
			return nil, errf(mongoerr.NotImplemented, "$meta \"%s\" is not supported by Cairn", m)
		default:
			return nil, errf(mongoerr.MetaUnsupported, "Unsupported argument to $meta: %s", m)
		}
	})
	register("$function", parseFunction)
	register("$accumulator", func(p *parser, _ string, arg bson.Value) (node, error) {
		return nil, errf(mongoerr.InvalidPipelineOperator, "Unrecognized expression '$accumulator'")
	})
	register("$toHashedIndexKey", func(p *parser, name string, arg bson.Value) (node, error) {
		return nil, errf(mongoerr.NotImplemented, "$toHashedIndexKey is not supported by Cairn")
	})
}

// textScoreNode is {$meta: "textScore"}: the score of the document being
// evaluated, kept up to date by the $text source.
type textScoreNode struct{ cell *float64 }

func (n textScoreNode) eval(e *Env) (bson.Value, error) { return e.double(*n.cell), nil }

func bitOp(name string, f func(a, b int64) int64, identity int64) naryFn {
	return func(e *Env, args []bson.Value) (bson.Value, error) {
		r := identity
		long := false
		for _, v := range args {
			if nullish(v) {
				return vNull, nil
			}
			switch v.Type {
			case bson.TypeInt32:
			case bson.TypeInt64:
				long = true
			default:
				return missing, errf(mongoerr.TypeMismatch, "%s only supports int and long operands.", name)
			}
			r = f(r, toLong(v))
		}
		if long {
			return e.int64(r), nil
		}
		return e.int32(int32(r)), nil
	}
}

func bitNot(e *Env, v bson.Value) (bson.Value, error) {
	switch v.Type {
	case 0, bson.TypeNull, bson.TypeUndefined:
		return vNull, nil
	case bson.TypeInt32:
		return e.int32(^v.Int32()), nil
	case bson.TypeInt64:
		return e.int64(^v.Int64()), nil
	}
	return missing, errf(mongoerr.TypeMismatch, "$bitNot only supports int and long, not: %s.", typeName(v))
}

// ---- accumulator-style expressions ----

// parseAccExpr compiles {$sum: ...} and friends as expressions: with one
// operand that evaluates to an array they fold its elements, otherwise
// they fold the operands.
func parseAccExpr(p *parser, name string, arg bson.Value) (node, error) {
	args, err := p.parseAll(argList(arg))
	if err != nil {
		return nil, err
	}
	single := arg.Type != bson.TypeArray || len(args) == 1
	return &naryNode{args: args, fn: func(e *Env, vals []bson.Value) (bson.Value, error) {
		start := len(e.vs)
		if single && len(vals) == 1 && vals[0].Type == bson.TypeArray {
			e.pushElems(vals[0])
			vals = e.vs[start:]
		}
		r := foldValues(e, name, vals)
		e.vs = e.vs[:start]
		return r, nil
	}}, nil
}

func foldValues(e *Env, name string, vals []bson.Value) bson.Value {
	switch name {
	case "$sum", "$avg":
		var s sumState
		s.typ = bson.TypeInt32
		n := 0
		for _, v := range vals {
			if s.add(v) {
				n++
			}
		}
		if name == "$sum" {
			return s.result(e)
		}
		if n == 0 {
			return vNull
		}
		if s.typ == bson.TypeDecimal128 {
			nd := s.nonDecimal() // flushes the fast decimal sum
			return e.dec(decDiv(decAdd(s.dsum, nd), decFromInt(int64(n))))
		}
		total := s.float()
		if !s.iover {
			total = float64(s.isum)
		}
		return e.double(total / float64(n))
	case "$min", "$max":
		var best bson.Value
		for _, v := range vals {
			if nullish(v) {
				continue
			}
			c := 0
			if best.Type != 0 {
				c = e.compare(v, best)
			}
			if best.Type == 0 || name == "$min" && c < 0 || name == "$max" && c > 0 {
				best = v
			}
		}
		if best.Type == 0 {
			return vNull
		}
		return best
	}
	// standard deviations
	n, mean, m2 := 0.0, 0.0, 0.0
	nonFinite := false
	for _, v := range vals {
		if !v.IsNumber() {
			continue
		}
		x := toFloat(v)
		if math.IsNaN(x) || math.IsInf(x, 0) {
			nonFinite = true
		}
		n++
		d := x - mean
		mean += d / n
		m2 += d * (x - mean)
	}
	samp := name == "$stdDevSamp"
	if n == 0 || samp && n == 1 {
		return vNull
	}
	if nonFinite {
		return e.double(math.NaN())
	}
	if samp {
		n--
	}
	return e.double(math.Sqrt(math.Max(m2, 0) / n))
}

// ---- $median, $percentile ----

type percentileNode struct {
	name  string
	input node
	ps    []float64 // nil for $median
}

func parsePercentile(name string) opParser {
	return func(p *parser, _ string, arg bson.Value) (node, error) {
		if arg.Type != bson.TypeDocument {
			return nil, errf(mongoerr.PercentileSpecNotObject, "specification must be an object; found %s", typeName(arg))
		}
		n := &percentileNode{name: name}
		var pv bson.Value
		method := ""
		it := arg.Document().Iter()
		for it.Next() {
			el := it.Element()
			switch {
			case el.Key == "input":
				x, err := p.parse(el.Value)
				if err != nil {
					return nil, err
				}
				n.input = x
			case el.Key == "p" && name == "$percentile":
				pv = el.Value
			case el.Key == "method":
				if el.Value.Type != bson.TypeString {
					return nil, errf(mongoerr.TypeMismatch, "'method' must be a string, found %s", typeName(el.Value))
				}
				method = el.Value.StringValue()
			default:
				return nil, errf(mongoerr.FailedToParse, "%s found an unknown argument: %s", name, el.Key)
			}
		}
		if n.input == nil {
			return nil, errf(mongoerr.FailedToParse, "%s requires 'input' to be specified", name)
		}
		if method != "approximate" {
			return nil, errf(mongoerr.BadValue, "Currently only 'approximate' can be used as percentile 'method'")
		}
		if name == "$percentile" {
			if pv.Type != bson.TypeArray || arrayLen(pv) == 0 {
				return nil, errf(mongoerr.PercentileBadP, "The $percentile 'p' field must be an array of numbers from [0.0, 1.0], but found: %s", pv.String())
			}
			vi := pv.Document().Iter()
			for vi.Next() {
				x := vi.Element().Value
				if !x.IsNumber() || toFloat(x) < 0 || toFloat(x) > 1 {
					return nil, errf(mongoerr.PercentileBadP, "The $percentile 'p' field must be an array of numbers from [0.0, 1.0], but found: %s", pv.String())
				}
				n.ps = append(n.ps, toFloat(x))
			}
		}
		return n, nil
	}
}

func (n *percentileNode) eval(e *Env) (bson.Value, error) {
	v, err := n.input.eval(e)
	if err != nil {
		return missing, err
	}
	var xs []float64
	if v.Type == bson.TypeArray {
		it := v.Document().Iter()
		for it.Next() {
			if x := it.Element().Value; x.IsNumber() && !math.IsNaN(toFloat(x)) {
				xs = append(xs, toFloat(x))
			}
		}
	} else if v.IsNumber() && !math.IsNaN(toFloat(v)) {
		xs = append(xs, toFloat(v))
	}
	sort.Float64s(xs)
	if n.ps == nil {
		return percentileOf(e, xs, 0.5), nil
	}
	start := len(e.vs)
	for _, p := range n.ps {
		e.vs = append(e.vs, percentileOf(e, xs, p))
	}
	out := e.array(e.vs[start:])
	e.vs = e.vs[:start]
	return out, nil
}

// ---- $firstN, $lastN, $maxN, $minN expressions ----

type nExprNode struct {
	name     string
	input, n node
}

func parseNExpr(p *parser, name string, arg bson.Value) (node, error) {
	m, err := namedArgs(p, arg, []string{"input", "n"}, func() error {
		return errf(mongoerr.TopNSpecNotObject, "specification must be an object; found %s", arg.String())
	}, func(key string) error {
		return errf(mongoerr.NUnknownArgument, "Unknown argument for 'n' operator: %s", key)
	})
	if err != nil {
		return nil, err
	}
	n := &nExprNode{name: name, input: m["input"], n: m["n"]}
	if n.n == nil {
		return nil, errf(mongoerr.NMissing, "Missing value for 'n'")
	}
	if n.input == nil {
		return nil, errf(mongoerr.NMissingInput, "Missing value for 'input'")
	}
	return n, nil
}

func (n *nExprNode) eval(e *Env) (bson.Value, error) {
	nv, err := n.n.eval(e)
	if err != nil {
		return missing, err
	}
	k, err := validN(nv)
	if err != nil {
		return missing, err
	}
	in, err := n.input.eval(e)
	if err != nil {
		return missing, err
	}
	if in.Type != bson.TypeArray {
		return missing, errf(mongoerr.NArrayInputNotArray, "Input must be an array, but got %s", typeName(in))
	}
	start := e.pushElems(in)
	vals := e.vs[start:]
	switch n.name {
	case "$firstN":
		vals = vals[:min(k, len(vals))]
	case "$lastN":
		vals = vals[max(0, len(vals)-k):]
	default:
		kept := vals[:0]
		for _, v := range vals {
			if !nullish(v) {
				kept = append(kept, v)
			}
		}
		sign := 1
		if n.name == "$maxN" {
			sign = -1
		}
		sort.SliceStable(kept, func(i, j int) bool { return sign*e.compare(kept[i], kept[j]) < 0 })
		vals = kept[:min(k, len(kept))]
	}
	out := e.array(vals)
	e.vs = e.vs[:start]
	return out, nil
}

// percentileOf picks the p-th percentile of sorted xs as MongoDB's
// "approximate" method does for inputs it holds exactly: the value at rank
// ceil(p*n); null when there are no values.
func percentileOf(e *Env, xs []float64, p float64) bson.Value {
	if len(xs) == 0 {
		return vNull
	}
	i := int(math.Ceil(p*float64(len(xs)))) - 1
	i = max(0, min(i, len(xs)-1))
	return e.double(xs[i])
}
