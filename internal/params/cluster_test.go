package params

import (
	"errors"
	"testing"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

func TestClusterParameters(t *testing.T) {
	doc := func(build func(b *bson.Builder)) bson.Doc {
		var b bson.Builder
		build(&b)
		return b.Finish()
	}
	images := func(v func(b *bson.Builder)) bson.Doc {
		return doc(func(b *bson.Builder) {
			b.StartDocument(ChangeStreamOptions)
			b.StartDocument("preAndPostImages")
			v(b)
			b.End()
			b.End()
		})
	}
	tests := []struct {
		name  string
		param bson.Doc
		code  int32
		want  string // the stored expireAfterSeconds
	}{
		{"seconds", images(func(b *bson.Builder) { b.AppendInt32("expireAfterSeconds", 60) }), 0, "60"},
		{"off", images(func(b *bson.Builder) { b.AppendString("expireAfterSeconds", "off") }), 0, `"off"`},
		{"default off", images(func(*bson.Builder) {}), 0, `"off"`},
		{"zero", images(func(b *bson.Builder) { b.AppendInt32("expireAfterSeconds", 0) }), mongoerr.BadValue, ""},
		{"fraction", images(func(b *bson.Builder) { b.AppendDouble("expireAfterSeconds", 1.5) }), mongoerr.BadValue, ""},
		{"unknown field", images(func(b *bson.Builder) { b.AppendInt32("x", 1) }), mongoerr.IDLUnknownField, ""},
		{"unknown parameter", doc(func(b *bson.Builder) { b.StartDocument("nope"); b.End() }), mongoerr.NoSuchKey, ""},
		{"two fields", doc(func(b *bson.Builder) {
			b.StartDocument(ChangeStreamOptions)
			b.End()
			b.StartDocument("x")
			b.End()
		}), mongoerr.IllegalOperation, ""},
		{"empty", doc(func(*bson.Builder) {}), mongoerr.IllegalOperation, ""},
		{"not a document", doc(func(b *bson.Builder) { b.AppendInt32(ChangeStreamOptions, 1) }), mongoerr.TypeMismatch, ""},
	}
	for _, tt := range tests {
		got, err := ParseSetClusterParameter(tt.param)
		var me *mongoerr.Error
		switch {
		case tt.code != 0:
			if !errors.As(err, &me) || me.Code != tt.code {
				t.Errorf("%s: got %v, want code %d", tt.name, err, tt.code)
			}
		case err != nil:
			t.Errorf("%s: %v", tt.name, err)
		default:
			var r bson.Builder
			AppendClusterParameters(&r, got)
			v, _ := r.Finish().Lookup("clusterParameters")
			first, _ := v.Document().Lookup("0")
			d := first.Document()
			if id, _ := d.Lookup("_id"); id.StringValue() != ChangeStreamOptions {
				t.Errorf("%s: answer %s", tt.name, d.String())
			}
			pi, _ := d.Lookup("preAndPostImages")
			exp, ok := pi.Document().Lookup("expireAfterSeconds")
			if !ok || exp.String() != tt.want {
				t.Errorf("%s: expireAfterSeconds %s, want %s (answer %s)", tt.name, exp.String(), tt.want, d.String())
			}
		}
	}
	if err := CheckClusterParameterNames([]string{"*", ChangeStreamOptions}); err != nil {
		t.Error(err)
	}
	var me *mongoerr.Error
	if err := CheckClusterParameterNames([]string{"nope"}); !errors.As(err, &me) || me.Code != mongoerr.NoSuchKey {
		t.Errorf("unknown name: %v", err)
	}
	var r bson.Builder
	AppendClusterParameters(&r, nil) // never set: the default
	v, _ := r.Finish().Lookup("clusterParameters")
	first, _ := v.Document().Lookup("0")
	pi, _ := first.Document().Lookup("preAndPostImages")
	if exp, _ := pi.Document().Lookup("expireAfterSeconds"); exp.StringValue() != "off" {
		t.Errorf("default answer %s, want expireAfterSeconds off", first.String())
	}
}
