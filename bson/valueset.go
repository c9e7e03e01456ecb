package bson

// ValueSet is a set of values under MongoDB's equality: two values are the
// same member when CompareCollated says they are equal (1, 1.0 and
// NumberLong(1) are one member; under a case-insensitive collation "a" and
// "A" are one member).
//
// Membership is decided by the order-preserving key of each value
// (AppendKeyCollated): the encoding maps values that compare equal, and only
// those, to the same bytes, so a hash set of keys answers in time linear in
// the value's size instead of one comparison per member. $addToSet (the
// update operator and the accumulator) and $pullAll use it, which makes
// adding n values O(n) rather than O(n²). A collation that cannot produce
// sort keys (a StringComparer without Key) falls back to comparing with
// every member.
type ValueSet struct {
	keyer SortKeyer
	cmp   StringComparer
	keys  map[string]struct{}
	slow  []Value // members, for a comparer without sort keys
	buf   []byte
}

// NewValueSet returns an empty set whose strings compare under c (nil:
// bytewise).
func NewValueSet(c StringComparer) *ValueSet {
	s := &ValueSet{}
	if c != nil {
		if k, ok := c.(SortKeyer); ok {
			s.keyer = k
		} else {
			s.cmp = c
		}
	}
	return s
}

// Add inserts v and reports whether it was not already a member. The set
// keeps no reference to v.
func (s *ValueSet) Add(v Value) bool {
	if s.cmp != nil {
		if s.Has(v) {
			return false
		}
		s.slow = append(s.slow, Value{Type: v.Type, Data: append([]byte(nil), v.Data...)})
		return true
	}
	if s.keys == nil {
		s.keys = make(map[string]struct{})
	}
	s.buf = AppendKeyCollated(s.buf[:0], v, false, s.keyer)
	if _, dup := s.keys[string(s.buf)]; dup {
		return false
	}
	s.keys[string(s.buf)] = struct{}{}
	return true
}

// Has reports whether a value equal to v is a member.
func (s *ValueSet) Has(v Value) bool {
	if s.cmp != nil {
		for _, x := range s.slow {
			if compareValues(x, v, s.cmp) == 0 {
				return true
			}
		}
		return false
	}
	s.buf = AppendKeyCollated(s.buf[:0], v, false, s.keyer)
	_, ok := s.keys[string(s.buf)]
	return ok
}

// Len is the number of members.
func (s *ValueSet) Len() int {
	if s.cmp != nil {
		return len(s.slow)
	}
	return len(s.keys)
}
