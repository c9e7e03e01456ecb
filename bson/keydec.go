package bson

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
)

// ErrKeyNotReversible reports a key component that DecodeKey cannot turn back
// into a value: strings encoded by a collation sort key.
var ErrKeyNotReversible = errors.New("bson: collated string key cannot be decoded")

// errKeyCorrupt reports malformed key bytes.
var errKeyCorrupt = errors.New("bson: corrupt key")

// DecodeKey decodes the first component of a key produced by AppendKey (in
// either direction) and returns the value and the remaining bytes.
//
// The encoding keeps a number's exact value but not its BSON type, so a
// number comes back as the narrowest type that holds it exactly: int32, then
// int64, then double, then decimal128. Zero (including -0 and decimal zeros
// with any exponent) decodes as int32 0, NaN as a double NaN, ±Infinity as a
// double. Symbols come back as strings. Everything else round-trips exactly.
// Components built with a collation return ErrKeyNotReversible.
func DecodeKey(b []byte) (v Value, rest []byte, err error) {
	if len(b) == 0 {
		return Value{}, b, fmt.Errorf("decode key: %w: empty input", errKeyCorrupt)
	}
	r := keyReader{b: b}
	if b[0] >= 0x80 {
		r.mask = 0xFF
	}
	v, err = r.value(r.byte(), 0)
	if err == nil && r.bad {
		err = errKeyCorrupt
	}
	if err == nil {
		err = checkDecoded(v)
	}
	if err != nil {
		return Value{}, b, fmt.Errorf("decode key at byte %d: %w", r.pos, err)
	}
	return v, b[r.pos:], nil
}

// checkDecoded validates values whose payload has internal structure, so
// that corrupt keys never yield values the readers would trip over.
func checkDecoded(v Value) error {
	switch v.Type {
	case TypeDocument, TypeArray, TypeCodeWithScope, TypeDBPointer, TypeRegex:
		var b Builder
		b.AppendValue("", v)
		if err := Validate(b.Finish(), MaxDepth+1); err != nil {
			return fmt.Errorf("%w: %w", errKeyCorrupt, err)
		}
	}
	return nil
}

// keyReader reads key bytes, undoing the descending inversion on the fly.
type keyReader struct {
	b    []byte
	pos  int
	mask byte
	bad  bool
}

func (r *keyReader) byte() byte {
	if r.pos >= len(r.b) {
		r.bad = true
		return 0
	}
	c := r.b[r.pos] ^ r.mask
	r.pos++
	return c
}

func (r *keyReader) bytes(n int) []byte {
	if n < 0 || r.pos+n > len(r.b) {
		r.bad = true
		r.pos = len(r.b)
		return make([]byte, max(n, 0))
	}
	out := make([]byte, n)
	for i := range out {
		out[i] = r.b[r.pos+i] ^ r.mask
	}
	r.pos += n
	return out
}

// escaped reads an escaped, terminated byte string.
func (r *keyReader) escaped() []byte {
	var out []byte
	for !r.bad {
		c := r.byte()
		if c != 0 {
			out = append(out, c)
			continue
		}
		switch r.byte() {
		case 0xFF:
			out = append(out, 0)
		case 0x01:
			return out
		default:
			r.bad = true
		}
	}
	return out
}

func stringData(s []byte) []byte {
	d := binary.LittleEndian.AppendUint32(make([]byte, 0, len(s)+5), uint32(len(s)+1))
	d = append(d, s...)
	return append(d, 0)
}

