package bson

import (
	"bytes"
	"encoding/binary"
	"strings"
)

// Canonical type ranks, as MongoDB's canonicalizeBSONType assigns them. Types
// with equal rank compare by value (all numbers with one another; strings
// with symbols).
const (
	rankMissing    = -2
	rankMinKey     = -1
	rankUndefined  = 0
	rankNull       = 5
	rankNumber     = 10
	rankString     = 15
	rankObject     = 20
	rankArray      = 25
	rankBinary     = 30
	rankObjectID   = 35
	rankBoolean    = 40
	rankDate       = 45
	rankTimestamp  = 47
	rankRegex      = 50
	rankDBPointer  = 55
	rankCode       = 60
	rankCodeScope  = 65
	rankMaxKey     = 127
	rankUnknownTyp = 128
)

// CanonicalRank returns MongoDB's canonical sort rank of a type: MinKey <
// Undefined < Null < numbers < String = Symbol < Object < Array < BinData <
// ObjectId < Boolean < Date < Timestamp < Regex < DBPointer < JavaScript <
// JavaScript with scope < MaxKey.
//
// Type 0 (the zero Value, a missing field) ranks -2, below MinKey. MongoDB
// ranks end-of-object with Undefined, but Cairn's query layer handles missing
// fields itself, and a distinct rank keeps "missing" apart from every stored
// value. Unknown types rank after MaxKey.
func CanonicalRank(t Type) int {
	switch t {
	case 0:
		return rankMissing
	case TypeMinKey:
		return rankMinKey
	case TypeUndefined:
		return rankUndefined
	case TypeNull:
		return rankNull
	case TypeInt32, TypeInt64, TypeDouble, TypeDecimal128:
		return rankNumber
	case TypeString, TypeSymbol:
		return rankString
	case TypeDocument:
		return rankObject
	case TypeArray:
		return rankArray
	case TypeBinary:
		return rankBinary
	case TypeObjectID:
		return rankObjectID
	case TypeBoolean:
		return rankBoolean
	case TypeDateTime:
		return rankDate
	case TypeTimestamp:
		return rankTimestamp
	case TypeRegex:
		return rankRegex
	case TypeDBPointer:
		return rankDBPointer
	case TypeJavaScript:
		return rankCode
	case TypeCodeWithScope:
		return rankCodeScope
	case TypeMaxKey:
		return rankMaxKey
	}
	return rankUnknownTyp
}

// StringComparer compares strings under a collation; it returns a negative
// number, zero or a positive number.
type StringComparer interface {
	CompareStrings(a, b string) int
}

// Compare orders two values as MongoDB sorts them and returns -1, 0 or 1.
// Values of different canonical rank compare by rank; numbers compare by
// exact mathematical value across int32, int64, double and decimal128 (NaN
// equals NaN and sorts below every other number, -0 equals 0); strings and
// symbols compare bytewise; documents compare element by element (rank, then
// field name, then value; a prefix sorts first); arrays compare element by
// element, ignoring their keys. The zero Value (missing) sorts before every
// other value, MinKey included, and equals only itself.
//
// Numeric comparison is exact everywhere, including double against
// decimal128 (0.1 as a double is 0.1000000000000000055511151231257827…, so it
// is greater than decimal 0.1). MongoDB itself first rounds the double to 34
// significant digits there, which only matters for decimals agreeing with a
// double in their first 34 digits; exactness keeps Compare a total order that
// AppendKey mirrors byte for byte.
//
// Compare assumes validated values. It does not allocate.
func Compare(a, b Value) int { return compareValues(a, b, nil) }

// CompareCollated is Compare with strings and symbols (at any depth inside
// documents and arrays, but not field names, regexes, code or code scopes)
// compared by c. A nil c compares bytewise.
func CompareCollated(a, b Value, c StringComparer) int { return compareValues(a, b, c) }

// CompareDocs compares two documents as Compare compares embedded documents.
func CompareDocs(a, b Doc) int { return compareDocs(a, b, false, nil) }

