package params

import (
	"errors"
	"testing"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

func TestRegistry(t *testing.T) {
	var level int64 = 1
	reg := NewRegistry(
		Fixed("fixed", func(b *bson.Builder, key string) { b.AppendString(key, "v") }),
		Int{Name: "level", Min: 0, Max: 5, Msg: "level must be from 0 to 5", Load: func() int64 { return level }, Store: func(n int64) { level = n }}.Param(),
	)
	generic := func(k string) bool { return k == "$db" }
	body := func(build func(b *bson.Builder)) bson.Doc {
		var b bson.Builder
		b.AppendInt32("setParameter", 1)
		build(&b)
		b.AppendString("$db", "admin")
		return b.Finish()
	}
	tests := []struct {
		name  string
		body  bson.Doc
		code  int32
		was   int64
		level int64
	}{
		{"set", body(func(b *bson.Builder) { b.AppendInt32("level", 3) }), 0, 1, 3},
		{"out of range", body(func(b *bson.Builder) { b.AppendInt32("level", 6) }), mongoerr.BadValue, 0, 3},
		{"not a number", body(func(b *bson.Builder) { b.AppendString("level", "x") }), mongoerr.BadValue, 0, 3},
		{"startup only", body(func(b *bson.Builder) { b.AppendString("fixed", "w") }), mongoerr.BadValue, 0, 3},
		{"unknown", body(func(b *bson.Builder) { b.AppendInt32("nope", 1) }), mongoerr.InvalidOptions, 0, 3},
		{"nothing to set", body(func(*bson.Builder) {}), mongoerr.InvalidOptions, 0, 3},
	}
	for _, tt := range tests {
		var r bson.Builder
		err := reg.Set(&r, tt.body, generic)
		var me *mongoerr.Error
		switch {
		case tt.code == 0 && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.code != 0 && (!errors.As(err, &me) || me.Code != tt.code):
			t.Errorf("%s: got %v, want code %d", tt.name, err, tt.code)
		case tt.code == 0:
			if v, _ := r.Finish().Lookup("was"); v.Int32() != int32(tt.was) {
				t.Errorf("%s: was %v, want %d", tt.name, v, tt.was)
			}
		}
		if level != tt.level {
			t.Errorf("%s: level %d, want %d", tt.name, level, tt.level)
		}
	}
	var r bson.Builder
	var all bson.Builder
	all.AppendString("getParameter", "*")
	star := all.Finish()
	v, _ := star.Lookup("getParameter")
	if err := reg.Get(&r, v, star, generic); err != nil {
		t.Fatal(err)
	}
	got := r.Finish()
	if f, _ := got.Lookup("fixed"); f.StringValue() != "v" {
		t.Errorf("getParameter '*' = %s", got.String())
	}
	if l, _ := got.Lookup("level"); l.Int32() != 3 {
		t.Errorf("getParameter '*' = %s", got.String())
	}
}
