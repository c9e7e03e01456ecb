package index

import (
	"math"

	"github.com/cairndb/cairn/bson"
)

// Numeric types of key fields.
//
// An index key holds a number by its value only (bson.EncodeKey: 1,
// NumberLong(1) and 1.0 are one key, as MongoDB orders them), so a key
// decodes to the narrowest numeric type that holds the value. mongod keeps
// each number's type beside the key (KeyString's type bits) so that a
// covered plan returns it exactly. Cairn keeps it per index field instead:
// the catalog records, for each key field, the numeric types its entries
// have held (NumTypes, a set of the bits below that only grows), and a
// covered plan returns a decoded number in that type when the field has
// held exactly one numeric type (every integer an int32, every number a
// double with no -0.0, ...). A field that has held several numeric types,
// or a decimal (whose key loses trailing zeros), is fetched instead, and
// explain says so (FETCH, not PROJECTION_COVERED).
//
// The sets are tracked for indexes created since they exist: an index in
// an older catalog has none (nil) and is never covered for numbers.
const (
	NumInt32   byte = 1 << iota // an int32
	NumInt64                    // an int64
	NumDouble                   // a double other than -0.0
	NumDecimal                  // a decimal128 (never exact from a key)
	NumNegZero                  // the double -0.0 (its key is 0's)
)

// TracksNumTypes reports whether an index of this spec records its key
// fields' numeric types: the plain ascending/descending indexes covered
// plans can use (not hashed, text, geo, wildcard or column store ones).
func (s *Spec) TracksNumTypes() bool {
	if s.Text != nil || s.Geo != nil || s.Flat != nil || s.Wildcard != nil || s.Column != nil || s.IsID() {
		return false
	}
	for _, f := range s.Fields {
		if f.Hashed {
			return false
		}
	}
	return true
}

// NewNumTypes returns the empty per-field sets of a new index of this
// spec, or nil when it does not track them.
func (s *Spec) NewNumTypes() []byte {
	if !s.TracksNumTypes() {
		return nil
	}
	return make([]byte, len(s.Fields))
}

// AddNumTypes adds to into (one set per key field, as NewNumTypes) the
// numeric types doc holds at the key fields, and reports whether a set
// grew. Values inside arrays are not looked at: a multikey index is
// never covered.
func (s *Spec) AddNumTypes(doc bson.Doc, into []byte) bool {
	if len(into) != len(s.Fields) {
		return false
	}
	grew := false
	for i, f := range s.Fields {
		v, ok := doc.LookupPath(f.Parts...)
		if !ok {
			continue
		}
		if bit := numTypeBit(v); bit != 0 && into[i]&bit == 0 {
			into[i] |= bit
			grew = true
		}
	}
	return grew
}

func numTypeBit(v bson.Value) byte {
	switch v.Type {
	case bson.TypeInt32:
		return NumInt32
	case bson.TypeInt64:
		return NumInt64
	case bson.TypeDouble:
		if f := v.Double(); f == 0 && math.Signbit(f) {
			return NumNegZero
		}
		return NumDouble
	case bson.TypeDecimal128:
		return NumDecimal
	}
	return 0
}

// NumTypesSaturated reports whether no set can make a covered plan
// return more numbers than it does already: every field has held two
// numeric types or a decimal, so writers need not look any more.
func NumTypesSaturated(sets []byte) bool {
	for _, t := range sets {
		if _, ok := ExactNumType(t); ok || t == 0 {
			return false
		}
	}
	return true
}

// ExactNumType gives the one BSON type every number of a field with
// the set t had, when a decoded key value can be given back in it
// exactly: ok is false for a field that held several numeric types, a
// decimal or -0.0. A field that held no number at all answers ok with
// type 0 (a decoded number then cannot occur).
func ExactNumType(t byte) (bson.Type, bool) {
	switch t {
	case 0:
		return 0, true
	case NumInt32:
		return bson.TypeInt32, true
	case NumInt64:
		return bson.TypeInt64, true
	case NumDouble:
		return bson.TypeDouble, true
	}
	return 0, false
}

// AppendNumAs appends to b, under key, a number decoded from a key in
// the type t (ExactNumType's); ok is false, and nothing is appended, if
// it does not fit (never for values the field held).
func AppendNumAs(b *bson.Builder, key string, v bson.Value, t bson.Type) bool {
	var f float64
	var i int64
	isInt := true
	switch v.Type {
	case bson.TypeInt32:
		i = int64(v.Int32())
	case bson.TypeInt64:
		i = v.Int64()
	case bson.TypeDouble:
		f, isInt = v.Double(), false
	default:
		return false
	}
	switch t {
	case bson.TypeInt32:
		if isInt && i >= math.MinInt32 && i <= math.MaxInt32 {
			b.AppendInt32(key, int32(i))
			return true
		}
	case bson.TypeInt64:
		if isInt {
			b.AppendInt64(key, i)
			return true
		}
		if f == math.Trunc(f) && f >= -(1<<63) && f < 1<<63 {
			b.AppendInt64(key, int64(f))
			return true
		}
	case bson.TypeDouble:
		if !isInt {
			b.AppendDouble(key, f)
			return true
		}
		if g := float64(i); int64(g) == i {
			b.AppendDouble(key, g)
			return true
		}
	}
	return false
}
