package bson

import (
	"bytes"
	"encoding/binary"
	"math"
	"strings"
	"unsafe"
)

// Doc is a raw BSON document or array: int32 length, elements, 0x00.
// Methods assume the bytes were checked with Validate (or built by Builder);
// on malformed input they stop early rather than panic.
type Doc []byte

// Element is one key/value pair of a document. Key aliases the document.
type Element struct {
	Key   string
	Value Value
}

// Value is a BSON value: its type and the raw bytes of its payload.
type Value struct {
	Type Type
	Data []byte
}

// EmptyDoc is the five-byte empty document.
var EmptyDoc = Doc{5, 0, 0, 0, 0}

// Iter walks the elements of a document in order.
//
//	it := d.Iter()
//	for it.Next() { e := it.Element() ... }
type Iter struct {
	d   Doc
	pos int
	cur Element
	err bool
}

// Iter returns an iterator over d's elements.
func (d Doc) Iter() Iter {
	if len(d) < 5 {
		return Iter{d: d, pos: len(d), err: len(d) != 0}
	}
	return Iter{d: d, pos: 4}
}

// Next advances to the next element and reports whether there is one.
func (it *Iter) Next() bool {
	d := it.d
	if it.pos >= len(d)-1 {
		return false
	}
	t := Type(d[it.pos])
	if t == 0 {
		return false
	}
	keyStart := it.pos + 1
	i := bytes.IndexByte(d[keyStart:], 0)
	if i < 0 {
		it.err = true
		it.pos = len(d)
		return false
	}
	valStart := keyStart + i + 1
	n := valueSize(t, d[valStart:])
	if n < 0 || valStart+n > len(d) {
		it.err = true
		it.pos = len(d)
		return false
	}
	it.cur = Element{Key: unsafeString(d[keyStart : keyStart+i]), Value: Value{Type: t, Data: d[valStart : valStart+n : valStart+n]}}
	it.pos = valStart + n
	return true
}

// Element returns the current element.
func (it *Iter) Element() Element { return it.cur }

// Corrupt reports whether iteration stopped on malformed bytes.
func (it *Iter) Corrupt() bool { return it.err }

func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// ValueSize returns the byte length of a value of type t at the start of
// b, or -1 when b is too short or the type is unknown.
func ValueSize(t Type, b []byte) int { return valueSize(t, b) }

// valueSize returns the byte length of a value of type t at the start of b, or
// -1 when b is too short or the type is unknown.
func valueSize(t Type, b []byte) int {
	switch t {
	case TypeDouble, TypeDateTime, TypeInt64, TypeTimestamp:
		return fixed(b, 8)
	case TypeInt32:
		return fixed(b, 4)
	case TypeBoolean:
		return fixed(b, 1)
	case TypeNull, TypeUndefined, TypeMinKey, TypeMaxKey:
		return 0
	case TypeObjectID:
		return fixed(b, 12)
	case TypeDecimal128:
		return fixed(b, 16)
	case TypeString, TypeJavaScript, TypeSymbol:
		if len(b) < 4 {
			return -1
		}
		n := int(int32(binary.LittleEndian.Uint32(b)))
		if n < 1 || 4+n > len(b) {
			return -1
		}
		return 4 + n
	case TypeDocument, TypeArray, TypeCodeWithScope:
		if len(b) < 4 {
			return -1
		}
		n := int(int32(binary.LittleEndian.Uint32(b)))
		if n < 5 || n > len(b) {
			return -1
		}
		return n
	case TypeBinary:
		if len(b) < 5 {
			return -1
		}
		n := int(int32(binary.LittleEndian.Uint32(b)))
		if n < 0 || 5+n > len(b) {
			return -1
		}
		return 5 + n
	case TypeRegex:
		i := bytes.IndexByte(b, 0)
		if i < 0 {
			return -1
		}
		j := bytes.IndexByte(b[i+1:], 0)
		if j < 0 {
			return -1
		}
		return i + 1 + j + 1
	case TypeDBPointer:
		if len(b) < 4 {
			return -1
		}
		n := int(int32(binary.LittleEndian.Uint32(b)))
		if n < 1 || 4+n+12 > len(b) {
			return -1
		}
		return 4 + n + 12
	}
	return -1
}

func fixed(b []byte, n int) int {
	if len(b) < n {
		return -1
	}
	return n
}

// Lookup returns the value of the top-level field key.
// Keys are compared in place and the other elements skipped by their size,
// without building Elements (documents of a hundred fields are common).
func (d Doc) Lookup(key string) (Value, bool) {
	n := len(d)
	if n < 5 || strings.IndexByte(key, 0) >= 0 {
		return Value{}, false
	}
	for pos := 4; pos < n-1; {
		t := Type(d[pos])
		if t == 0 {
			break
		}
		ks := pos + 1
		if ke := ks + len(key); ke < n && d[ke] == 0 && string(d[ks:ke]) == key {
			vs := ke + 1
			sz := valueSize(t, d[vs:])
			if sz < 0 || vs+sz > n {
				return Value{}, false
			}
			return Value{Type: t, Data: d[vs : vs+sz : vs+sz]}, true
		}
		i := ks
		for i < n && d[i] != 0 {
			i++
		}
		if i >= n {
			break
		}
		sz := valueSize(t, d[i+1:])
		if sz < 0 {
			break
		}
		pos = i + 1 + sz
	}
	return Value{}, false
}

