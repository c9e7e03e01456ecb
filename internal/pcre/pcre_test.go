package pcre_test

import (
	"errors"
	"testing"

	"github.com/cairndb/cairn/internal/pcre"
	"github.com/cairndb/cairn/internal/pcre/pcretest"
)

// TestCompile runs the table: what each pattern matches, or how it is
// refused.
func TestCompile(t *testing.T) {
	for _, c := range pcretest.Cases {
		re, err := pcre.Compile(c.Pattern, c.Options)
		if c.Kind != 0 {
			var e *pcre.Error
			if !errors.As(err, &e) || e.Kind != c.Kind {
				t.Errorf("%q /%s: %v, want kind %d", c.Pattern, c.Options, err, c.Kind)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q /%s: %v", c.Pattern, c.Options, err)
			continue
		}
		for _, s := range c.Match {
			if !re.MatchString(s) {
				t.Errorf("%q /%s (RE2 %q) does not match %q", c.Pattern, c.Options, re, s)
			}
		}
		for _, s := range c.NoMatch {
			if re.MatchString(s) {
				t.Errorf("%q /%s (RE2 %q) matches %q", c.Pattern, c.Options, re, s)
			}
		}
	}
}
