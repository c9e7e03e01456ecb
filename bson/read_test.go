package bson

import (
	"testing"

	dbson "go.mongodb.org/mongo-driver/v2/bson"
)

func TestBuildAndRead(t *testing.T) {
	var b Builder
	b.AppendInt32("a", 1)
	b.AppendString("s", "héllo")
	b.StartDocument("d")
	b.AppendDouble("x", 2.5)
	b.StartArray("arr")
	b.AppendInt64(Index(0), 7)
	b.AppendNull(Index(1))
	b.End()
	b.End()
	b.AppendBool("t", true)
	doc := b.Finish()
	if err := Validate(doc, MaxDepth); err != nil {
		t.Fatal(err)
	}
	var m dbson.M
	if err := dbson.Unmarshal(doc, &m); err != nil {
		t.Fatalf("driver cannot read our document: %v", err)
	}
	if m["s"] != "héllo" || m["a"] != int32(1) || m["t"] != true {
		t.Fatalf("driver read %v", m)
	}
	v, ok := doc.LookupPath("d", "arr", "0")
	if !ok || v.Type != TypeInt64 || v.Int64() != 7 {
		t.Fatalf("LookupPath d.arr.0 = %v %v", v, ok)
	}
	if s, _ := doc.Lookup("s"); s.StringValue() != "héllo" {
		t.Fatalf("string = %q", s.StringValue())
	}
	if _, ok := doc.Lookup("missing"); ok {
		t.Fatal("found a missing field")
	}
	if n := doc.Len(); n != 4 {
		t.Fatalf("Len = %d", n)
	}
}

func TestValidateRejects(t *testing.T) {
	good, _ := dbson.Marshal(dbson.D{{Key: "a", Value: dbson.D{{Key: "b", Value: "c"}}}})
	cases := map[string][]byte{
		"short":          {1, 0, 0},
		"length too big": append([]byte{100, 0, 0, 0}, good[4:]...),
		"no terminator":  append(append([]byte{}, good[:len(good)-1]...), 1),
		"trailing bytes": append(append([]byte{}, good...), 0),
		"unknown type":   {8, 0, 0, 0, 0x42, 'a', 0, 0},
	}
	for name, d := range cases {
		if err := Validate(d, MaxDepth); err == nil {
			t.Errorf("%s: Validate accepted %x", name, d)
		}
	}
	if err := Validate(good, MaxDepth); err != nil {
		t.Fatalf("good doc rejected: %v", err)
	}
	if err := Validate(good, 0); err == nil {
		t.Fatal("depth limit 0 accepted a nested document")
	}
}

func TestDeepNesting(t *testing.T) {
	var b Builder
	for i := 0; i < 150; i++ {
		b.StartDocument("a")
	}
	doc := b.Finish()
	err := Validate(doc, MaxDepth)
	ve, ok := err.(*ValidationError)
	if !ok || !ve.TooDeep {
		t.Fatalf("150 levels: err = %v", err)
	}
}
