package bson

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ErrExtJSON reports Extended JSON that is well-formed JSON but not a valid
// Extended JSON document.
var ErrExtJSON = errors.New("invalid extended JSON")

// UnmarshalExtJSON parses an Extended JSON v2 document (an object) into BSON.
// Both canonical and relaxed wrappers are understood, along with the legacy
// forms the specification lists ({"$binary": "...", "$type": "00"},
// {"$regex": "...", "$options": "..."}, {"$uuid": "..."}); an object whose
// keys only resemble a wrapper (a $regex query operator, a DBRef, a $type
// operator) stays a document, while a malformed wrapper is an error.
//
// With canonical set the input must be canonical: bare JSON numbers are
// rejected except where canonical Extended JSON itself uses them ($timestamp
// fields, $minKey and $maxKey). Otherwise bare integers become int32 when
// they fit, else int64, else double, and numbers with a fraction or
// exponent become doubles.
func UnmarshalExtJSON(data []byte, canonical bool) (Doc, error) {
	n, err := parseJSON(data)
	if err != nil {
		return nil, fmt.Errorf("unmarshal extended JSON: %w", err)
	}
	if n.kind != jsonObject {
		return nil, fmt.Errorf("unmarshal extended JSON: %w: top level is not an object", ErrExtJSON)
	}
	r := extReader{canonical: canonical}
	var b Builder
	if err := r.members(&b, n); err != nil {
		return nil, fmt.Errorf("unmarshal extended JSON: %w", err)
	}
	return b.Finish(), nil
}

type extReader struct {
	canonical bool
}

func extErrorf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrExtJSON, fmt.Sprintf(format, args...))
}

func (r *extReader) members(b *Builder, n *jsonNode) error {
	for i, k := range n.keys {
		if strings.IndexByte(k, 0) >= 0 {
			return extErrorf("field name %q contains a null byte", k)
		}
		if err := r.value(b, k, n.vals[i]); err != nil {
			return err
		}
	}
	return nil
}

// value appends node n under key.
func (r *extReader) value(b *Builder, key string, n *jsonNode) error {
	switch n.kind {
	case jsonNull:
		b.AppendNull(key)
	case jsonBool:
		b.AppendBool(key, n.b)
	case jsonString:
		b.AppendString(key, n.str)
	case jsonNumber:
		if r.canonical {
			return extErrorf("bare number %s in canonical extended JSON", n.str)
		}
		return appendBareNumber(b, key, n.str)
	case jsonArray:
		b.StartArray(key)
		for i, v := range n.vals {
			if err := r.value(b, Index(i), v); err != nil {
				return err
			}
		}
		b.End()
	case jsonObject:
		handled, err := r.wrapper(b, key, n)
		if handled || err != nil {
			return err
		}
		b.StartDocument(key)
		if err := r.members(b, n); err != nil {
			return err
		}
		b.End()
	}
	return nil
}

func appendBareNumber(b *Builder, key, lex string) error {
	if !strings.ContainsAny(lex, ".eE") {
		if n, err := strconv.ParseInt(lex, 10, 64); err == nil {
			if n >= math.MinInt32 && n <= math.MaxInt32 {
				b.AppendInt32(key, int32(n))
			} else {
				b.AppendInt64(key, n)
			}
			return nil
		}
	}
	f, err := strconv.ParseFloat(lex, 64)
	if err != nil {
		return extErrorf("number %s out of range", lex)
	}
	b.AppendDouble(key, f)
	return nil
}

