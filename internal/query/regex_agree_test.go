package query

import (
	"testing"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/pcre"
	"github.com/cairndb/cairn/internal/pcre/pcretest"
)

// TestRegexUsersAgree runs the translator's table through both of its
// users — a $regex filter and $expr's $regexMatch — which must match the
// same inputs and refuse the same patterns, each with mongod's code for
// its operator.
func TestRegexUsersAgree(t *testing.T) {
	// The codes of each user per kind of refusal.
	codes := map[pcre.Kind][2]int32{
		pcre.BadFlag:     {51108, 51108},
		pcre.NullByte:    {mongoerr.BadValue, 51109},
		pcre.Invalid:     {51091, 51111},
		pcre.Unsupported: {mongoerr.NotImplemented, mongoerr.NotImplemented},
	}
	for _, c := range pcretest.Cases {
		var rb bson.Builder
		rb.StartDocument("a")
		rb.AppendString("$regex", c.Pattern)
		rb.AppendString("$options", c.Options)
		rb.End()
		var eb bson.Builder
		eb.StartDocument("$expr")
		eb.StartDocument("$regexMatch")
		eb.AppendString("input", "$a")
		eb.AppendString("regex", c.Pattern)
		eb.AppendString("options", c.Options)
		eb.End()
		eb.End()
		var users [2]*Filter
		for i, spec := range []bson.Doc{rb.Finish(), eb.Finish()} {
			f, err := ParseFilter(spec, &Options{})
			if c.Kind != 0 {
				if want := codes[c.Kind][i]; err == nil || mongoerr.As(err).Code != want {
					t.Errorf("user %d, %q /%s: %v, want code %d", i, c.Pattern, c.Options, err, want)
				}
				continue
			}
			if err != nil {
				t.Errorf("user %d, %q /%s: %v", i, c.Pattern, c.Options, err)
				continue
			}
			users[i] = f
		}
		if c.Kind != 0 || users[0] == nil || users[1] == nil {
			continue
		}
		for k, in := range [2][]string{c.Match, c.NoMatch} {
			want := k == 0
			for _, s := range in {
				var b bson.Builder
				b.AppendString("a", s)
				d := b.Finish()
				for i, f := range users {
					if got := f.Match(d); got != want {
						t.Errorf("user %d, %q /%s on %q: match %v, want %v", i, c.Pattern, c.Options, s, got, want)
					}
				}
			}
		}
	}
}
