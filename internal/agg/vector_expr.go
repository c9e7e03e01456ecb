package agg

import (
	"encoding/binary"
	"strconv"
	"strings"

	"github.com/cairndb/cairn/bson"
)

// A vectorized $group (vector.go) computes an _id or an accumulator's
// argument that is not a plain field path from the columns when the
// expression is made of operators compiled here: field paths of top-level
// columns, constants, $toString, $concat, $strLenBytes, $toDecimal,
// $minute/$hour/... of a date, $add, $subtract, $toInt, $toLong and
// $toDouble (vector_arith.go), the fields a preceding projection computes
// (vector_project.go) and, for the _id, a document of these
// ({k: expr, ...}). A compiled expression answers only for the value
// types whose result is plain (integers and strings to $toString, strings
// to $concat, dates to the date parts, ...); for any other value (an
// array, a double, a type the operator refuses with an error) it answers
// unsure, and the row's expression is evaluated by the expression engine
// on the row's narrow document, as the row path does. So the answer,
// errors included, is always the row path's, and the common rows never
// become documents.

// vxKind is the operator of a compiled expression.
type vxKind uint8

const (
	vxField vxKind = iota
	vxConst
	vxToString
	vxConcat
	vxStrLenBytes
	vxToDecimal
	vxDatePart
	vxObject
	vxRef     // a field a preceding projection computed (vector_arith.go)
	vxConvert // $toInt, $toLong, $toDouble
	vxAdd
	vxSubtract
)

// vecExpr is an expression compiled to read a chunk's columns.
type vecExpr struct {
	kind vxKind
	col  int        // vxField: the column
	c    bson.Value // vxConst
	args []*vecExpr
	keys [][]byte // vxObject: the element keys, with their NUL
	part int      // vxDatePart: one of the datePart constants
	slot int      // the worker's scratch buffer of this node
	ref  int      // vxRef: the index of the projected value
	to   bson.Type
}

// Date parts a vxDatePart computes (UTC, no timezone argument).
const (
	partHour = iota
	partMinute
	partSecond
	partMillisecond
)

var vecDateParts = map[string]int{"$hour": partHour, "$minute": partMinute, "$second": partSecond, "$millisecond": partMillisecond}

// vxCompiler numbers the nodes' scratch slots. field resolves a
// top-level field path to the node that reads it: a column (vxField), a
// field a projection computes (vxRef) or one it leaves missing (a vxConst
// of Type 0).
type vxCompiler struct {
	field func(string) (*vecExpr, bool)
	slots int
}

// colField resolves field paths to the columns col numbers.
func colField(col func(string) int) func(string) (*vecExpr, bool) {
	return func(name string) (*vecExpr, bool) {
		if c := col(name); c >= 0 {
			return &vecExpr{kind: vxField, col: c}, true
		}
		return nil, false
	}
}

func (c *vxCompiler) node(e *vecExpr) *vecExpr {
	e.slot = c.slots
	c.slots++
	return e
}

// compile compiles the expression specification v, or reports false.
func (c *vxCompiler) compile(v bson.Value, top bool) (*vecExpr, bool) {
	switch v.Type {
	case bson.TypeString:
		s := v.StringValue()
		if !strings.HasPrefix(s, "$") {
			return c.node(&vecExpr{kind: vxConst, c: v}), true
		}
		if strings.HasPrefix(s, "$$") || strings.Contains(s, ".") {
			return nil, false
		}
		f, ok := c.field(s[1:])
		if !ok {
			return nil, false
		}
		return c.node(f), true
	case bson.TypeInt32, bson.TypeInt64, bson.TypeDouble, bson.TypeBoolean, bson.TypeNull:
		return c.node(&vecExpr{kind: vxConst, c: v}), true
	case bson.TypeDocument:
	default:
		return nil, false
	}
	d := v.Document()
	it := d.Iter()
	if !it.Next() {
		return nil, false
	}
	first := it.Element()
	if !strings.HasPrefix(first.Key, "$") {
		if !top {
			return nil, false
		}
		// An object expression: its values in its keys' order.
		e := &vecExpr{kind: vxObject}
		it = d.Iter()
		for it.Next() {
			el := it.Element()
			if strings.HasPrefix(el.Key, "$") || strings.Contains(el.Key, ".") {
				return nil, false
			}
			x, ok := c.compile(el.Value, false)
			if !ok {
				return nil, false
			}
			e.args = append(e.args, x)
			e.keys = append(e.keys, append([]byte(el.Key), 0))
		}
		return c.node(e), true
	}
	if it.Next() {
		return nil, false // an operator takes the whole object
	}
	var args []bson.Value
	if first.Value.Type == bson.TypeArray {
		args = first.Value.Document().Values()
	} else {
		args = []bson.Value{first.Value}
	}
	e := &vecExpr{}
	switch first.Key {
	case "$toString":
		e.kind = vxToString
	case "$strLenBytes":
		e.kind = vxStrLenBytes
	case "$toDecimal":
		e.kind = vxToDecimal
	case "$concat":
		e.kind = vxConcat
	case "$toInt", "$toLong", "$toDouble":
		e.kind, e.to = vxConvert, convertTargets[first.Key]
	case "$add":
		e.kind = vxAdd
	case "$subtract":
		e.kind = vxSubtract
		if len(args) != 2 {
			return nil, false
		}
	default:
		p, ok := vecDateParts[first.Key]
		if !ok {
			return nil, false
		}
		e.kind, e.part = vxDatePart, p
	}
	if e.kind != vxConcat && e.kind != vxAdd && e.kind != vxSubtract && len(args) != 1 {
		return nil, false
	}
	for _, a := range args {
		x, ok := c.compile(a, false)
		if !ok {
			return nil, false
		}
		e.args = append(e.args, x)
	}
	return c.node(e), true
}

