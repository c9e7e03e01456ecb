package agg

import (
	"math"
	"slices"
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/expr"
	"github.com/cairndb/cairn/internal/mongoerr"
)

func init() {
	register("$bucket", stageInfo{parse: parseBucket})
	register("$bucketAuto", stageInfo{parse: parseBucketAuto})
	register("$sortByCount", stageInfo{parse: parseSortByCount})
}

// accOutput is the output specification of $bucket/$bucketAuto: named
// accumulators, {count: {$sum: 1}} by default.
type accOutput struct {
	names []string
	accs  []*expr.AccumulatorSpec
}

func parseAccOutput(c *Context, v bson.Value, stage string) (*accOutput, error) {
	o := &accOutput{}
	if v.Type == 0 {
		spec, err := expr.ParseAccumulator("$sum", bson.Value{Type: bson.TypeInt32, Data: []byte{1, 0, 0, 0}}, c.Expr)
		if err != nil {
			return nil, err
		}
		o.names, o.accs = []string{"count"}, []*expr.AccumulatorSpec{spec}
		return o, nil
	}
	if v.Type != bson.TypeDocument {
		return nil, mongoerr.New(mongoerr.BucketOutputNotObject, "The %s 'output' field must be an object, but found type: %s.", stage, v.Type)
	}
	it := v.Document().Iter()
	for it.Next() {
		spec, err := parseAccField(c, it.Element())
		if err != nil {
			return nil, err
		}
		o.names = append(o.names, it.Element().Key)
		o.accs = append(o.accs, spec)
	}
	return o, nil
}

func (o *accOutput) fresh() []expr.Accumulator {
	out := make([]expr.Accumulator, len(o.accs))
	for i, a := range o.accs {
		out[i] = a.New()
	}
	return out
}

func (o *accOutput) appendResults(b *bson.Builder, accs []expr.Accumulator) {
	for i, a := range accs {
		v := a.Result()
		if v.Type == 0 {
			v = bson.Value{Type: bson.TypeNull, Data: []byte{}}
		}
		b.AppendValue(o.names[i], v)
	}
}

func parseGroupBy(c *Context, v bson.Value, stage string, code int32) (expr.Expr, error) {
	ok := (v.Type == bson.TypeString && strings.HasPrefix(v.StringValue(), "$")) || v.Type == bson.TypeDocument
	if !ok {
		return nil, mongoerr.New(code, "The %s 'groupBy' field must be defined as a $-prefixed path or an expression, but found: %s.", stage, v.String())
	}
	return expr.Parse(v, c.Expr)
}

// bucketStage is $bucket: documents grouped into ranges between
// boundaries.
type bucketStage struct {
	groupBy    expr.Expr
	boundaries []bson.Value
	def        bson.Value
	hasDefault bool
	out        *accOutput
	ctx        *Context
}

