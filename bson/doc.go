// Package bson owns Cairn's handling of raw BSON: reading documents in place
// without decoding them, building new ones, validating untrusted bytes,
// MongoDB's cross-type comparison order, and an order-preserving key encoding
// that lets the storage engine sort values as MongoDB does.
//
// Documents are plain byte slices (Doc). Readers never copy: keys and values
// returned by lookups and iteration alias the document's bytes, so they stay
// valid as long as those bytes are neither modified nor reused. Code that keeps
// a key or value beyond that must copy it (strings.Clone, bytes.Clone).
//
// Clients and tests use the official driver's bson package; this package is the
// server's own fast path.
package bson

import (
	"errors"
	"fmt"
)

// Type is a BSON element type byte.
type Type byte

// BSON element types.
const (
	TypeDouble        Type = 0x01
	TypeString        Type = 0x02
	TypeDocument      Type = 0x03
	TypeArray         Type = 0x04
	TypeBinary        Type = 0x05
	TypeUndefined     Type = 0x06
	TypeObjectID      Type = 0x07
	TypeBoolean       Type = 0x08
	TypeDateTime      Type = 0x09
	TypeNull          Type = 0x0A
	TypeRegex         Type = 0x0B
	TypeDBPointer     Type = 0x0C
	TypeJavaScript    Type = 0x0D
	TypeSymbol        Type = 0x0E
	TypeCodeWithScope Type = 0x0F
	TypeInt32         Type = 0x10
	TypeTimestamp     Type = 0x11
	TypeInt64         Type = 0x12
	TypeDecimal128    Type = 0x13
	TypeMinKey        Type = 0xFF
	TypeMaxKey        Type = 0x7F
)

var typeNames = map[Type]string{
	TypeDouble: "double", TypeString: "string", TypeDocument: "object", TypeArray: "array",
	TypeBinary: "binData", TypeUndefined: "undefined", TypeObjectID: "objectId", TypeBoolean: "bool",
	TypeDateTime: "date", TypeNull: "null", TypeRegex: "regex", TypeDBPointer: "dbPointer",
	TypeJavaScript: "javascript", TypeSymbol: "symbol", TypeCodeWithScope: "javascriptWithScope",
	TypeInt32: "int", TypeTimestamp: "timestamp", TypeInt64: "long", TypeDecimal128: "decimal",
	TypeMinKey: "minKey", TypeMaxKey: "maxKey",
}

// String returns MongoDB's alias for the type, as $type and the "type"
// aggregation expression spell it ("double", "string", "object", ...).
func (t Type) String() string {
	if s, ok := typeNames[t]; ok {
		return s
	}
	return fmt.Sprintf("type(0x%02x)", byte(t))
}

// TypeByAlias maps a $type alias ("int", "objectId", ...) to its Type.
func TypeByAlias(alias string) (Type, bool) {
	for t, s := range typeNames {
		if s == alias {
			return t, true
		}
	}
	return 0, false
}

// Limits MongoDB applies to documents.
const (
	// MaxDocumentSize is the largest user document MongoDB stores (16 MiB).
	MaxDocumentSize = 16 * 1024 * 1024
	// MaxCommandSize is the largest BSON object accepted internally, which
	// leaves room for command wrapping around a maximal document.
	MaxCommandSize = MaxDocumentSize + 16*1024
	// MaxDepth is the deepest nesting of documents and arrays accepted.
	MaxDepth = 100
)

// ErrCorrupt reports bytes that are not well-formed BSON.
var ErrCorrupt = errors.New("bson: corrupt document")
