package bson

import (
	"encoding/binary"
	"math"
	"strconv"
)

// Builder appends BSON documents to a byte slice. Nested documents and arrays
// are opened with StartDocument/StartArray and closed with End; their lengths
// are patched in place, so building never copies.
//
//	var b bson.Builder
//	b.AppendInt32("ok", 1)
//	doc := b.Finish()
type Builder struct {
	buf   []byte
	stack []int // start offsets of open documents; stack[0] is the root
}

// NewBuilder returns a builder that appends to buf[:0], reusing its capacity.
func NewBuilder(buf []byte) *Builder {
	b := &Builder{}
	b.Reset(buf)
	return b
}

// Reset starts a new root document in buf[:0].
func (b *Builder) Reset(buf []byte) {
	b.buf = append(buf[:0], 0, 0, 0, 0)
	b.stack = append(b.stack[:0], 0)
}

func (b *Builder) init() {
	if len(b.stack) == 0 {
		b.buf = append(b.buf[:0], 0, 0, 0, 0)
		b.stack = append(b.stack, 0)
	}
}

func (b *Builder) head(t Type, key string) {
	b.init()
	b.buf = append(b.buf, byte(t))
	b.buf = append(b.buf, key...)
	b.buf = append(b.buf, 0)
}

// AppendDouble appends a double.
func (b *Builder) AppendDouble(key string, f float64) {
	b.head(TypeDouble, key)
	b.buf = binary.LittleEndian.AppendUint64(b.buf, math.Float64bits(f))
}

// AppendString appends a UTF-8 string.
func (b *Builder) AppendString(key, s string) {
	b.head(TypeString, key)
	b.buf = binary.LittleEndian.AppendUint32(b.buf, uint32(len(s)+1))
	b.buf = append(b.buf, s...)
	b.buf = append(b.buf, 0)
}

// AppendInt32 appends an int32.
func (b *Builder) AppendInt32(key string, n int32) {
	b.head(TypeInt32, key)
	b.buf = binary.LittleEndian.AppendUint32(b.buf, uint32(n))
}

// AppendInt64 appends an int64.
func (b *Builder) AppendInt64(key string, n int64) {
	b.head(TypeInt64, key)
	b.buf = binary.LittleEndian.AppendUint64(b.buf, uint64(n))
}

// AppendBool appends a boolean.
func (b *Builder) AppendBool(key string, v bool) {
	b.head(TypeBoolean, key)
	if v {
		b.buf = append(b.buf, 1)
	} else {
		b.buf = append(b.buf, 0)
	}
}

// AppendNull appends a null.
func (b *Builder) AppendNull(key string) { b.head(TypeNull, key) }

// AppendDateTime appends a date as milliseconds since the Unix epoch.
func (b *Builder) AppendDateTime(key string, ms int64) {
	b.head(TypeDateTime, key)
	b.buf = binary.LittleEndian.AppendUint64(b.buf, uint64(ms))
}

// AppendTimestamp appends a timestamp.
func (b *Builder) AppendTimestamp(key string, t, i uint32) {
	b.head(TypeTimestamp, key)
	b.buf = binary.LittleEndian.AppendUint32(b.buf, i)
	b.buf = binary.LittleEndian.AppendUint32(b.buf, t)
}

// AppendObjectID appends an ObjectId.
func (b *Builder) AppendObjectID(key string, id [12]byte) {
	b.head(TypeObjectID, key)
	b.buf = append(b.buf, id[:]...)
}

// AppendBinary appends binary data with a subtype.
func (b *Builder) AppendBinary(key string, subtype byte, data []byte) {
	b.head(TypeBinary, key)
	b.buf = binary.LittleEndian.AppendUint32(b.buf, uint32(len(data)))
	b.buf = append(b.buf, subtype)
	b.buf = append(b.buf, data...)
}

// AppendRegex appends a regular expression.
func (b *Builder) AppendRegex(key, pattern, options string) {
	b.head(TypeRegex, key)
	b.buf = append(b.buf, pattern...)
	b.buf = append(b.buf, 0)
	b.buf = append(b.buf, options...)
	b.buf = append(b.buf, 0)
}

// AppendDecimal128 appends a decimal128 from its halves.
func (b *Builder) AppendDecimal128(key string, hi, lo uint64) {
	b.head(TypeDecimal128, key)
	b.buf = binary.LittleEndian.AppendUint64(b.buf, lo)
	b.buf = binary.LittleEndian.AppendUint64(b.buf, hi)
}

// AppendMinKey appends MinKey.
func (b *Builder) AppendMinKey(key string) { b.head(TypeMinKey, key) }

// AppendMaxKey appends MaxKey.
func (b *Builder) AppendMaxKey(key string) { b.head(TypeMaxKey, key) }

// AppendValue appends an already-encoded value.
func (b *Builder) AppendValue(key string, v Value) {
	b.head(v.Type, key)
	b.buf = append(b.buf, v.Data...)
}

// AppendDocument appends an embedded document.
func (b *Builder) AppendDocument(key string, d Doc) { b.AppendValue(key, Value{TypeDocument, d}) }

// AppendArray appends an array given as a raw array document.
func (b *Builder) AppendArray(key string, a Doc) { b.AppendValue(key, Value{TypeArray, a}) }

// AppendElement appends e.
func (b *Builder) AppendElement(e Element) { b.AppendValue(e.Key, e.Value) }

// StartDocument opens an embedded document; close it with End.
func (b *Builder) StartDocument(key string) {
	b.head(TypeDocument, key)
	b.stack = append(b.stack, len(b.buf))
	b.buf = append(b.buf, 0, 0, 0, 0)
}

// StartArray opens an array; append its elements with keys Index(0),
// Index(1), ... and close it with End.
func (b *Builder) StartArray(key string) {
	b.head(TypeArray, key)
	b.stack = append(b.stack, len(b.buf))
	b.buf = append(b.buf, 0, 0, 0, 0)
}

// End closes the innermost open document or array.
func (b *Builder) End() {
	start := b.stack[len(b.stack)-1]
	b.stack = b.stack[:len(b.stack)-1]
	b.buf = append(b.buf, 0)
	binary.LittleEndian.PutUint32(b.buf[start:], uint32(len(b.buf)-start))
}

// Len returns the number of bytes written so far.
func (b *Builder) Len() int { return len(b.buf) }

// Finish closes the root document (and any still open) and returns it. The
// builder must be Reset before reuse.
func (b *Builder) Finish() Doc {
	b.init()
	for len(b.stack) > 0 {
		b.End()
	}
	return Doc(b.buf)
}

var indexKeys = func() []string {
	s := make([]string, 1000)
	for i := range s {
		s[i] = strconv.Itoa(i)
	}
	return s
}()

// Index returns the array key for position i ("0", "1", ...), without
// allocating for small i.
func Index(i int) string {
	if i >= 0 && i < len(indexKeys) {
		return indexKeys[i]
	}
	return strconv.Itoa(i)
}
