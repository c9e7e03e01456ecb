package expr

import (
	"sort"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// The set operators: $setUnion, $setIntersection, $setDifference,
// $setEquals, $setIsSubset, $anyElementTrue, $allElementsTrue.

// ---- sets ----

// valueSet is a small ordered set of values under the env's collation.
type valueSet struct {
	e    *Env
	vals []bson.Value
}

func (s *valueSet) has(v bson.Value) bool {
	i := sort.Search(len(s.vals), func(i int) bool { return s.e.compare(s.vals[i], v) >= 0 })
	return i < len(s.vals) && s.e.compare(s.vals[i], v) == 0
}

func (s *valueSet) add(v bson.Value) {
	i := sort.Search(len(s.vals), func(i int) bool { return s.e.compare(s.vals[i], v) >= 0 })
	if i < len(s.vals) && s.e.compare(s.vals[i], v) == 0 {
		return
	}
	s.vals = append(s.vals, bson.Value{})
	copy(s.vals[i+1:], s.vals[i:])
	s.vals[i] = v
}

func (s *valueSet) addArray(a bson.Value) {
	it := a.Document().Iter()
	for it.Next() {
		s.add(it.Element().Value)
	}
}

func setUnion(e *Env, args []bson.Value) (bson.Value, error) {
	s := valueSet{e: e}
	for _, a := range args {
		if nullish(a) {
			return vNull, nil
		}
		if a.Type != bson.TypeArray {
			return missing, errf(mongoerr.SetUnionNotArray, "All operands of $setUnion must be arrays. One argument is of type: %s", typeName(a))
		}
		s.addArray(a)
	}
	return e.array(s.vals), nil
}

func setIntersection(e *Env, args []bson.Value) (bson.Value, error) {
	var cur *valueSet
	for _, a := range args {
		if nullish(a) {
			return vNull, nil
		}
		if a.Type != bson.TypeArray {
			return missing, errf(mongoerr.SetIntersectionNotArray, "All operands of $setIntersection must be arrays. One argument is of type: %s", typeName(a))
		}
		next := &valueSet{e: e}
		it := a.Document().Iter()
		for it.Next() {
			v := it.Element().Value
			if cur == nil || cur.has(v) {
				next.add(v)
			}
		}
		cur = next
	}
	if cur == nil {
		return emptyArr, nil
	}
	return e.array(cur.vals), nil
}

func setDifference(e *Env, a, b bson.Value) (bson.Value, error) {
	if nullish(a) || nullish(b) {
		return vNull, nil
	}
	if a.Type != bson.TypeArray {
		return missing, errf(mongoerr.SetDifferenceFirstNotArray, "both operands of $setDifference must be arrays. First argument is of type: %s", typeName(a))
	}
	if b.Type != bson.TypeArray {
		return missing, errf(mongoerr.SetDifferenceSecondNotArray, "both operands of $setDifference must be arrays. Second argument is of type: %s", typeName(b))
	}
	rhs := valueSet{e: e}
	rhs.addArray(b)
	seen := valueSet{e: e}
	start := len(e.vs)
	it := a.Document().Iter()
	for it.Next() {
		v := it.Element().Value
		if !rhs.has(v) && !seen.has(v) {
			seen.add(v)
			e.vs = append(e.vs, v)
		}
	}
	out := e.array(e.vs[start:])
	e.vs = e.vs[:start]
	return out, nil
}

func setEquals(e *Env, args []bson.Value) (bson.Value, error) {
	if len(args) < 2 {
		return missing, errf(mongoerr.SetEqualsTooFewArgs, "$setEquals needs at least two arguments had: %d", len(args))
	}
	var first *valueSet
	for i, a := range args {
		if a.Type != bson.TypeArray {
			return missing, errf(mongoerr.SetEqualsNotArray, "All operands of $setEquals must be arrays. %d-th argument is of type: %s", i+1, typeName(a))
		}
		s := &valueSet{e: e}
		s.addArray(a)
		if first == nil {
			first = s
			continue
		}
		if len(s.vals) != len(first.vals) {
			return vFalse, nil
		}
		for i := range s.vals {
			if e.compare(s.vals[i], first.vals[i]) != 0 {
				return vFalse, nil
			}
		}
	}
	return vTrue, nil
}

func setIsSubset(e *Env, a, b bson.Value) (bson.Value, error) {
	if a.Type != bson.TypeArray {
		return missing, errf(mongoerr.SetIsSubsetFirstNotArray, "both operands of $setIsSubset must be arrays. First argument is of type: %s", typeName(a))
	}
	if b.Type != bson.TypeArray {
		return missing, errf(mongoerr.SetIsSubsetSecondNotArray, "both operands of $setIsSubset must be arrays. Second argument is of type: %s", typeName(b))
	}
	rhs := valueSet{e: e}
	rhs.addArray(b)
	it := a.Document().Iter()
	for it.Next() {
		if !rhs.has(it.Element().Value) {
			return vFalse, nil
		}
	}
	return vTrue, nil
}

func elementsTrue(v bson.Value, name string, any bool) (bson.Value, error) {
	if v.Type != bson.TypeArray {
		return missing, errf(mongoerr.ExpressionArgNotArray, "%s's argument must be an array, but is %s", name, typeName(v))
	}
	it := v.Document().Iter()
	for it.Next() {
		if Truthy(it.Element().Value) == any {
			return vBool(any), nil
		}
	}
	return vBool(!any), nil
}
