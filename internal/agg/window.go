package agg

import (
	"bytes"
	"encoding/binary"
	"math"
	"slices"
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/expr"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
)

func init() {
	register("$setWindowFields", stageInfo{parse: parseSetWindowFields})
}

// setWindowFieldsStage computes window functions over partitions of its
// input sorted by sortBy. Output documents come in partition, then sortBy,
// order.
type setWindowFieldsStage struct {
	partitionBy expr.Expr
	sortBy      *query.Sort
	sortField   []string // the single sortBy field, for range windows
	sortKeys    int
	outputs     []*windowOutput
	ctx         *Context
}

type windowOutput struct {
	path  []string
	fn    string
	acc   *expr.AccumulatorSpec
	arg   expr.Expr
	arg2  expr.Expr // $covariance*: the second operand
	unit  string    // $derivative, $integral
	alpha float64   // $expMovingAvg
	by    int64
	def   bson.Value
	win   *window
	whole bool // no window: the whole partition
}

// window is a documents or range window [lo, hi]; a nil bound is
// unbounded.
type window struct {
	rangeBased bool
	lo, hi     *float64
	current    [2]bool // "current" bound in a range window
	unit       string
}

var rankFns = map[string]bool{"$rank": true, "$denseRank": true, "$documentNumber": true}

func parseSetWindowFields(c *Context, v bson.Value) (stage, error) {
	if v.Type != bson.TypeDocument {
		return nil, mongoerr.New(mongoerr.TypeMismatch, "the $setWindowFields stage specification must be an object, found %s", v.Type)
	}
	s := &setWindowFieldsStage{ctx: c}
	var output bson.Value
	it := v.Document().Iter()
	for it.Next() {
		e := it.Element()
		switch e.Key {
		case "partitionBy":
			x, err := expr.Parse(e.Value, c.Expr)
			if err != nil {
				return nil, err
			}
			s.partitionBy = x
		case "sortBy":
			if e.Value.Type != bson.TypeDocument {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '$setWindowFields.sortBy' is the wrong type '%s', expected type 'object'", e.Value.Type)
			}
			so, err := query.ParseSort(e.Value.Document(), c.Query)
			if err != nil {
				return nil, err
			}
			s.sortBy = so
			s.sortKeys = e.Value.Document().Len()
			if s.sortKeys == 1 {
				s.sortField = strings.Split(firstKey(e.Value.Document()), ".")
			}
		case "output":
			if e.Value.Type != bson.TypeDocument {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '$setWindowFields.output' is the wrong type '%s', expected type 'object'", e.Value.Type)
			}
			output = e.Value
		default:
			return nil, mongoerr.New(mongoerr.IDLUnknownField, "BSON field '$setWindowFields.%s' is an unknown field.", e.Key)
		}
	}
	if output.Type == 0 {
		return nil, mongoerr.New(mongoerr.IDLFailedToParse, "BSON field '$setWindowFields.output' is missing but a required field")
	}
	oit := output.Document().Iter()
	for oit.Next() {
		e := oit.Element()
		if err := validFieldPath("$setWindowFields", e.Key); err != nil {
			return nil, err
		}
		o, err := s.parseOutput(c, e)
		if err != nil {
			return nil, err
		}
		s.outputs = append(s.outputs, o)
	}
	return s, nil
}