// wrapper appends the BSON value of a type wrapper object. handled is false
// for ordinary documents.
func (r *extReader) wrapper(b *Builder, key string, n *jsonNode) (handled bool, err error) {
	if len(n.keys) == 0 {
		return false, nil
	}
	if len(n.keys) > 2 {
		for _, k := range n.keys {
			if isWrapperKey(k) {
				return true, extErrorf("%s wrapper with extra fields", k)
			}
		}
		return false, nil
	}
	first := n.keys[0]
	if len(n.keys) == 2 {
		// Two-key forms: $code/$scope, legacy $binary/$type, legacy $regex/$options.
		switch {
		case has(n, "$code"):
			return true, r.codeWithScope(b, key, n)
		case has(n, "$binary") && has(n, "$type"):
			return true, legacyBinary(b, key, n)
		case has(n, "$regex") && has(n, "$options"):
			p, _ := n.get("$regex")
			o, _ := n.get("$options")
			if p.kind != jsonString || o.kind != jsonString {
				return false, nil // a $regex query operator
			}
			return true, appendRegex(b, key, p.str, o.str)
		}
		for _, k := range n.keys {
			if isWrapperKey(k) {
				return true, extErrorf("%s wrapper with an extra field", k)
			}
		}
		return false, nil
	}
	v := n.vals[0]
	switch first {
	case "$oid":
		id, err := parseOID(v)
		if err != nil {
			return true, err
		}
		b.AppendObjectID(key, id)
	case "$symbol":
		if v.kind != jsonString {
			return true, extErrorf("$symbol is not a string")
		}
		b.AppendValue(key, Value{Type: TypeSymbol, Data: stringData([]byte(v.str))})
	case "$numberInt":
		if v.kind != jsonString || !isIntLexeme(v.str) {
			return true, extErrorf("$numberInt is not an integer string")
		}
		x, err := strconv.ParseInt(v.str, 10, 32)
		if err != nil {
			return true, extErrorf("$numberInt %q: %v", v.str, err)
		}
		b.AppendInt32(key, int32(x))
	case "$numberLong":
		x, err := parseNumberLong(v)
		if err != nil {
			return true, err
		}
		b.AppendInt64(key, x)
	case "$numberDouble":
		f, err := parseNumberDouble(v)
		if err != nil {
			return true, err
		}
		b.AppendDouble(key, f)
	case "$numberDecimal":
		if v.kind != jsonString {
			return true, extErrorf("$numberDecimal is not a string")
		}
		hi, lo, err := ParseDecimal128(v.str)
		if err != nil {
			return true, fmt.Errorf("%w: %w", ErrExtJSON, err)
		}
		b.AppendDecimal128(key, hi, lo)
	case "$binary":
		return true, binaryWrapper(b, key, v)
	case "$uuid":
		id, err := parseUUID(v)
		if err != nil {
			return true, err
		}
		b.AppendBinary(key, 4, id[:])
	case "$code":
		if v.kind != jsonString {
			return true, extErrorf("$code is not a string")
		}
		b.AppendValue(key, Value{Type: TypeJavaScript, Data: stringData([]byte(v.str))})
	case "$timestamp":
		t, i, err := parseTimestamp(v)
		if err != nil {
			return true, err
		}
		b.AppendTimestamp(key, t, i)
	case "$regularExpression":
		if v.kind != jsonObject || len(v.keys) != 2 {
			return true, extErrorf("$regularExpression needs exactly pattern and options")
		}
		p, ok1 := v.get("pattern")
		o, ok2 := v.get("options")
		if !ok1 || !ok2 || p.kind != jsonString || o.kind != jsonString {
			return true, extErrorf("$regularExpression needs string pattern and options")
		}
		return true, appendRegex(b, key, p.str, o.str)
	case "$dbPointer":
		return true, dbPointer(b, key, v)
	case "$date":
		ms, err := parseDate(v)
		if err != nil {
			return true, err
		}
		b.AppendDateTime(key, ms)
	case "$minKey", "$maxKey":
		if v.kind != jsonNumber || v.str != "1" {
			return true, extErrorf("%s must be 1", first)
		}
		if first == "$minKey" {
			b.AppendMinKey(key)
		} else {
			b.AppendMaxKey(key)
		}
	case "$undefined":
		if v.kind != jsonBool || !v.b {
			return true, extErrorf("$undefined must be true")
		}
		b.AppendValue(key, Value{Type: TypeUndefined})
	case "$scope":
		return true, extErrorf("$scope without $code")
	default:
		return false, nil
	}
	return true, nil
}

