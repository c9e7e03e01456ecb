package agg

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"math"
	"strings"

	"github.com/cairndb/cairn/bson"
)

// A vectorized $match (vector.go) decides most rows from their columns
// alone. Each top-level condition on a field against a number, string,
// date or boolean ($eq, $ne, $gt, $gte, $lt, $lte, $in and plain
// equality) becomes a vecPred, which answers yes, no or unsure for a
// row's value: values of the operand's comparison class (numbers with
// numbers, ...) and values that cannot match by type bracketing (a
// missing field, null, an ObjectId against a number) are decided; arrays,
// embedded documents, decimals, NaN and symbols, whose matching reads
// elements or needs the general comparison, are unsure. The rest of the
// filter (operators it does not compile, dotted paths, $and/$or/$expr)
// makes the stage residual. A row every predicate keeps is then matched
// by the stage itself, on its narrow document, when it was unsure for
// some predicate or the stage is residual: the answer is always the row
// path's, and most rows never become documents.

// vecOp is a compiled comparison.
type vecOp uint8

const (
	vecEq vecOp = iota
	vecNe
	vecGt
	vecGte
	vecLt
	vecLte
	vecIn
)

var vecOps = map[string]vecOp{"$eq": vecEq, "$ne": vecNe, "$gt": vecGt, "$gte": vecGte, "$lt": vecLt, "$lte": vecLte, "$in": vecIn}

// vecClass is a comparison class of operands.
type vecClass uint8

const (
	classNone vecClass = iota
	classNum
	classString
	classDate
	classBool
)

// Answers of a predicate for a row.
const (
	vecNo = iota
	vecYes
	vecUnsure
)

// vecOperand is a constant of a predicate.
type vecOperand struct {
	class vecClass
	v     bson.Value
	isInt bool    // a number that is an int32 or int64 (i)
	i     int64   // integers, dates, booleans (0, 1)
	f     float64 // doubles
	s     []byte  // a string's bytes
}

// vecPred is one compiled condition on column col.
type vecPred struct {
	col  int
	op   vecOp
	want []vecOperand // one, or $in's
}

// classOf returns the comparison class of v and its operand form, or
// classNone for the types a predicate does not compile.
func operandOf(v bson.Value) (vecOperand, bool) {
	o := vecOperand{v: v}
	switch v.Type {
	case bson.TypeInt32:
		o.class, o.isInt, o.i = classNum, true, int64(v.Int32())
	case bson.TypeInt64:
		o.class, o.isInt, o.i = classNum, true, v.Int64()
	case bson.TypeDouble:
		if o.f = v.Double(); math.IsNaN(o.f) {
			return o, false
		}
		o.class = classNum
	case bson.TypeString:
		o.class, o.s = classString, []byte(v.StringValue())
	case bson.TypeDateTime:
		o.class, o.i = classDate, v.DateTime()
	case bson.TypeBoolean:
		o.class = classBool
		if v.Boolean() {
			o.i = 1
		}
	default:
		return o, false
	}
	return o, true
}

// compileMatch compiles a $match filter (without $expr) over the columns
// fields into predicates; residual reports that some condition was not
// compiled.
func compileMatch(filter bson.Doc, col func(string) int) (preds []vecPred, residual bool) {
	add := func(col int, op vecOp, v bson.Value) {
		if p, ok := compilePred(col, op, v); ok {
			preds = append(preds, p)
		} else {
			residual = true
		}
	}
	it := filter.Iter()
	for it.Next() {
		e := it.Element()
		c := col(e.Key)
		if strings.HasPrefix(e.Key, "$") || strings.Contains(e.Key, ".") || c < 0 {
			residual = true
			continue
		}
		if e.Value.Type == bson.TypeDocument {
			ops := e.Value.Document()
			oit := ops.Iter()
			first := true
			for oit.Next() {
				oe := oit.Element()
				if first && !strings.HasPrefix(oe.Key, "$") {
					residual = true // equality to an embedded document
					break
				}
				first = false
				op, ok := vecOps[oe.Key]
				if !ok {
					residual = true
					continue
				}
				add(c, op, oe.Value)
			}
			continue
		}
		add(c, vecEq, e.Value)
	}
	return preds, residual
}