func (s *setWindowFieldsStage) parseOutput(c *Context, e bson.Element) (*windowOutput, error) {
	if e.Value.Type != bson.TypeDocument {
		return nil, mongoerr.New(mongoerr.FailedToParse, "Expected a document for the window function output spec of '%s'", e.Key)
	}
	o := &windowOutput{path: strings.Split(e.Key, ".")}
	var fnArg, winSpec bson.Value
	it := e.Value.Document().Iter()
	for it.Next() {
		f := it.Element()
		if f.Key == "window" {
			winSpec = f.Value
			continue
		}
		if !strings.HasPrefix(f.Key, "$") {
			return nil, mongoerr.New(mongoerr.FailedToParse, "Window function found an unknown argument: %s", f.Key)
		}
		if o.fn != "" {
			return nil, mongoerr.New(mongoerr.FailedToParse, "Cannot specify multiple functions in window function spec")
		}
		o.fn, fnArg = f.Key, f.Value
	}
	if o.fn == "" {
		return nil, mongoerr.New(mongoerr.FailedToParse, "Expected a $-prefixed window function, %s", e.Value.String())
	}
	needsSort := rankFns[o.fn] || o.fn == "$shift" || o.fn == "$linearFill" || o.fn == "$locf"
	switch {
	case rankFns[o.fn]:
		if fnArg.Type != bson.TypeDocument || fnArg.Document().Len() != 0 {
			return nil, mongoerr.New(mongoerr.WindowRequiresEmptyObject, "%s must be specified with '{}' as the value", o.fn)
		}
		if s.sortBy == nil || s.sortKeys != 1 {
			return nil, mongoerr.New(mongoerr.WindowRequiresOneSortKey, "%s must be specified with a top level sortBy expression with exactly one element", o.fn)
		}
	case o.fn == "$shift":
		if err := o.parseShift(c, fnArg); err != nil {
			return nil, err
		}
	case o.fn == "$locf", o.fn == "$linearFill":
		x, err := expr.Parse(fnArg, c.Expr)
		if err != nil {
			return nil, err
		}
		o.arg = x
		if o.fn == "$linearFill" && (s.sortBy == nil || s.sortKeys != 1) {
			return nil, mongoerr.New(mongoerr.LinearFillSortBy, "$linearFill requires a sortBy with exactly one field")
		}
	case numericFns[o.fn]:
		if err := s.parseNumericFn(c, o, fnArg, winSpec.Type != 0); err != nil {
			return nil, err
		}
	case o.fn == "$accumulator":
		// Not a window function in mongod (a $group accumulator only).
		return nil, mongoerr.New(mongoerr.FailedToParse, "Unrecognized window function, %s", o.fn)
	default:
		acc, err := expr.ParseAccumulator(o.fn, fnArg, c.Expr)
		if err != nil {
			if me, ok := err.(*mongoerr.Error); ok && me.Code == mongoerr.GroupUnknownOperator {
				return nil, mongoerr.New(mongoerr.FailedToParse, "Unrecognized window function, %s", o.fn)
			}
			return nil, err
		}
		o.acc = acc
	}
	if needsSort && s.sortBy == nil {
		return nil, mongoerr.New(mongoerr.WindowRequiresSortBy, "%s requires a sortBy", o.fn)
	}
	if winSpec.Type == 0 {
		o.whole = true
		return o, nil
	}
	if o.acc == nil && !windowedNumericFns[o.fn] {
		return nil, mongoerr.New(mongoerr.FailedToParse, "%s does not accept a 'window' field", o.fn)
	}
	w, err := s.parseWindow(winSpec)
	if err != nil {
		return nil, err
	}
	o.win = w
	return o, nil
}

func (o *windowOutput) parseShift(c *Context, v bson.Value) error {
	if v.Type != bson.TypeDocument {
		return mongoerr.New(mongoerr.FailedToParse, "Argument to $shift must be an object")
	}
	hasBy, hasOut := false, false
	it := v.Document().Iter()
	for it.Next() {
		e := it.Element()
		switch e.Key {
		case "output":
			x, err := expr.Parse(e.Value, c.Expr)
			if err != nil {
				return err
			}
			o.arg, hasOut = x, true
		case "by":
			n, ok := e.Value.AsInt64()
			if f, isF := e.Value.AsFloat64(); !ok || !isF || f != math.Trunc(f) || f > math.MaxInt32 || f < math.MinInt32 {
				return mongoerr.New(mongoerr.FailedToParse, "'$shift:by' field must be an integer, but found %s", e.Value.String())
			}
			o.by, hasBy = n, true
		case "default":
			x, err := expr.Parse(e.Value, c.Expr)
			if err != nil {
				return err
			}
			dv, ok := expr.Constant(x)
			if !ok {
				return mongoerr.New(mongoerr.FailedToParse, "'$shift:default' expression must yield a constant value.")
			}
			o.def = expr.CopyValue(dv)
		default:
			return mongoerr.New(mongoerr.FailedToParse, "Unknown argument in $shift")
		}
	}
	if !hasBy || !hasOut {
		return mongoerr.New(mongoerr.FailedToParse, "$shift requires 'output' and 'by' fields")
	}
	return nil
}

