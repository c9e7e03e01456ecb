package agg

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

func init() {
	register("$densify", stageInfo{parse: parseDensify})
}

// densifyStage fills gaps in a numeric or date field's sequence with
// documents holding only that field (and the partition fields).
type densifyStage struct {
	field      []string
	partitions [][]string
	step       float64
	unit       string
	bounds     string // "full", "partition" or "" for explicit
	lo, hi     bson.Value
	ctx        *Context
}

func parseDensify(c *Context, v bson.Value) (stage, error) {
	if v.Type != bson.TypeDocument {
		return nil, mongoerr.New(mongoerr.TypeMismatch, "the $densify stage specification must be an object, found %s", v.Type)
	}
	s := &densifyStage{ctx: c}
	var rng bson.Value
	it := v.Document().Iter()
	for it.Next() {
		e := it.Element()
		switch e.Key {
		case "field":
			if e.Value.Type != bson.TypeString {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '$densify.field' is the wrong type '%s', expected type 'string'", e.Value.Type)
			}
			if err := validFieldPath("$densify", e.Value.StringValue()); err != nil {
				return nil, err
			}
			s.field = strings.Split(e.Value.StringValue(), ".")
		case "partitionByFields":
			if e.Value.Type != bson.TypeArray {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '$densify.partitionByFields' is the wrong type '%s', expected type 'array'", e.Value.Type)
			}
			pit := e.Value.Document().Iter()
			for pit.Next() {
				pv := pit.Element().Value
				if pv.Type != bson.TypeString {
					return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '$densify.partitionByFields' must contain only strings")
				}
				if err := validFieldPath("$densify", pv.StringValue()); err != nil {
					return nil, err
				}
				s.partitions = append(s.partitions, strings.Split(pv.StringValue(), "."))
			}
		case "range":
			if e.Value.Type != bson.TypeDocument {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '$densify.range' is the wrong type '%s', expected type 'object'", e.Value.Type)
			}
			rng = e.Value
		default:
			return nil, mongoerr.New(mongoerr.IDLUnknownField, "BSON field '$densify.%s' is an unknown field.", e.Key)
		}
	}
	if s.field == nil {
		return nil, mongoerr.New(mongoerr.IDLFailedToParse, "BSON field '$densify.field' is missing but a required field")
	}
	if rng.Type == 0 {
		return nil, mongoerr.New(mongoerr.IDLFailedToParse, "BSON field '$densify.range' is missing but a required field")
	}
	if err := s.parseRange(rng.Document()); err != nil {
		return nil, err
	}
	for _, p := range s.partitions {
		if strings.HasPrefix(strings.Join(p, ".")+".", strings.Join(s.field, ".")+".") ||
			strings.HasPrefix(strings.Join(s.field, ".")+".", strings.Join(p, ".")+".") {
			return nil, mongoerr.New(mongoerr.DensifyPartitionField, "Cannot densify field '%s' that is also a partition field or a prefix of one", strings.Join(s.field, "."))
		}
	}
	return s, nil
}

