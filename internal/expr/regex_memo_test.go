package expr

import (
	"fmt"
	"testing"

	"github.com/cairndb/cairn/bson"
)

// TestRegexMemo: a constant pattern's matches are remembered per Env and
// answer as a fresh match does, across more inputs than the memo holds,
// repeated inputs and inputs too long to remember.
func TestRegexMemo(t *testing.T) {
	defer func(n int) { regexMemoSize = n }(regexMemoSize)
	regexMemoSize = 100
	for _, op := range []string{"$regexFind", "$regexMatch"} {
		spec := fmt.Sprintf(`{"%s": {"input": "$s", "regex": "^https?://(?:www\\.)?([^/]+)/(.*)$"}}`, op)
		d, err := bson.UnmarshalExtJSON([]byte(`{"e": `+spec+`}`), false)
		if err != nil {
			t.Fatal(err)
		}
		ev, _ := d.Lookup("e")
		x, err := Parse(ev, nil)
		if err != nil {
			t.Fatal(err)
		}
		env, fresh := NewEnv(nil), NewEnv(nil)
		long := "http://" + string(make([]byte, 600))
		for i := 0; i < 3*regexMemoSize; i++ {
			var s string
			switch i % 4 {
			case 0:
				s = fmt.Sprintf("https://www.site%d.com/page/%d", i%50, i)
			case 1:
				s = fmt.Sprintf("http://host%d/", i%(2*regexMemoSize))
			case 2:
				s = fmt.Sprintf("ftp://no%d", i%7)
			case 3:
				s = long
			}
			var b bson.Builder
			b.AppendString("s", s)
			doc := b.Finish()
			got, err := Eval(x, doc, env)
			if err != nil {
				t.Fatal(err)
			}
			gs := got.String()
			want, err := Eval(x, doc, fresh)
			fresh.regexMemos = nil // no memory: every match is computed
			if err != nil {
				t.Fatal(err)
			}
			if gs != want.String() {
				t.Fatalf("%s on %q: memo %s, fresh %s", op, s[:min(len(s), 40)], gs, want.String())
			}
		}
		if len(env.regexMemos) != 1 || len(env.regexMemos[0].m) == 0 || len(env.regexMemos[0].m) > regexMemoSize {
			t.Fatalf("%s: memo %d patterns", op, len(env.regexMemos))
		}
	}
}