func (s *setWindowFieldsStage) parseWindow(v bson.Value) (*window, error) {
	if v.Type != bson.TypeDocument {
		return nil, mongoerr.New(mongoerr.FailedToParse, "'window' field must be an object")
	}
	w := &window{}
	var bounds bson.Value
	it := v.Document().Iter()
	for it.Next() {
		e := it.Element()
		switch e.Key {
		case "documents", "range":
			if bounds.Type != 0 {
				return nil, mongoerr.New(mongoerr.FailedToParse, "Window bounds can only specify one of 'documents' or 'range'")
			}
			bounds, w.rangeBased = e.Value, e.Key == "range"
		case "unit":
			if e.Value.Type != bson.TypeString {
				return nil, mongoerr.New(mongoerr.FailedToParse, "'unit' must be a string")
			}
			w.unit = e.Value.StringValue()
			switch w.unit {
			case "millisecond", "second", "minute", "hour", "day", "week", "month", "quarter", "year":
			default:
				return nil, mongoerr.New(mongoerr.FailedToParse, "unknown time unit value: %s", w.unit)
			}
		default:
			return nil, mongoerr.New(mongoerr.FailedToParse, "'window' field can only contain 'documents' as the only argument or 'range' with an optional 'unit' field")
		}
	}
	if bounds.Type != bson.TypeArray || bounds.Document().Len() != 2 {
		return nil, mongoerr.New(mongoerr.FailedToParse, "Window bounds must be a 2-element array")
	}
	if w.unit != "" && !w.rangeBased {
		return nil, mongoerr.New(mongoerr.FailedToParse, "Document-based bounds can't have a unit")
	}
	vals := bounds.Document().Values()
	for i, b := range vals {
		switch {
		case b.Type == bson.TypeString && b.StringValue() == "unbounded":
		case b.Type == bson.TypeString && b.StringValue() == "current":
			if w.rangeBased {
				w.current[i] = true
			}
			z := 0.0
			if i == 0 {
				w.lo = &z
			} else {
				w.hi = &z
			}
		case b.IsNumber():
			f, _ := b.AsFloat64()
			if !w.rangeBased && f != math.Trunc(f) {
				return nil, mongoerr.New(mongoerr.FailedToParse, "Numeric document-based bounds must be an integer")
			}
			if i == 0 {
				w.lo = &f
			} else {
				w.hi = &f
			}
		default:
			return nil, mongoerr.New(mongoerr.FailedToParse, "Window bounds must be 'unbounded', 'current', or a number")
		}
	}
	if w.unit != "" {
		for _, b := range []*float64{w.lo, w.hi} {
			if b != nil && *b != math.Trunc(*b) {
				return nil, mongoerr.New(mongoerr.WindowRangeUnitNotInteger, "With 'unit', range-based bounds must be an integer")
			}
		}
	}
	if w.lo != nil && w.hi != nil && *w.lo > *w.hi {
		return nil, mongoerr.New(mongoerr.WindowBoundsInverted, "Lower bound must not exceed upper bound: %s", bounds.String())
	}
	if w.lo == nil && vals[1].Type == bson.TypeString && vals[1].StringValue() == "unbounded" {
		return w, nil
	}
	if vals[0].Type == bson.TypeString && vals[0].StringValue() == "unbounded" && w.lo != nil {
		w.lo = nil
	}
	if s.sortBy == nil {
		if w.rangeBased {
			return nil, mongoerr.New(mongoerr.WindowRangeSortByOneField, "Range-based bounds require sortBy a single field")
		}
		return nil, mongoerr.New(mongoerr.WindowRequiresSortBy, "Document-based bounds require a sortBy")
	}
	if w.rangeBased && s.sortKeys != 1 {
		return nil, mongoerr.New(mongoerr.WindowRangeSortByOneField, "Range-based bounds require sortBy a single field")
	}
	return w, nil
}

type windowRow struct {
	key  []byte // partition key, then sort key, then sequence
	part int    // length of the partition prefix of key
	doc  bson.Doc
}

func (s *setWindowFieldsStage) open(in Iterator) (Iterator, error) { return blocking(in, s.run), nil }

