package bson

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
)

func TestKeyOrderRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	vals := make([]Value, 600)
	for i := range vals {
		vals[i] = randValue(r, 3)
	}
	asc := make([][]byte, len(vals))
	desc := make([][]byte, len(vals))
	for i, v := range vals {
		asc[i] = AppendKey(nil, v, false)
		desc[i] = AppendKey(nil, v, true)
	}
	for i, a := range vals {
		for j, b := range vals {
			want := Compare(a, b)
			if got := bytes.Compare(asc[i], asc[j]); got != want {
				t.Fatalf("asc keys of %s and %s: %d, Compare %d\n%x\n%x", a, b, got, want, asc[i], asc[j])
			}
			if got := bytes.Compare(desc[i], desc[j]); got != -want {
				t.Fatalf("desc keys of %s and %s: %d, want %d", a, b, got, -want)
			}
		}
	}
}

func TestKeyOrderCompound(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	pool := make([]Value, 60)
	for i := range pool {
		pool[i] = randValue(r, 2)
	}
	for n := 0; n < 20000; n++ {
		k := 1 + r.IntN(3)
		dirs := make([]bool, k)
		for i := range dirs {
			dirs[i] = r.IntN(2) == 0
		}
		a := make([]Value, k)
		b := make([]Value, k)
		for i := range a {
			a[i] = pool[r.IntN(len(pool))]
			b[i] = a[i]
			if r.IntN(3) == 0 {
				b[i] = pool[r.IntN(len(pool))]
			}
		}
		want := 0
		var ka, kb []byte
		for i := range a {
			ka = AppendKey(ka, a[i], dirs[i])
			kb = AppendKey(kb, b[i], dirs[i])
			if want == 0 {
				want = Compare(a[i], b[i])
				if dirs[i] {
					want = -want
				}
			}
		}
		if got := bytes.Compare(ka, kb); got != want {
			t.Fatalf("compound %v dirs %v vs %v: %d, want %d", a, dirs, b, got, want)
		}
		// The concatenation decodes component by component.
		rest := ka
		for i := range a {
			v, r2, err := DecodeKey(rest)
			if err != nil {
				t.Fatalf("decode component %d of %x: %v", i, ka, err)
			}
			if Compare(v, a[i]) != 0 {
				t.Fatalf("component %d decoded as %s, want %s", i, v, a[i])
			}
			rest = r2
		}
		if len(rest) != 0 {
			t.Fatalf("%d bytes left after decoding", len(rest))
		}
	}
}

func TestDecodeKeyRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var vals []Value
	for _, g := range orderedGroups() {
		vals = append(vals, g...)
	}
	for i := 0; i < 2000; i++ {
		vals = append(vals, randValue(r, 3))
	}
	for _, v := range vals {
		for _, desc := range []bool{false, true} {
			k := AppendKey(nil, v, desc)
			got, rest, err := DecodeKey(k)
			if err != nil {
				t.Fatalf("DecodeKey(%s desc=%v): %v", v, desc, err)
			}
			if len(rest) != 0 || Compare(got, v) != 0 {
				t.Fatalf("DecodeKey(%s desc=%v) = %s (rest %x)", v, desc, got, rest)
			}
			if !v.IsNumber() && v.Type != TypeSymbol && !bytes.Equal(got.Data, v.Data) && !containsNumberOrSymbol(v) {
				t.Fatalf("DecodeKey(%s) data %x, want %x", v, got.Data, v.Data)
			}
			if !bytes.Equal(AppendKey(nil, got, desc), k) {
				t.Fatalf("re-encoding %s differs", got)
			}
		}
	}
}

func containsNumberOrSymbol(v Value) bool {
	switch v.Type {
	case TypeInt32, TypeInt64, TypeDouble, TypeDecimal128, TypeSymbol:
		return true
	case TypeDocument, TypeArray:
		for _, e := range v.Document().Elements() {
			if containsNumberOrSymbol(e.Value) {
				return true
			}
		}
	case TypeCodeWithScope:
		_, s := v.CodeWithScope()
		return containsNumberOrSymbol(vDoc(s))
	}
	return false
}

func TestDecodeKeyNumberTypes(t *testing.T) {
	cases := []struct {
		in   Value
		want Type
	}{
		{vDouble(1), TypeInt32},
		{vDecimal("-2147483648"), TypeInt32},
		{vDouble(-2147483649), TypeInt64},
		{vDecimal("9223372036854775807"), TypeInt64},
		{vDouble(1 << 63), TypeDouble},
		{vDouble(0.5), TypeDouble},
		{vDecimal("0.1"), TypeDecimal128},
		{vDecimal("1E+6144"), TypeDecimal128},
		{vDouble(math.Copysign(0, -1)), TypeInt32},
		{vDecimal("NaN"), TypeDouble},
		{vDecimal("-Infinity"), TypeDouble},
	}
	for _, tc := range cases {
		got, _, err := DecodeKey(AppendKey(nil, tc.in, false))
		if err != nil || got.Type != tc.want || Compare(got, tc.in) != 0 {
			t.Errorf("DecodeKey(key(%s)) = %s %s, %v; want type %s", tc.in, got.Type, got, err, tc.want)
		}
	}
}

func TestDecodeKeyErrors(t *testing.T) {
	good := AppendKey(nil, vDoc(docOf("a", vString("x"), "b", vDouble(0.1))), false)
	for i := 0; i < len(good); i++ {
		if _, _, err := DecodeKey(good[:i]); err == nil {
			t.Errorf("truncated key %x decoded", good[:i])
		}
	}
	for _, k := range [][]byte{{0x7D}, {keyNumber, 9}, {keyBoolean, 2}} {
		if _, _, err := DecodeKey(k); err == nil {
			t.Errorf("bad key %x decoded", k)
		}
	}
}

func TestNumberKeysIdentical(t *testing.T) {
	groups := [][]Value{
		{vInt32(1), vInt64(1), vDouble(1), vDecimal("1.0"), vDecimal("1.000000000000000000000000000000000")},
		{vInt64(1 << 62), vDouble(1 << 62), vDecimal("4611686018427387904")},
		{vDouble(-0.75), vDecimal("-0.75"), vDecimal("-75E-2")},
	}
	for _, g := range groups {
		k0 := AppendKey(nil, g[0], false)
		for _, v := range g[1:] {
			if k := AppendKey(nil, v, false); !bytes.Equal(k, k0) {
				t.Errorf("key(%s %s) = %x, key(%s %s) = %x", g[0].Type, g[0], k0, v.Type, v, k)
			}
		}
	}
}
