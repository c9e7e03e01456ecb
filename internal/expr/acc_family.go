package expr

import (
	"math"

	"github.com/cairndb/cairn/bson"
)

// Sum families
//
// A $group often sums one field shifted by constants: ClickBench's Q29
// has ninety accumulators {$sum: {$add: ["$ResolutionWidth", k]}}. While
// the field's values are integers, every such sum is a function of three
// numbers the members share: how many values were summed (n), their total
// (s) and the types involved. So a family keeps only those, one integer
// addition per document whatever the number of members, and gives each
// member its exact state when asked: the total s + n·k of its addends and
// the type its addends had, which is what adding them one by one would
// have left in the member's sumState.
//
// The shortcut holds while it is exact. Values are int32 or int64 within
// int32's range, constants integers within it, and n below 2^31, so that
// no member's total can overflow an int64 (where $sum would turn to a
// double). Missing and null values add nothing, as $add then gives null
// and $sum ignores it. Anything else (a double, a decimal, a string, a
// large value) ends the shortcut for that group: the family writes each
// member's state (Flush) and from then on the members take documents one
// by one, the current document included, so errors and types come out as
// they would have without the family.

// SumFamilies are the families of a $group's accumulators.
type SumFamilies struct {
	fams []sumFamily
	// famOf is, for each accumulator, its family's index or -1.
	famOf []int
}

type sumFamily struct {
	term    numTerm
	members []int   // accumulator indexes
	ks      []int64 // each member's constant
	k64     []bool  // the member's constants include an int64
}

// FamilyState is one group's state of one family.
type FamilyState struct {
	n, s   int64
	lo, hi int64 // range of the int32 values summed (when n32 > 0)
	n32    int64 // how many values were int32
	any64  bool  // some value was an int64
	off    bool  // written to the members, which now add on their own
}

// minFamily is the fewest members that make a family worth keeping.
const minFamily = 4

// PlanSumFamilies finds the families among specs (a $group's
// accumulators, in order), or returns nil when there are none.
func PlanSumFamilies(specs []*AccumulatorSpec) *SumFamilies {
	byPath := map[string]*sumFamily{}
	var order []string
	for i, s := range specs {
		term, k, k64, ok := familyMember(s)
		if !ok {
			continue
		}
		f := byPath[term.dotted]
		if f == nil {
			f = &sumFamily{term: term}
			byPath[term.dotted] = f
			order = append(order, term.dotted)
		}
		f.members = append(f.members, i)
		f.ks = append(f.ks, k)
		f.k64 = append(f.k64, k64)
	}
	sf := &SumFamilies{famOf: make([]int, len(specs))}
	for i := range sf.famOf {
		sf.famOf[i] = -1
	}
	for _, p := range order {
		f := byPath[p]
		if len(f.members) < minFamily {
			continue
		}
		for _, m := range f.members {
			sf.famOf[m] = len(sf.fams)
		}
		sf.fams = append(sf.fams, *f)
	}
	if len(sf.fams) == 0 {
		return nil
	}
	return sf
}

// familyMember reports whether s is a $sum of one path plus integer
// constants, and returns the path, the constants' total and whether one
// of them is an int64.
func familyMember(s *AccumulatorSpec) (term numTerm, k int64, k64 bool, ok bool) {
	if s.Op != "$sum" || s.num == nil {
		return numTerm{}, 0, false, false
	}
	paths := 0
	for _, t := range s.num.terms {
		if t.path != nil {
			term = t
			paths++
			continue
		}
		switch t.c.Type {
		case bson.TypeInt32:
			k += int64(t.c.Int32())
		case bson.TypeInt64:
			k += t.c.Int64()
			k64 = true
		default:
			return numTerm{}, 0, false, false
		}
		if k < math.MinInt32 || k > math.MaxInt32 {
			return numTerm{}, 0, false, false
		}
	}
	return term, k, k64, paths == 1
}

// States returns fresh states for one group.
func (f *SumFamilies) States() []FamilyState { return make([]FamilyState, len(f.fams)) }