func (s *densifyStage) parseRange(d bson.Doc) error {
	var step, bounds bson.Value
	it := d.Iter()
	for it.Next() {
		e := it.Element()
		switch e.Key {
		case "step":
			step = e.Value
		case "unit":
			if e.Value.Type != bson.TypeString {
				return mongoerr.New(mongoerr.TypeMismatch, "BSON field '$densify.range.unit' is the wrong type '%s', expected type 'string'", e.Value.Type)
			}
			s.unit = e.Value.StringValue()
			switch s.unit {
			case "millisecond", "second", "minute", "hour", "day", "week", "month", "quarter", "year":
			default:
				return mongoerr.New(mongoerr.FailedToParse, "unknown time unit value: %s", s.unit)
			}
		case "bounds":
			bounds = e.Value
		default:
			return mongoerr.New(mongoerr.IDLUnknownField, "BSON field '$densify.range.%s' is an unknown field.", e.Key)
		}
	}
	if step.Type == 0 || bounds.Type == 0 {
		return mongoerr.New(mongoerr.IDLFailedToParse, "BSON field '$densify.range.step' and 'bounds' are required")
	}
	if !step.IsNumber() {
		return mongoerr.New(mongoerr.TypeMismatch, "BSON field '$densify.range.step' is the wrong type '%s', expected types '[long, int, decimal, double]'", step.Type)
	}
	s.step, _ = step.AsFloat64()
	if !(s.step > 0) {
		return mongoerr.New(mongoerr.DensifyStepNotPositive, "the step parameter in a range statement must be a strictly positive numeric value")
	}
	if s.unit != "" && s.step != math.Trunc(s.step) {
		return mongoerr.New(mongoerr.DensifyDateStepNotWhole, "The step parameter in a range satement must be a whole number when densifying a date range")
	}
	switch bounds.Type {
	case bson.TypeString:
		switch bounds.StringValue() {
		case "full", "partition":
			s.bounds = bounds.StringValue()
		default:
			return mongoerr.New(mongoerr.DensifyBadBoundsString, "Bounds string must either be 'full' or 'partition'")
		}
	case bson.TypeArray:
		vals := bounds.Document().Values()
		if len(vals) != 2 {
			return mongoerr.New(mongoerr.DensifyBoundsNotPair, "a bounding array in a range statement must have exactly two elements")
		}
		s.lo, s.hi = vals[0], vals[1]
		isDate := s.lo.Type == bson.TypeDateTime && s.hi.Type == bson.TypeDateTime
		isNum := s.lo.IsNumber() && s.hi.IsNumber()
		if !isDate && !isNum {
			return mongoerr.New(mongoerr.DensifyBoundsMixedTypes, "a bounding array must contain either both dates or both numeric types")
		}
		if isDate && s.unit == "" {
			return mongoerr.New(mongoerr.DensifyDateBoundsNeedUnit, "numeric bounds may not have unit parameter")
		}
		if isNum && s.unit != "" {
			return mongoerr.New(mongoerr.DensifyNumericBoundsWithUnit, "numeric bounds may not have unit parameter")
		}
		if bson.Compare(s.lo, s.hi) > 0 {
			return mongoerr.New(mongoerr.DensifyBoundsInverted, "A bounding array in a range statement must have the lower bound first")
		}
	default:
		return mongoerr.New(mongoerr.DensifyBadBounds, "the bounds in a range statement must be the string 'full', 'partition', or an ascending array of two numbers or two dates")
	}
	return nil
}

// pos is a position on the densified axis: a number or milliseconds.
type densRow struct {
	part []byte
	x    float64
	doc  bson.Doc
}

func (s *densifyStage) open(in Iterator) (Iterator, error) { return blocking(in, s.run), nil }

func (s *densifyStage) axis(v bson.Value) (float64, bool, error) {
	switch {
	case v.Type == 0 || v.Type == bson.TypeNull || v.Type == bson.TypeUndefined:
		return 0, false, nil
	case s.unit == "" && v.IsNumber():
		f, _ := v.AsFloat64()
		return f, true, nil
	case s.unit != "" && v.Type == bson.TypeDateTime:
		return float64(v.DateTime()), true, nil
	case s.unit != "":
		return 0, false, mongoerr.New(mongoerr.DensifyNonDateValue, "Encountered non-date value in $densify when a date range was specified")
	}
	return 0, false, mongoerr.New(mongoerr.DensifyFieldNotNumeric, "Densify field type must be numeric")
}

// add advances x by n steps.
func (s *densifyStage) add(x float64, n float64) float64 {
	ms := int64(x)
	step := int64(s.step * n)
	t := time.UnixMilli(ms).UTC()
	switch s.unit {
	case "":
		return x + s.step*n
	case "millisecond":
		return float64(ms + step)
	case "second":
		return float64(ms + step*1000)
	case "minute":
		return float64(ms + step*60000)
	case "hour":
		return float64(ms + step*3600000)
	case "day":
		return float64(ms + step*86400000)
	case "week":
		return float64(ms + step*7*86400000)
	case "month":
		return float64(t.AddDate(0, int(step), 0).UnixMilli())
	case "quarter":
		return float64(t.AddDate(0, 3*int(step), 0).UnixMilli())
	}
	return float64(t.AddDate(int(step), 0, 0).UnixMilli())
}

