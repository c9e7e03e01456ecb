package colcache

import (
	"encoding/binary"
	"math"

	"github.com/cairndb/cairn/bson"
)

// A scan may be narrowed by equalities (Scan.Equal): rows whose value
// cannot equal the wanted one are skipped before their documents are
// assembled, which spares a selective $match the assembly of every row.
// The test is a superset of MongoDB's equality without a collation: it
// keeps every row that may match (arrays and embedded documents, whose
// elements a query's equality reads, and decimals, which it does not
// compare), and the caller's filter still decides.

// rowFilter keeps the rows whose value in column col may equal want.
type rowFilter struct {
	col  int
	want bson.Value
	// num is set when want is a number (f its value); else want is a
	// string.
	num bool
	f   float64
	i   int64
	isI bool // want is an integer (i)
}

// Equal narrows the scan to the rows whose field may equal v, and
// reports whether it could: v must be an int32, int64, double (not NaN)
// or string, and field one of the set's fields. Call it before the first
// NextBatch.
func (sc *Scan) Equal(field string, v bson.Value) bool {
	col := -1
	for i, f := range sc.set.fields {
		if f == field {
			col = i
		}
	}
	if col < 0 {
		return false
	}
	rf := rowFilter{col: col, want: v}
	switch v.Type {
	case bson.TypeInt32:
		rf.num, rf.isI, rf.i = true, true, int64(v.Int32())
		rf.f = float64(rf.i)
	case bson.TypeInt64:
		rf.num, rf.isI, rf.i = true, true, v.Int64()
		rf.f = float64(rf.i)
	case bson.TypeDouble:
		if rf.f = v.Double(); math.IsNaN(rf.f) {
			return false
		}
		rf.num = true
	case bson.TypeString:
	default:
		return false
	}
	sc.eqs = append(sc.eqs, rf)
	return true
}

// keep reports whether row i of the chunks may pass every filter.
func (sc *Scan) keep(chunks []*chunk, i int) bool {
	for k := range sc.eqs {
		rf := &sc.eqs[k]
		ch := chunks[rf.col]
		lo, hi := ch.off[i], ch.off[i+1]
		if lo == hi {
			return false // missing equals no number or string
		}
		if !rf.mayEqual(bson.Type(ch.data[lo]), ch.data[lo+1:hi]) {
			return false
		}
	}
	return true
}

func (rf *rowFilter) mayEqual(t bson.Type, data []byte) bool {
	switch t {
	case bson.TypeArray, bson.TypeDocument:
		return true
	}
	if !rf.num {
		switch t {
		case bson.TypeString:
			return string(data) == string(rf.want.Data)
		case bson.TypeSymbol:
			return true
		}
		return false
	}
	switch t {
	case bson.TypeInt32:
		x := int64(int32(binary.LittleEndian.Uint32(data)))
		if rf.isI {
			return x == rf.i
		}
		return float64(x) == rf.f
	case bson.TypeInt64:
		x := int64(binary.LittleEndian.Uint64(data))
		if rf.isI {
			return x == rf.i
		}
		return float64(x) == rf.f
	case bson.TypeDouble:
		return math.Float64frombits(binary.LittleEndian.Uint64(data)) == rf.f
	case bson.TypeDecimal128:
		return true
	}
	return false
}
