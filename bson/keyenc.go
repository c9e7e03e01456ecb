package bson

import (
	"bytes"
	"encoding/binary"
	"strings"
)

// Order-preserving key encoding.
//
// AppendKey writes a value so that bytes.Compare on two encodings has the sign
// of Compare on the values. Each encoding starts with a tag byte giving the
// canonical rank, followed by a body:
//
//	missing, MinKey, Undefined, Null, MaxKey   no body
//	number        class byte (NaN < -Inf < negative < zero < positive < +Inf);
//	              finite non-zero numbers then carry the decimal exponent
//	              (uint16 big-endian, biased by 0x8000) and the significant
//	              digits packed two per byte as d1*10+d2+1, terminated by 0x00;
//	              negative numbers have exponent and digits inverted. The form
//	              is the exact value, so equal numbers of any types encode
//	              identically.
//	string/symbol/code   bytes with 0x00 escaped as 00 FF, terminated by 00 01
//	collated string      collation sort key, escaped and terminated the same way
//	object        per element: tag, escaped field name, body; then 0x00
//	array         per element: tag, body; then 0x00
//	binary        uint32 big-endian length, subtype, bytes
//	ObjectId      12 bytes; boolean: one byte 0 or 1
//	date          int64 big-endian with the sign bit flipped
//	timestamp     uint64 big-endian (seconds, then increment)
//	regex         escaped pattern, escaped options
//	DBPointer     uint32 big-endian payload length, payload
//	code w/scope  escaped code, then the scope as an object body
//
// Every encoding is self-delimiting and none is a proper prefix of another,
// so concatenated encodings (compound index keys) sort component by
// component. A descending component is the bitwise complement of the
// ascending one. All ascending tags are below 0x80, so the first byte tells
// DecodeKey the direction.
const (
	keyMissing   byte = 0x01
	keyMinKey    byte = 0x05
	keyUndefined byte = 0x08
	keyNull      byte = 0x0A
	keyNumber    byte = 0x10
	keyString    byte = 0x14
	keyCollated  byte = 0x15
	keyObject    byte = 0x18
	keyArray     byte = 0x1C
	keyBinary    byte = 0x20
	keyObjectID  byte = 0x24
	keyBoolean   byte = 0x28
	keyDate      byte = 0x2C
	keyTimestamp byte = 0x30
	keyRegex     byte = 0x34
	keyDBPointer byte = 0x38
	keyCode      byte = 0x3C
	keyCodeScope byte = 0x40
	keyMaxKey    byte = 0x7E
	keyUnknown   byte = 0x7F

	keyEnd byte = 0x00 // end of an object or array body
)

// SortKeyer produces collation sort keys: bytewise order of the keys is the
// collation order of the strings, and equal strings (under the collation)
// have equal keys.
type SortKeyer = interface {
	Key(dst []byte, s string) []byte
}

// AppendKey appends the order-preserving encoding of v to dst; desc inverts
// the order. It allocates only to grow dst.
func AppendKey(dst []byte, v Value, desc bool) []byte {
	return AppendKeyCollated(dst, v, desc, nil)
}

// AppendKeyCollated is AppendKey with strings and symbols (at any depth, but
// not field names, regexes or code) encoded by their collation sort key from
// c. A nil c encodes bytewise, exactly as AppendKey. Keys containing collated
// strings cannot be decoded.
func AppendKeyCollated(dst []byte, v Value, desc bool, c SortKeyer) []byte {
	start := len(dst)
	dst = append(dst, keyTag(v.Type, c))
	dst = appendKeyBody(dst, v, c)
	if desc {
		invert(dst[start:])
	}
	return dst
}

func invert(b []byte) {
	for i := range b {
		b[i] = ^b[i]
	}
}

// keyTag returns the tag byte for a value of type t.
func keyTag(t Type, c SortKeyer) byte {
	switch t {
	case 0:
		return keyMissing
	case TypeMinKey:
		return keyMinKey
	case TypeUndefined:
		return keyUndefined
	case TypeNull:
		return keyNull
	case TypeInt32, TypeInt64, TypeDouble, TypeDecimal128:
		return keyNumber
	case TypeString, TypeSymbol:
		if c != nil {
			return keyCollated
		}
		return keyString
	case TypeDocument:
		return keyObject
	case TypeArray:
		return keyArray
	case TypeBinary:
		return keyBinary
	case TypeObjectID:
		return keyObjectID
	case TypeBoolean:
		return keyBoolean
	case TypeDateTime:
		return keyDate
	case TypeTimestamp:
		return keyTimestamp
	case TypeRegex:
		return keyRegex
	case TypeDBPointer:
		return keyDBPointer
	case TypeJavaScript:
		return keyCode
	case TypeCodeWithScope:
		return keyCodeScope
	case TypeMaxKey:
		return keyMaxKey
	}
	return keyUnknown
}