func (r *keyReader) value(tag byte, depth int) (Value, error) {
	if depth > MaxDepth {
		return Value{}, errors.New("key nests too deeply")
	}
	switch tag {
	case keyMissing:
		return Value{}, nil
	case keyMinKey:
		return Value{Type: TypeMinKey}, nil
	case keyUndefined:
		return Value{Type: TypeUndefined}, nil
	case keyNull:
		return Value{Type: TypeNull}, nil
	case keyMaxKey:
		return Value{Type: TypeMaxKey}, nil
	case keyNumber:
		return r.number()
	case keyString:
		return Value{Type: TypeString, Data: stringData(r.escaped())}, nil
	case keyCode:
		return Value{Type: TypeJavaScript, Data: stringData(r.escaped())}, nil
	case keyCollated:
		return Value{}, ErrKeyNotReversible
	case keyObject, keyArray:
		d, err := r.doc(tag == keyArray, depth)
		if err != nil {
			return Value{}, err
		}
		if tag == keyArray {
			return Value{Type: TypeArray, Data: d}, nil
		}
		return Value{Type: TypeDocument, Data: d}, nil
	case keyBinary:
		n := int(binary.BigEndian.Uint32(r.bytes(4)))
		if n < 0 || n > len(r.b) {
			return Value{}, errKeyCorrupt
		}
		d := binary.LittleEndian.AppendUint32(nil, uint32(n))
		return Value{Type: TypeBinary, Data: append(d, r.bytes(n+1)...)}, nil
	case keyObjectID:
		return Value{Type: TypeObjectID, Data: r.bytes(12)}, nil
	case keyBoolean:
		c := r.byte()
		if c > 1 {
			return Value{}, errKeyCorrupt
		}
		return Value{Type: TypeBoolean, Data: []byte{c}}, nil
	case keyDate:
		u := binary.BigEndian.Uint64(r.bytes(8)) ^ (1 << 63)
		return Value{Type: TypeDateTime, Data: binary.LittleEndian.AppendUint64(nil, u)}, nil
	case keyTimestamp:
		u := binary.BigEndian.Uint64(r.bytes(8))
		return Value{Type: TypeTimestamp, Data: binary.LittleEndian.AppendUint64(nil, u)}, nil
	case keyRegex:
		d := append(r.escaped(), 0)
		d = append(d, r.escaped()...)
		return Value{Type: TypeRegex, Data: append(d, 0)}, nil
	case keyDBPointer:
		n := int(binary.BigEndian.Uint32(r.bytes(4)))
		if n < 17 || n > len(r.b) {
			return Value{}, errKeyCorrupt
		}
		return Value{Type: TypeDBPointer, Data: r.bytes(n)}, nil
	case keyCodeScope:
		code := r.escaped()
		scope, err := r.doc(false, depth)
		if err != nil {
			return Value{}, err
		}
		d := binary.LittleEndian.AppendUint32(nil, uint32(4+4+len(code)+1+len(scope)))
		d = binary.LittleEndian.AppendUint32(d, uint32(len(code)+1))
		d = append(d, code...)
		d = append(d, 0)
		return Value{Type: TypeCodeWithScope, Data: append(d, scope...)}, nil
	case keyUnknown:
		t := Type(r.byte())
		if _, known := typeNames[t]; known || t == 0 {
			return Value{}, fmt.Errorf("%w: known type 0x%02x under the unknown-type tag", errKeyCorrupt, byte(t))
		}
		return Value{Type: t, Data: r.escaped()}, nil
	}
	return Value{}, fmt.Errorf("%w: unknown tag 0x%02x", errKeyCorrupt, tag)
}

// doc reads an object or array body into a new document.
func (r *keyReader) doc(array bool, depth int) (Doc, error) {
	var b Builder
	for i := 0; ; i++ {
		tag := r.byte()
		if r.bad {
			return nil, errKeyCorrupt
		}
		if tag == keyEnd {
			return b.Finish(), nil
		}
		key := Index(i)
		if !array {
			key = string(r.escaped())
		}
		v, err := r.value(tag, depth+1)
		if err != nil {
			return nil, err
		}
		if v.Type == 0 {
			return nil, errKeyCorrupt
		}
		b.AppendValue(key, v)
	}
}

