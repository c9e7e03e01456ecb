package query

import (
	"math"
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

func (p *exprParser) parseOperator(op string, arg bson.Value) (expr, error) {
	switch op {
	case "$literal":
		return litExpr{arg}, nil
	case "$getField":
		return p.parseGetField(arg)
	case "$setField":
		return p.parseSetField(arg)
	}
	xs, err := p.args(arg)
	if err != nil {
		return nil, err
	}
	e := &opExpr{op: op, args: xs}
	switch op {
	case "$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$cmp":
		if err := arity(op, xs, 2); err != nil {
			return nil, err
		}
		e.fn = func(c *evalCtx, v []bson.Value) (bson.Value, error) {
			r := cmpValues(v[0], v[1], c.coll)
			switch op {
			case "$eq":
				return boolValue(r == 0), nil
			case "$ne":
				return boolValue(r != 0), nil
			case "$gt":
				return boolValue(r > 0), nil
			case "$gte":
				return boolValue(r >= 0), nil
			case "$lt":
				return boolValue(r < 0), nil
			case "$lte":
				return boolValue(r <= 0), nil
			}
			return int32Value(int32(max(-1, min(1, r)))), nil
		}
	case "$and", "$or":
		e.lazy = func(c *evalCtx, args []expr) (bson.Value, error) {
			for _, a := range args {
				v, err := a.eval(c)
				if err != nil {
					return missing, err
				}
				if v.Truthy() == (op == "$or") {
					return boolValue(op == "$or"), nil
				}
			}
			return boolValue(op == "$and"), nil
		}
	case "$not":
		if err := arity(op, xs, 1); err != nil {
			return nil, err
		}
		e.fn = func(_ *evalCtx, v []bson.Value) (bson.Value, error) { return boolValue(!v[0].Truthy()), nil }
	case "$cond":
		if arg.Type == bson.TypeDocument {
			return p.parseCondDoc(arg)
		}
		if err := arity(op, xs, 3); err != nil {
			return nil, err
		}
		e.lazy = condEval
	case "$ifNull":
		if len(xs) < 2 {
			return nil, mongoerr.New(1257300, "$ifNull needs at least two arguments, had: %d", len(xs))
		}
		e.lazy = func(c *evalCtx, args []expr) (bson.Value, error) {
			for i, a := range args {
				v, err := a.eval(c)
				if err != nil {
					return missing, err
				}
				if !nullish(v) || i == len(args)-1 {
					return v, nil
				}
			}
			return missing, nil
		}
	case "$in":
		if err := arity(op, xs, 2); err != nil {
			return nil, err
		}
		e.fn = func(c *evalCtx, v []bson.Value) (bson.Value, error) {
			if v[1].Type != bson.TypeArray {
				return missing, mongoerr.New(40081, "$in requires an array as a second argument, found: %s", typeNameOrMissing(v[1]))
			}
			it := bson.Doc(v[1].Data).Iter()
			for it.Next() {
				if cmpValues(v[0], it.Element().Value, c.coll) == 0 {
					return boolValue(true), nil
				}
			}
			return boolValue(false), nil
		}
	case "$add", "$multiply":
		e.fn = func(_ *evalCtx, v []bson.Value) (bson.Value, error) { return arith(op, v) }
	case "$subtract":
		if err := arity(op, xs, 2); err != nil {
			return nil, err
		}
		e.fn = func(_ *evalCtx, v []bson.Value) (bson.Value, error) { return subtract(v[0], v[1]) }
	case "$concat":
		e.fn = func(_ *evalCtx, v []bson.Value) (bson.Value, error) {
			var sb strings.Builder
			for _, x := range v {
				if nullish(x) {
					return bson.Value{Type: bson.TypeNull}, nil
				}
				if x.Type != bson.TypeString {
					return missing, mongoerr.New(16702, "$concat only supports strings, not %s", typeNameOrMissing(x))
				}
				sb.WriteString(x.StringValue())
			}
			return mkValue(func(b *bson.Builder) { b.AppendString("v", sb.String()) }), nil
		}
	case "$size":
		if err := arity(op, xs, 1); err != nil {
			return nil, err
		}
		e.fn = func(_ *evalCtx, v []bson.Value) (bson.Value, error) {
			if v[0].Type != bson.TypeArray {
				return missing, mongoerr.New(17124, "The argument to $size must be an array. Type of argument: %s", typeNameOrMissing(v[0]))
			}
			return int32Value(int32(bson.Doc(v[0].Data).Len())), nil
		}
	case "$slice":
		if len(xs) < 2 || len(xs) > 3 {
			return nil, mongoerr.New(28667, "Expression $slice takes at least 2 arguments, and at most 3, but %d were passed in.", len(xs))
		}
		e.fn = sliceExpr
	case "$isArray":
		if err := arity(op, xs, 1); err != nil {
			return nil, err
		}
		e.fn = func(_ *evalCtx, v []bson.Value) (bson.Value, error) {
			return boolValue(v[0].Type == bson.TypeArray), nil
		}
	case "$type":
		if err := arity(op, xs, 1); err != nil {
			return nil, err
		}
		e.fn = func(_ *evalCtx, v []bson.Value) (bson.Value, error) {
			s := typeNameOrMissing(v[0])
			return mkValue(func(b *bson.Builder) { b.AppendString("v", s) }), nil
		}
	default:
		if knownAggOperators[op] {
			return nil, mongoerr.New(mongoerr.NotImplemented, "Aggregation expression %s is not supported by Cairn yet", op)
		}
		return nil, exprErr("Unrecognized expression '%s'", op)
	}
	return e, nil
}

func typeNameOrMissing(v bson.Value) string {
	if v.Type == 0 {
		return "missing"
	}
	return v.Type.String()
}

func condEval(c *evalCtx, args []expr) (bson.Value, error) {
	v, err := args[0].eval(c)
	if err != nil {
		return missing, err
	}
	if v.Truthy() {
		return args[1].eval(c)
	}
	return args[2].eval(c)
}

func (p *exprParser) parseCondDoc(arg bson.Value) (expr, error) {
	var ifE, thenE, elseE expr
	it := bson.Doc(arg.Data).Iter()
	for it.Next() {
		e := it.Element()
		x, err := p.parse(e.Value)
		if err != nil {
			return nil, err
		}
		switch e.Key {
		case "if":
			ifE = x
		case "then":
			thenE = x
		case "else":
			elseE = x
		default:
			return nil, mongoerr.New(17083, "Unrecognized parameter to $cond: %s", e.Key)
		}
	}
	switch {
	case ifE == nil:
		return nil, mongoerr.New(17080, "Missing 'if' parameter to $cond")
	case thenE == nil:
		return nil, mongoerr.New(17081, "Missing 'then' parameter to $cond")
	case elseE == nil:
		return nil, mongoerr.New(17082, "Missing 'else' parameter to $cond")
	}
	return &opExpr{op: "$cond", args: []expr{ifE, thenE, elseE}, lazy: condEval}, nil
}

func (p *exprParser) parseGetField(arg bson.Value) (expr, error) {
	var field, input expr = nil, &pathExpr{}
	if arg.Type != bson.TypeDocument {
		f, err := p.parse(arg)
		if err != nil {
			return nil, err
		}
		field = f
	} else {
		it := bson.Doc(arg.Data).Iter()
		for it.Next() {
			e := it.Element()
			x, err := p.parse(e.Value)
			if err != nil {
				return nil, err
			}
			switch e.Key {
			case "field":
				field = x
			case "input":
				input = x
			default:
				return nil, mongoerr.New(3041701, "$getField found an unknown argument: %s", e.Key)
			}
		}
	}
	if field == nil {
		return nil, mongoerr.New(3041702, "$getField requires 'field' to be specified")
	}
	return &opExpr{op: "$getField", args: []expr{field, input}, fn: func(_ *evalCtx, v []bson.Value) (bson.Value, error) {
		if v[0].Type != bson.TypeString {
			return missing, mongoerr.New(3041704, "$getField requires 'field' to evaluate to type String, but got %s", typeNameOrMissing(v[0]))
		}
		if v[1].Type != bson.TypeDocument {
			if nullish(v[1]) {
				return bson.Value{Type: bson.TypeNull}, nil
			}
			return missing, mongoerr.New(3041705, "$getField requires 'input' to evaluate to type Object, but got %s", typeNameOrMissing(v[1]))
		}
		x, _ := bson.Doc(v[1].Data).Lookup(v[0].StringValue())
		return x, nil
	}}, nil
}

func (p *exprParser) parseSetField(arg bson.Value) (expr, error) {
	if arg.Type != bson.TypeDocument {
		return nil, mongoerr.New(4161100, "$setField only supports an object as its argument")
	}
	var field, input, value expr
	var fieldName string
	it := bson.Doc(arg.Data).Iter()
	for it.Next() {
		e := it.Element()
		x, err := p.parse(e.Value)
		if err != nil {
			return nil, err
		}
		switch e.Key {
		case "field":
			field = x
			lit, ok := x.(litExpr)
			if !ok || lit.v.Type != bson.TypeString {
				return nil, mongoerr.New(4161106, "$setField requires 'field' to evaluate to a constant, but got a non-constant argument")
			}
			fieldName = lit.v.StringValue()
		case "input":
			input = x
		case "value":
			value = x
		default:
			return nil, mongoerr.New(4161101, "$setField found an unknown argument: %s", e.Key)
		}
	}
	switch {
	case field == nil:
		return nil, mongoerr.New(4161102, "$setField requires 'field' to be specified")
	case value == nil:
		return nil, mongoerr.New(4161103, "$setField requires 'value' to be specified")
	case input == nil:
		return nil, mongoerr.New(4161109, "$setField requires 'input' to be specified")
	}
	return &opExpr{op: "$setField", args: []expr{input, value}, fn: func(_ *evalCtx, v []bson.Value) (bson.Value, error) {
		if nullish(v[0]) {
			return bson.Value{Type: bson.TypeNull}, nil
		}
		if v[0].Type != bson.TypeDocument {
			return missing, mongoerr.New(4161105, "$setField requires 'input' to evaluate to type Object")
		}
		return mkValue(func(b *bson.Builder) {
			b.StartDocument("v")
			found := false
			it := bson.Doc(v[0].Data).Iter()
			for it.Next() {
				e := it.Element()
				if e.Key == fieldName {
					found = true
					if v[1].Type != 0 {
						b.AppendValue(e.Key, v[1])
					}
					continue
				}
				b.AppendElement(e)
			}
			if !found && v[1].Type != 0 {
				b.AppendValue(fieldName, v[1])
			}
			b.End()
		}), nil
	}}, nil
}

func arith(op string, vals []bson.Value) (bson.Value, error) {
	var acc bson.Value
	if op == "$add" {
		acc = int32Value(0)
	} else {
		acc = int32Value(1)
	}
	var date bson.Value
	for _, v := range vals {
		if nullish(v) {
			return bson.Value{Type: bson.TypeNull}, nil
		}
		if op == "$add" && v.Type == bson.TypeDateTime {
			if date.Type != 0 {
				return missing, mongoerr.New(16612, "only one date allowed in an $add expression")
			}
			date = v
			continue
		}
		if !v.IsNumber() {
			if op == "$add" {
				return missing, mongoerr.New(16554, "$add only supports numeric or date types, not %s", v.Type)
			}
			return missing, mongoerr.New(16555, "$multiply only supports numeric types, not %s", v.Type)
		}
		var r numResult
		if op == "$add" {
			r = addNumbers(acc, v)
		} else {
			r = mulNumbers(acc, v)
		}
		if r.overflow {
			x, _ := acc.AsFloat64()
			y, _ := v.AsFloat64()
			if op == "$add" {
				r = numResult{t: bson.TypeDouble, f: x + y}
			} else {
				r = numResult{t: bson.TypeDouble, f: x * y}
			}
		}
		acc = r.value()
	}
	if date.Type != 0 {
		f, _ := acc.AsFloat64()
		ms := date.DateTime() + int64(math.Round(f))
		return mkValue(func(b *bson.Builder) { b.AppendDateTime("v", ms) }), nil
	}
	return acc, nil
}

func subtract(a, b bson.Value) (bson.Value, error) {
	if nullish(a) || nullish(b) {
		return bson.Value{Type: bson.TypeNull}, nil
	}
	switch {
	case a.Type == bson.TypeDateTime && b.Type == bson.TypeDateTime:
		d := a.DateTime() - b.DateTime()
		return mkValue(func(x *bson.Builder) { x.AppendInt64("v", d) }), nil
	case a.Type == bson.TypeDateTime && b.IsNumber():
		f, _ := b.AsFloat64()
		ms := a.DateTime() - int64(math.Round(f))
		return mkValue(func(x *bson.Builder) { x.AppendDateTime("v", ms) }), nil
	case a.IsNumber() && b.IsNumber():
		neg := mulNumbers(b, int32Value(-1))
		if neg.overflow {
			x, _ := a.AsFloat64()
			y, _ := b.AsFloat64()
			return numResult{t: bson.TypeDouble, f: x - y}.value(), nil
		}
		r := addNumbers(a, neg.value())
		if r.overflow {
			x, _ := a.AsFloat64()
			y, _ := b.AsFloat64()
			return numResult{t: bson.TypeDouble, f: x - y}.value(), nil
		}
		return r.value(), nil
	}
	return missing, mongoerr.New(16556, "cant $subtract a %s from a %s", b.Type, a.Type)
}

// knownAggOperators are MongoDB expression operators Cairn does not
// evaluate yet (so they get NotImplemented, not "Unrecognized").
var knownAggOperators = func() map[string]bool {
	m := map[string]bool{}
	for _, s := range strings.Fields(`$abs $acos $acosh $allElementsTrue $anyElementTrue $arrayElemAt
	$arrayToObject $asin $asinh $atan $atan2 $atanh $avg $binarySize $bitAnd $bitNot $bitOr $bitXor
	$bsonSize $ceil $concatArrays $convert $cos $cosh $dateAdd $dateDiff $dateFromParts
	$dateFromString $dateSubtract $dateToParts $dateToString $dateTrunc $dayOfMonth $dayOfWeek
	$dayOfYear $degreesToRadians $divide $exp $filter $first $firstN $floor $function $hour
	$indexOfArray $indexOfBytes $indexOfCP $isNumber $isoDayOfWeek $isoWeek $isoWeekYear $last
	$lastN $let $ln $log $log10 $ltrim $map $max $maxN $median $mergeObjects $meta $millisecond $min
	$minN $minute $mod $month $objectToArray $percentile $pow $radiansToDegrees $rand $range $reduce
	$regexFind $regexFindAll $regexMatch $replaceAll $replaceOne $reverseArray $round $rtrim
	$sampleRate $second $setDifference $setEquals $setIntersection $setIsSubset $setUnion $sin
	$sinh $slice $sortArray $split $sqrt $stdDevPop $stdDevSamp $strLenBytes $strLenCP $strcasecmp
	$substr $substrBytes $substrCP $sum $switch $tan $tanh $toBool $toDate $toDecimal $toDouble
	$toInt $toLong $toLower $toObjectId $toString $toUpper $trim $trunc $tsIncrement $tsSecond
	$unsetField $week $year $zip`) {
		m[s] = true
	}
	return m
}()

// sliceExpr is the aggregation $slice: [array, n] or [array, position, n].
func sliceExpr(_ *evalCtx, v []bson.Value) (bson.Value, error) {
	for _, x := range v {
		if nullish(x) {
			return bson.Value{Type: bson.TypeNull}, nil
		}
	}
	if v[0].Type != bson.TypeArray {
		return missing, mongoerr.New(28724, "First argument to $slice must be an array, but is of type: %s", typeNameOrMissing(v[0]))
	}
	arg := func(i int, which string, codes [2]int32) (int, error) {
		x := v[i]
		if !x.IsNumber() {
			if which == "Second" {
				return 0, mongoerr.New(codes[0], "Second argument to $slice must be a numeric value, but was of type: %s", typeNameOrMissing(x))
			}
			return 0, mongoerr.New(codes[0], "Third argument to $slice must be numeric, but was of type: %s", typeNameOrMissing(x))
		}
		n, ok := integral(x)
		if !ok || n != int64(int32(n)) {
			return 0, mongoerr.New(codes[1], "%s argument to $slice can't be represented as a 32-bit integer: %s", which, x.String())
		}
		return int(n), nil
	}
	vals := bson.Doc(v[0].Data).Values()
	length := len(vals)
	var start, end int
	if len(v) == 2 {
		n, err := arg(1, "Second", [2]int32{28725, 28726})
		if err != nil {
			return missing, err
		}
		if n >= 0 {
			start, end = 0, min(n, length)
		} else {
			start, end = max(0, length+n), length
		}
	} else {
		pos, err := arg(1, "Second", [2]int32{28725, 28726})
		if err != nil {
			return missing, err
		}
		n, err := arg(2, "Third", [2]int32{28727, 28728})
		if err != nil {
			return missing, err
		}
		if n <= 0 {
			return missing, mongoerr.New(28729, "Third argument to $slice must be positive: %s", v[2].String())
		}
		if pos < 0 {
			start = max(0, length+pos)
		} else {
			start = min(pos, length)
		}
		end = min(length, start+n)
	}
	return arrayValue(vals[start:end]), nil
}

// implementedOperators are the expression operators parseOperator
// evaluates.
var implementedOperators = map[string]bool{
	"$literal": true, "$getField": true, "$setField": true, "$eq": true, "$ne": true, "$gt": true,
	"$gte": true, "$lt": true, "$lte": true, "$cmp": true, "$and": true, "$or": true, "$not": true,
	"$cond": true, "$ifNull": true, "$in": true, "$add": true, "$multiply": true, "$subtract": true,
	"$concat": true, "$size": true, "$slice": true, "$isArray": true, "$type": true,
}

// isExpressionOperator reports whether op names an aggregation expression
// operator (implemented or not).
func isExpressionOperator(op string) bool {
	return implementedOperators[op] || knownAggOperators[op]
}
