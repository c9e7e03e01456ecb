package bson

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
)

// MarshalExtJSON encodes d as MongoDB Extended JSON v2, compact (no
// whitespace). canonical selects the canonical format, which preserves every
// BSON type ({"$numberInt": "1"}, {"$date": {"$numberLong": "..."}}); otherwise
// the relaxed format writes int32, int64 and finite doubles as JSON numbers
// and dates from 1970 to 9999 as ISO-8601 strings. Regex options are written
// sorted, as the specification requires. Strings that are not valid UTF-8 have
// their invalid bytes replaced by U+FFFD. It fails only on malformed BSON.
func (d Doc) MarshalExtJSON(canonical bool) ([]byte, error) {
	w := extWriter{canonical: canonical}
	if err := w.doc(d, false, 0); err != nil {
		return nil, fmt.Errorf("marshal extended JSON: %w", err)
	}
	return w.buf, nil
}

// AppendExtJSON appends the Extended JSON of a single value to dst.
func AppendExtJSON(dst []byte, v Value, canonical bool) ([]byte, error) {
	w := extWriter{buf: dst, canonical: canonical}
	if err := w.value(v, 0); err != nil {
		return dst, fmt.Errorf("marshal extended JSON: %w", err)
	}
	return w.buf, nil
}

type extWriter struct {
	buf       []byte
	canonical bool
}

func (w *extWriter) doc(d Doc, array bool, depth int) error {
	if depth > MaxDepth+1 {
		return fmt.Errorf("%w: nesting too deep", ErrCorrupt)
	}
	open, closing := byte('{'), byte('}')
	if array {
		open, closing = '[', ']'
	}
	w.buf = append(w.buf, open)
	it := d.Iter()
	first := true
	for it.Next() {
		if !first {
			w.buf = append(w.buf, ',')
		}
		first = false
		e := it.Element()
		if !array {
			w.buf = appendJSONString(w.buf, e.Key)
			w.buf = append(w.buf, ':')
		}
		if err := w.value(e.Value, depth); err != nil {
			return err
		}
	}
	if it.Corrupt() {
		return ErrCorrupt
	}
	w.buf = append(w.buf, closing)
	return nil
}

// wrap writes {"key":
func (w *extWriter) wrap(key string) {
	w.buf = append(w.buf, `{"`...)
	w.buf = append(w.buf, key...)
	w.buf = append(w.buf, `":`...)
}

func (w *extWriter) wrapString(key, s string) {
	w.wrap(key)
	w.buf = appendJSONString(w.buf, s)
	w.buf = append(w.buf, '}')
}

