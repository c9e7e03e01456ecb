package expr

import (
	"bytes"
	"encoding/binary"
	"strings"

	"github.com/cairndb/cairn/bson"
)

// lookup finds key in the raw document d. It is bson.Doc.Lookup without
// building Elements: keys are compared in place and values skipped with a
// size computed from their type. Corrupt input ends the scan (not found).
func lookup(d []byte, key string) (bson.Value, bool) {
	if strings.IndexByte(key, 0) >= 0 {
		return bson.Value{}, false
	}
	return lookupKey(d, key)
}

// lookupKey is lookup of a key known to hold no NUL byte (a part of a
// field path: parsePath rejects them).
func lookupKey(d []byte, key string) (bson.Value, bool) {
	n := len(d)
	if n < 5 {
		return bson.Value{}, false
	}
	pos := 4
	for pos < n-1 {
		t := bson.Type(d[pos])
		if t == 0 {
			break
		}
		ks := pos + 1
		var vs int
		if ke := ks + len(key); ke < n && d[ke] == 0 && string(d[ks:ke]) == key {
			vs = ke + 1
			sz := valueLen(t, d[vs:])
			if sz < 0 || vs+sz > n {
				return bson.Value{}, false
			}
			return bson.Value{Type: t, Data: d[vs : vs+sz : vs+sz]}, true
		}
		vs = ks
		for vs < n && d[vs] != 0 {
			vs++
		}
		if vs >= n {
			return bson.Value{}, false
		}
		vs++
		sz := valueLen(t, d[vs:])
		if sz < 0 {
			return bson.Value{}, false
		}
		pos = vs + sz
	}
	return bson.Value{}, false
}

// valueLen is the encoded size of a value of type t at the start of b, or
// -1 when b is too short or the type unknown.
func valueLen(t bson.Type, b []byte) int {
	var n int
	switch t {
	case bson.TypeDouble, bson.TypeDateTime, bson.TypeInt64, bson.TypeTimestamp:
		n = 8
	case bson.TypeInt32:
		n = 4
	case bson.TypeBoolean:
		n = 1
	case bson.TypeNull, bson.TypeUndefined, bson.TypeMinKey, bson.TypeMaxKey:
		return 0
	case bson.TypeObjectID:
		n = 12
	case bson.TypeDecimal128:
		n = 16
	case bson.TypeString, bson.TypeJavaScript, bson.TypeSymbol:
		if len(b) < 4 {
			return -1
		}
		n = 4 + int(int32(binary.LittleEndian.Uint32(b)))
		if n < 5 {
			return -1
		}
	case bson.TypeDocument, bson.TypeArray, bson.TypeCodeWithScope:
		if len(b) < 4 {
			return -1
		}
		n = int(int32(binary.LittleEndian.Uint32(b)))
		if n < 5 {
			return -1
		}
	case bson.TypeBinary:
		if len(b) < 5 {
			return -1
		}
		n = 5 + int(int32(binary.LittleEndian.Uint32(b)))
		if n < 5 {
			return -1
		}
	case bson.TypeRegex:
		i := bytes.IndexByte(b, 0)
		if i < 0 {
			return -1
		}
		j := bytes.IndexByte(b[i+1:], 0)
		if j < 0 {
			return -1
		}
		return i + j + 2
	case bson.TypeDBPointer:
		if len(b) < 4 {
			return -1
		}
		n = 4 + int(int32(binary.LittleEndian.Uint32(b))) + 12
		if n < 17 {
			return -1
		}
	default:
		return -1
	}
	if n > len(b) {
		return -1
	}
	return n
}