func appendKeyBody(dst []byte, v Value, c SortKeyer) []byte {
	switch v.Type {
	case 0, TypeMinKey, TypeUndefined, TypeNull, TypeMaxKey:
		return dst
	case TypeInt32, TypeInt64, TypeDouble, TypeDecimal128:
		return appendNumberKey(dst, v)
	case TypeString, TypeSymbol:
		if c != nil {
			return appendCollatedKey(dst, v.StringValue(), c)
		}
		return appendEscaped(dst, v.Data[4:len(v.Data)-1])
	case TypeJavaScript:
		return appendEscaped(dst, v.Data[4:len(v.Data)-1])
	case TypeDocument:
		return appendDocKey(dst, Doc(v.Data), false, c)
	case TypeArray:
		return appendDocKey(dst, Doc(v.Data), true, c)
	case TypeBinary:
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(v.Data)-5))
		return append(dst, v.Data[4:]...)
	case TypeObjectID:
		return append(dst, v.Data[:12]...)
	case TypeBoolean:
		return append(dst, v.Data[0])
	case TypeDateTime:
		return binary.BigEndian.AppendUint64(dst, uint64(v.Int64())^(1<<63))
	case TypeTimestamp:
		return binary.BigEndian.AppendUint64(dst, binary.LittleEndian.Uint64(v.Data))
	case TypeRegex:
		p, o := v.Regex()
		dst = appendEscapedString(dst, p)
		return appendEscapedString(dst, o)
	case TypeDBPointer:
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(v.Data)))
		return append(dst, v.Data...)
	case TypeCodeWithScope:
		code, scope := v.CodeWithScope()
		dst = appendEscapedString(dst, code)
		return appendDocKey(dst, scope, false, nil)
	}
	dst = append(dst, byte(v.Type))
	return appendEscaped(dst, v.Data)
}

func appendDocKey(dst []byte, d Doc, array bool, c SortKeyer) []byte {
	it := d.Iter()
	for it.Next() {
		e := it.Element()
		dst = append(dst, keyTag(e.Value.Type, c))
		if !array {
			dst = appendEscapedString(dst, e.Key)
		}
		dst = appendKeyBody(dst, e.Value, c)
	}
	return append(dst, keyEnd)
}

// appendEscaped appends b with 0x00 written as 00 FF, then the terminator 00 01.
func appendEscaped(dst []byte, b []byte) []byte {
	for {
		i := bytes.IndexByte(b, 0)
		if i < 0 {
			dst = append(dst, b...)
			break
		}
		dst = append(dst, b[:i+1]...)
		dst = append(dst, 0xFF)
		b = b[i+1:]
	}
	return append(dst, 0x00, 0x01)
}

func appendEscapedString(dst []byte, s string) []byte {
	for {
		i := strings.IndexByte(s, 0)
		if i < 0 {
			dst = append(dst, s...)
			break
		}
		dst = append(dst, s[:i+1]...)
		dst = append(dst, 0xFF)
		s = s[i+1:]
	}
	return append(dst, 0x00, 0x01)
}

// appendCollatedKey appends c's sort key for s, escaped and terminated like a
// string. The key is generated in place at the end of dst and then escaped
// from the back, so no scratch buffer is needed.
func appendCollatedKey(dst []byte, s string, c SortKeyer) []byte {
	start := len(dst)
	dst = c.Key(dst, s)
	zeros := 0
	for _, b := range dst[start:] {
		if b == 0 {
			zeros++
		}
	}
	end := len(dst)
	for i := 0; i < zeros; i++ {
		dst = append(dst, 0)
	}
	if zeros > 0 {
		w := len(dst) - 1
		for r := end - 1; r >= start; r-- {
			if dst[r] == 0 {
				dst[w] = 0xFF
				w--
			}
			dst[w] = dst[r]
			w--
		}
	}
	return append(dst, 0x00, 0x01)
}

// appendNumberKey appends the class, exponent and packed digits of a number.
func appendNumberKey(dst []byte, v Value) []byte {
	if n, ok := smallNumber(v); ok {
		return appendScaledKey(dst, n)
	}
	return appendNumberKeyDigits(dst, v)
}

// appendNumberKeyDigits is appendNumberKey through the full digit expansion.
func appendNumberKeyDigits(dst []byte, v Value) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0)
	dst, class, exp := appendExactDigits(dst, v)
	dst[start] = class
	if class != numPos && class != numNeg {
		return dst[:start+1]
	}
	binary.BigEndian.PutUint16(dst[start+1:], uint16(exp+0x8000))
	ds := start + 3
	n := len(dst) - ds
	j := ds
	for i := 0; i < n; i += 2 {
		d := (dst[ds+i] - '0') * 10
		if i+1 < n {
			d += dst[ds+i+1] - '0'
		}
		dst[j] = d + 1
		j++
	}
	dst = append(dst[:j], 0x00)
	if class == numNeg {
		invert(dst[start+1:])
	}
	return dst
}