// LookupPath follows a dotted path given as its components through embedded
// documents (and, for numeric components, array positions). It does not
// traverse arrays implicitly; query code does that.
func (d Doc) LookupPath(path ...string) (Value, bool) {
	cur := d
	for i, p := range path {
		v, ok := cur.Lookup(p)
		if !ok {
			return Value{}, false
		}
		if i == len(path)-1 {
			return v, true
		}
		if v.Type != TypeDocument && v.Type != TypeArray {
			return Value{}, false
		}
		cur = Doc(v.Data)
	}
	return Value{}, false
}

// Len returns the number of elements in d.
func (d Doc) Len() int {
	n := 0
	it := d.Iter()
	for it.Next() {
		n++
	}
	return n
}

// Elements returns all elements of d.
func (d Doc) Elements() []Element {
	var out []Element
	it := d.Iter()
	for it.Next() {
		out = append(out, it.cur)
	}
	return out
}

// Values returns the values of d in order (for arrays).
func (d Doc) Values() []Value {
	var out []Value
	it := d.Iter()
	for it.Next() {
		out = append(out, it.cur.Value)
	}
	return out
}

// IsZero reports whether v is the zero Value (no type), as Lookup returns for
// a missing field.
func (v Value) IsZero() bool { return v.Type == 0 }

// Double returns a double's value.
func (v Value) Double() float64 { return math.Float64frombits(binary.LittleEndian.Uint64(v.Data)) }

// Int32 returns an int32's value.
func (v Value) Int32() int32 { return int32(binary.LittleEndian.Uint32(v.Data)) }

// Int64 returns an int64's value (also the raw value of a date or timestamp).
func (v Value) Int64() int64 { return int64(binary.LittleEndian.Uint64(v.Data)) }

// DateTime returns a date's milliseconds since the Unix epoch.
func (v Value) DateTime() int64 { return v.Int64() }

// Timestamp returns a timestamp's seconds and increment.
func (v Value) Timestamp() (t, i uint32) {
	return binary.LittleEndian.Uint32(v.Data[4:]), binary.LittleEndian.Uint32(v.Data)
}

// Boolean returns a boolean's value.
func (v Value) Boolean() bool { return v.Data[0] != 0 }

// StringValue returns the text of a string, symbol or JavaScript value. The
// result aliases the document.
func (v Value) StringValue() string {
	return unsafeString(v.Data[4 : len(v.Data)-1])
}

// Document returns an embedded document or array as a Doc.
func (v Value) Document() Doc { return Doc(v.Data) }

// ObjectID returns an ObjectId's 12 bytes.
func (v Value) ObjectID() (id [12]byte) {
	copy(id[:], v.Data)
	return id
}

// Binary returns binary data's subtype and payload.
func (v Value) Binary() (subtype byte, data []byte) {
	return v.Data[4], v.Data[5:]
}

// Regex returns a regular expression's pattern and options.
func (v Value) Regex() (pattern, options string) {
	i := bytes.IndexByte(v.Data, 0)
	return unsafeString(v.Data[:i]), unsafeString(v.Data[i+1 : len(v.Data)-1])
}

// Decimal128 returns a decimal128's high and low 64-bit halves.
func (v Value) Decimal128() (hi, lo uint64) {
	return binary.LittleEndian.Uint64(v.Data[8:]), binary.LittleEndian.Uint64(v.Data)
}

// DBPointer returns a DBPointer's namespace and ObjectId.
func (v Value) DBPointer() (ns string, id [12]byte) {
	n := int(binary.LittleEndian.Uint32(v.Data))
	copy(id[:], v.Data[4+n:])
	return unsafeString(v.Data[4 : 4+n-1]), id
}

// CodeWithScope returns the code and scope of a JavaScript-with-scope value.
func (v Value) CodeWithScope() (code string, scope Doc) {
	n := int(binary.LittleEndian.Uint32(v.Data[4:]))
	code = unsafeString(v.Data[8 : 8+n-1])
	return code, Doc(v.Data[8+n:])
}

// IsNumber reports whether v is an int32, int64, double or decimal128.
func (v Value) IsNumber() bool {
	switch v.Type {
	case TypeInt32, TypeInt64, TypeDouble, TypeDecimal128:
		return true
	}
	return false
}

// AsFloat64 converts a numeric value to float64 (decimal128 approximately).
// ok is false for non-numbers.
func (v Value) AsFloat64() (f float64, ok bool) {
	switch v.Type {
	case TypeInt32:
		return float64(v.Int32()), true
	case TypeInt64:
		return float64(v.Int64()), true
	case TypeDouble:
		return v.Double(), true
	case TypeDecimal128:
		hi, lo := v.Decimal128()
		return Decimal128ToFloat64(hi, lo), true
	}
	return 0, false
}

// AsInt64 converts an integral numeric value to int64. ok is false for
// non-numbers and for doubles/decimals that are not whole or out of range.
func (v Value) AsInt64() (n int64, ok bool) {
	switch v.Type {
	case TypeInt32:
		return int64(v.Int32()), true
	case TypeInt64:
		return v.Int64(), true
	case TypeDouble, TypeDecimal128:
		f, _ := v.AsFloat64()
		if f != math.Trunc(f) || f < -9.223372036854776e18 || f >= 9.223372036854776e18 {
			return 0, false
		}
		return int64(f), true
	}
	return 0, false
}

// Truthy reports whether v counts as true in MongoDB's boolean contexts:
// everything except false, null, undefined, missing and numeric zero.
func (v Value) Truthy() bool {
	switch v.Type {
	case 0, TypeNull, TypeUndefined:
		return false
	case TypeBoolean:
		return v.Boolean()
	case TypeInt32, TypeInt64, TypeDouble, TypeDecimal128:
		f, _ := v.AsFloat64()
		return f != 0
	}
	return true
}
