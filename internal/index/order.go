package index

// SortKey is one field of a plain sort ({field: ±1}).
type SortKey struct {
	Path string
	Desc bool
}

// ProvidesSort reports whether scanning the index (forward, or backward
// when reverse) returns documents in the order of keys, given that the
// filter pins the first pinned fields to single values. Hashed and text
// fields keep no order; a multikey index's order is not the sort's (an
// array sorts by its smallest or largest element), so the caller must not
// ask for one.
func (s *Spec) ProvidesSort(keys []SortKey, pinned int) (reverse, ok bool) {
	if len(keys) == 0 || pinned+len(keys) > len(s.Fields) || s.Text != nil || s.IsGeo() || s.Column != nil {
		return false, false
	}
	for i, k := range keys {
		f := s.Fields[pinned+i]
		if f.Hashed || f.Text || f.Path != k.Path {
			return false, false
		}
		r := f.Desc != k.Desc
		if i == 0 {
			reverse = r
		} else if r != reverse {
			return false, false
		}
	}
	return reverse, true
}

// PrefixEnd is the smallest key greater than every key that starts with
// p (nil when there is none: p is all 0xff).
func PrefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}