func (s *densifyStage) value(x float64) bson.Value {
	var b bson.Builder
	if s.unit != "" {
		b.AppendDateTime("v", int64(x))
	} else if x == math.Trunc(x) && math.Abs(x) < 1<<31 {
		b.AppendInt32("v", int32(x))
	} else if x == math.Trunc(x) && math.Abs(x) < 1<<62 {
		b.AppendInt64("v", int64(x))
	} else {
		b.AppendDouble("v", x)
	}
	v, _ := b.Finish().Lookup("v")
	return v
}

func (s *densifyStage) run(in Iterator) ([]bson.Doc, error) {
	var rows []densRow
	var passthrough []bson.Doc
	var mem int64
	for {
		d, err := in.Next()
		if err != nil {
			return nil, err
		}
		if d == nil {
			break
		}
		d = cloneDoc(d)
		mem += int64(len(d)) + 48
		if mem > s.ctx.memLimit() && !s.ctx.AllowDiskUse {
			return nil, errMemory("$densify")
		}
		x, ok, err := s.axis(lookupPath(d, s.field))
		if err != nil {
			return nil, err
		}
		if !ok {
			passthrough = append(passthrough, d)
			continue
		}
		var part []byte
		for _, p := range s.partitions {
			part = bson.AppendKey(part, lookupPath(d, p), false)
		}
		rows = append(rows, densRow{part: part, x: x, doc: d})
	}
	slices.SortStableFunc(rows, func(a, b densRow) int {
		if c := bytes.Compare(a.part, b.part); c != 0 {
			return c
		}
		switch {
		case a.x < b.x:
			return -1
		case a.x > b.x:
			return 1
		}
		return 0
	})
	out := passthrough
	gmin, gmax := math.Inf(1), math.Inf(-1)
	for _, r := range rows {
		gmin, gmax = math.Min(gmin, r.x), math.Max(gmax, r.x)
	}
	var lo, hi float64
	if s.bounds == "" {
		lo, _, _ = s.axis(s.lo)
		hi, _, _ = s.axis(s.hi)
	}
	generated := 0
	for start := 0; start < len(rows); {
		end := start + 1
		for end < len(rows) && bytes.Equal(rows[end].part, rows[start].part) {
			end++
		}
		part := rows[start:end]
		var from, to float64
		inclusive := true
		switch s.bounds {
		case "full":
			from, to = gmin, gmax
		case "partition":
			from, to = part[0].x, part[len(part)-1].x
		default:
			from, to, inclusive = lo, hi, false
		}
		k := 0.0
		cur := from
		within := func(x float64) bool { return x < to || (inclusive && x == to) }
		emit := func(x float64) error {
			if generated++; generated > 10_000_000 {
				return mongoerr.New(mongoerr.DensifyTooManyDocuments, "Generated 10000000 documents in $densify, which is over the limit of 10000000. Increase the 'internalQueryMaxAllowedDensifyDocs' parameter to allow more generated documents")
			}
			d := bson.WithPath(bson.EmptyDoc, s.field, s.value(x))
			for _, p := range s.partitions {
				if v := lookupPath(part[0].doc, p); v.Type != 0 {
					d = bson.WithPath(d, p, v)
				}
			}
			out = append(out, d)
			return nil
		}
		for _, r := range part {
			for cur < r.x && within(cur) {
				if cur >= from {
					if err := emit(cur); err != nil {
						return nil, err
					}
				}
				k++
				cur = s.add(from, k)
			}
			if cur == r.x {
				k++
				cur = s.add(from, k)
			}
			out = append(out, r.doc)
		}
		for within(cur) {
			if err := emit(cur); err != nil {
				return nil, err
			}
			k++
			cur = s.add(from, k)
		}
		start = end
	}
	return out, nil
}