// number reads a number body and picks the narrowest exact BSON type.
func (r *keyReader) number() (Value, error) {
	class := r.byte()
	switch class {
	case numNaN:
		return doubleValue(math.NaN()), nil
	case numNegInf:
		return doubleValue(math.Inf(-1)), nil
	case numPosInf:
		return doubleValue(math.Inf(1)), nil
	case numZero:
		return int32Value(0), nil
	case numPos, numNeg:
	default:
		return Value{}, errKeyCorrupt
	}
	var m byte
	if class == numNeg {
		m = 0xFF
	}
	exp := int(uint16(r.byte()^m)<<8|uint16(r.byte()^m)) - 0x8000
	var buf [maxNumDigits + 1]byte
	digits := buf[:0]
	for {
		c := r.byte() ^ m
		if r.bad || c > 100 {
			return Value{}, errKeyCorrupt
		}
		if c == 0 {
			break
		}
		if len(digits) >= maxNumDigits {
			return Value{}, errKeyCorrupt
		}
		c--
		digits = append(digits, '0'+c/10, '0'+c%10)
	}
	if len(digits) > 0 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
	}
	if len(digits) == 0 || digits[len(digits)-1] == '0' {
		return Value{}, errKeyCorrupt
	}
	return numberFromDigits(class == numNeg, digits, exp)
}

// numberFromDigits builds the narrowest BSON number equal to
// ±0.digits × 10^exp.
func numberFromDigits(neg bool, digits []byte, exp int) (Value, error) {
	n := len(digits)
	if exp >= n && exp <= 19 {
		var mag uint64
		ok := true
		for i := 0; i < exp; i++ {
			d := uint64(0)
			if i < n {
				d = uint64(digits[i] - '0')
			}
			hi, lo := bits.Mul64(mag, 10)
			lo, c := bits.Add64(lo, d, 0)
			if hi != 0 || c != 0 {
				ok = false
				break
			}
			mag = lo
		}
		if ok {
			switch {
			case !neg && mag <= math.MaxInt32:
				return int32Value(int32(mag)), nil
			case neg && mag <= 1<<31:
				return int32Value(int32(-int64(mag))), nil
			case !neg && mag <= math.MaxInt64:
				return int64Value(int64(mag)), nil
			case neg && mag <= 1<<63:
				return int64Value(int64(-mag)), nil
			}
		}
	}
	s := make([]byte, 0, n+12)
	if neg {
		s = append(s, '-')
	}
	s = append(s, "0."...)
	s = append(s, digits...)
	s = append(s, 'e')
	s = strconv.AppendInt(s, int64(exp), 10)
	if f, err := strconv.ParseFloat(string(s), 64); err == nil {
		var buf [maxNumDigits]byte
		fd, _, fe := appendFloatDigits(buf[:0], f)
		if fe == exp && string(fd) == string(digits) {
			return doubleValue(f), nil
		}
	}
	if n <= 34 {
		q := exp - n
		var chi, clo uint64
		for _, c := range digits {
			chi, clo = mul128by10add(chi, clo, uint64(c-'0'))
		}
		for q > decimalMaxExp && n < 34 {
			chi, clo = mul128by10add(chi, clo, 0)
			q--
			n++
		}
		if q >= decimalMinExp && q <= decimalMaxExp {
			hi, lo := decimalPack(neg, chi, clo, q)
			return decimalValue(hi, lo), nil
		}
	}
	return Value{}, fmt.Errorf("%w: number %s is not representable", errKeyCorrupt, s)
}

// mul128by10add returns hi:lo × 10 + d (no overflow check; callers keep the
// value below 10^34).
func mul128by10add(hi, lo, d uint64) (uint64, uint64) {
	h1, l := bits.Mul64(lo, 10)
	l, c := bits.Add64(l, d, 0)
	return hi*10 + h1 + c, l
}

func int32Value(n int32) Value {
	return Value{Type: TypeInt32, Data: binary.LittleEndian.AppendUint32(nil, uint32(n))}
}

func int64Value(n int64) Value {
	return Value{Type: TypeInt64, Data: binary.LittleEndian.AppendUint64(nil, uint64(n))}
}

func doubleValue(f float64) Value {
	return Value{Type: TypeDouble, Data: binary.LittleEndian.AppendUint64(nil, math.Float64bits(f))}
}

func decimalValue(hi, lo uint64) Value {
	d := binary.LittleEndian.AppendUint64(make([]byte, 0, 16), lo)
	return Value{Type: TypeDecimal128, Data: binary.LittleEndian.AppendUint64(d, hi)}
}
