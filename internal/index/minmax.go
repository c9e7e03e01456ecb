package index

import (
	"bytes"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// MinMaxRange is the range of s's keys find's min and max select: from
// min (inclusive) to max (exclusive), each a document naming s's key
// pattern fields in order (nil: the start or the end of the index), as
// mongod's min/max index bounds. A hashed field's bound is a hash value.
func (s *Spec) MinMaxRange(min, max bson.Doc) (KeyRange, error) {
	encode := func(bound bson.Doc) ([]byte, error) {
		if bound == nil {
			return nil, nil
		}
		if bound.Len() != len(s.Fields) {
			return nil, mongoerr.New(mongoerr.MinMaxIndexNotCompatible, "The index chosen is not compatible with min/max")
		}
		var key []byte
		it := bound.Iter()
		for i := 0; it.Next(); i++ {
			e := it.Element()
			f := s.Fields[i]
			if e.Key != f.Path {
				return nil, mongoerr.New(mongoerr.MinMaxIndexNotCompatible, "The index chosen is not compatible with min/max")
			}
			if f.Hashed {
				key = bson.AppendKey(key, e.Value, f.Desc)
				continue
			}
			key = s.appendValue(key, e.Value, f.Desc)
		}
		return key, nil
	}
	lo, err := encode(min)
	if err != nil {
		return KeyRange{}, err
	}
	hi, err := encode(max)
	if err != nil {
		return KeyRange{}, err
	}
	r := KeyRange{Start: lo, End: hi}
	if hi == nil {
		// Every key is at most 0xff or starts with it: the end of the
		// index, whatever its directions.
		r.End, r.EndInclusivePrefix = []byte{0xff}, true
	}
	if lo != nil && hi != nil && bytes.Compare(lo, hi) >= 0 {
		return KeyRange{}, mongoerr.New(mongoerr.MinMaxOutOfOrder, "The value provided for min() does not come before the value provided for max() in the hinted index")
	}
	return r, nil
}
