package exec

import (
	"testing"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/query"
)

// TestDistinct: distinct values of a path, arrays counted element by
// element, compared under the collation and sorted.
func TestDistinct(t *testing.T) {
	strength2, err := query.ParseCollation(extDoc(t, `{"locale":"en","strength":2}`))
	if err != nil {
		t.Fatal(err)
	}
	docs := []string{`{"a":{"b":"x"}}`, `{"a":{"b":["X","y",1]}}`, `{"a":[{"b":2},{"b":"y"}]}`, `{"c":1}`}
	for _, tc := range []struct {
		name string
		cmp  bson.StringComparer
		want string
	}{
		{"binary", nil, `{"v":[1,2,"X","x","y"]}`},
		{"case-insensitive", strength2, `{"v":[1,2,"x","y"]}`},
	} {
		d := NewDistinct("a.b", tc.cmp)
		for _, s := range docs {
			d.Feed(extDoc(t, s))
		}
		var b bson.Builder
		b.StartArray("v")
		for i, v := range d.Values() {
			b.AppendValue(bson.Index(i), v)
		}
		b.End()
		if j, _ := b.Finish().MarshalExtJSON(false); string(j) != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, j, tc.want)
		}
	}
}