func has(n *jsonNode, key string) bool {
	_, ok := n.get(key)
	return ok
}

// isWrapperKey reports keys that make an object a type wrapper.
func isWrapperKey(k string) bool {
	switch k {
	case "$oid", "$symbol", "$numberInt", "$numberLong", "$numberDouble", "$numberDecimal",
		"$binary", "$uuid", "$code", "$timestamp", "$regularExpression", "$dbPointer", "$date",
		"$minKey", "$maxKey", "$undefined":
		return true
	}
	return false
}

func (r *extReader) codeWithScope(b *Builder, key string, n *jsonNode) error {
	c, _ := n.get("$code")
	s, ok := n.get("$scope")
	if !ok {
		return extErrorf("$code with an extra field")
	}
	if c.kind != jsonString {
		return extErrorf("$code is not a string")
	}
	if s.kind != jsonObject {
		return extErrorf("$scope is not a document")
	}
	var sb Builder
	if err := r.members(&sb, s); err != nil {
		return err
	}
	b.AppendValue(key, vCodeWithScope(c.str, sb.Finish()))
	return nil
}

// vCodeWithScope encodes a JavaScript-with-scope value.
func vCodeWithScope(code string, scope Doc) Value {
	d := binary.LittleEndian.AppendUint32(nil, uint32(4+4+len(code)+1+len(scope)))
	d = binary.LittleEndian.AppendUint32(d, uint32(len(code)+1))
	d = append(d, code...)
	d = append(d, 0)
	return Value{Type: TypeCodeWithScope, Data: append(d, scope...)}
}

func appendRegex(b *Builder, key, pattern, options string) error {
	if strings.IndexByte(pattern, 0) >= 0 || strings.IndexByte(options, 0) >= 0 {
		return extErrorf("regular expression contains a null byte")
	}
	b.AppendRegex(key, pattern, sortedOptions(options))
	return nil
}

func isIntLexeme(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func parseNumberLong(v *jsonNode) (int64, error) {
	if v.kind != jsonString || !isIntLexeme(v.str) {
		return 0, extErrorf("$numberLong is not an integer string")
	}
	x, err := strconv.ParseInt(v.str, 10, 64)
	if err != nil {
		return 0, extErrorf("$numberLong %q: %v", v.str, err)
	}
	return x, nil
}

func parseNumberDouble(v *jsonNode) (float64, error) {
	if v.kind != jsonString {
		return 0, extErrorf("$numberDouble is not a string")
	}
	switch v.str {
	case "Infinity":
		return math.Inf(1), nil
	case "-Infinity":
		return math.Inf(-1), nil
	case "NaN":
		return math.NaN(), nil
	}
	for i := 0; i < len(v.str); i++ {
		switch c := v.str[i]; {
		case c >= '0' && c <= '9', c == '-', c == '+', c == '.', c == 'e', c == 'E':
		default:
			return 0, extErrorf("$numberDouble %q is not a number", v.str)
		}
	}
	f, err := strconv.ParseFloat(v.str, 64)
	if err != nil {
		return 0, extErrorf("$numberDouble %q: %v", v.str, err)
	}
	return f, nil
}

func parseOID(v *jsonNode) (id [12]byte, err error) {
	if v.kind != jsonString || len(v.str) != 24 {
		return id, extErrorf("$oid is not a 24-digit hex string")
	}
	if _, err := hex.Decode(id[:], []byte(v.str)); err != nil {
		return id, extErrorf("$oid %q is not hex", v.str)
	}
	return id, nil
}

func parseUUID(v *jsonNode) (id [16]byte, err error) {
	if v.kind != jsonString || len(v.str) != 36 {
		return id, extErrorf("$uuid is not a UUID string")
	}
	s := v.str
	for _, i := range []int{8, 13, 18, 23} {
		if s[i] != '-' {
			return id, extErrorf("$uuid %q is malformed", s)
		}
	}
	h := s[0:8] + s[9:13] + s[14:18] + s[19:23] + s[24:]
	if _, err := hex.Decode(id[:], []byte(h)); err != nil {
		return id, extErrorf("$uuid %q is not hex", s)
	}
	return id, nil
}

func parseSubtype(s string) (byte, error) {
	if len(s) < 1 || len(s) > 2 {
		return 0, extErrorf("binary subtype %q is not 1 or 2 hex digits", s)
	}
	x, err := strconv.ParseUint(s, 16, 8)
	if err != nil {
		return 0, extErrorf("binary subtype %q is not hex", s)
	}
	return byte(x), nil
}

func binaryWrapper(b *Builder, key string, v *jsonNode) error {
	if v.kind != jsonObject || len(v.keys) != 2 {
		return extErrorf("$binary needs exactly base64 and subType")
	}
	d, ok1 := v.get("base64")
	t, ok2 := v.get("subType")
	if !ok1 || !ok2 || d.kind != jsonString || t.kind != jsonString {
		return extErrorf("$binary needs string base64 and subType")
	}
	return appendBinary(b, key, d.str, t.str)
}

func legacyBinary(b *Builder, key string, n *jsonNode) error {
	d, _ := n.get("$binary")
	t, _ := n.get("$type")
	if d.kind != jsonString || t.kind != jsonString {
		return extErrorf("legacy $binary needs string $binary and $type")
	}
	return appendBinary(b, key, d.str, t.str)
}

func appendBinary(b *Builder, key, b64, subtype string) error {
	st, err := parseSubtype(subtype)
	if err != nil {
		return err
	}
	data, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return extErrorf("$binary base64: %v", err)
	}
	if st == 2 { // old binary: the payload carries its own length
		data = append(binary.LittleEndian.AppendUint32(nil, uint32(len(data))), data...)
	}
	b.AppendBinary(key, st, data)
	return nil
}