func parseBucket(c *Context, v bson.Value) (stage, error) {
	if v.Type != bson.TypeDocument {
		return nil, mongoerr.New(mongoerr.BucketNotObject, "Argument to $bucket stage must be an object, but found type: %s.", v.Type)
	}
	s := &bucketStage{ctx: c}
	var groupBy, output bson.Value
	hasBoundaries := false
	it := v.Document().Iter()
	for it.Next() {
		e := it.Element()
		switch e.Key {
		case "groupBy":
			groupBy = e.Value
		case "boundaries":
			if e.Value.Type != bson.TypeArray {
				return nil, mongoerr.New(mongoerr.BucketBoundariesNotArray, "The $bucket 'boundaries' field must be an array, but found type: %s.", e.Value.Type)
			}
			hasBoundaries = true
			for _, b := range e.Value.Document().Values() {
				s.boundaries = append(s.boundaries, expr.CopyValue(b))
			}
		case "default":
			s.def, s.hasDefault = expr.CopyValue(e.Value), true
		case "output":
			output = e.Value
		default:
			return nil, mongoerr.New(mongoerr.BucketUnknownOption, "Unrecognized option to $bucket: %s.", e.Key)
		}
	}
	if groupBy.Type == 0 || !hasBoundaries {
		return nil, mongoerr.New(mongoerr.BucketMissingArgument, "$bucket requires 'groupBy' and 'boundaries' to be specified.")
	}
	var err error
	if s.groupBy, err = parseGroupBy(c, groupBy, "$bucket", mongoerr.BucketGroupByBad); err != nil {
		return nil, err
	}
	if len(s.boundaries) < 2 {
		return nil, mongoerr.New(mongoerr.BucketTooFewBoundaries, "The $bucket 'boundaries' field must have at least 2 values, but found %d value(s).", len(s.boundaries))
	}
	for i := 1; i < len(s.boundaries); i++ {
		a, b := s.boundaries[i-1], s.boundaries[i]
		if bson.CanonicalRank(a.Type) != bson.CanonicalRank(b.Type) {
			return nil, mongoerr.New(mongoerr.BucketBoundariesMixedTypes, "All values in the the 'boundaries' option to $bucket must have the same type. Found conflicting types %s and %s.", a.Type, b.Type)
		}
		if s.compare(a, b) >= 0 {
			return nil, mongoerr.New(mongoerr.BucketBoundariesNotSorted, "The 'boundaries' option to $bucket must be sorted, but elements %d and %d are not in ascending order (%s is not less than %s).", i-1, i, a.String(), b.String())
		}
	}
	if s.hasDefault && bson.CanonicalRank(s.def.Type) == bson.CanonicalRank(s.boundaries[0].Type) &&
		s.compare(s.def, s.boundaries[0]) >= 0 && s.compare(s.def, s.boundaries[len(s.boundaries)-1]) < 0 {
		return nil, mongoerr.New(mongoerr.BucketDefaultInRange, "The $bucket 'default' field must be less than the lowest boundary or greater than or equal to the highest boundary.")
	}
	if s.out, err = parseAccOutput(c, output, "$bucket"); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *bucketStage) compare(a, b bson.Value) int {
	if c := s.ctx.collation(); c != nil {
		return bson.CompareCollated(a, b, c)
	}
	return bson.Compare(a, b)
}

func (s *bucketStage) open(in Iterator) (Iterator, error) { return blocking(in, s.run), nil }

func (s *bucketStage) run(in Iterator) ([]bson.Doc, error) {
	nb := len(s.boundaries) - 1
	buckets := make([][]expr.Accumulator, nb+1) // the last is the default
	env := expr.NewEnv(s.ctx.Expr)
	accEnv := expr.NewEnv(s.ctx.Expr)
	for n := 0; ; n++ {
		d, err := in.Next()
		if err != nil {
			return nil, err
		}
		if d == nil {
			break
		}
		if n&1023 == 1023 {
			if err := s.ctx.check(); err != nil {
				return nil, err
			}
		}
		v, err := expr.Eval(s.groupBy, d, env)
		if err != nil {
			return nil, err
		}
		idx := nb
		if v.Type != 0 && s.compare(v, s.boundaries[0]) >= 0 && s.compare(v, s.boundaries[nb]) < 0 {
			idx = sortSearch(nb, func(i int) bool { return s.compare(v, s.boundaries[i+1]) < 0 })
		} else if !s.hasDefault {
			return nil, mongoerr.New(mongoerr.SwitchNoMatchingBranch, "$switch could not find a matching branch for an input, and no default was specified.")
		}
		if buckets[idx] == nil {
			buckets[idx] = s.out.fresh()
		}
		for _, a := range buckets[idx] {
			if err := a.Add(d, accEnv); err != nil {
				return nil, err
			}
		}
	}
	var docs []bson.Doc
	for i, accs := range buckets {
		if accs == nil {
			continue
		}
		var b bson.Builder
		if i == nb {
			b.AppendValue("_id", s.def)
		} else {
			b.AppendValue("_id", s.boundaries[i])
		}
		s.out.appendResults(&b, accs)
		docs = append(docs, b.Finish())
	}
	if s.hasDefault && buckets[nb] != nil && s.compare(s.def, s.boundaries[0]) < 0 {
		// A default below the boundaries sorts first.
		last := docs[len(docs)-1]
		docs = append([]bson.Doc{last}, docs[:len(docs)-1]...)
	}
	return docs, nil
}