// Equal reports whether Compare(a, b) == 0; so int32 1, int64 1, 1.0 and
// decimal 1.0 are all equal.
func Equal(a, b Value) bool { return compareValues(a, b, nil) == 0 }

func compareValues(a, b Value, c StringComparer) int {
	// Fast paths for the commonest same-type comparisons.
	if a.Type == b.Type {
		switch a.Type {
		case TypeInt32:
			return cmpInt64(int64(a.Int32()), int64(b.Int32()))
		case TypeString:
			return compareStrings(a, b, c)
		}
	}
	ra, rb := CanonicalRank(a.Type), CanonicalRank(b.Type)
	if ra != rb {
		return cmpInt(ra, rb)
	}
	switch ra {
	case rankNumber:
		return compareNumbers(a, b)
	case rankString:
		return compareStrings(a, b, c)
	case rankObject:
		return compareDocs(Doc(a.Data), Doc(b.Data), false, c)
	case rankArray:
		return compareDocs(Doc(a.Data), Doc(b.Data), true, c)
	case rankBinary:
		la, lb := len(a.Data), len(b.Data)
		if la != lb {
			return cmpInt(la, lb)
		}
		return bytes.Compare(a.Data[4:], b.Data[4:]) // subtype, then bytes
	case rankObjectID:
		return bytes.Compare(a.Data, b.Data)
	case rankBoolean:
		return cmpInt(int(a.Data[0]), int(b.Data[0]))
	case rankDate:
		return cmpInt64(a.Int64(), b.Int64())
	case rankTimestamp:
		return cmpUint64(binary.LittleEndian.Uint64(a.Data), binary.LittleEndian.Uint64(b.Data))
	case rankRegex:
		pa, oa := a.Regex()
		pb, ob := b.Regex()
		if r := strings.Compare(pa, pb); r != 0 {
			return r
		}
		return strings.Compare(oa, ob)
	case rankDBPointer:
		la, lb := len(a.Data), len(b.Data)
		if la != lb {
			return cmpInt(la, lb)
		}
		return bytes.Compare(a.Data, b.Data)
	case rankCode:
		return strings.Compare(a.StringValue(), b.StringValue())
	case rankCodeScope:
		ca, sa := a.CodeWithScope()
		cb, sb := b.CodeWithScope()
		if r := strings.Compare(ca, cb); r != 0 {
			return r
		}
		return compareDocs(sa, sb, false, nil)
	case rankUnknownTyp:
		if r := cmpInt(int(a.Type), int(b.Type)); r != 0 {
			return r
		}
		return bytes.Compare(a.Data, b.Data)
	}
	// Missing, MinKey, Undefined, Null, MaxKey: one value each.
	return 0
}

func compareStrings(a, b Value, c StringComparer) int {
	if c != nil {
		return sign(c.CompareStrings(a.StringValue(), b.StringValue()))
	}
	return bytes.Compare(a.Data[4:len(a.Data)-1], b.Data[4:len(b.Data)-1])
}

func sign(r int) int {
	switch {
	case r < 0:
		return -1
	case r > 0:
		return 1
	}
	return 0
}

// compareDocs compares two documents element by element: canonical rank,
// then field name (unless array), then value. A document that is a prefix of
// the other sorts first.
func compareDocs(a, b Doc, array bool, c StringComparer) int {
	ia, ib := a.Iter(), b.Iter()
	for {
		na, nb := ia.Next(), ib.Next()
		switch {
		case !na && !nb:
			return 0
		case !na:
			return -1
		case !nb:
			return 1
		}
		ea, eb := ia.Element(), ib.Element()
		if ra, rb := CanonicalRank(ea.Value.Type), CanonicalRank(eb.Value.Type); ra != rb {
			return cmpInt(ra, rb)
		}
		if !array {
			if r := strings.Compare(ea.Key, eb.Key); r != 0 {
				return r
			}
		}
		if r := compareValues(ea.Value, eb.Value, c); r != 0 {
			return r
		}
	}
}
