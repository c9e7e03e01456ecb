package bson

import (
	"encoding/hex"
	"strconv"
	"strings"
)

// String formats v as MongoDB's BSONElement::toString prints values in error
// messages and logs: numbers plainly (doubles with "%.16g" and a ".0" when
// that has no point, so 1.0 prints as "1.0"; decimals in their canonical
// string), strings in double quotes (cut to 150 bytes plus "..." from 160
// bytes on), documents as { a: 1, b: "x" } and arrays as [ 1, 2 ], and the
// other types in the shell's constructor style: ObjectId('…'), new Date(ms),
// Timestamp(t, i), BinData(subtype, HEX), UUID("…"), /pattern/options,
// DBRef('ns',oid), MinKey, MaxKey. The zero Value prints as EOO.
func (v Value) String() string {
	var sb strings.Builder
	appendValueString(&sb, v, 0)
	return sb.String()
}

// String formats d as MongoDB prints documents in error messages, e.g.
// { _id: 1, name: "x" }, or {} when empty.
func (d Doc) String() string {
	var sb strings.Builder
	appendDocString(&sb, d, false, 0)
	return sb.String()
}

const (
	maxStringShown = 150
	maxBinaryShown = 70
	maxCodeShown   = 70
)

func appendDocString(sb *strings.Builder, d Doc, array bool, depth int) {
	open, closing := "{", "}"
	if array {
		open, closing = "[", "]"
	}
	sb.WriteString(open)
	it := d.Iter()
	first := true
	for it.Next() {
		if first {
			sb.WriteByte(' ')
			first = false
		} else {
			sb.WriteString(", ")
		}
		e := it.Element()
		if !array {
			sb.WriteString(e.Key)
			sb.WriteString(": ")
		}
		appendValueString(sb, e.Value, depth+1)
	}
	if it.Corrupt() {
		sb.WriteString(" <corrupt>")
	}
	if !first {
		sb.WriteByte(' ')
	}
	sb.WriteString(closing)
}

func appendValueString(sb *strings.Builder, v Value, depth int) {
	if depth > MaxDepth+2 {
		sb.WriteString("...")
		return
	}
	var buf [64]byte
	switch v.Type {
	case 0:
		sb.WriteString("EOO")
	case TypeDouble:
		sb.Write(appendDoubleNice(buf[:0], v.Double()))
	case TypeInt32:
		sb.Write(strconv.AppendInt(buf[:0], int64(v.Int32()), 10))
	case TypeInt64:
		sb.Write(strconv.AppendInt(buf[:0], v.Int64(), 10))
	case TypeDecimal128:
		hi, lo := v.Decimal128()
		sb.Write(AppendDecimal128(buf[:0], hi, lo))
	case TypeString, TypeSymbol:
		s := v.StringValue()
		sb.WriteByte('"')
		if len(s) >= 160 {
			sb.WriteString(s[:maxStringShown])
			sb.WriteString("...")
		} else {
			sb.WriteString(s)
		}
		sb.WriteByte('"')
	case TypeDocument:
		appendDocString(sb, Doc(v.Data), false, depth)
	case TypeArray:
		appendDocString(sb, Doc(v.Data), true, depth)
	case TypeObjectID:
		sb.WriteString("ObjectId('")
		sb.Write(hex.AppendEncode(buf[:0], v.Data))
		sb.WriteString("')")
	case TypeBoolean:
		sb.WriteString(strconv.FormatBool(v.Boolean()))
	case TypeDateTime:
		sb.WriteString("new Date(")
		sb.Write(strconv.AppendInt(buf[:0], v.DateTime(), 10))
		sb.WriteByte(')')
	case TypeNull:
		sb.WriteString("null")
	case TypeUndefined:
		sb.WriteString("undefined")
	case TypeMinKey:
		sb.WriteString("MinKey")
	case TypeMaxKey:
		sb.WriteString("MaxKey")
	case TypeTimestamp:
		t, i := v.Timestamp()
		sb.WriteString("Timestamp(")
		sb.Write(strconv.AppendUint(buf[:0], uint64(t), 10))
		sb.WriteString(", ")
		sb.Write(strconv.AppendUint(buf[:0], uint64(i), 10))
		sb.WriteByte(')')
	case TypeBinary:
		st, data := v.Binary()
		if st == 2 && len(data) >= 4 { // old binary: drop the inner length
			data = data[4:]
		}
		if st == 4 && len(data) == 16 {
			h := hex.AppendEncode(buf[:0], data)
			sb.WriteString(`UUID("`)
			sb.Write(h[0:8])
			sb.WriteByte('-')
			sb.Write(h[8:12])
			sb.WriteByte('-')
			sb.Write(h[12:16])
			sb.WriteByte('-')
			sb.Write(h[16:20])
			sb.WriteByte('-')
			sb.Write(h[20:32])
			sb.WriteString(`")`)
			return
		}
		sb.WriteString("BinData(")
		sb.Write(strconv.AppendUint(buf[:0], uint64(st), 10))
		sb.WriteString(", ")
		shown := data
		if len(data) > 80 {
			shown = data[:maxBinaryShown]
		}
		sb.WriteString(strings.ToUpper(hex.EncodeToString(shown)))
		if len(shown) < len(data) {
			sb.WriteString("...")
		}
		sb.WriteByte(')')
	case TypeRegex:
		p, o := v.Regex()
		sb.WriteByte('/')
		sb.WriteString(p)
		sb.WriteByte('/')
		sb.WriteString(o)
	case TypeDBPointer:
		ns, id := v.DBPointer()
		sb.WriteString("DBRef('")
		sb.WriteString(ns)
		sb.WriteString("',")
		sb.Write(hex.AppendEncode(buf[:0], id[:]))
		sb.WriteByte(')')
	case TypeJavaScript:
		code := v.StringValue()
		if len(code) >= 80 {
			sb.WriteString(code[:maxCodeShown])
			sb.WriteString("...")
		} else {
			sb.WriteString(code)
		}
	case TypeCodeWithScope:
		code, scope := v.CodeWithScope()
		sb.WriteString("CodeWScope( ")
		sb.WriteString(code)
		sb.WriteString(", ")
		appendDocString(sb, scope, false, depth)
		sb.WriteString(")")
	default:
		sb.WriteString("?type=")
		sb.Write(strconv.AppendUint(buf[:0], uint64(v.Type), 10))
	}
}

// appendDoubleNice formats like MongoDB's StringBuilder::appendDoubleNice:
// printf("%.16g") followed by ".0" when the result has no '.', 'E' or 'N'
// (so 2 prints "2.0", and, faithfully, 1e+20 prints "1e+20.0" and infinity
// "inf.0").
func appendDoubleNice(dst []byte, f float64) []byte {
	start := len(dst)
	switch {
	case f != f:
		dst = append(dst, "nan"...)
	case f > 0 && f*0 != 0:
		dst = append(dst, "inf"...)
	case f < 0 && f*0 != 0:
		dst = append(dst, "-inf"...)
	default:
		dst = strconv.AppendFloat(dst, f, 'g', 16, 64)
	}
	s := dst[start:]
	for _, c := range s {
		if c == '.' || c == 'E' || c == 'N' {
			return dst
		}
	}
	return append(dst, ".0"...)
}