func sortSearch(n int, f func(int) bool) int {
	lo, hi := 0, n
	for lo < hi {
		m := (lo + hi) / 2
		if f(m) {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// bucketAutoStage is $bucketAuto: documents sorted by groupBy split into
// a number of buckets of about equal size.
type bucketAutoStage struct {
	groupBy     expr.Expr
	buckets     int
	granularity string
	out         *accOutput
	ctx         *Context
}

func parseBucketAuto(c *Context, v bson.Value) (stage, error) {
	if v.Type != bson.TypeDocument {
		return nil, mongoerr.New(mongoerr.BucketAutoNotObject, "The argument to $bucketAuto must be an object, but found type: %s.", v.Type)
	}
	s := &bucketAutoStage{ctx: c}
	var groupBy, output bson.Value
	it := v.Document().Iter()
	for it.Next() {
		e := it.Element()
		switch e.Key {
		case "groupBy":
			groupBy = e.Value
		case "buckets":
			f, ok := e.Value.AsFloat64()
			if !ok || f != math.Trunc(f) || f > math.MaxInt32 || f < math.MinInt32 {
				return nil, mongoerr.New(mongoerr.BucketAutoBucketsNotNumeric, "The $bucketAuto 'buckets' field must be a numeric value, but found type: %s.", e.Value.Type)
			}
			if f <= 0 {
				return nil, mongoerr.New(mongoerr.BucketAutoBucketsNotPositive, "The $bucketAuto 'buckets' field must be greater than 0, but found: %d.", int64(f))
			}
			s.buckets = int(f)
		case "output":
			output = e.Value
		case "granularity":
			if e.Value.Type != bson.TypeString {
				return nil, mongoerr.New(mongoerr.BucketAutoGranularityNotString, "The $bucketAuto 'granularity' field must be a string, but found type: %s.", e.Value.Type)
			}
			s.granularity = e.Value.StringValue()
			if !validGranularity(s.granularity) {
				return nil, mongoerr.New(mongoerr.BucketAutoUnknownGranularity, "Rounding granularity not recognized: %s", s.granularity)
			}
		default:
			return nil, mongoerr.New(mongoerr.BucketAutoUnknownOption, "Unrecognized option to $bucketAuto: %s.", e.Key)
		}
	}
	if groupBy.Type == 0 || s.buckets == 0 {
		return nil, mongoerr.New(mongoerr.BucketAutoMissingArgument, "$bucketAuto requires 'groupBy' and 'buckets' to be specified")
	}
	var err error
	if s.groupBy, err = parseGroupBy(c, groupBy, "$bucketAuto", mongoerr.BucketAutoGroupByBad); err != nil {
		return nil, err
	}
	if s.out, err = parseAccOutput(c, output, "$bucketAuto"); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *bucketAutoStage) open(in Iterator) (Iterator, error) { return blocking(in, s.run), nil }

type keyed struct {
	v   bson.Value
	doc bson.Doc
}

func (s *bucketAutoStage) run(in Iterator) ([]bson.Doc, error) {
	env := expr.NewEnv(s.ctx.Expr)
	var items []keyed
	var mem int64
	for {
		d, err := in.Next()
		if err != nil {
			return nil, err
		}
		if d == nil {
			break
		}
		v, err := expr.Eval(s.groupBy, d, env)
		if err != nil {
			return nil, err
		}
		if s.granularity != "" {
			f, _ := v.AsFloat64()
			switch {
			case !v.IsNumber():
				return nil, mongoerr.New(mongoerr.BucketAutoGranularityNotNumeric, "$bucketAuto can specify a 'granularity' with numeric boundaries only, but found a value with type: %s", typeName(v))
			case math.IsNaN(f):
				return nil, mongoerr.New(mongoerr.BucketAutoGranularityNaN, "$bucketAuto can specify a 'granularity' with numeric boundaries only, but found a NaN")
			case f < 0:
				return nil, mongoerr.New(mongoerr.BucketAutoGranularityNegative, "$bucketAuto can specify a 'granularity' with non-negative numbers only, but found a negative number")
			}
		}
		if v.Type == 0 || v.Type == bson.TypeUndefined {
			v = bson.Value{Type: bson.TypeNull, Data: []byte{}}
		}
		it := keyed{v: expr.CopyValue(v), doc: cloneDoc(d)}
		mem += int64(len(it.doc) + len(it.v.Data) + 32)
		if mem > s.ctx.memLimit() && !s.ctx.AllowDiskUse {
			return nil, errMemory("$bucketAuto")
		}
		items = append(items, it)
	}
	if len(items) == 0 {
		return nil, nil
	}
	coll := s.ctx.collation()
	slices.SortStableFunc(items, func(a, b keyed) int {
		if coll != nil {
			return bson.CompareCollated(a.v, b.v, coll)
		}
		return bson.Compare(a.v, b.v)
	})
	cmp := func(a, b bson.Value) int {
		if coll != nil {
			return bson.CompareCollated(a, b, coll)
		}
		return bson.Compare(a, b)
	}
	eq := func(a, b bson.Value) bool { return cmp(a, b) == 0 }
	less := func(a, b bson.Value) bool { return cmp(a, b) < 0 }
	approx := int(math.Round(float64(len(items)) / float64(s.buckets)))
	if approx < 1 {
		approx = 1
	}
	type bucket struct {
		min, max bson.Value
		accs     []expr.Accumulator
	}
	var buckets []*bucket
	accEnv := expr.NewEnv(s.ctx.Expr)
	add := func(b *bucket, it keyed) error {
		b.max = it.v
		for _, a := range b.accs {
			if err := a.Add(it.doc, accEnv); err != nil {
				return err
			}
		}
		return nil
	}
	var prevMax *bson.Value
	for i := 0; i < len(items) && len(buckets) < s.buckets; {
		b := &bucket{min: items[i].v, accs: s.out.fresh()}
		if s.granularity != "" {
			if prevMax != nil {
				b.min = *prevMax
			} else {
				b.min = roundGranularity(s.granularity, items[i].v, false)
			}
		}
		last := len(buckets) == s.buckets-1
		for n := 0; i < len(items) && (n < approx || last); n++ {
			if err := add(b, items[i]); err != nil {
				return nil, err
			}
			i++
		}
		if s.granularity != "" {
			bound := roundGranularity(s.granularity, b.max, true)
			for i < len(items) && (less(items[i].v, bound) || eq(items[i].v, b.max)) {
				if err := add(b, items[i]); err != nil {
					return nil, err
				}
				i++
			}
			if f, _ := bound.AsFloat64(); f == 0 && i < len(items) {
				b.max = roundGranularity(s.granularity, items[i].v, false)
			} else {
				b.max = bound
			}
		} else {
			for i < len(items) && eq(items[i].v, b.max) {
				if err := add(b, items[i]); err != nil {
					return nil, err
				}
				i++
			}
			if i < len(items) {
				b.max = items[i].v
			}
		}
		m := b.max
		prevMax = &m
		buckets = append(buckets, b)
	}
	docs := make([]bson.Doc, 0, len(buckets))
	for _, bk := range buckets {
		var b bson.Builder
		b.StartDocument("_id")
		b.AppendValue("min", bk.min)
		b.AppendValue("max", bk.max)
		b.End()
		s.out.appendResults(&b, bk.accs)
		docs = append(docs, b.Finish())
	}
	return docs, nil
}

// parseSortByCount expands {$sortByCount: x} into $group and $sort.
func parseSortByCount(c *Context, v bson.Value) (stage, error) {
	ok := (v.Type == bson.TypeString && strings.HasPrefix(v.StringValue(), "$")) ||
		(v.Type == bson.TypeDocument && strings.HasPrefix(firstKey(v.Document()), "$"))
	if !ok {
		return nil, mongoerr.New(mongoerr.SortByCountBadField, "the sortByCount field must be defined as a $-prefixed path or an expression")
	}
	var b bson.Builder
	b.AppendValue("_id", v)
	b.StartDocument("count")
	b.AppendInt32("$sum", 1)
	b.End()
	g, err := parseGroup(c, bson.Value{Type: bson.TypeDocument, Data: b.Finish()})
	if err != nil {
		return nil, err
	}
	var sb bson.Builder
	sb.AppendInt32("count", -1)
	so, err := newSort(c, bson.Value{Type: bson.TypeDocument, Data: sb.Finish()}, nil)
	if err != nil {
		return nil, err
	}
	return chain{g, so}, nil
}

// chain runs several stages as one.
type chain []stage

func (c chain) open(in Iterator) (Iterator, error) {
	var err error
	for _, s := range c {
		if in, err = s.open(in); err != nil {
			return nil, err
		}
	}
	return in, nil
}
