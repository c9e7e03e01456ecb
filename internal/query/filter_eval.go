package query

import (
	"math"
	"regexp"
	"sort"
	"strings"

	"github.com/cairndb/cairn/bson"
)

// MatchDetails receives, from MatchDetails, the position in the first array
// traversed by the path that matched: the index the positional $ operator of
// updates and projections stands for.
type MatchDetails struct {
	// ElemMatchKey is the array position ("0", "1", ...) MongoDB records.
	ElemMatchKey string
	// HasKey reports whether ElemMatchKey was recorded.
	HasKey bool
	// TextScore is the document's $text score, for {$meta: "textScore"}
	// projections (set by the server's text stage).
	TextScore float64
	// Err is set when evaluating an expression ($expr) failed; MongoDB
	// fails the whole operation then. Match (without details) treats such
	// a document as not matching.
	Err error

	// negated counts the negations ($not, $ne, $nor) being evaluated;
	// positions found under them are not recorded.
	negated int
}

func (md *MatchDetails) set(key string) {
	if md != nil && md.negated == 0 {
		md.ElemMatchKey, md.HasKey = key, true
	}
}

// node is a compiled filter clause evaluated against a whole document (or
// an array element that is a document, under $elemMatch).
type node interface {
	match(d bson.Doc, md *MatchDetails) bool
}

type andNode []node

func (n andNode) match(d bson.Doc, md *MatchDetails) bool {
	for _, c := range n {
		if !c.match(d, md) {
			if md != nil && md.negated == 0 {
				md.ElemMatchKey, md.HasKey = "", false
			}
			return false
		}
	}
	return true
}

type orNode []node

func (n orNode) match(d bson.Doc, md *MatchDetails) bool {
	for _, c := range n {
		if c.match(d, md) {
			return true
		}
	}
	return false
}

type norNode []node

func (n norNode) match(d bson.Doc, md *MatchDetails) bool {
	if md != nil {
		md.negated++
	}
	r := true
	for _, c := range n {
		if c.match(d, md) {
			r = false
			break
		}
	}
	if md != nil {
		md.negated--
	}
	return r
}

type notNode struct{ n node }

func (n notNode) match(d bson.Doc, md *MatchDetails) bool {
	if md == nil {
		return !n.n.match(d, nil)
	}
	md.negated++
	r := !n.n.match(d, md)
	md.negated--
	return r
}

type constNode bool

func (n constNode) match(bson.Doc, *MatchDetails) bool { return bool(n) }

// leafNode applies a value matcher to the values a path designates.
type leafNode struct {
	parts []string
	mode  leafMode
	m     valueMatcher
}

func (n *leafNode) match(d bson.Doc, md *MatchDetails) bool {
	var res walkResult
	if !walkDoc(d, n.parts, 0, n.mode, n.m, &res) {
		return false
	}
	if md != nil {
		if res.hasOffset {
			md.set(res.offset)
		} else if k, ok := n.m.(keyRecorder); ok {
			k.recordKey(d, n.parts, md)
		}
	}
	return true
}

// keyRecorder is implemented by matchers ($elemMatch) that record the
// matching array position themselves when no implicit traversal did.
type keyRecorder interface {
	recordKey(d bson.Doc, parts []string, md *MatchDetails)
}

// ---- predicates relative to a path ----

// pred is a parsed operator clause over one path, before it is bound to the
// path. single evaluates it against one value, as $elemMatch's value form
// does.
type pred interface {
	single(v bson.Value) bool
	bind(parts []string) node
}

type leafPred struct {
	m    valueMatcher
	mode leafMode
}

func (p *leafPred) single(v bson.Value) bool { return p.m.matchValue(v) }
func (p *leafPred) bind(parts []string) node {
	return &leafNode{parts: parts, mode: p.mode, m: p.m}
}

type notPred struct{ p pred }

func (p *notPred) single(v bson.Value) bool { return !p.p.single(v) }
func (p *notPred) bind(parts []string) node { return notNode{p.p.bind(parts)} }

type andPred []pred

func (p andPred) single(v bson.Value) bool {
	for _, c := range p {
		if !c.single(v) {
			return false
		}
	}
	return true
}

func (p andPred) bind(parts []string) node {
	if len(p) == 1 {
		return p[0].bind(parts)
	}
	n := make(andNode, len(p))
	for i, c := range p {
		n[i] = c.bind(parts)
	}
	return n
}

type constPred bool

func (p constPred) single(bson.Value) bool { return bool(p) }
func (p constPred) bind([]string) node     { return constNode(p) }

// ---- value matchers ----

type cmpOp uint8

const (
	opEQ cmpOp = iota
	opLT
	opLTE
	opGT
	opGTE
)

// cmpMatcher is $eq, $lt, $lte, $gt, $gte (and implicit equality).
type cmpMatcher struct {
	op   cmpOp
	rhs  bson.Value
	coll bson.StringComparer
}

func (m *cmpMatcher) matchValue(v bson.Value) bool {
	return compareMatch(m.op, v, m.rhs, m.coll)
}

