package bson

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// FuzzValidate feeds arbitrary bytes to the validators; whatever they accept
// must be safe to read, format, compare, key-encode and export.
func FuzzValidate(f *testing.F) {
	for _, g := range orderedGroups() {
		for _, v := range g {
			if v.Type != 0 {
				f.Add([]byte(docOf("v", v)))
			}
		}
	}
	f.Add([]byte{5, 0, 0, 0, 0})
	f.Add([]byte{0x0d, 0, 0, 0, 0x10, 'x', 0, 1, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		strictErr := ValidateStrict(data, MaxDepth)
		if err := Validate(data, MaxDepth); err != nil {
			if strictErr == nil {
				t.Fatalf("ValidateStrict accepted what Validate rejected: %v", err)
			}
			return
		}
		d := Doc(data)
		walk(d, 0)
		_ = d.String()
		v := vDoc(d)
		if Compare(v, v) != 0 || CompareDocs(d, d) != 0 {
			t.Fatalf("document unequal to itself: %s", d)
		}
		for _, desc := range []bool{false, true} {
			k := AppendKey(nil, v, desc)
			got, rest, err := DecodeKey(k)
			if err != nil || len(rest) != 0 {
				t.Fatalf("DecodeKey(key(%s)): %v (rest %d)", d, err, len(rest))
			}
			if Compare(got, v) != 0 {
				t.Fatalf("DecodeKey(key(%s)) = %s", d, got)
			}
		}
		j, err := d.MarshalExtJSON(true)
		if err != nil {
			t.Fatalf("MarshalExtJSON: %v", err)
		}
		if _, err := d.MarshalExtJSON(false); err != nil {
			t.Fatalf("MarshalExtJSON relaxed: %v", err)
		}
		if strictErr == nil {
			// Parsing our own output may legitimately fail (a document can hold
			// fields that look like malformed wrappers), but must not panic,
			// and whatever parses must validate.
			if back, err := UnmarshalExtJSON(j, true); err == nil {
				if err := ValidateStrict(back, MaxDepth+1); err != nil {
					t.Fatalf("re-parsed %s does not validate: %v", j, err)
				}
			}
		}
	})
}

// walk reads every element and accessor of a validated document.
func walk(d Doc, depth int) {
	it := d.Iter()
	for it.Next() {
		e := it.Element()
		v := e.Value
		_ = v.String()
		_, _ = v.AsFloat64()
		_, _ = v.AsInt64()
		_ = v.Truthy()
		switch v.Type {
		case TypeDocument, TypeArray:
			walk(v.Document(), depth+1)
		case TypeCodeWithScope:
			_, s := v.CodeWithScope()
			walk(s, depth+1)
		case TypeRegex:
			_, _ = v.Regex()
		case TypeBinary:
			_, _ = v.Binary()
		case TypeDBPointer:
			_, _ = v.DBPointer()
		case TypeString, TypeSymbol, TypeJavaScript:
			_ = v.StringValue()
		case TypeTimestamp:
			_, _ = v.Timestamp()
		}
	}
}

// FuzzKeyOrder checks that key order agrees with Compare for values built
// from the fuzzer's seeds and for any valid documents it supplies.
func FuzzKeyOrder(f *testing.F) {
	f.Add(uint64(1), uint64(2), []byte(nil), []byte(nil))
	f.Add(uint64(3), uint64(3), []byte(docOf("a", vInt32(1))), []byte(docOf("a", vDouble(1))))
	f.Add(uint64(0), uint64(9), []byte(docOf("a", vDecimal("0.1"))), []byte(docOf("a", vDouble(0.1))))
	f.Fuzz(func(t *testing.T, s1, s2 uint64, rawA, rawB []byte) {
		r := rand.New(rand.NewPCG(s1, s2))
		vals := []Value{randValue(r, 3), randValue(r, 3), randNumber(r), randNumber(r)}
		if Validate(rawA, MaxDepth) == nil {
			vals = append(vals, vDoc(rawA))
			for _, e := range Doc(rawA).Elements() {
				vals = append(vals, e.Value)
			}
		}
		if Validate(rawB, MaxDepth) == nil {
			vals = append(vals, vDoc(rawB))
			for _, e := range Doc(rawB).Elements() {
				vals = append(vals, e.Value)
			}
		}
		if len(rawA) >= 8 {
			vals = append(vals, vDouble(math.Float64frombits(binary.LittleEndian.Uint64(rawA))),
				vInt64(int64(binary.LittleEndian.Uint64(rawA))))
		}
		if len(rawB) >= 16 {
			vals = append(vals, decimalValue(binary.LittleEndian.Uint64(rawB[8:]), binary.LittleEndian.Uint64(rawB)))
		}
		for _, a := range vals {
			for _, b := range vals {
				checkKeyPair(t, a, b)
			}
		}
		// A compound key: the first component decides unless equal.
		if len(vals) >= 4 {
			a1, a2, b1, b2 := vals[0], vals[2], vals[1], vals[3]
			want := Compare(a1, b1)
			if want == 0 {
				want = -Compare(a2, b2)
			}
			ka := AppendKey(AppendKey(nil, a1, false), a2, true)
			kb := AppendKey(AppendKey(nil, b1, false), b2, true)
			if got := bytes.Compare(ka, kb); got != want {
				t.Fatalf("compound (%s,%s) vs (%s,%s): %d, want %d", a1, a2, b1, b2, got, want)
			}
		}
	})
}