func compilePred(col int, op vecOp, v bson.Value) (vecPred, bool) {
	p := vecPred{col: col, op: op}
	if op == vecIn {
		if v.Type != bson.TypeArray {
			return p, false
		}
		it := v.Document().Iter()
		for it.Next() {
			o, ok := operandOf(it.Element().Value)
			if !ok {
				return p, false
			}
			p.want = append(p.want, o)
		}
		return p, len(p.want) > 0
	}
	o, ok := operandOf(v)
	if !ok {
		return p, false
	}
	p.want = []vecOperand{o}
	return p, true
}

// test answers the predicate for row r of its column.
func (p *vecPred) test(c *Column, r int) int {
	lo, hi := c.Off[r], c.Off[r+1]
	if lo == hi {
		// A missing field equals no operand (none is null) and compares
		// with none.
		if p.op == vecNe {
			return vecYes
		}
		return vecNo
	}
	t, data := bson.Type(c.Data[lo]), c.Data[lo+1:hi]
	if p.op == vecIn {
		for k := range p.want {
			switch cmpOperand(t, data, &p.want[k]) {
			case 0:
				return vecYes
			case cmpUnsure:
				return vecUnsure
			}
		}
		return vecNo
	}
	x := cmpOperand(t, data, &p.want[0])
	if x == cmpUnsure {
		return vecUnsure
	}
	var ok bool
	switch p.op {
	case vecEq:
		ok = x == 0
	case vecNe:
		ok = x != 0
	case vecGt:
		ok = x == 1
	case vecGte:
		ok = x == 0 || x == 1
	case vecLt:
		ok = x == -1
	case vecLte:
		ok = x == 0 || x == -1
	}
	if ok {
		return vecYes
	}
	return vecNo
}

// Results of cmpOperand besides -1, 0, 1.
const (
	cmpOther  = 2 // another comparison class: not equal, not ordered
	cmpUnsure = 3 // the general matcher decides
)

// cmpOperand compares a value (type t, bytes data) with an operand:
// -1, 0 or 1 within the operand's class, cmpOther for a value of another
// class, cmpUnsure for the values the general matcher must see.
func cmpOperand(t bson.Type, data []byte, o *vecOperand) int {
	switch t {
	case bson.TypeArray, bson.TypeDocument, bson.TypeDecimal128, bson.TypeSymbol:
		return cmpUnsure
	case bson.TypeInt32, bson.TypeInt64, bson.TypeDouble:
		if o.class != classNum {
			return cmpOther
		}
		if t == bson.TypeDouble {
			f := math.Float64frombits(binary.LittleEndian.Uint64(data))
			if math.IsNaN(f) {
				return cmpUnsure
			}
			if !o.isInt {
				return cmp.Compare(f, o.f) // neither is NaN (operandOf)
			}
			return bson.Compare(bson.Value{Type: t, Data: data}, o.v)
		}
		var x int64
		if t == bson.TypeInt32 {
			x = int64(int32(binary.LittleEndian.Uint32(data)))
		} else {
			x = int64(binary.LittleEndian.Uint64(data))
		}
		if o.isInt {
			return cmp.Compare(x, o.i)
		}
		return bson.Compare(bson.Value{Type: t, Data: data}, o.v)
	case bson.TypeString:
		if o.class != classString {
			return cmpOther
		}
		if len(data) < 5 {
			return cmpUnsure
		}
		return bytes.Compare(data[4:len(data)-1], o.s)
	case bson.TypeDateTime:
		if o.class != classDate {
			return cmpOther
		}
		return cmp.Compare(int64(binary.LittleEndian.Uint64(data)), o.i)
	case bson.TypeBoolean:
		if o.class != classBool {
			return cmpOther
		}
		return cmp.Compare(int64(data[0]), o.i)
	}
	return cmpOther
}
