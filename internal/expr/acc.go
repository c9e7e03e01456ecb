package expr

import (
	"math"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// Accumulators for $group (and window functions): $sum $avg $min $max
// $first $last $push $addToSet $count $stdDevPop $stdDevSamp $mergeObjects
// $top $bottom $topN $bottomN $firstN $lastN $maxN $minN.

// Accumulator folds the documents of one group.
type Accumulator interface {
	// Add evaluates the accumulator's argument against root and folds it.
	// It leaves env's earlier results (a group key, say) intact.
	Add(root bson.Doc, env *Env) error
	// Result returns the accumulated value; it does not reference any Env.
	Result() bson.Value
}

// AccumulatorSpec is a parsed accumulator; New makes a fresh accumulator
// for one group, sharing the compiled expressions.
type AccumulatorSpec struct {
	Op   string
	ps   []float64 // $percentile's p ($median: 0.5)
	arg  Expr
	n    Expr // for the N variants
	sort []sortKey
	out  Expr // $top/$bottom output
	opts *Options
	kind accKind    // for NewIn
	num  *numArg    // $sum and $avg: the fast path of arg, or nil
	js   *jsAccSpec // $accumulator (js.go)
}

// maxAccumulatorBytes is the memory limit of $push/$addToSet and the N
// accumulators, as MongoDB's internalQueryMaxPushBytes/AddToSetBytes.
var maxAccumulatorBytes = 100 * 1024 * 1024 // a variable so tests can lower it

// NewAccumulator parses an accumulator and returns a fresh instance.
func NewAccumulator(op string, arg bson.Value, opts *Options) (Accumulator, error) {
	s, err := ParseAccumulator(op, arg, opts)
	if err != nil {
		return nil, err
	}
	return s.New(), nil
}

// ParseAccumulator parses {op: arg} as it appears in a $group field.
func ParseAccumulator(op string, arg bson.Value, opts *Options) (*AccumulatorSpec, error) {
	if opts == nil {
		opts = &Options{}
	}
	s := &AccumulatorSpec{Op: op, opts: opts}
	var err error
	switch op {
	case "$sum", "$avg", "$min", "$max", "$first", "$last", "$push", "$addToSet",
		"$stdDevPop", "$stdDevSamp", "$mergeObjects":
		if arg.Type == bson.TypeArray {
			return nil, errf(mongoerr.AccumulatorUnary, "The %s accumulator is a unary operator", op)
		}
		s.arg, err = Parse(arg, opts)
	case "$count":
		if arg.Type != bson.TypeDocument || arg.Document().Len() != 0 {
			return nil, errf(mongoerr.FailedToParse, "$count takes no arguments, i.e. $count:{}")
		}
	case "$top", "$bottom", "$topN", "$bottomN":
		err = s.parseTopBottom(arg)
	case "$firstN", "$lastN", "$maxN", "$minN":
		err = s.parseN(arg)
	case "$median", "$percentile":
		err = s.parsePercentile(arg)
	case "$accumulator":
		err = s.parseJS(arg)
	default:
		return nil, errf(mongoerr.GroupUnknownOperator, "unknown group operator '%s'", op)
	}
	if err != nil {
		return nil, err
	}
	s.kind = accKinds[op]
	if s.kind == accSum || s.kind == accAvg {
		s.num = compileNum(s.arg)
	}
	return s, nil
}

func (s *AccumulatorSpec) parseN(arg bson.Value) error {
	m, err := namedValues(arg, []string{"input", "n"}, func() error {
		return errf(mongoerr.TopNSpecNotObject, "specification must be an object; found %s", arg.String())
	}, func(key string) error {
		return errf(mongoerr.NUnknownArgument, "Unknown argument for 'n' operator: %s", key)
	})
	if err != nil {
		return err
	}
	input, n := m["input"], m["n"]
	if n.Type == 0 {
		return errf(mongoerr.NMissing, "Missing value for 'n'")
	}
	if input.Type == 0 {
		return errf(mongoerr.NMissingInput, "Missing value for 'input'")
	}
	if s.arg, err = Parse(input, s.opts); err != nil {
		return err
	}
	if s.n, err = Parse(n, s.opts); err != nil {
		return err
	}
	return s.checkConstN()
}

func (s *AccumulatorSpec) checkConstN() error {
	if v, ok := Constant(s.n); ok {
		_, err := validN(v)
		return err
	}
	return nil
}

func validN(v bson.Value) (int, error) {
	if !v.IsNumber() || !isIntegral(v) {
		return 0, errf(mongoerr.NNotIntegral, "Value for 'n' must be of integral type, but found %s", v.String())
	}
	n := toLong(v)
	if n <= 0 {
		return 0, errf(mongoerr.NNotPositive, "'n' must be greater than 0, found %d", n)
	}
	return int(min(n, math.MaxInt32)), nil
}

func (s *AccumulatorSpec) parseTopBottom(arg bson.Value) error {
	single := s.Op == "$top" || s.Op == "$bottom"
	names := []string{"output", "sortBy", "n"}
	if single {
		names = names[:2]
	}
	m, err := namedValues(arg, names, func() error {
		return errf(mongoerr.TopSpecNotObject, "specification must be an object; found %s", arg.String())
	}, func(key string) error {
		if key == "n" {
			return errf(mongoerr.NAccumulatorUnknownArgument, "Unknown argument to %s 'n'", s.Op)
		}
		return errf(mongoerr.TopUnknownArgument, "Unknown argument to %s '%s'", s.Op, key)
	})
	if err != nil {
		return err
	}
	out, sortBy, n := m["output"], m["sortBy"], m["n"]
	if out.Type == 0 {
		return errf(mongoerr.TopMissingOutput, "Missing value for 'output'")
	}
	if sortBy.Type != bson.TypeDocument {
		return errf(mongoerr.TopMissingSortBy, "Missing value for 'sortBy'")
	}
	keys, err := sortPattern(sortBy.Document())
	if err != nil {
		return err
	}
	s.sort = keys
	if s.out, err = Parse(out, s.opts); err != nil {
		return err
	}
	if s.Op == "$topN" || s.Op == "$bottomN" {
		if n.Type == 0 {
			return errf(mongoerr.NMissing, "Missing value for 'n'")
		}
		if s.n, err = Parse(n, s.opts); err != nil {
			return err
		}
		return s.checkConstN()
	}
	return nil
}

// New returns a fresh accumulator for one group.
func (s *AccumulatorSpec) New() Accumulator {
	switch s.Op {
	case "$sum":
		return &sumAcc{spec: s}
	case "$count":
		return &countAcc{}
	case "$avg":
		return &avgAcc{spec: s}
	case "$min":
		return &minMaxAcc{spec: s, sign: -1}
	case "$max":
		return &minMaxAcc{spec: s, sign: 1}
	case "$first":
		return &firstLastAcc{spec: s, first: true}
	case "$last":
		return &firstLastAcc{spec: s}
	case "$push":
		return &pushAcc{spec: s}
	case "$addToSet":
		return &pushAcc{spec: s, set: true}
	case "$stdDevPop":
		return &stdDevAcc{spec: s}
	case "$stdDevSamp":
		return &stdDevAcc{spec: s, samp: true}
	case "$mergeObjects":
		return &mergeAcc{spec: s}
	case "$top", "$bottom", "$topN", "$bottomN":
		return &topAcc{spec: s, bottom: s.Op == "$bottom" || s.Op == "$bottomN", single: s.Op == "$top" || s.Op == "$bottom"}
	case "$firstN", "$lastN":
		return &firstNAcc{spec: s, last: s.Op == "$lastN"}
	case "$maxN", "$minN":
		return &minMaxNAcc{spec: s, max: s.Op == "$maxN"}
	case "$median", "$percentile":
		return &percentileAcc{spec: s}
	case "$accumulator":
		return &jsAcc{spec: s}
	}
	return nil
}

func (s *AccumulatorSpec) eval(x Expr, root bson.Doc, env *Env) (bson.Value, error) {
	return EvalKeep(x, root, env)
}

func (s *AccumulatorSpec) evalN(root bson.Doc, env *Env) (int, error) {
	v, err := EvalKeep(s.n, root, env)
	if err != nil {
		return 0, err
	}
	return validN(v)
}

// ---- $sum, $count, $avg ----

type sumAcc struct {
	spec *AccumulatorSpec
	s    sumState
}

func (a *sumAcc) Add(root bson.Doc, env *Env) error {
	if a.spec.num != nil {
		if typ, n, f, ok := a.spec.num.eval(root, env); ok {
			a.s.addNum(typ, n, f)
			return nil
		}
	}
	return addByArg(a, a.spec, root, env)
}

func (a *sumAcc) Result() bson.Value {
	e := resultEnv()
	if a.s.typ == 0 {
		return e.int32(0)
	}
	return a.s.result(e)
}

type countAcc struct{ n int64 }

func (a *countAcc) Add(bson.Doc, *Env) error { a.n++; return nil }

func (a *countAcc) Result() bson.Value {
	e := resultEnv()
	return e.intOrLong(a.n)
}

type avgAcc struct {
	spec  *AccumulatorSpec
	s     sumState
	count int64
}

func (a *avgAcc) Add(root bson.Doc, env *Env) error {
	if a.spec.num != nil {
		if typ, n, f, ok := a.spec.num.eval(root, env); ok {
			a.s.addNum(typ, n, f)
			a.count++
			return nil
		}
	}
	return addByArg(a, a.spec, root, env)
}

func (a *avgAcc) Result() bson.Value {
	if a.count == 0 {
		return vNull
	}
	e := resultEnv()
	if a.s.typ == bson.TypeDecimal128 {
		nd := a.s.nonDecimal() // flushes the fast decimal sum
		total := decAdd(a.s.dsum, nd)
		return e.dec(decDiv(total, decFromInt(a.count)))
	}
	var total float64
	if !a.s.iover {
		total = float64(a.s.isum)
	} else {
		total = a.s.float()
	}
	return e.double(total / float64(a.count))
}

// heldValue is the state of an accumulator whose result is one of the
// values it was given ($min, $max, $first, $last): null until it holds
// one.
type heldValue struct{ cur bson.Value }

func (h *heldValue) Result() bson.Value {
	if h.cur.Type == 0 {
		return vNull
	}
	return h.cur
}

// ---- $min, $max ----

type minMaxAcc struct {
	heldValue
	spec *AccumulatorSpec
	sign int
}

func (a *minMaxAcc) Add(root bson.Doc, env *Env) error { return addByArg(a, a.spec, root, env) }

// ---- $first, $last ----

type firstLastAcc struct {
	heldValue
	spec  *AccumulatorSpec
	al    *AccAlloc // $first keeps its value in al's blocks (nil: alone)
	first bool
	seen  bool
}

func (a *firstLastAcc) Add(root bson.Doc, env *Env) error {
	if a.first && a.seen {
		return nil
	}
	return addByArg(a, a.spec, root, env)
}

// ---- $push, $addToSet ----

// heldValues is the state of an accumulator whose result is the array of
// the values it keeps ($push, $addToSet, $firstN, $lastN, $maxN, $minN).
type heldValues struct{ vals []bson.Value }

func (h *heldValues) Result() bson.Value {
	e := resultEnv()
	return e.array(h.vals)
}

type pushAcc struct {
	heldValues
	spec  *AccumulatorSpec
	set   bool
	bytes int
	index *bson.ValueSet // $addToSet: the values in vals, under the collation
}

func (a *pushAcc) Add(root bson.Doc, env *Env) error { return addByArg(a, a.spec, root, env) }

// ---- $stdDevPop, $stdDevSamp ----

type stdDevAcc struct {
	spec      *AccumulatorSpec
	samp      bool
	n         int64
	mean, m2  float64
	nonFinite bool
}

func (a *stdDevAcc) Add(root bson.Doc, env *Env) error {
	defer env.release(env.mark())
	v, err := a.spec.eval(a.spec.arg, root, env)
	if err != nil {
		return err
	}
	if !v.IsNumber() {
		return nil
	}
	x := toFloat(v)
	if math.IsNaN(x) || math.IsInf(x, 0) {
		a.nonFinite = true
	}
	a.n++
	d := x - a.mean
	a.mean += d / float64(a.n)
	a.m2 += d * (x - a.mean)
	return nil
}

func (a *stdDevAcc) Result() bson.Value {
	e := resultEnv()
	if a.n == 0 || a.samp && a.n == 1 {
		return vNull
	}
	if a.nonFinite {
		return e.double(math.NaN())
	}
	div := float64(a.n)
	if a.samp {
		div--
	}
	return e.double(math.Sqrt(math.Max(a.m2, 0) / div))
}

// ---- $mergeObjects ----

type mergeAcc struct {
	spec  *AccumulatorSpec
	f     fieldList
	bytes int // the fields held, limited as $push's values
}

// put sets field k to v, counting the memory the fields hold.
func (a *mergeAcc) put(k string, v bson.Value) error {
	if i, ok := a.f.idx[k]; ok {
		a.bytes += len(v.Data) - len(a.f.vals[i].Data)
		a.f.vals[i] = v
	} else {
		a.bytes += len(k) + len(v.Data) + 16
		a.f.set(k, v)
	}
	if a.bytes > maxAccumulatorBytes {
		return errf(mongoerr.ExceededMemoryLimit, "$mergeObjects used too much memory and cannot spill to disk. Memory limit: %d bytes", maxAccumulatorBytes)
	}
	return nil
}

func (a *mergeAcc) Add(root bson.Doc, env *Env) error {
	defer env.release(env.mark())
	v, err := a.spec.eval(a.spec.arg, root, env)
	if err != nil {
		return err
	}
	if nullish(v) {
		return nil
	}
	if v.Type != bson.TypeDocument {
		return errf(mongoerr.MergeObjectsNotObject, "$mergeObjects requires object inputs, but input %s is of type %s", v.String(), typeName(v))
	}
	it := v.Document().Iter()
	for it.Next() {
		el := it.Element()
		if err := a.put(string([]byte(el.Key)), copyValue(el.Value)); err != nil {
			return err
		}
	}
	return nil
}

func (a *mergeAcc) Result() bson.Value {
	e := resultEnv()
	return e.document(a.f.keys, a.f.vals)
}
