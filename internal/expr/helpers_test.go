package expr

import (
	"errors"
	"fmt"
	"testing"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
	dbson "go.mongodb.org/mongo-driver/v2/bson"
)

// doc parses relaxed extended JSON into a raw document.
func doc(t testing.TB, js string) bson.Doc {
	t.Helper()
	var raw dbson.Raw
	if err := dbson.UnmarshalExtJSON([]byte(js), false, &raw); err != nil {
		t.Fatalf("bad test JSON %s: %v", js, err)
	}
	return bson.Doc(raw)
}

// value parses one relaxed extended JSON value.
func value(t testing.TB, js string) bson.Value {
	t.Helper()
	v, _ := doc(t, `{"v": `+js+`}`).Lookup("v")
	return v
}

// show prints a value as "<type> <relaxed extended JSON>" (via the
// official driver), or "missing".
func show(t testing.TB, v bson.Value) string {
	t.Helper()
	if v.Type == 0 {
		return "missing"
	}
	var b bson.Builder
	b.AppendValue("v", v)
	out, err := dbson.MarshalExtJSON(dbson.Raw(b.Finish()), false, false)
	if err != nil {
		t.Fatalf("bad BSON: %v", err)
	}
	s := string(out)
	return fmt.Sprintf("%s %s", v.Type, s[len(`{"v":`):len(s)-1])
}

func errCode(err error) int32 {
	var e *mongoerr.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

type evalCase struct {
	expr string // JSON expression
	doc  string // JSON document ("" = {})
	want string // "<type> <json>", "missing", or "" when code is set
	code int32  // expected error code
	msg  string // expected error message (optional)
}

// evalJSON parses and evaluates one expression.
func evalJSON(t testing.TB, exprJS, docJS string, opts *Options) (string, error) {
	t.Helper()
	if docJS == "" {
		docJS = "{}"
	}
	x, err := Parse(value(t, exprJS), opts)
	if err != nil {
		return "", err
	}
	env := NewEnv(opts)
	v, err := Eval(x, doc(t, docJS), env)
	if err != nil {
		return "", err
	}
	return show(t, v), nil
}

func runCases(t *testing.T, cases []evalCase) {
	t.Helper()
	for _, c := range cases {
		got, err := evalJSON(t, c.expr, c.doc, &Options{})
		if c.code != 0 {
			if errCode(err) != c.code {
				t.Errorf("%s on %s: want error %d, got %q err=%v", c.expr, c.doc, c.code, got, err)
			} else if c.msg != "" && err.Error() != c.msg {
				t.Errorf("%s on %s: want message %q, got %q", c.expr, c.doc, c.msg, err.Error())
			}
			continue
		}
		if err != nil {
			t.Errorf("%s on %s: unexpected error %v", c.expr, c.doc, err)
			continue
		}
		if got != c.want {
			t.Errorf("%s on %s:\n got %s\nwant %s", c.expr, c.doc, got, c.want)
		}
	}
}