func parseTimestamp(v *jsonNode) (t, i uint32, err error) {
	if v.kind != jsonObject || len(v.keys) != 2 {
		return 0, 0, extErrorf("$timestamp needs exactly t and i")
	}
	tn, ok1 := v.get("t")
	in, ok2 := v.get("i")
	if !ok1 || !ok2 || tn.kind != jsonNumber || in.kind != jsonNumber {
		return 0, 0, extErrorf("$timestamp needs numeric t and i")
	}
	tt, err1 := strconv.ParseUint(tn.str, 10, 32)
	ii, err2 := strconv.ParseUint(in.str, 10, 32)
	if err1 != nil || err2 != nil {
		return 0, 0, extErrorf("$timestamp t and i must be unsigned 32-bit integers")
	}
	return uint32(tt), uint32(ii), nil
}

func dbPointer(b *Builder, key string, v *jsonNode) error {
	if v.kind != jsonObject || len(v.keys) != 2 {
		return extErrorf("$dbPointer needs exactly $ref and $id")
	}
	ref, ok1 := v.get("$ref")
	id, ok2 := v.get("$id")
	if !ok1 || !ok2 || ref.kind != jsonString || id.kind != jsonObject || len(id.keys) != 1 || id.keys[0] != "$oid" {
		return extErrorf("$dbPointer needs a string $ref and an $oid $id")
	}
	oid, err := parseOID(id.vals[0])
	if err != nil {
		return err
	}
	d := append(stringData([]byte(ref.str)), oid[:]...)
	b.AppendValue(key, Value{Type: TypeDBPointer, Data: d})
	return nil
}

func parseDate(v *jsonNode) (int64, error) {
	switch v.kind {
	case jsonObject:
		if len(v.keys) != 1 || v.keys[0] != "$numberLong" {
			return 0, extErrorf("$date object must be {$numberLong: ...}")
		}
		return parseNumberLong(v.vals[0])
	case jsonString:
		t, err := time.Parse(time.RFC3339Nano, v.str)
		if err != nil {
			return 0, extErrorf("$date %q is not an ISO-8601 date: %v", v.str, err)
		}
		return t.UnixMilli(), nil
	}
	return 0, extErrorf("$date must be a string or {$numberLong: ...}")
}
