package expr

import (
	"encoding/binary"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// String operators. Strings are UTF-8; "CP" operators count code points,
// "Bytes" operators count bytes. Case mapping is ASCII-only, as in MongoDB.

func init() {
	regNary("$concat", 0, -1, concat)
	register("$substr", parseSubstrBytes)
	register("$substrBytes", parseSubstrBytes)
	regNary("$substrCP", 3, 3, substrCP)
	regUnary("$toLower", func(e *Env, v bson.Value) (bson.Value, error) { return caseMap(e, v, false) })
	regUnary("$toUpper", func(e *Env, v bson.Value) (bson.Value, error) { return caseMap(e, v, true) })
	regUnary("$strLenBytes", strLenBytes)
	regUnary("$strLenCP", strLenCP)
	regBinary("$split", split)
	register("$trim", parseTrim("$trim", true, true))
	register("$ltrim", parseTrim("$ltrim", true, false))
	register("$rtrim", parseTrim("$rtrim", false, true))
	register("$indexOfBytes", parseIndexOf("$indexOfBytes", false))
	register("$indexOfCP", parseIndexOf("$indexOfCP", true))
	register("$replaceOne", parseReplace("$replaceOne", false))
	register("$replaceAll", parseReplace("$replaceAll", true))
	regBinary("$strcasecmp", strcasecmp)
}

// coerceToString is MongoDB's Value::coerceToString.
func coerceToString(v bson.Value) (string, error) {
	switch v.Type {
	case bson.TypeString, bson.TypeSymbol:
		return v.StringValue(), nil
	case bson.TypeInt32:
		return strconv.FormatInt(int64(v.Int32()), 10), nil
	case bson.TypeInt64:
		return strconv.FormatInt(v.Int64(), 10), nil
	case bson.TypeDouble:
		return formatDouble(v.Double()), nil
	case bson.TypeDecimal128:
		hi, lo := v.Decimal128()
		return bson.FormatDecimal128(hi, lo), nil
	case bson.TypeDateTime:
		s, ok := isoDate(v.Int64())
		if !ok {
			return "", errf(mongoerr.DateToStringFailed, "failed to convert date to string")
		}
		return s, nil
	case bson.TypeTimestamp:
		t, i := v.Timestamp()
		return "Timestamp(" + strconv.FormatUint(uint64(t), 10) + ", " + strconv.FormatUint(uint64(i), 10) + ")", nil
	case 0, bson.TypeNull, bson.TypeUndefined:
		return "", nil
	case bson.TypeJavaScript:
		return v.StringValue(), nil
	}
	return "", errf(mongoerr.ConvertToStringFailed, "can't convert from BSON type %s to String", typeName(v))
}

// formatDouble formats a double as MongoDB converts it to a string.
func formatDouble(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	if f == 0 && math.Signbit(f) {
		return "-0"
	}
	// the shortest representation, in exponent form below 1e-4 and from
	// 1e16 on (as fmt's "{}" prints doubles)
	if a := math.Abs(f); a != 0 && (a < 1e-4 || a >= 1e16) {
		s := strconv.FormatFloat(f, 'e', -1, 64)
		mant, exp, _ := strings.Cut(s, "e")
		if len(exp) == 2 { // "+5" -> "+05"
			exp = exp[:1] + "0" + exp[1:]
		}
		return mant + "e" + exp
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// isoDate formats ms since the epoch as %Y-%m-%dT%H:%M:%S.%LZ.
func isoDate(ms int64) (string, bool) {
	t := time.UnixMilli(ms).UTC()
	if t.Year() < 0 || t.Year() > 9999 {
		return "", false
	}
	return t.Format("2006-01-02T15:04:05.000Z"), true
}

func concat(e *Env, args []bson.Value) (bson.Value, error) {
	n := 0
	for _, v := range args {
		if nullish(v) {
			return vNull, nil
		}
		if v.Type != bson.TypeString {
			return missing, errf(mongoerr.ConcatNotString, "$concat only supports strings, not %s", typeName(v))
		}
		n += len(v.Data) - 5
	}
	if !e.fits(n + 5) {
		return missing, errWork()
	}
	b := e.alloc(n + 5)
	b[0], b[1], b[2], b[3] = byte(n+1), byte((n+1)>>8), byte((n+1)>>16), byte((n+1)>>24)
	p := 4
	for _, v := range args {
		p += copy(b[p:], v.Data[4:len(v.Data)-1])
	}
	b[p] = 0
	return bson.Value{Type: bson.TypeString, Data: b}, nil
}

func parseSubstrBytes(p *parser, name string, arg bson.Value) (node, error) {
	args, err := p.exactArgs(name, arg, 3)
	if err != nil {
		return nil, err
	}
	return &naryNode{args: args, fn: substrBytes}, nil
}

func isContinuation(b byte) bool { return b&0xc0 == 0x80 }

func substrBytes(e *Env, args []bson.Value) (bson.Value, error) {
	s, err := coerceToString(args[0])
	if err != nil {
		return missing, err
	}
	lv, nv := args[1], args[2]
	if !lv.IsNumber() {
		return missing, errf(mongoerr.SubstrBytesStartNotNumber, "$substrBytes:  starting index must be a numeric type (is BSON type %s)", typeName(lv))
	}
	if !nv.IsNumber() {
		return missing, errf(mongoerr.SubstrBytesLengthNotNumber, "$substrBytes:  length must be a numeric type (is BSON type %s)", typeName(nv))
	}
	signedLower := toLong(lv)
	if signedLower < 0 {
		return missing, errf(mongoerr.SubstrBytesStartNegative, "$substrBytes:  starting index must be non-negative (got: %d)", signedLower)
	}
	n := uint64(len(s))
	lower := uint64(signedLower)
	length := n
	if l := toLong(nv); l >= 0 {
		length = uint64(l)
	}
	if lower < n && isContinuation(s[lower]) {
		return missing, errf(mongoerr.SubstrBytesStartInCharacter, "$substrBytes:  Invalid range, starting index is a UTF-8 continuation byte.")
	}
	end := lower + length
	if end < lower { // wrapped
		end = math.MaxUint64
	}
	if end < n && isContinuation(s[end]) {
		return missing, errf(mongoerr.SubstrBytesEndInCharacter, "$substrBytes:  Invalid range, ending index is in the middle of a UTF-8 character.")
	}
	if lower >= n {
		return e.str(""), nil
	}
	if end > n {
		end = n
	}
	return e.str(s[lower:end]), nil
}

func substrCP(e *Env, args []bson.Value) (bson.Value, error) {
	in, lv, nv := args[0], args[1], args[2]
	s, err := coerceToString(in)
	if err != nil {
		return missing, err
	}
	if !lv.IsNumber() {
		return missing, errf(mongoerr.SubstrCPStartNotNumber, "$substrCP: starting index must be a numeric type (is BSON type %s)", typeName(lv))
	}
	if !isIntegral32(lv) {
		return missing, errf(mongoerr.SubstrCPStartNotInt32, "$substrCP: starting index cannot be represented as a 32-bit integral value: %s", lv.String())
	}
	if !nv.IsNumber() {
		return missing, errf(mongoerr.SubstrCPLengthNotNumber, "$substrCP: length must be a numeric type (is BSON type %s)", typeName(nv))
	}
	if !isIntegral32(nv) {
		return missing, errf(mongoerr.SubstrCPLengthNotInt32, "$substrCP: length cannot be represented as a 32-bit integral value: %s", nv.String())
	}
	start, length := toLong(lv), toLong(nv)
	if length < 0 {
		return missing, errf(mongoerr.SubstrCPLengthNegative, "$substrCP: length must be a nonnegative integer.")
	}
	if start < 0 {
		return missing, errf(mongoerr.SubstrCPStartNegative, "$substrCP: the starting index must be nonnegative integer.")
	}
	i := 0
	for cp := int64(0); cp < start && i < len(s); cp++ {
		_, sz := utf8.DecodeRuneInString(s[i:])
		i += sz
	}
	j := i
	for cp := int64(0); cp < length && j < len(s); cp++ {
		_, sz := utf8.DecodeRuneInString(s[j:])
		j += sz
	}
	return e.str(s[i:j]), nil
}

func caseMap(e *Env, v bson.Value, upper bool) (bson.Value, error) {
	s, err := coerceToString(v)
	if err != nil {
		return missing, err
	}
	out := e.str(s)
	b := out.Data[4 : len(out.Data)-1]
	for i, c := range b {
		if upper && c >= 'a' && c <= 'z' {
			b[i] = c - 32
		} else if !upper && c >= 'A' && c <= 'Z' {
			b[i] = c + 32
		}
	}
	return out, nil
}

func strLenBytes(e *Env, v bson.Value) (bson.Value, error) {
	if v.Type != bson.TypeString {
		return missing, errf(mongoerr.StrLenBytesNotString, "$strLenBytes requires a string argument, found: %s", typeName(v))
	}
	return e.int32(int32(len(v.Data) - 5)), nil
}

func strLenCP(e *Env, v bson.Value) (bson.Value, error) {
	if v.Type != bson.TypeString {
		return missing, errf(mongoerr.StrLenCPNotString, "$strLenCP requires a string argument, found: %s", typeName(v))
	}
	return e.int32(int32(utf8.RuneCountInString(v.StringValue()))), nil
}

func split(e *Env, in, sep bson.Value) (bson.Value, error) {
	if nullish(in) || nullish(sep) {
		return vNull, nil
	}
	if in.Type != bson.TypeString {
		return missing, errf(mongoerr.SplitFirstNotString, "$split requires an expression that evaluates to a string as a first argument, found: %s", typeName(in))
	}
	if sep.Type != bson.TypeString {
		return missing, errf(mongoerr.SplitSecondNotString, "$split requires an expression that evaluates to a string as a second argument, found: %s", typeName(sep))
	}
	d := sep.StringValue()
	if d == "" {
		return missing, errf(mongoerr.SplitEmptySeparator, "$split requires a non-empty separator")
	}
	s := in.StringValue()
	start := len(e.vs)
	for {
		i := strings.Index(s, d)
		if i < 0 {
			break
		}
		e.vs = append(e.vs, e.str(s[:i]))
		if e.over {
			e.vs = e.vs[:start]
			return missing, errWork()
		}
		s = s[i+len(d):]
	}
	e.vs = append(e.vs, e.str(s))
	out := e.array(e.vs[start:])
	e.vs = e.vs[:start]
	return out, nil
}

// defaultTrimChars are the code points $trim removes by default.
var defaultTrimChars = []rune{0, ' ', '\t', '\n', '\v', '\f', '\r', 0xa0, 0x1680,
	0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a,
	0x2028, 0x2029, 0x202f, 0x205f, 0x3000}

type trimNode struct {
	name        string
	input       node
	chars       node
	left, right bool
}

func parseTrim(name string, left, right bool) opParser {
	return func(p *parser, _ string, arg bson.Value) (node, error) {
		m, err := namedArgs(p, arg, []string{"input", "chars"}, func() error {
			return errf(mongoerr.TrimNotObject, "%s only supports an object as an argument, found %s", name, typeName(arg))
		}, func(key string) error {
			return errf(mongoerr.TrimUnknownArgument, "%s found an unknown argument: %s", name, key)
		})
		if err != nil {
			return nil, err
		}
		n := &trimNode{name: name, left: left, right: right, input: m["input"], chars: m["chars"]}
		if n.input == nil {
			return nil, errf(mongoerr.TrimMissingInput, "%s requires an 'input' field", name)
		}
		return n, nil
	}
}

func (n *trimNode) eval(e *Env) (bson.Value, error) {
	in, err := n.input.eval(e)
	if err != nil {
		return missing, err
	}
	if nullish(in) {
		return vNull, nil
	}
	if in.Type != bson.TypeString {
		return missing, errf(mongoerr.TrimInputNotString, "%s requires its input to be a string, got %s (of type %s) instead.", n.name, in.String(), typeName(in))
	}
	chars := defaultTrimChars
	if n.chars != nil {
		c, err := n.chars.eval(e)
		if err != nil {
			return missing, err
		}
		if nullish(c) {
			return vNull, nil
		}
		if c.Type != bson.TypeString {
			return missing, errf(mongoerr.TrimCharsNotString, "%s requires 'chars' to be a string, got %s (of type %s) instead.", n.name, c.String(), typeName(c))
		}
		chars = []rune(c.StringValue())
	}
	has := func(r rune) bool {
		for _, c := range chars {
			if c == r {
				return true
			}
		}
		return false
	}
	s := in.StringValue()
	if n.left {
		for len(s) > 0 {
			r, sz := utf8.DecodeRuneInString(s)
			if !has(r) {
				break
			}
			s = s[sz:]
		}
	}
	if n.right {
		for len(s) > 0 {
			r, sz := utf8.DecodeLastRuneInString(s)
			if !has(r) {
				break
			}
			s = s[:len(s)-sz]
		}
	}
	return e.str(s), nil
}

func parseIndexOf(name string, cp bool) opParser {
	return func(p *parser, _ string, arg bson.Value) (node, error) {
		args, err := p.rangeArgs(name, arg, 2, 4)
		if err != nil {
			return nil, err
		}
		return &naryNode{args: args, fn: func(e *Env, vals []bson.Value) (bson.Value, error) {
			return indexOfStr(e, name, cp, vals)
		}}, nil
	}
}

func indexOfStr(e *Env, name string, cp bool, vals []bson.Value) (bson.Value, error) {
	in, sub := vals[0], vals[1]
	if nullish(in) {
		return vNull, nil
	}
	c1, c2 := int32(mongoerr.IndexOfBytesFirstNotString), int32(mongoerr.IndexOfBytesSecondNotString)
	if cp {
		c1, c2 = mongoerr.IndexOfCPFirstNotString, mongoerr.IndexOfCPSecondNotString
	}
	if in.Type != bson.TypeString {
		return missing, errf(c1, "%s requires a string as the first argument, found: %s", name, typeName(in))
	}
	if sub.Type != bson.TypeString {
		return missing, errf(c2, "%s requires a string as the second argument, found: %s", name, typeName(sub))
	}
	s, t := in.StringValue(), sub.StringValue()
	length := len(s)
	if cp {
		length = utf8.RuneCountInString(s)
	}
	start, end := 0, length
	for i, which := range []string{"starting", "ending"} {
		if len(vals) <= 2+i {
			break
		}
		v := vals[2+i]
		if !isIntegral32(v) {
			return missing, errf(mongoerr.IndexOfIndexNotIntegral, "%srequires an integral %s index, found a value of type: %s, with value: %s", name, which, typeName(v), v.String())
		}
		n := int(toLong(v))
		if n < 0 {
			return missing, errf(mongoerr.IndexOfIndexNegative, "%s requires a nonnegative %s index, found: %s", name, which, v.String())
		}
		if i == 0 {
			start = n
		} else {
			end = min(n, length)
		}
	}
	if start > length || start > end {
		return e.int32(-1), nil
	}
	if !cp {
		i := strings.Index(s[start:end], t)
		if i < 0 {
			return e.int32(-1), nil
		}
		return e.int32(int32(start + i)), nil
	}
	// code points: convert indexes to byte offsets
	rs := []rune(s)
	tr := []rune(t)
	for i := start; i+len(tr) <= end; i++ {
		match := true
		for j := range tr {
			if rs[i+j] != tr[j] {
				match = false
				break
			}
		}
		if match {
			return e.int32(int32(i)), nil
		}
	}
	return e.int32(-1), nil
}

type replaceNode struct {
	name              string
	all               bool
	input, find, repl node
}

func parseReplace(name string, all bool) opParser {
	return func(p *parser, _ string, arg bson.Value) (node, error) {
		m, err := namedArgs(p, arg, []string{"input", "find", "replacement"}, func() error {
			return errf(mongoerr.ReplaceNotObject, "%s requires an object as an argument, found: %s", name, typeName(arg))
		}, func(key string) error {
			return errf(mongoerr.ReplaceUnknownArgument, "%s found an unknown argument: %s", name, key)
		})
		if err != nil {
			return nil, err
		}
		n := &replaceNode{name: name, all: all, input: m["input"], find: m["find"], repl: m["replacement"]}
		switch {
		case n.input == nil:
			return nil, errf(mongoerr.ReplaceMissingInput, "%s requires 'input' to be specified", name)
		case n.find == nil:
			return nil, errf(mongoerr.ReplaceMissingFind, "%s requires 'find' to be specified", name)
		case n.repl == nil:
			return nil, errf(mongoerr.ReplaceMissingReplacement, "%s requires 'replacement' to be specified", name)
		}
		return n, nil
	}
}

func (n *replaceNode) eval(e *Env) (bson.Value, error) {
	var vals [3]bson.Value
	for i, x := range []node{n.input, n.find, n.repl} {
		v, err := x.eval(e)
		if err != nil {
			return missing, err
		}
		vals[i] = v
	}
	codes := [3]int32{mongoerr.ReplaceInputNotString, mongoerr.ReplaceFindNotString, mongoerr.ReplaceReplacementNotString}
	names := [3]string{"input", "find", "replacement"}
	for i, v := range vals {
		if !nullish(v) && v.Type != bson.TypeString {
			return missing, errf(codes[i], "%s requires that '%s' be a string, found: %s", n.name, names[i], v.String())
		}
	}
	for _, v := range vals {
		if nullish(v) {
			return vNull, nil
		}
	}
	s, f, r := vals[0].StringValue(), vals[1].StringValue(), vals[2].StringValue()
	return e.replace(s, f, r, n.all)
}

// replace is strings.Replace (all, or the first match) written into the
// arena, its size checked against the memory limit before anything is
// built: replacing each byte of a large string by a long one would
// otherwise build a string of any size.
func (e *Env) replace(s, f, r string, all bool) (bson.Value, error) {
	cnt := 0
	switch {
	case !all:
		if strings.Contains(s, f) {
			cnt = 1
		}
	case f == "":
		cnt = utf8.RuneCountInString(s) + 1 // before each code point and at the end
	default:
		cnt = strings.Count(s, f)
	}
	if cnt == 0 {
		return e.str(s), nil
	}
	size := len(s) + cnt*(len(r)-len(f))
	if !e.fits(size + 5) {
		return missing, errWork()
	}
	b := e.alloc(size + 5)
	binary.LittleEndian.PutUint32(b, uint32(size+1))
	p := 4
	for k := range cnt {
		i := strings.Index(s, f)
		if f == "" && k > 0 {
			_, i = utf8.DecodeRuneInString(s) // after the next code point
		}
		p += copy(b[p:], s[:i])
		p += copy(b[p:], r)
		s = s[i+len(f):]
	}
	p += copy(b[p:], s)
	b[p] = 0
	return bson.Value{Type: bson.TypeString, Data: b}, nil
}

func strcasecmp(e *Env, a, b bson.Value) (bson.Value, error) {
	sa, err := coerceToString(a)
	if err != nil {
		return missing, err
	}
	sb, err := coerceToString(b)
	if err != nil {
		return missing, err
	}
	for i := 0; i < len(sa) && i < len(sb); i++ {
		ca, cb := upperASCII(sa[i]), upperASCII(sb[i])
		if ca != cb {
			if ca < cb {
				return vMinusOne, nil
			}
			return vOne, nil
		}
	}
	switch {
	case len(sa) < len(sb):
		return vMinusOne, nil
	case len(sa) > len(sb):
		return vOne, nil
	}
	return vZero, nil
}

func upperASCII(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - 32
	}
	return c
}
