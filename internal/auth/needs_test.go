package auth

import (
	"testing"

	"github.com/cairndb/cairn/bson"
)

func TestRequirements(t *testing.T) {
	body := func(build func(b *bson.Builder)) bson.Doc {
		var b bson.Builder
		build(&b)
		return b.Finish()
	}
	upsert := body(func(b *bson.Builder) { b.AppendBool("upsert", true) })
	lookup := func(name string) (string, Action, bool) {
		switch name {
		case "find":
			return "find", Find, true
		case "update":
			return "update", Update, true
		}
		return "", 0, false
	}
	cases := []struct {
		name string
		r    Request
		want []Need
	}{
		{"find", Request{Name: "find", DB: "d", Needs: Find, Body: body(func(b *bson.Builder) { b.AppendString("find", "c") })},
			[]Need{{DB: "d", Coll: "c", Actions: Find}}},
		{"undeclared", Request{Name: "x", DB: "d", Body: body(func(b *bson.Builder) { b.AppendInt32("x", 1) })},
			[]Need{{DB: "d", Actions: AllActions}}},
		{"update with upsert", Request{Name: "update", DB: "d", Needs: Update, Body: body(func(b *bson.Builder) { b.AppendString("update", "c") }),
			Statements: func(bson.Doc, string) []bson.Doc { return []bson.Doc{upsert} }},
			[]Need{{DB: "d", Coll: "c", Actions: Update | Insert}}},
		{"findAndModify remove", Request{Name: "findAndModify", DB: "d", Needs: Find | Update, Body: body(func(b *bson.Builder) {
			b.AppendString("findAndModify", "c")
			b.AppendBool("remove", true)
		})}, []Need{{DB: "d", Coll: "c", Actions: Find | Remove}}},
		{"explain find", Request{Name: "explain", DB: "d", Needs: Authenticated, Lookup: lookup, Body: body(func(b *bson.Builder) {
			b.StartDocument("explain")
			b.AppendString("find", "c")
			b.End()
		})}, []Need{{DB: "d", Coll: "c", Actions: Find}}},
		{"explain of nothing", Request{Name: "explain", DB: "d", Needs: Authenticated, Lookup: lookup, Body: body(func(b *bson.Builder) {
			b.StartDocument("explain")
			b.AppendString("nope", "c")
			b.End()
		})}, nil},
		{"dataSize", Request{Name: "dataSize", DB: "admin", Needs: Find, Body: body(func(b *bson.Builder) { b.AppendString("dataSize", "d.c") }),
			DataSizeNS: func(bson.Doc) (string, string, bool) { return "d", "c", true }},
			[]Need{{DB: "d", Coll: "c", Actions: Find}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Requirements(tc.r)
			if len(got) != len(tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			for i := range got {
				if got[i].DB != tc.want[i].DB || got[i].Coll != tc.want[i].Coll || got[i].Actions != tc.want[i].Actions {
					t.Fatalf("got %+v, want %+v", got, tc.want)
				}
			}
		})
	}
}
