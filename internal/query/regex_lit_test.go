package query

import (
	"testing"

	"github.com/cairndb/cairn/bson"
)

// TestRegexLiteral: patterns that are one literal string match by
// substring search, and answer as the regexp engine does; patterns with
// options or metacharacters keep the engine.
func TestRegexLiteral(t *testing.T) {
	for _, tc := range []struct {
		pattern, options string
		lit              bool
	}{
		{"google", "", true},
		{`\.google\.`, "", true},
		{"", "", true},
		{"google", "i", false},
		{"goo.le", "", false},
		{"^google", "", false},
		{"google$", "", false},
		{"a|b", "", false},
		{"google", "s", true},
		{"google", "m", true},
		{"go ogle", "x", true},
	} {
		m, err := newRegexMatcher(tc.pattern, tc.options)
		if err != nil {
			t.Fatal(err)
		}
		if m.isLit != tc.lit {
			t.Errorf("/%s/%s: literal %v, want %v", tc.pattern, tc.options, m.isLit, tc.lit)
		}
		for _, s := range []string{"", "google", "http://www.google.com/", "GOOGLE", "goggle", "x.google.y", "go\nogle", "googl", "line\ngoogle"} {
			want := m.re.MatchString(s)
			if got := m.matchValue(strValue(s)); got != want {
				t.Errorf("/%s/%s on %q: %v, regexp says %v", tc.pattern, tc.options, s, got, want)
			}
		}
	}
}

func strValue(s string) bson.Value {
	var b bson.Builder
	b.AppendString("s", s)
	v, _ := b.Finish().Lookup("s")
	return v
}
