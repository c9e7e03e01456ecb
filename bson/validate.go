package bson

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"unicode/utf8"
)

// ValidationError describes why bytes are not valid BSON.
type ValidationError struct {
	Offset int
	Reason string
	// TooDeep is set when the only problem is nesting beyond the limit.
	TooDeep bool
}

func (e *ValidationError) Error() string {
	return fmt.Sprintf("bson: invalid document at offset %d: %s", e.Offset, e.Reason)
}

// Validate checks that d is exactly one well-formed BSON document with no
// trailing bytes, every element's type is known, every length is consistent,
// and documents and arrays nest at most maxDepth levels (the root counts as
// level 1 not counted against the limit: maxDepth embedded levels allowed).
// It allocates nothing on success.
func Validate(d []byte, maxDepth int) error {
	return validate(d, maxDepth, false)
}

// ValidateStrict is Validate plus the checks the BSON specification requires
// of a conforming decoder and MongoDB applies to user input: every field name,
// string, symbol, JavaScript code, regex pattern and options, and DBPointer
// namespace must be valid UTF-8. It allocates nothing on success.
func ValidateStrict(d []byte, maxDepth int) error {
	return validate(d, maxDepth, true)
}

func validate(d []byte, maxDepth int, strict bool) error {
	n, err := validateDoc(d, 0, 0, maxDepth, strict)
	if err != nil {
		return err
	}
	if n != len(d) {
		return &ValidationError{Offset: n, Reason: "trailing bytes after document"}
	}
	return nil
}

func validateDoc(d []byte, base, depth, maxDepth int, strict bool) (int, error) {
	if len(d) < 5 {
		return 0, &ValidationError{Offset: base, Reason: "document shorter than 5 bytes"}
	}
	size := int(int32(binary.LittleEndian.Uint32(d)))
	if size < 5 || size > len(d) {
		return 0, &ValidationError{Offset: base, Reason: fmt.Sprintf("document length %d does not fit in %d bytes", size, len(d))}
	}
	if d[size-1] != 0 {
		return 0, &ValidationError{Offset: base + size - 1, Reason: "document not terminated by 0x00"}
	}
	pos := 4
	for pos < size-1 {
		t := Type(d[pos])
		keyStart := pos + 1
		i := bytes.IndexByte(d[keyStart:size-1], 0)
		if i < 0 {
			return 0, &ValidationError{Offset: base + keyStart, Reason: "unterminated field name"}
		}
		vs := keyStart + i + 1
		if strict && !utf8.Valid(d[keyStart:keyStart+i]) {
			return 0, &ValidationError{Offset: base + keyStart, Reason: "field name is not valid UTF-8"}
		}
		n := valueSize(t, d[vs:size-1])
		if n < 0 {
			if _, known := typeNames[t]; !known {
				return 0, &ValidationError{Offset: base + pos, Reason: fmt.Sprintf("unknown element type 0x%02x", byte(t))}
			}
			return 0, &ValidationError{Offset: base + vs, Reason: fmt.Sprintf("%s value overruns its document", t)}
		}
		v := d[vs : vs+n]
		switch t {
		case TypeString, TypeJavaScript, TypeSymbol:
			if v[n-1] != 0 {
				return 0, &ValidationError{Offset: base + vs, Reason: "string not terminated by 0x00"}
			}
			if strict && !utf8.Valid(v[4:n-1]) {
				return 0, &ValidationError{Offset: base + vs, Reason: fmt.Sprintf("%s is not valid UTF-8", t)}
			}
		case TypeDBPointer:
			sl := int(binary.LittleEndian.Uint32(v))
			if v[4+sl-1] != 0 {
				return 0, &ValidationError{Offset: base + vs, Reason: "DBPointer namespace not terminated by 0x00"}
			}
			if strict && !utf8.Valid(v[4:4+sl-1]) {
				return 0, &ValidationError{Offset: base + vs, Reason: "DBPointer namespace is not valid UTF-8"}
			}
		case TypeRegex:
			if strict && !utf8.Valid(v) {
				return 0, &ValidationError{Offset: base + vs, Reason: "regex is not valid UTF-8"}
			}
		case TypeBoolean:
			if v[0] > 1 {
				return 0, &ValidationError{Offset: base + vs, Reason: "boolean byte is neither 0 nor 1"}
			}
		case TypeBinary:
			if v[4] == 2 { // old binary subtype: inner length must match
				if n < 9 || int(int32(binary.LittleEndian.Uint32(v[5:]))) != n-9 {
					return 0, &ValidationError{Offset: base + vs, Reason: "binary subtype 2 with inconsistent inner length"}
				}
			}
		case TypeDocument, TypeArray:
			if depth+1 > maxDepth {
				return 0, &ValidationError{Offset: base + vs, Reason: fmt.Sprintf("nesting deeper than %d levels", maxDepth), TooDeep: true}
			}
			if _, err := validateDoc(v, base+vs, depth+1, maxDepth, strict); err != nil {
				return 0, err
			}
		case TypeCodeWithScope:
			if n < 14 {
				return 0, &ValidationError{Offset: base + vs, Reason: "code with scope too short"}
			}
			sl := int(int32(binary.LittleEndian.Uint32(v[4:])))
			if sl < 1 || 8+sl > n || v[8+sl-1] != 0 {
				return 0, &ValidationError{Offset: base + vs, Reason: "code with scope: bad code string"}
			}
			if strict && !utf8.Valid(v[8:8+sl-1]) {
				return 0, &ValidationError{Offset: base + vs, Reason: "code with scope: code is not valid UTF-8"}
			}
			m, err := validateDoc(v[8+sl:n], base+vs+8+sl, depth+1, maxDepth, strict)
			if err != nil {
				return 0, err
			}
			if 8+sl+m != n {
				return 0, &ValidationError{Offset: base + vs, Reason: "code with scope: length mismatch"}
			}
		}
		pos = vs + n
	}
	if pos != size-1 {
		return 0, &ValidationError{Offset: base + pos, Reason: "elements overrun document"}
	}
	return size, nil
}