// vxScratch is a worker's buffers, one per compiled node, and the values
// of the row's projected fields (vxRef).
type vxScratch struct {
	buf  [][]byte
	refs []bson.Value
}

// Results of eval besides a value.
var (
	vxNull = bson.Value{Type: bson.TypeNull, Data: []byte{}}
)

// eval computes e for row r of ch. It reports false when the row's value
// needs the expression engine. A missing result has Type 0. The value
// aliases the chunk or s (valid until e is evaluated again).
func (e *vecExpr) eval(ch *ColumnChunk, r int, s vxScratch) (bson.Value, bool) {
	switch e.kind {
	case vxField:
		return ch.Cols[e.col].Value(r), true
	case vxConst:
		return e.c, true
	case vxToString:
		v, ok := e.args[0].eval(ch, r, s)
		if !ok {
			return v, false
		}
		switch v.Type {
		case 0, bson.TypeNull, bson.TypeUndefined:
			return vxNull, true
		case bson.TypeString:
			return v, true
		case bson.TypeInt32:
			return e.str(s, strconv.AppendInt(e.strStart(s), int64(v.Int32()), 10)), true
		case bson.TypeInt64:
			return e.str(s, strconv.AppendInt(e.strStart(s), v.Int64(), 10)), true
		case bson.TypeBoolean:
			if v.Boolean() {
				return e.str(s, append(e.strStart(s), "true"...)), true
			}
			return e.str(s, append(e.strStart(s), "false"...)), true
		}
		return v, false
	case vxConcat:
		// Every argument is evaluated (an error in any is the row's),
		// and the first nullish one makes the result null, before a
		// later argument that is not a string could fail: such rows go
		// to the expression engine.
		b := e.strStart(s)
		null := false
		for _, a := range e.args {
			v, ok := a.eval(ch, r, s)
			if !ok {
				return v, false
			}
			switch v.Type {
			case 0, bson.TypeNull, bson.TypeUndefined:
				null = true
			case bson.TypeString:
				if len(v.Data) < 5 || len(b)+len(v.Data) > 1<<20 {
					return v, false
				}
				b = append(b, v.Data[4:len(v.Data)-1]...)
			default:
				return v, false // $concat's error, or null before it
			}
		}
		if null {
			return vxNull, true
		}
		return e.str(s, b), true
	case vxStrLenBytes:
		v, ok := e.args[0].eval(ch, r, s)
		if !ok || v.Type != bson.TypeString || len(v.Data) < 5 {
			return v, false
		}
		return e.int32(s, int32(len(v.Data)-5)), true
	case vxToDecimal:
		v, ok := e.args[0].eval(ch, r, s)
		if !ok {
			return v, false
		}
		var n int64
		switch v.Type {
		case 0, bson.TypeNull, bson.TypeUndefined:
			return vxNull, true
		case bson.TypeInt32:
			n = int64(v.Int32())
		case bson.TypeInt64:
			n = v.Int64()
		default:
			return v, false
		}
		hi, lo := bson.Decimal128FromInt64(n)
		b := binary.LittleEndian.AppendUint64(s.buf[e.slot][:0], lo)
		b = binary.LittleEndian.AppendUint64(b, hi)
		s.buf[e.slot] = b
		return bson.Value{Type: bson.TypeDecimal128, Data: b}, true
	case vxDatePart:
		v, ok := e.args[0].eval(ch, r, s)
		if !ok || v.Type != bson.TypeDateTime {
			return v, false
		}
		return e.int32(s, datePart(v.DateTime(), e.part)), true
	case vxObject:
		b := append(s.buf[e.slot][:0], 0, 0, 0, 0)
		for k, a := range e.args {
			v, ok := a.eval(ch, r, s)
			if !ok {
				return v, false
			}
			if v.Type == 0 {
				continue // a missing value leaves its key out
			}
			b = append(b, byte(v.Type))
			b = append(b, e.keys[k]...)
			b = append(b, v.Data...)
		}
		b = append(b, 0)
		binary.LittleEndian.PutUint32(b, uint32(len(b)))
		s.buf[e.slot] = b
		return bson.Value{Type: bson.TypeDocument, Data: b}, true
	case vxRef:
		return s.refs[e.ref], true
	case vxConvert:
		return e.convert(ch, r, s)
	case vxAdd:
		return e.add(ch, r, s)
	case vxSubtract:
		return e.subtract(ch, r, s)
	}
	return bson.Value{}, false
}

// datePart returns a part of the UTC time of ms milliseconds since the
// epoch.
func datePart(ms int64, part int) int32 {
	msOfDay := ms % 86400000
	if msOfDay < 0 {
		msOfDay += 86400000
	}
	switch part {
	case partHour:
		return int32(msOfDay / 3600000)
	case partMinute:
		return int32(msOfDay / 60000 % 60)
	case partSecond:
		return int32(msOfDay / 1000 % 60)
	}
	return int32(msOfDay % 1000)
}

// strStart returns e's scratch buffer with room for a string's length.
func (e *vecExpr) strStart(s vxScratch) []byte { return append(s.buf[e.slot][:0], 0, 0, 0, 0) }

// str finishes the string value of b (from strStart).
func (e *vecExpr) str(s vxScratch, b []byte) bson.Value {
	b = append(b, 0)
	binary.LittleEndian.PutUint32(b, uint32(len(b)-4))
	s.buf[e.slot] = b
	return bson.Value{Type: bson.TypeString, Data: b}
}

func (e *vecExpr) int32(s vxScratch, n int32) bson.Value {
	b := binary.LittleEndian.AppendUint32(s.buf[e.slot][:0], uint32(n))
	s.buf[e.slot] = b
	return bson.Value{Type: bson.TypeInt32, Data: b}
}