func (s *setWindowFieldsStage) run(in Iterator) ([]bson.Doc, error) {
	env := expr.NewEnv(s.ctx.Expr)
	var rows []windowRow
	var mem int64
	coll := s.ctx.collation()
	for seq := uint64(0); ; seq++ {
		d, err := in.Next()
		if err != nil {
			return nil, err
		}
		if d == nil {
			break
		}
		d = cloneDoc(d)
		var key []byte
		if s.partitionBy != nil {
			pv, err := expr.Eval(s.partitionBy, d, env)
			if err != nil {
				return nil, err
			}
			if pv.Type == bson.TypeArray {
				return nil, mongoerr.New(mongoerr.WindowPartitionKeyArray, "setWindowFields partition key cannot be an array")
			}
			if pv.Type == 0 {
				pv = bson.Value{Type: bson.TypeNull, Data: []byte{}}
			}
			if coll != nil {
				key = bson.AppendKeyCollated(key, pv, false, coll)
			} else {
				key = bson.AppendKey(key, pv, false)
			}
		}
		part := len(key)
		if s.sortBy != nil {
			key = s.sortBy.Key(key, d)
		}
		key = binary.BigEndian.AppendUint64(key, seq)
		rows = append(rows, windowRow{key: key, part: part, doc: d})
		mem += int64(len(d) + len(key) + 48)
		if mem > s.ctx.memLimit() && !s.ctx.AllowDiskUse {
			return nil, errMemory("$setWindowFields")
		}
	}
	slices.SortFunc(rows, func(a, b windowRow) int { return bytes.Compare(a.key, b.key) })
	out := make([]bson.Doc, 0, len(rows))
	for start := 0; start < len(rows); {
		end := start + 1
		for end < len(rows) && bytes.Equal(rows[end].key[:rows[end].part], rows[start].key[:rows[start].part]) {
			end++
		}
		docs, err := s.partition(rows[start:end], env)
		if err != nil {
			return nil, err
		}
		out = append(out, docs...)
		start = end
	}
	return out, nil
}

// partition computes the outputs for one partition.
func (s *setWindowFieldsStage) partition(rows []windowRow, env *expr.Env) ([]bson.Doc, error) {
	vals := make([][]bson.Value, len(s.outputs))
	for i, o := range s.outputs {
		v, err := s.compute(o, rows, env)
		if err != nil {
			return nil, err
		}
		vals[i] = v
	}
	out := make([]bson.Doc, len(rows))
	for r, row := range rows {
		d := row.doc
		for i, o := range s.outputs {
			v := vals[i][r]
			if v.Type == 0 {
				v = bson.Value{Type: bson.TypeNull, Data: []byte{}}
			}
			d = bson.WithPath(d, o.path, v)
		}
		out[r] = d
	}
	return out, nil
}

func sortPart(row windowRow) []byte { return row.key[row.part : len(row.key)-8] }

func (s *setWindowFieldsStage) compute(o *windowOutput, rows []windowRow, env *expr.Env) ([]bson.Value, error) {
	res := make([]bson.Value, len(rows))
	switch {
	case rankFns[o.fn]:
		rank, dense := 0, 0
		for i := range rows {
			if i == 0 || !bytes.Equal(sortPart(rows[i]), sortPart(rows[i-1])) {
				rank, dense = i+1, dense+1
			}
			n := map[string]int{"$rank": rank, "$denseRank": dense, "$documentNumber": i + 1}[o.fn]
			res[i] = intValue(int64(n))
		}
		return res, nil
	case o.fn == "$shift":
		for i := range rows {
			j := int64(i) + o.by
			if j < 0 || j >= int64(len(rows)) {
				res[i] = o.def
				continue
			}
			v, err := expr.Eval(o.arg, rows[j].doc, env)
			if err != nil {
				return nil, err
			}
			res[i] = expr.CopyValue(v)
		}
		return res, nil
	case o.fn == "$locf":
		var last bson.Value
		for i := range rows {
			v, err := expr.Eval(o.arg, rows[i].doc, env)
			if err != nil {
				return nil, err
			}
			if v.Type != 0 && v.Type != bson.TypeNull && v.Type != bson.TypeUndefined {
				last = expr.CopyValue(v)
			}
			res[i] = last
		}
		return res, nil
	case o.fn == "$linearFill":
		return s.linearFill(o, rows, env)
	case numericFns[o.fn]:
		return s.computeNumeric(o, rows, env)
	}
	// Accumulator windows.
	if o.whole || (o.win.lo == nil && o.win.hi == nil) {
		acc := o.acc.New()
		for _, r := range rows {
			if err := acc.Add(r.doc, env); err != nil {
				return nil, err
			}
		}
		v := acc.Result()
		for i := range res {
			res[i] = v
		}
		return res, nil
	}
	bounds, err := s.bounds(o.win, rows)
	if err != nil {
		return nil, err
	}
	if o.win.lo == nil {
		// Growing window: one accumulator, results after each extension.
		acc := o.acc.New()
		next := 0
		for i, b := range bounds {
			for ; next <= b[1]; next++ {
				if err := acc.Add(rows[next].doc, env); err != nil {
					return nil, err
				}
			}
			res[i] = expr.CopyValue(acc.Result())
		}
		return res, nil
	}
	for i, b := range bounds {
		acc := o.acc.New()
		for j := b[0]; j <= b[1]; j++ {
			if err := acc.Add(rows[j].doc, env); err != nil {
				return nil, err
			}
		}
		res[i] = acc.Result()
	}
	return res, nil
}