func isNaNValue(v bson.Value) bool {
	switch v.Type {
	case bson.TypeDouble:
		return math.IsNaN(v.Double())
	case bson.TypeDecimal128:
		f, _ := v.AsFloat64()
		return math.IsNaN(f)
	}
	return false
}

// compareMatch implements MongoDB's comparison predicates: only values of
// the same canonical type bracket compare, except against MinKey/MaxKey;
// null matches missing and undefined for $eq, $lte and $gte; NaN equals only
// NaN.
func compareMatch(op cmpOp, v, rhs bson.Value, coll bson.StringComparer) bool {
	if rhs.Type == bson.TypeNull && (v.Type == 0 || v.Type == bson.TypeUndefined) {
		return op == opEQ || op == opLTE || op == opGTE
	}
	if v.Type == 0 && rhs.Type != bson.TypeMinKey && rhs.Type != bson.TypeMaxKey {
		return false
	}
	// A missing field ranks with undefined: above MinKey, below MaxKey.
	if bson.CanonicalRank(v.Type) != bson.CanonicalRank(rhs.Type) {
		switch rhs.Type {
		case bson.TypeMinKey:
			return op == opGT || op == opGTE
		case bson.TypeMaxKey:
			return op == opLT || op == opLTE
		}
		return false
	}
	if v.Type == bson.TypeDouble || v.Type == bson.TypeDecimal128 || rhs.Type == bson.TypeDouble || rhs.Type == bson.TypeDecimal128 {
		if a, b := isNaNValue(v), isNaNValue(rhs); a || b {
			return a && b && (op == opEQ || op == opLTE || op == opGTE)
		}
	}
	c := bson.CompareCollated(v, rhs, coll)
	switch op {
	case opEQ:
		return c == 0
	case opLT:
		return c < 0
	case opLTE:
		return c <= 0
	case opGT:
		return c > 0
	default:
		return c >= 0
	}
}

// inMatcher is $in: equality with any listed value or a match of any
// listed regex.
type inMatcher struct {
	eqs     []bson.Value
	regexes []*regexMatcher
	hasNull bool
	coll    bson.StringComparer
	// sorted is set for long lists: eqs is in bson.CompareCollated order
	// and searched by bisection (equality is comparison equal to zero).
	sorted bool
}

// inBisectThreshold is the list length from which $in bisects.
const inBisectThreshold = 8

func (m *inMatcher) prepare() {
	if len(m.eqs) < inBisectThreshold {
		return
	}
	sort.SliceStable(m.eqs, func(i, j int) bool { return bson.CompareCollated(m.eqs[i], m.eqs[j], m.coll) < 0 })
	m.sorted = true
}

func (m *inMatcher) matchValue(v bson.Value) bool {
	if m.hasNull && (v.Type == 0 || v.Type == bson.TypeUndefined) {
		return true
	}
	if v.Type == 0 {
		return false
	}
	if m.sorted {
		i := sort.Search(len(m.eqs), func(i int) bool { return bson.CompareCollated(m.eqs[i], v, m.coll) >= 0 })
		if i < len(m.eqs) && bson.CompareCollated(m.eqs[i], v, m.coll) == 0 {
			return true
		}
	} else {
		for _, e := range m.eqs {
			if compareMatch(opEQ, v, e, m.coll) {
				return true
			}
		}
	}
	for _, r := range m.regexes {
		if r.matchValue(v) {
			return true
		}
	}
	return false
}

type existsMatcher struct{}

func (existsMatcher) matchValue(v bson.Value) bool { return v.Type != 0 }

// typeMatcher is $type: a set of BSON types, optionally all numbers.
type typeMatcher struct {
	types      [256]bool
	allNumbers bool
}

func (m *typeMatcher) matchValue(v bson.Value) bool {
	if v.Type == 0 {
		return false
	}
	if m.allNumbers && v.IsNumber() {
		return true
	}
	return m.types[v.Type]
}

type sizeMatcher struct{ n int }

func (m sizeMatcher) matchValue(v bson.Value) bool {
	if v.Type != bson.TypeArray {
		return false
	}
	return bson.Doc(v.Data).Len() == m.n
}

// modMatcher is $mod: integral values (doubles truncated) whose remainder
// by divisor is remainder.
type modMatcher struct{ divisor, remainder int64 }

func (m modMatcher) matchValue(v bson.Value) bool {
	n, ok := truncToInt64(v)
	if !ok {
		return false
	}
	if m.divisor == -1 {
		return m.remainder == 0
	}
	return n%m.divisor == m.remainder
}

// truncToInt64 converts a number to int64 truncating toward zero, as
// MongoDB's $mod does; NaN, infinities and non-numbers fail.
func truncToInt64(v bson.Value) (int64, bool) {
	switch v.Type {
	case bson.TypeInt32:
		return int64(v.Int32()), true
	case bson.TypeInt64:
		return v.Int64(), true
	case bson.TypeDouble, bson.TypeDecimal128:
		f, _ := v.AsFloat64()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, false
		}
		f = math.Trunc(f)
		if f >= 9.223372036854775807e18 {
			return math.MaxInt64, true
		}
		if f < -9.223372036854775808e18 {
			return math.MinInt64, true
		}
		return int64(f), true
	}
	return 0, false
}