// Add folds root into a group's accumulators accs and family states st.
func (f *SumFamilies) Add(st []FamilyState, accs []Accumulator, root bson.Doc, env *Env) error {
	for i := range f.fams {
		fs := &st[i]
		if fs.off {
			continue
		}
		fam := &f.fams[i]
		if v, ok := fam.term.value(root, env); ok {
			f.fold(i, fs, accs, v)
			continue
		}
		if missingOrNull(fam.term.walkAny(root)) {
			continue
		}
		f.flush(i, fs, accs)
	}
	for j, a := range accs {
		if fi := f.famOf[j]; fi >= 0 && !st[fi].off {
			continue
		}
		if err := a.Add(root, env); err != nil {
			return err
		}
	}
	return nil
}

// Len returns the number of families.
func (f *SumFamilies) Len() int { return len(f.fams) }

// Path returns the dotted path of family i's term.
func (f *SumFamilies) Path(i int) string { return f.fams[i].term.dotted }

// FamilyOf returns the family of accumulator j, or -1.
func (f *SumFamilies) FamilyOf(j int) int { return f.famOf[j] }

// Off reports whether family i of a group with states st was written to
// its members, which then add on their own.
func (f *SumFamilies) Off(st []FamilyState, i int) bool { return st[i].off }

// AddValue folds v, the value of family i's term in one document (Type 0
// when missing), into a group's family state, as Add does for a term of a
// top-level field: a vectorized $group computes the term from a column
// instead of the document. When the value ends the shortcut the family is
// flushed, and its members must then take the document themselves (Off
// reports true).
func (f *SumFamilies) AddValue(st []FamilyState, accs []Accumulator, i int, v bson.Value) {
	fs := &st[i]
	if fs.off || v.Type == 0 || v.Type == bson.TypeNull {
		return // a missing or null term: $add gives null, which $sum ignores
	}
	f.fold(i, fs, accs, v)
}

// fold folds v, the value of family i's term (neither missing nor null),
// into its state fs: an int32, or an int64 in the int32 range, stays in
// the shortcut; anything else, or a count about to overflow, flushes the
// family to its members.
func (f *SumFamilies) fold(i int, fs *FamilyState, accs []Accumulator, v bson.Value) {
	var x int64
	switch v.Type {
	case bson.TypeInt32:
		if fs.n >= math.MaxInt32 {
			f.flush(i, fs, accs)
			return
		}
		x = int64(v.Int32())
		if fs.n32 == 0 || x < fs.lo {
			fs.lo = x
		}
		if fs.n32 == 0 || x > fs.hi {
			fs.hi = x
		}
		fs.n32++
	case bson.TypeInt64:
		if x = v.Int64(); fs.n >= math.MaxInt32 || x < math.MinInt32 || x > math.MaxInt32 {
			f.flush(i, fs, accs)
			return
		}
		fs.any64 = true
	default:
		f.flush(i, fs, accs)
		return
	}
	fs.n++
	fs.s += x
}

// Flush writes every family's state to its members, which from then on
// add on their own; it must run before a group's results are read or its
// accumulators merged.
func (f *SumFamilies) Flush(st []FamilyState, accs []Accumulator) {
	for i := range st {
		if !st[i].off {
			f.flush(i, &st[i], accs)
		}
	}
}

func (f *SumFamilies) flush(i int, fs *FamilyState, accs []Accumulator) {
	fs.off = true
	if fs.n == 0 {
		return
	}
	fam := &f.fams[i]
	for j, m := range fam.members {
		k := fam.ks[j]
		typ := bson.TypeInt32
		if fs.any64 || fam.k64[j] || (fs.n32 > 0 && (fs.hi+k > math.MaxInt32 || fs.lo+k < math.MinInt32)) {
			typ = bson.TypeInt64
		}
		accs[m].(*sumAcc).s.addNum(typ, fs.s+fs.n*k, 0)
	}
}

// walkAny returns the value at the term's path: Type 0 when missing, an
// empty array when the path crosses an array (the path's value is then an
// array of what the elements hold).
func (t *numTerm) walkAny(root bson.Doc) bson.Value {
	v := bson.Value{Type: bson.TypeDocument, Data: root}
	for _, p := range t.path {
		switch v.Type {
		case bson.TypeDocument:
		case bson.TypeArray:
			return bson.Value{Type: bson.TypeArray}
		default:
			return bson.Value{}
		}
		var found bool
		if v, found = lookupKey(v.Data, p); !found {
			return bson.Value{}
		}
	}
	return v
}

func missingOrNull(v bson.Value) bool {
	return v.Type == 0 || v.Type == bson.TypeNull
}
