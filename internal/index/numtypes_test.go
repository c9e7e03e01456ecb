package index

import (
	"math"
	"testing"

	"github.com/cairndb/cairn/bson"
)

func TestNumTypes(t *testing.T) {
	var sb bson.Builder
	sb.AppendInt32("v", 2)
	sb.StartDocument("key")
	sb.AppendInt32("a", 1)
	sb.AppendInt32("b.c", 1)
	sb.End()
	sb.AppendString("name", "a_1_b.c_1")
	spec, err := Parse(sb.Finish())
	if err != nil {
		t.Fatal(err)
	}
	doc := func(build func(b *bson.Builder)) bson.Doc {
		var b bson.Builder
		build(&b)
		return b.Finish()
	}
	sets := spec.NewNumTypes()
	if len(sets) != 2 {
		t.Fatalf("NewNumTypes = %v", sets)
	}
	for _, c := range []struct {
		name string
		doc  bson.Doc
		grew bool
		want [2]byte
	}{
		{"int32 and a string", doc(func(b *bson.Builder) { b.AppendInt32("a", 1); b.StartDocument("b"); b.AppendString("c", "x"); b.End() }), true, [2]byte{NumInt32, 0}},
		{"same again", doc(func(b *bson.Builder) { b.AppendInt32("a", 5) }), false, [2]byte{NumInt32, 0}},
		{"nested double", doc(func(b *bson.Builder) { b.StartDocument("b"); b.AppendDouble("c", 1.5); b.End() }), true, [2]byte{NumInt32, NumDouble}},
		{"-0.0", doc(func(b *bson.Builder) { b.AppendDouble("a", math.Copysign(0, -1)) }), true, [2]byte{NumInt32 | NumNegZero, NumDouble}},
		{"array values are not looked at", doc(func(b *bson.Builder) { b.StartArray("a"); b.AppendInt64("0", 1); b.End() }), false, [2]byte{NumInt32 | NumNegZero, NumDouble}},
	} {
		if grew := spec.AddNumTypes(c.doc, sets); grew != c.grew || [2]byte(sets) != c.want {
			t.Errorf("%s: grew %v, sets %v; want %v, %v", c.name, grew, sets, c.grew, c.want)
		}
	}
	for _, c := range []struct {
		set byte
		typ bson.Type
		ok  bool
		sat bool
	}{
		{0, 0, true, false},
		{NumInt32, bson.TypeInt32, true, false},
		{NumInt64, bson.TypeInt64, true, false},
		{NumDouble, bson.TypeDouble, true, false},
		{NumDecimal, 0, false, true},
		{NumInt32 | NumDouble, 0, false, true},
		{NumDouble | NumNegZero, 0, false, true},
	} {
		typ, ok := ExactNumType(c.set)
		if typ != c.typ || ok != c.ok || NumTypesSaturated([]byte{c.set}) != c.sat {
			t.Errorf("set %b: ExactNumType %v %v, saturated %v", c.set, typ, ok, NumTypesSaturated([]byte{c.set}))
		}
	}
}

func TestAppendNumAs(t *testing.T) {
	val := func(build func(b *bson.Builder)) bson.Value {
		var b bson.Builder
		build(&b)
		v, _ := b.Finish().Lookup("x")
		return v
	}
	for _, c := range []struct {
		name string
		in   bson.Value
		as   bson.Type
		fits bool
	}{
		{"int32 as int64", val(func(b *bson.Builder) { b.AppendInt32("x", 7) }), bson.TypeInt64, true},
		{"int32 as double", val(func(b *bson.Builder) { b.AppendInt32("x", 7) }), bson.TypeDouble, true},
		{"int64 as double", val(func(b *bson.Builder) { b.AppendInt64("x", 1<<40) }), bson.TypeDouble, true},
		{"double as int64", val(func(b *bson.Builder) { b.AppendDouble("x", 1<<60) }), bson.TypeInt64, true},
		{"fraction as int32", val(func(b *bson.Builder) { b.AppendDouble("x", 1.5) }), bson.TypeInt32, false},
		{"int64 as int32", val(func(b *bson.Builder) { b.AppendInt64("x", 1<<40) }), bson.TypeInt32, false},
		{"string", val(func(b *bson.Builder) { b.AppendString("x", "s") }), bson.TypeInt32, false},
	} {
		var b bson.Builder
		ok := AppendNumAs(&b, "x", c.in, c.as)
		if ok != c.fits {
			t.Errorf("%s: fits %v, want %v", c.name, ok, c.fits)
			continue
		}
		if !ok {
			continue
		}
		v, _ := b.Finish().Lookup("x")
		in, _ := c.in.AsFloat64()
		if f, _ := v.AsFloat64(); v.Type != c.as || f != in {
			t.Errorf("%s: got %v %v, want %v %v", c.name, v.Type, f, c.as, in)
		}
	}
}