func checkKeyPair(t *testing.T, a, b Value) {
	t.Helper()
	want := Compare(a, b)
	if back := Compare(b, a); back != -want {
		t.Fatalf("Compare not antisymmetric on %s, %s: %d, %d", a, b, want, back)
	}
	ka, kb := AppendKey(nil, a, false), AppendKey(nil, b, false)
	if got := bytes.Compare(ka, kb); got != want {
		t.Fatalf("keys of %s, %s: %d, Compare %d\n%x\n%x", a, b, got, want, ka, kb)
	}
	da, db := AppendKey(nil, a, true), AppendKey(nil, b, true)
	if got := bytes.Compare(da, db); got != -want {
		t.Fatalf("desc keys of %s, %s: %d, want %d", a, b, got, -want)
	}
}

// FuzzParseDecimal128 checks that parsing never panics and that whatever
// parses formats to a string that parses back to the same value.
func FuzzParseDecimal128(f *testing.F) {
	for _, s := range specialDecimals {
		f.Add(s)
	}
	for _, s := range []string{"1.23E+5", "-0", "1E-6177", ".5", "1e", "+Inf", "0E+9999", "1" + string(make([]byte, 40))} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		hi, lo, err := ParseDecimal128(s)
		if err != nil {
			return
		}
		str := FormatDecimal128(hi, lo)
		hi2, lo2, err := ParseDecimal128(str)
		if err != nil {
			t.Fatalf("ParseDecimal128(%q) -> %q, which does not parse: %v", s, str, err)
		}
		_, _, _, _, class := decimalFields(hi, lo)
		if class == numNaN {
			if _, _, _, _, c2 := decimalFields(hi2, lo2); c2 != numNaN {
				t.Fatalf("NaN %q reparsed as %q", s, FormatDecimal128(hi2, lo2))
			}
			return
		}
		if hi != hi2 || lo != lo2 {
			t.Fatalf("%q -> %q -> %x:%x, want %x:%x", s, str, hi2, lo2, hi, lo)
		}
		if CompareDecimal128(hi, lo, hi2, lo2) != 0 {
			t.Fatalf("%q unequal to itself", s)
		}
	})
}

// FuzzDecodeKey feeds arbitrary bytes to DecodeKey: it must not panic, and
// whatever it decodes must re-encode to the bytes it consumed (or, for
// numbers, to an equal value) and be safe to use.
func FuzzDecodeKey(f *testing.F) {
	for _, g := range orderedGroups() {
		for _, v := range g {
			f.Add(AppendKey(nil, v, false))
			f.Add(AppendKey(nil, v, true))
		}
	}
	f.Fuzz(func(t *testing.T, k []byte) {
		v, rest, err := DecodeKey(k)
		if err != nil {
			return
		}
		_ = v.String()
		desc := len(k) > 0 && k[0] >= 0x80
		re := AppendKey(nil, v, desc)
		consumed := k[:len(k)-len(rest)]
		if back, _, err := DecodeKey(re); err != nil || Compare(back, v) != 0 {
			t.Fatalf("re-encoded key of %s does not decode: %v", v, err)
		}
		if !bytes.Equal(re, consumed) && !containsNumberOrSymbol(v) {
			t.Fatalf("key %x decodes to %s, which encodes as %x", consumed, v, re)
		}
	})
}

// FuzzUnmarshalExtJSON checks that the Extended JSON parser never panics and
// that everything it accepts is valid BSON that marshals back.
func FuzzUnmarshalExtJSON(f *testing.F) {
	f.Add([]byte(`{"a":{"$numberInt":"1"},"b":[1,2.5,"x"],"c":{"$date":"2020-01-01T00:00:00Z"}}`))
	f.Add([]byte(`{"r":{"$regularExpression":{"pattern":"a","options":"i"}},"t":{"$timestamp":{"t":1,"i":2}}}`))
	f.Add([]byte(`{"b":{"$binary":{"base64":"AQI=","subType":"02"}},"u":{"$uuid":"73ffd264-44b3-4c69-90e8-e7d1dfc035d4"}}`))
	f.Add([]byte(`{"c":{"$code":"f","$scope":{"x":{"$numberLong":"5"}}},"p":{"$dbPointer":{"$ref":"a","$id":{"$oid":"56e1fc72e0c917e9c4714161"}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, canonical := range []bool{false, true} {
			d, err := UnmarshalExtJSON(data, canonical)
			if err != nil {
				continue
			}
			if err := ValidateStrict(d, MaxDepth+3); err != nil {
				t.Fatalf("UnmarshalExtJSON(%s) produced invalid BSON: %v", data, err)
			}
			if _, err := d.MarshalExtJSON(canonical); err != nil {
				t.Fatalf("MarshalExtJSON after UnmarshalExtJSON(%s): %v", data, err)
			}
		}
	})
}
