package expr

import (
	"encoding/binary"
	"math"
	"sort"
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// Array and set operators.

func init() {
	regBinary("$arrayElemAt", func(e *Env, a, i bson.Value) (bson.Value, error) { return arrayElemAt(e, "$arrayElemAt", a, i) })
	regUnary("$first", func(e *Env, a bson.Value) (bson.Value, error) { return arrayElemAt(e, "$first", a, vZero) })
	regUnary("$last", func(e *Env, a bson.Value) (bson.Value, error) { return arrayElemAt(e, "$last", a, vMinusOne) })
	regUnary("$size", arraySize)
	regUnary("$isArray", func(e *Env, v bson.Value) (bson.Value, error) { return vBool(v.Type == bson.TypeArray), nil })
	regNary("$concatArrays", 0, -1, concatArrays)
	regUnary("$reverseArray", reverseArray)
	regNary("$slice", 2, 3, slice)
	regBinary("$in", in)
	regNary("$indexOfArray", 2, 4, indexOfArray)
	regNary("$range", 2, 3, rangeOp)
	register("$zip", parseZip)
	register("$sortArray", parseSortArray)
	register("$filter", parseFilter)
	register("$map", parseMap)
	register("$reduce", parseReduce)

	regNary("$setUnion", 0, -1, setUnion)
	regNary("$setIntersection", 0, -1, setIntersection)
	regBinary("$setDifference", setDifference)
	register("$setEquals", func(p *parser, name string, arg bson.Value) (node, error) {
		vals := argList(arg)
		if len(vals) < 2 {
			return nil, errf(mongoerr.SetEqualsTooFewArgs, "$setEquals needs at least two arguments had: %d", len(vals))
		}
		args, err := p.parseAll(vals)
		if err != nil {
			return nil, err
		}
		return p.fold(&naryNode{args: args, fn: setEquals}, args...), nil
	})
	regBinary("$setIsSubset", setIsSubset)
	regUnary("$anyElementTrue", func(e *Env, v bson.Value) (bson.Value, error) { return elementsTrue(v, "$anyElementTrue", true) })
	regUnary("$allElementsTrue", func(e *Env, v bson.Value) (bson.Value, error) { return elementsTrue(v, "$allElementsTrue", false) })
}

const maxRangeBytes = 64 * 1024 * 1024

// maxArena bounds the memory one evaluation may build: the arena (every
// string, array and document an expression makes is built there) plus the
// value stack that array builders collect elements on. Builders check it
// before they allocate (Env.fits), loops as they go (step, checkArena),
// and an evaluation that passed it fails with ExceededMemoryLimit (146).
// mongod has no single limit: its string builders stop at 64 MB (13548)
// and its values at the memory of the machine. A variable so tests can
// lower it.
var maxArena = 100 * 1024 * 1024

func (e *Env) checkArena() error {
	if e.over || e.used() > maxArena {
		return errWork()
	}
	return nil
}

// step counts one loop iteration against the work budget.
func (e *Env) step() error {
	e.work++
	if e.work > maxWork || e.over || e.used() > maxArena {
		return errWork()
	}
	return nil
}

func arrayElemAt(e *Env, name string, a, idx bson.Value) (bson.Value, error) {
	if nullish(a) || nullish(idx) {
		return vNull, nil
	}
	if a.Type != bson.TypeArray {
		if name == "$arrayElemAt" {
			return missing, errf(mongoerr.ArrayElemAtNotArray, "$arrayElemAt's first argument must be an array, but is %s", typeName(a))
		}
		return missing, errf(mongoerr.ArrayElemAtNotArray, "%s's argument must be an array, but is %s", name, typeName(a))
	}
	if !idx.IsNumber() {
		return missing, errf(mongoerr.ArrayIndexNotNumeric, "%s's second argument must be a numeric value, but is %s", name, typeName(idx))
	}
	if !isIntegral32(idx) {
		return missing, errf(mongoerr.ArrayIndexNotInt32, "%s's second argument must be representable as a 32-bit integer: %s", name, fmtDouble(toFloat(idx)))
	}
	i := int(toLong(idx))
	if i < 0 {
		i += arrayLen(a)
		if i < 0 {
			return missing, nil
		}
	}
	it := bson.Doc(a.Data).Iter()
	for k := 0; it.Next(); k++ {
		if k == i {
			return it.Element().Value, nil
		}
	}
	return missing, nil
}

func arraySize(e *Env, v bson.Value) (bson.Value, error) {
	if v.Type != bson.TypeArray {
		return missing, errf(mongoerr.SizeNotArray, "The argument to $size must be an array. Type of argument was: %s", typeName(v))
	}
	return e.int32(int32(arrayLen(v))), nil
}

func concatArrays(e *Env, args []bson.Value) (bson.Value, error) {
	start := len(e.vs)
	for _, a := range args {
		if nullish(a) {
			e.vs = e.vs[:start]
			return vNull, nil
		}
		if a.Type != bson.TypeArray {
			e.vs = e.vs[:start]
			return missing, errf(mongoerr.ConcatArraysNotArray, "$concatArrays only supports arrays, not %s", typeName(a))
		}
		e.pushElems(a)
	}
	out := e.array(e.vs[start:])
	e.vs = e.vs[:start]
	return out, e.checkArena()
}

func reverseArray(e *Env, a bson.Value) (bson.Value, error) {
	if nullish(a) {
		return vNull, nil
	}
	if a.Type != bson.TypeArray {
		return missing, errf(mongoerr.ReverseArrayNotArray, "The argument to $reverseArray must be an array, but was of type: %s", typeName(a))
	}
	start := e.pushElems(a)
	s := e.vs[start:]
	for i, j := 0, len(s)-1; i < j; i, j = i+1, j-1 {
		s[i], s[j] = s[j], s[i]
	}
	out := e.array(s)
	e.vs = e.vs[:start]
	return out, nil
}

func slice(e *Env, args []bson.Value) (bson.Value, error) {
	a := args[0]
	if nullish(a) || nullish(args[1]) {
		return vNull, nil
	}
	if a.Type != bson.TypeArray {
		return missing, errf(mongoerr.SliceFirstNotArray, "First argument to $slice must be an array, but is of type: %s", typeName(a))
	}
	p := args[1]
	if !p.IsNumber() {
		return missing, errf(mongoerr.SliceSecondNotNumeric, "Second argument to $slice must be a numeric value, but is of type: %s", typeName(p))
	}
	if !isIntegral32(p) {
		return missing, errf(mongoerr.SliceSecondNotInt32, "Second argument to $slice can't be represented as a 32-bit integer: %s", fmtDouble(toFloat(p)))
	}
	start := e.pushElems(a)
	elems := e.vs[start:]
	n := len(elems)
	var from, to int
	if len(args) == 2 {
		k := int(toLong(p))
		if k >= 0 {
			from, to = 0, min(k, n)
		} else {
			from, to = max(n+k, 0), n
		}
	} else {
		c := args[2]
		if nullish(c) {
			e.vs = e.vs[:start]
			return vNull, nil
		}
		if !c.IsNumber() {
			e.vs = e.vs[:start]
			return missing, errf(mongoerr.SliceThirdNotNumeric, "Third argument to $slice must be numeric, but is of type: %s", typeName(c))
		}
		if !isIntegral32(c) {
			e.vs = e.vs[:start]
			return missing, errf(mongoerr.SliceThirdNotInt32, "Third argument to $slice can't be represented as a 32-bit integer: %s", fmtDouble(toFloat(c)))
		}
		cnt := int(toLong(c))
		if cnt <= 0 {
			e.vs = e.vs[:start]
			return missing, errf(mongoerr.SliceThirdNotPositive, "Third argument to $slice must be positive: %d", cnt)
		}
		pos := int(toLong(p))
		if pos < 0 {
			pos = max(n+pos, 0)
		}
		from = min(pos, n)
		to = min(from+cnt, n)
	}
	out := e.array(elems[from:to])
	e.vs = e.vs[:start]
	return out, nil
}

func in(e *Env, v, a bson.Value) (bson.Value, error) {
	if a.Type != bson.TypeArray {
		return missing, errf(mongoerr.InSecondNotArray, "$in requires an array as a second argument, found: %s", typeName(a))
	}
	it := bson.Doc(a.Data).Iter()
	for it.Next() {
		if e.compare(v, it.Element().Value) == 0 {
			return vTrue, nil
		}
	}
	return vFalse, nil
}

func indexOfArray(e *Env, args []bson.Value) (bson.Value, error) {
	a, v := args[0], args[1]
	if nullish(a) {
		return vNull, nil
	}
	if a.Type != bson.TypeArray {
		return missing, errf(mongoerr.IndexOfArrayNotArray, "$indexOfArray requires an array as a first argument, found: %s", typeName(a))
	}
	n := arrayLen(a)
	start, end := 0, n
	for i, which := range []string{"starting", "ending"} {
		if len(args) <= 2+i {
			break
		}
		x := args[2+i]
		if !isIntegral32(x) {
			return missing, errf(mongoerr.IndexOfIndexNotIntegral, "$indexOfArrayrequires an integral %s index, found a value of type: %s, with value: %s", which, typeName(x), x.String())
		}
		k := int(toLong(x))
		if k < 0 {
			return missing, errf(mongoerr.IndexOfIndexNegative, "$indexOfArray requires a nonnegative %s index, found: %s", which, x.String())
		}
		if i == 0 {
			start = k
		} else {
			end = min(k, n)
		}
	}
	it := bson.Doc(a.Data).Iter()
	for k := 0; it.Next() && k < end; k++ {
		if k >= start && e.compare(it.Element().Value, v) == 0 {
			return e.int32(int32(k)), nil
		}
	}
	return e.int32(-1), nil
}

func rangeOp(e *Env, args []bson.Value) (bson.Value, error) {
	what := []string{"a starting value", "an ending value", "a step value"}
	typeMsg := []string{"a numeric starting value, found value of type: ", "a numeric ending value, found value of type: ", "a numeric step value, found value of type:"}
	codes := [][2]int32{{mongoerr.RangeStartNotNumeric, mongoerr.RangeStartNotInt32}, {mongoerr.RangeEndNotNumeric, mongoerr.RangeEndNotInt32}, {mongoerr.RangeStepNotNumeric, mongoerr.RangeStepNotInt32}}
	var vals [3]int64
	vals[2] = 1
	for i, v := range args {
		if !v.IsNumber() {
			return missing, errf(codes[i][0], "$range requires %s%s", typeMsg[i], typeName(v))
		}
		if !isIntegral32(v) {
			return missing, errf(codes[i][1], "$range requires %s that can be represented as a 32-bit integer, found value: %s", what[i], v.String())
		}
		vals[i] = toLong(v)
	}
	lo, hi, step := vals[0], vals[1], vals[2]
	if step == 0 {
		return missing, errf(mongoerr.RangeZeroStep, "$range requires a non-zero step value")
	}
	count := int64(0)
	if step > 0 && hi > lo {
		count = (hi - lo + step - 1) / step
	} else if step < 0 && hi < lo {
		count = (lo - hi - step - 1) / -step
	}
	length := int64(0)
	if steps := (hi - lo) / step; steps >= 0 {
		length = 1 + steps
	}
	if need := 24 + length*16; need >= maxRangeBytes {
		return missing, errf(mongoerr.ExceededMemoryLimit, "$range would use too much memory (%d bytes) and cannot spill to disk. Memory limit: %d bytes", need, maxRangeBytes)
	}
	e.work += int(count)
	if e.work > maxWork {
		return missing, errWork()
	}
	// Encoded straight into the arena: 7 to 14 bytes an element, where
	// collecting the elements first would hold 36.
	size := 5
	for i := range int(count) {
		size += 6 + len(bson.Index(i))
	}
	if !e.fits(size) {
		return missing, errWork()
	}
	b := e.alloc(size)
	binary.LittleEndian.PutUint32(b, uint32(size))
	p := 4
	for i, x := 0, lo; i < int(count); i, x = i+1, x+step {
		b[p] = byte(bson.TypeInt32)
		p++
		p += copy(b[p:], bson.Index(i))
		b[p] = 0
		p++
		binary.LittleEndian.PutUint32(b[p:], uint32(int32(x)))
		p += 4
	}
	b[p] = 0
	return bson.Value{Type: bson.TypeArray, Data: b}, nil
}

// ---- $zip ----

type zipNode struct {
	inputs   []node
	defaults []node
	longest  bool
}

func parseZip(p *parser, name string, arg bson.Value) (node, error) {
	if arg.Type != bson.TypeDocument {
		return nil, errf(mongoerr.ZipNotObject, "$zip only supports an object as an argument, found %s", typeName(arg))
	}
	n := &zipNode{}
	var inputsV, defaultsV bson.Value
	it := arg.Document().Iter()
	for it.Next() {
		el := it.Element()
		switch el.Key {
		case "inputs":
			inputsV = el.Value
		case "defaults":
			defaultsV = el.Value
		case "useLongestLength":
			if el.Value.Type != bson.TypeBoolean {
				return nil, errf(mongoerr.ZipUseLongestLengthNotBool, "useLongestLength must be a bool, found %s", typeName(el.Value))
			}
			n.longest = el.Value.Boolean()
		default:
			return nil, errf(mongoerr.ZipUnknownArgument, "$zip found an unknown argument: %s", el.Key)
		}
	}
	if inputsV.Type != bson.TypeArray {
		if inputsV.Type == 0 {
			return nil, errf(mongoerr.ZipMissingInputs, "$zip requires at least one input array")
		}
		return nil, errf(mongoerr.ZipInputsNotArray, "inputs must be an array of expressions, found %s", typeName(inputsV))
	}
	var err error
	if n.inputs, err = p.parseAll(inputsV.Document().Values()); err != nil {
		return nil, err
	}
	if len(n.inputs) == 0 {
		return nil, errf(mongoerr.ZipMissingInputs, "$zip requires at least one input array")
	}
	if defaultsV.Type != 0 {
		if defaultsV.Type != bson.TypeArray {
			return nil, errf(mongoerr.ZipDefaultsNotArray, "defaults must be an array of expressions, found %s", typeName(defaultsV))
		}
		if !n.longest {
			return nil, errf(mongoerr.ZipDefaultsWithoutLongest, "cannot specify defaults unless useLongestLength is true")
		}
		if n.defaults, err = p.parseAll(defaultsV.Document().Values()); err != nil {
			return nil, err
		}
		if len(n.defaults) != len(n.inputs) {
			return nil, errf(mongoerr.ZipDefaultsLengthMismatch, "defaults and inputs must have the same length")
		}
	}
	return n, nil
}

func (n *zipNode) eval(e *Env) (bson.Value, error) {
	arrays := make([][]bson.Value, len(n.inputs))
	minLen, maxLen := math.MaxInt, 0
	for i, x := range n.inputs {
		v, err := x.eval(e)
		if err != nil {
			return missing, err
		}
		if nullish(v) {
			return vNull, nil
		}
		if v.Type != bson.TypeArray {
			return missing, errf(mongoerr.ZipInputNotArray, "$zip found a non-array expression in input: %s", v.String())
		}
		arrays[i] = v.Document().Values()
		minLen = min(minLen, len(arrays[i]))
		maxLen = max(maxLen, len(arrays[i]))
	}
	defs := make([]bson.Value, len(n.inputs))
	for i := range defs {
		defs[i] = vNull
		if n.defaults != nil && minLen != maxLen {
			v, err := n.defaults[i].eval(e)
			if err != nil {
				return missing, err
			}
			defs[i] = v
		}
	}
	length := minLen
	if n.longest {
		length = maxLen
	}
	start := len(e.vs)
	row := make([]bson.Value, len(arrays))
	for r := 0; r < length; r++ {
		for i, a := range arrays {
			if r < len(a) {
				row[i] = a[r]
			} else {
				row[i] = defs[i]
			}
		}
		e.vs = append(e.vs, e.array(row))
		if e.over {
			e.vs = e.vs[:start]
			return missing, errWork()
		}
	}
	out := e.array(e.vs[start:])
	e.vs = e.vs[:start]
	return out, nil
}

// ---- $sortArray ----

type sortKey struct {
	path []string
	desc bool
}

type sortArrayNode struct {
	input node
	whole int // 1 or -1 when sorting by whole values, 0 for a pattern
	keys  []sortKey
}

func parseSortArray(p *parser, name string, arg bson.Value) (node, error) {
	if arg.Type != bson.TypeDocument {
		return nil, errf(mongoerr.SortArrayNotObject, "$sortArray requires an object as an argument, found: %s", typeName(arg))
	}
	n := &sortArrayNode{}
	var sortBy bson.Value
	it := arg.Document().Iter()
	for it.Next() {
		el := it.Element()
		switch el.Key {
		case "input":
			x, err := p.parse(el.Value)
			if err != nil {
				return nil, err
			}
			n.input = x
		case "sortBy":
			sortBy = el.Value
		default:
			return nil, errf(mongoerr.SortArrayUnknownArgument, "$sortArray found an unknown argument: %s", el.Key)
		}
	}
	if n.input == nil {
		return nil, errf(mongoerr.SortArrayMissingInput, "$sortArray requires 'input' to be specified")
	}
	if sortBy.Type == 0 {
		return nil, errf(mongoerr.SortArrayMissingSortBy, "$sortArray requires 'sortBy' to be specified")
	}
	keys, whole, err := parseSortSpec(sortBy)
	if err != nil {
		return nil, err
	}
	n.keys, n.whole = keys, whole
	return n, nil
}

// parseSortSpec reads a $sortArray sortBy: 1/-1 (whole values) or
// {path: 1|-1, ...}.
func parseSortSpec(v bson.Value) ([]sortKey, int, error) {
	if v.IsNumber() {
		d := toFloat(v)
		if d != 1 && d != -1 {
			return nil, 0, errf(mongoerr.SortArrayBadOrder, "The $sort element value must be either 1 or -1")
		}
		return nil, int(d), nil
	}
	if v.Type != bson.TypeDocument {
		return nil, 0, errf(mongoerr.SortArrayBadSpec, "The $sort is invalid: use 1/-1 to sort the whole element, or {field:1/-1} to sort embedded fields")
	}
	keys, err := sortPattern(v.Document())
	if err != nil {
		return nil, 0, errf(mongoerr.SortArrayBadSortBy, "%s", err.Error())
	}
	return keys, 0, nil
}

// sortPattern reads {path: 1|-1, ...}.
func sortPattern(d bson.Doc) ([]sortKey, error) {
	var keys []sortKey
	it := d.Iter()
	for it.Next() {
		el := it.Element()
		if !el.Value.IsNumber() || (toFloat(el.Value) != 1 && toFloat(el.Value) != -1) {
			return nil, errf(mongoerr.SortBadOrder, "$sort key ordering must be 1 (for ascending) or -1 (for descending)")
		}
		keys = append(keys, sortKey{path: strings.Split(strings.Clone(el.Key), "."), desc: toFloat(el.Value) < 0})
	}
	if len(keys) == 0 {
		return nil, errf(mongoerr.SortStageNoKeys, "$sort stage must have at least one sort key")
	}
	return keys, nil
}

func (n *sortArrayNode) eval(e *Env) (bson.Value, error) {
	v, null, err := arrayInput(e, n.input, func(v bson.Value) error {
		return errf(mongoerr.SortArrayInputNotArray, "The input argument to $sortArray must be an array, but was of type: %s", typeName(v))
	})
	if err != nil || null {
		return vNull, err
	}
	start := e.pushElems(v)
	elems := e.vs[start:]
	sort.SliceStable(elems, func(i, j int) bool {
		return e.sortCompare(elems[i], elems[j], n.whole, n.keys) < 0
	})
	out := e.array(elems)
	e.vs = e.vs[:start]
	return out, nil
}

func (e *Env) sortCompare(a, b bson.Value, whole int, keys []sortKey) int {
	if whole != 0 {
		return whole * e.compare(a, b)
	}
	for _, k := range keys {
		ka, kb := sortKeyValue(a, k.path, k.desc), sortKeyValue(b, k.path, k.desc)
		c := bson.CompareCollated(ka, kb, e.opts.Collation)
		if k.desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

// sortKeyValue extracts the sort key at path: missing sorts as null; for
// arrays, the smallest (ascending) or largest (descending) element.
func sortKeyValue(v bson.Value, path []string, desc bool) bson.Value {
	for i, p := range path {
		switch v.Type {
		case bson.TypeDocument:
			nv, ok := v.Document().Lookup(p)
			if !ok {
				return vNull
			}
			v = nv
		case bson.TypeArray:
			var best bson.Value
			it := v.Document().Iter()
			for it.Next() {
				x := sortKeyValue(it.Element().Value, path[i:], desc)
				if best.Type == 0 || desc && bson.Compare(x, best) > 0 || !desc && bson.Compare(x, best) < 0 {
					best = x
				}
			}
			if best.Type == 0 {
				return vNull
			}
			return best
		default:
			return vNull
		}
	}
	if v.Type == bson.TypeArray {
		var best bson.Value
		it := v.Document().Iter()
		for it.Next() {
			x := it.Element().Value
			if best.Type == 0 || desc && bson.Compare(x, best) > 0 || !desc && bson.Compare(x, best) < 0 {
				best = x
			}
		}
		if best.Type == 0 {
			return emptyArr
		}
		return best
	}
	return v
}