// regexMatcher matches strings and symbols against a compiled pattern, and
// regex values with the same pattern and options.
type regexMatcher struct {
	pattern, options string
	re               *regexp.Regexp
	lit              string // with isLit: the pattern is this literal
	isLit            bool
}

func (m *regexMatcher) matchValue(v bson.Value) bool {
	switch v.Type {
	case bson.TypeString, bson.TypeSymbol:
		if m.isLit {
			return strings.Contains(v.StringValue(), m.lit)
		}
		return m.re.MatchString(v.StringValue())
	case bson.TypeRegex:
		p, o := v.Regex()
		return p == m.pattern && o == m.options
	}
	return false
}

// elemMatchObject is $elemMatch with a query: some element of the array
// that is a document (or an array, seen as a document) matches it.
type elemMatchObject struct{ sub node }

func (m *elemMatchObject) matchValue(v bson.Value) bool {
	_, ok := m.first(v)
	return ok
}

func (m *elemMatchObject) first(v bson.Value) (string, bool) {
	if v.Type != bson.TypeArray {
		return "", false
	}
	it := bson.Doc(v.Data).Iter()
	for it.Next() {
		e := it.Element()
		if e.Value.Type != bson.TypeDocument && e.Value.Type != bson.TypeArray {
			continue
		}
		if m.sub.match(bson.Doc(e.Value.Data), nil) {
			return e.Key, true
		}
	}
	return "", false
}

func (m *elemMatchObject) recordKey(d bson.Doc, parts []string, md *MatchDetails) {
	recordElemKey(d, parts, md, m.first)
}

// elemMatchValue is $elemMatch with operators: some element satisfies all.
type elemMatchValue struct{ preds []pred }

func (m *elemMatchValue) matchValue(v bson.Value) bool {
	_, ok := m.first(v)
	return ok
}

func (m *elemMatchValue) first(v bson.Value) (string, bool) {
	if v.Type != bson.TypeArray {
		return "", false
	}
	it := bson.Doc(v.Data).Iter()
next:
	for it.Next() {
		e := it.Element()
		for _, p := range m.preds {
			if !p.single(e.Value) {
				continue next
			}
		}
		return e.Key, true
	}
	return "", false
}

func (m *elemMatchValue) recordKey(d bson.Doc, parts []string, md *MatchDetails) {
	recordElemKey(d, parts, md, m.first)
}

// firstFinder adapts a "first matching element" function to valueMatcher,
// remembering the key it found.
type firstFinder struct {
	f   func(bson.Value) (string, bool)
	key string
}

func (f *firstFinder) matchValue(v bson.Value) bool {
	k, ok := f.f(v)
	if ok {
		f.key = k
	}
	return ok
}

func recordElemKey(d bson.Doc, parts []string, md *MatchDetails, f func(bson.Value) (string, bool)) {
	ff := &firstFinder{f: f}
	var res walkResult
	if walkDoc(d, parts, 0, leafWhole, ff, &res) {
		md.set(ff.key)
	}
}

// bitsMatcher is $bitsAllSet, $bitsAnySet, $bitsAllClear, $bitsAnyClear.
type bitsMatcher struct {
	positions []uint32
	set       bool // test for set bits (else clear bits)
	all       bool // all positions (else any)
}

func (m *bitsMatcher) matchValue(v bson.Value) bool {
	var bit func(p uint32) bool
	switch v.Type {
	case bson.TypeInt32, bson.TypeInt64, bson.TypeDouble, bson.TypeDecimal128:
		n, ok := bitsInteger(v)
		if !ok {
			return false
		}
		bit = func(p uint32) bool {
			if p >= 64 {
				return n < 0
			}
			return n&(1<<p) != 0
		}
	case bson.TypeBinary:
		_, data := v.Binary()
		bit = func(p uint32) bool {
			i := p / 8
			if int(i) >= len(data) {
				return false
			}
			return data[i]&(1<<(p%8)) != 0
		}
	default:
		return false
	}
	for _, p := range m.positions {
		if bit(p) == m.set {
			if !m.all {
				return true
			}
		} else if m.all {
			return false
		}
	}
	return m.all
}

// bitsInteger returns the int64 a number stands for in bit tests: integral
// and representable, else no match.
func bitsInteger(v bson.Value) (int64, bool) {
	switch v.Type {
	case bson.TypeInt32:
		return int64(v.Int32()), true
	case bson.TypeInt64:
		return v.Int64(), true
	}
	f, _ := v.AsFloat64()
	if math.IsNaN(f) || f != math.Trunc(f) || f >= 9.223372036854775807e18 || f < -9.223372036854775808e18 {
		return 0, false
	}
	return int64(f), true
}