func (w *extWriter) value(v Value, depth int) error {
	switch v.Type {
	case TypeDouble:
		f := v.Double()
		if !w.canonical && !math.IsInf(f, 0) && !math.IsNaN(f) {
			w.buf = appendExtDouble(w.buf, f)
			return nil
		}
		w.wrap("$numberDouble")
		w.buf = append(w.buf, '"')
		w.buf = appendExtDouble(w.buf, f)
		w.buf = append(w.buf, `"}`...)
	case TypeString:
		w.buf = appendJSONString(w.buf, v.StringValue())
	case TypeDocument:
		return w.doc(Doc(v.Data), false, depth+1)
	case TypeArray:
		return w.doc(Doc(v.Data), true, depth+1)
	case TypeBinary:
		st, data := v.Binary()
		if st == 2 && len(data) >= 4 { // old binary: drop the inner length
			data = data[4:]
		}
		w.buf = append(w.buf, `{"$binary":{"base64":"`...)
		w.buf = base64.StdEncoding.AppendEncode(w.buf, data)
		w.buf = append(w.buf, `","subType":"`...)
		w.buf = hex.AppendEncode(w.buf, []byte{st})
		w.buf = append(w.buf, `"}}`...)
	case TypeUndefined:
		w.buf = append(w.buf, `{"$undefined":true}`...)
	case TypeObjectID:
		w.wrap("$oid")
		w.buf = append(w.buf, '"')
		w.buf = hex.AppendEncode(w.buf, v.Data)
		w.buf = append(w.buf, `"}`...)
	case TypeBoolean:
		w.buf = strconv.AppendBool(w.buf, v.Boolean())
	case TypeDateTime:
		ms := v.DateTime()
		if !w.canonical && ms >= 0 && ms <= maxRelaxedDateMillis {
			w.wrap("$date")
			w.buf = append(w.buf, '"')
			w.buf = appendISODate(w.buf, ms)
			w.buf = append(w.buf, `"}`...)
			return nil
		}
		w.buf = append(w.buf, `{"$date":{"$numberLong":"`...)
		w.buf = strconv.AppendInt(w.buf, ms, 10)
		w.buf = append(w.buf, `"}}`...)
	case TypeNull:
		w.buf = append(w.buf, "null"...)
	case TypeRegex:
		p, o := v.Regex()
		w.buf = append(w.buf, `{"$regularExpression":{"pattern":`...)
		w.buf = appendJSONString(w.buf, p)
		w.buf = append(w.buf, `,"options":`...)
		w.buf = appendJSONString(w.buf, sortedOptions(o))
		w.buf = append(w.buf, `}}`...)
	case TypeDBPointer:
		ns, id := v.DBPointer()
		w.buf = append(w.buf, `{"$dbPointer":{"$ref":`...)
		w.buf = appendJSONString(w.buf, ns)
		w.buf = append(w.buf, `,"$id":{"$oid":"`...)
		w.buf = hex.AppendEncode(w.buf, id[:])
		w.buf = append(w.buf, `"}}}`...)
	case TypeJavaScript:
		w.wrapString("$code", v.StringValue())
	case TypeSymbol:
		w.wrapString("$symbol", v.StringValue())
	case TypeCodeWithScope:
		code, scope := v.CodeWithScope()
		w.wrap("$code")
		w.buf = appendJSONString(w.buf, code)
		w.buf = append(w.buf, `,"$scope":`...)
		if err := w.doc(scope, false, depth+1); err != nil {
			return err
		}
		w.buf = append(w.buf, '}')
	case TypeInt32:
		if !w.canonical {
			w.buf = strconv.AppendInt(w.buf, int64(v.Int32()), 10)
			return nil
		}
		w.wrap("$numberInt")
		w.buf = append(w.buf, '"')
		w.buf = strconv.AppendInt(w.buf, int64(v.Int32()), 10)
		w.buf = append(w.buf, `"}`...)
	case TypeTimestamp:
		t, i := v.Timestamp()
		w.buf = append(w.buf, `{"$timestamp":{"t":`...)
		w.buf = strconv.AppendUint(w.buf, uint64(t), 10)
		w.buf = append(w.buf, `,"i":`...)
		w.buf = strconv.AppendUint(w.buf, uint64(i), 10)
		w.buf = append(w.buf, `}}`...)
	case TypeInt64:
		if !w.canonical {
			w.buf = strconv.AppendInt(w.buf, v.Int64(), 10)
			return nil
		}
		w.wrap("$numberLong")
		w.buf = append(w.buf, '"')
		w.buf = strconv.AppendInt(w.buf, v.Int64(), 10)
		w.buf = append(w.buf, `"}`...)
	case TypeDecimal128:
		hi, lo := v.Decimal128()
		w.wrap("$numberDecimal")
		w.buf = append(w.buf, '"')
		w.buf = AppendDecimal128(w.buf, hi, lo)
		w.buf = append(w.buf, `"}`...)
	case TypeMinKey:
		w.buf = append(w.buf, `{"$minKey":1}`...)
	case TypeMaxKey:
		w.buf = append(w.buf, `{"$maxKey":1}`...)
	default:
		return fmt.Errorf("%w: unknown type 0x%02x", ErrCorrupt, byte(v.Type))
	}
	return nil
}

// maxRelaxedDateMillis is 9999-12-31T23:59:59.999Z, the last date relaxed
// Extended JSON writes as an ISO-8601 string.
const maxRelaxedDateMillis = 253402300799999

// appendISODate writes ms as YYYY-MM-DDTHH:MM:SS[.mmm]Z.
func appendISODate(dst []byte, ms int64) []byte {
	t := time.UnixMilli(ms).UTC()
	if ms%1000 != 0 {
		return t.AppendFormat(dst, "2006-01-02T15:04:05.000Z07:00")
	}
	return t.AppendFormat(dst, "2006-01-02T15:04:05Z07:00")
}

// appendExtDouble formats a double as Extended JSON does: shortest
// round-trip digits, "E" exponent, ".0" added to integral values, and
// "Infinity", "-Infinity", "NaN" for the specials.
func appendExtDouble(dst []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	}
	start := len(dst)
	dst = strconv.AppendFloat(dst, f, 'G', -1, 64)
	for _, c := range dst[start:] {
		if c == '.' || c == 'E' {
			return dst
		}
	}
	return append(dst, ".0"...)
}

// sortedOptions returns regex options in alphabetical order.
func sortedOptions(o string) string {
	if len(o) < 2 {
		return o
	}
	for i := 1; i < len(o); i++ {
		if o[i] < o[i-1] {
			b := []byte(o)
			slices.Sort(b)
			return string(b)
		}
	}
	return o
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string: quotes and backslashes
// escaped, control characters as \b \t \n \f \r or \u00XX, everything else
// verbatim (invalid UTF-8 becomes U+FFFD).
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				dst = append(dst, s[start:i]...)
				dst = append(dst, "\ufffd"...)
				i++
				start = i
				continue
			}
			i += size
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\r':
			dst = append(dst, '\\', 'r')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
