package expr

import (
	"testing"

	"github.com/cairndb/cairn/bson"
)

// TestRegexCompiledOnce: a constant regex (with or without options) is
// compiled when the expression is parsed, not for every document.
func TestRegexCompiledOnce(t *testing.T) {
	for _, src := range []string{
		`{"$regexFind": {"input": "$a", "regex": "^x(y)"}}`,
		`{"$regexMatch": {"input": "$a", "regex": "^x", "options": "i"}}`,
		`{"$regexFindAll": {"input": "$a", "regex": "x", "options": null}}`,
	} {
		d, err := bson.UnmarshalExtJSON([]byte(`{"e": `+src+`}`), false)
		if err != nil {
			t.Fatal(err)
		}
		v, _ := d.Lookup("e")
		x, err := Parse(v, &Options{})
		if err != nil {
			t.Fatal(err)
		}
		n, ok := x.(*compiled).n.(*regexNode)
		if !ok {
			t.Fatalf("%s: parsed to %T", src, x.(*compiled).n)
		}
		if n.fixed == nil {
			t.Errorf("%s: regex not compiled at parse time", src)
		}
	}
}
