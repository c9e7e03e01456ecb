package js

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

func doc(t *testing.T, ext string) bson.Doc {
	t.Helper()
	d, err := bson.UnmarshalExtJSON([]byte(ext), false)
	if err != nil {
		t.Fatalf("%s: %v", ext, err)
	}
	return d
}

func ext(t *testing.T, d bson.Doc) string {
	t.Helper()
	b, err := d.MarshalExtJSON(true)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func session(t *testing.T) *Session {
	t.Helper()
	s, err := NewEngine(true).NewSession(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func call(t *testing.T, s *Session, src string, args ...bson.Value) (bson.Value, error) {
	t.Helper()
	f, err := s.Compile(src)
	if err != nil {
		return bson.Value{}, err
	}
	return f.Call(nil, args...)
}

func wrap(v bson.Value) bson.Doc {
	b := bson.NewBuilder(nil)
	b.AppendValue("v", v)
	return b.Finish()
}

func code(err error) int32 {
	var e *mongoerr.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return -1
}

// TestRoundTrip passes each BSON type through the identity function: what
// comes back is what mongod's conversion gives (numbers other than int64
// and decimal become doubles).
func TestRoundTrip(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"v": {"$numberInt": "5"}}`, `{"v":{"$numberDouble":"5.0"}}`},
		{`{"v": {"$numberDouble": "2.5"}}`, `{"v":{"$numberDouble":"2.5"}}`},
		{`{"v": {"$numberLong": "9007199254740993"}}`, `{"v":{"$numberLong":"9007199254740993"}}`},
		{`{"v": {"$numberDecimal": "1.10"}}`, `{"v":{"$numberDecimal":"1.10"}}`},
		{`{"v": "héllo"}`, `{"v":"héllo"}`},
		{`{"v": true}`, `{"v":true}`},
		{`{"v": null}`, `{"v":null}`},
		{`{"v": {"$undefined": true}}`, `{"v":{"$undefined":true}}`},
		{`{"v": {"$date": {"$numberLong": "1700000000123"}}}`, `{"v":{"$date":{"$numberLong":"1700000000123"}}}`},
		{`{"v": {"$oid": "0123456789abcdef01234567"}}`, `{"v":{"$oid":"0123456789abcdef01234567"}}`},
		{`{"v": {"$binary": {"base64": "AQID", "subType": "04"}}}`, `{"v":{"$binary":{"base64":"AQID","subType":"04"}}}`},
		{`{"v": {"$regularExpression": {"pattern": "^a.c", "options": "im"}}}`, `{"v":{"$regularExpression":{"pattern":"^a.c","options":"im"}}}`},
		{`{"v": {"$timestamp": {"t": 4000000000, "i": 7}}}`, `{"v":{"$timestamp":{"t":4000000000,"i":7}}}`},
		{`{"v": {"$minKey": 1}}`, `{"v":{"$minKey":1}}`},
		{`{"v": {"$maxKey": 1}}`, `{"v":{"$maxKey":1}}`},
		{`{"v": {"$code": "function(){}"}}`, `{"v":{"$code":"function(){}"}}`},
		{`{"v": {"b": 1, "a": [1, "x", {"c": {"$numberLong": "2"}}]}}`,
			`{"v":{"b":{"$numberDouble":"1.0"},"a":[{"$numberDouble":"1.0"},"x",{"c":{"$numberLong":"2"}}]}}`},
	}
	s := session(t)
	for _, c := range cases {
		in := doc(t, c.in)
		v, _ := in.Lookup("v")
		got, err := call(t, s, "function(x) { return x; }", v)
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if g := ext(t, wrap(got)); g != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.in, g, c.want)
		}
	}
}

// TestHelpers runs mongod's shell helpers as scripts see them.
func TestHelpers(t *testing.T) {
	cases := []struct{ src, want string }{
		{`NumberLong("9223372036854775807")`, `{"v":{"$numberLong":"9223372036854775807"}}`},
		{`NumberLong(5).toString()`, `{"v":"NumberLong(5)"}`},
		{`NumberLong(3) + 4`, `{"v":{"$numberDouble":"7.0"}}`},
		{`NumberInt(7)`, `{"v":{"$numberInt":"7"}}`},
		{`NumberDecimal("0.1")`, `{"v":{"$numberDecimal":"0.1"}}`},
		{`ObjectId("0123456789abcdef01234567").str`, `{"v":"0123456789abcdef01234567"}`},
		{`ObjectId("0123456789abcdef01234567").toString()`, `{"v":"ObjectId(\"0123456789abcdef01234567\")"}`},
		{`ObjectId().str.length`, `{"v":{"$numberDouble":"24.0"}}`},
		{`ISODate("2020-01-02T03:04:05.678Z")`, `{"v":{"$date":{"$numberLong":"1577934245678"}}}`},
		{`ISODate("2020-01-02T03:04:05.678Z").getTime()`, `{"v":{"$numberDouble":"1.577934245678E+12"}}`},
		{`BinData(0, "AQID").hex()`, `{"v":"010203"}`},
		{`BinData(0, "AQID")`, `{"v":{"$binary":{"base64":"AQID","subType":"00"}}}`},
		{`HexData(5, "ff00")`, `{"v":{"$binary":{"base64":"/wA=","subType":"05"}}}`},
		{`Timestamp(1, 2)`, `{"v":{"$timestamp":{"t":1,"i":2}}}`},
		{`Array.sum([1, 2, 3.5])`, `{"v":{"$numberDouble":"6.5"}}`},
		{`Array.avg([1, 2, 3])`, `{"v":{"$numberDouble":"2.0"}}`},
		{`tojson({a: 1, b: "x"})`, `{"v":"{ \"a\" : 1, \"b\" : \"x\" }"}`},
		{`tojson([1, NumberLong(2)])`, `{"v":"[ 1, NumberLong(2) ]"}`},
		{`tojson({d: ISODate("2020-01-02T03:04:05Z")})`, `{"v":"{ \"d\" : ISODate(\"2020-01-02T03:04:05.000Z\") }"}`},
		{`(function(){ return Object.bsonsize({a: 1}); })()`, `{"v":{"$numberDouble":"16.0"}}`},
		{`MinKey()`, `{"v":{"$minKey":1}}`},
		{`(function(){ var f = function(x){return x}; return f; })()`, `{"v":{"$code":"function(x){return x}"}}`},
	}
	s := session(t)
	for _, c := range cases {
		got, err := call(t, s, c.src)
		if err != nil {
			t.Errorf("%s: %v", c.src, err)
			continue
		}
		if g := ext(t, wrap(got)); g != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.src, g, c.want)
		}
	}
}

// TestFunctionSource checks how scripts become functions, as mongod's
// parseJSFunctionOrExpression.
func TestFunctionSource(t *testing.T) {
	d := doc(t, `{"a": 3, "b": 2}`)
	cases := []struct {
		src  string
		want bool
	}{
		{"this.a > this.b", true},
		{"return this.a < this.b", false},
		{"function() { return obj.a == 3 }", true},
		{"var x = this.a; x == 3", true},
		{"() => true", true},
		{"if (this.a) { return false; } return true;", false},
	}
	s := session(t)
	for _, c := range cases {
		f, err := s.Compile(c.src)
		if err != nil {
			t.Errorf("%s: %v", c.src, err)
			continue
		}
		got, err := f.Where(d)
		if err != nil || got != c.want {
			t.Errorf("%s: %v, %v; want %v", c.src, got, err, c.want)
		}
	}
}

// TestSandbox checks that scripts reach nothing outside the interpreter
// and that one operation's globals do not reach the next.
func TestSandbox(t *testing.T) {
	s := session(t)
	for _, name := range []string{"require", "process", "load", "setTimeout", "setInterval", "fetch", "XMLHttpRequest",
		"module", "exports", "__native", "console", "Deno", "Bun", "db", "run", "runProgram", "_writeTestPipe"} {
		got, err := call(t, s, "typeof "+name)
		if err != nil || got.StringValue() != "undefined" {
			t.Errorf("typeof %s = %v, %v; want undefined", name, got, err)
		}
	}
	if _, err := call(t, s, `function() { leaked = 42; return 1; }`); err != nil {
		t.Fatal(err)
	}
	got, _ := call(t, s, `typeof leaked`)
	if got.StringValue() != "number" {
		t.Fatalf("a global is visible within its own operation: got %v", got)
	}
	s2 := session(t)
	got, err := call(t, s2, `typeof leaked`)
	if err != nil || got.StringValue() != "undefined" {
		t.Errorf("a global leaked into the next operation: %v, %v", got, err)
	}
}

// TestErrors checks mongod's codes for failing scripts.
func TestErrors(t *testing.T) {
	cases := []struct {
		src  string
		code int32
		msg  string
	}{
		{`function() { return x.y; }`, mongoerr.JSInterpreterFailure, "ReferenceError: x is not defined"},
		{`function() { throw new Error("boom"); }`, mongoerr.JSInterpreterFailure, "Error: boom"},
		{`function( {`, mongoerr.JSInterpreterFailure, "SyntaxError"},
		{`function f() { return f(); }`, mongoerr.JSInterpreterFailure, ""},
		{`function() { var o = {}; o.o = o; return o; }`, 17279, "Do you have a cycle?"},
		{`function() { return "x".repeat(17 * 1024 * 1024); }`, mongoerr.BSONObjectTooLarge, "BSONObj size"},
		{`function() { return NumberLong("x"); }`, mongoerr.JSInterpreterFailure, "could not convert"},
	}
	s := session(t)
	for _, c := range cases {
		_, err := call(t, s, c.src)
		if code(err) != c.code || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v (code %d); want %d %q", c.src, err, code(err), c.code, c.msg)
		}
	}
}

// TestInterrupt ends infinite loops by the operation's context, with the
// context's code.
func TestInterrupt(t *testing.T) {
	cases := []struct {
		name  string
		src   string
		ctx   func() (context.Context, context.CancelFunc)
		code  int32
		after time.Duration
	}{
		{"deadline", "while (true) {}", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 50*time.Millisecond)
		}, mongoerr.MaxTimeMSExpired, 0},
		{"cancel", "for (;;) { Math.random(); }", func() (context.Context, context.CancelFunc) {
			return context.WithCancel(context.Background())
		}, mongoerr.Interrupted, 50 * time.Millisecond},
		{"cause", "while (true) {}", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancelCause(context.Background())
			return ctx, func() { cancel(mongoerr.ErrClientDisconnect) }
		}, mongoerr.ClientDisconnect, 50 * time.Millisecond},
		{"sleep", "sleep(1e9); return true", func() (context.Context, context.CancelFunc) {
			return context.WithCancel(context.Background())
		}, mongoerr.Interrupted, 50 * time.Millisecond},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := c.ctx()
			defer cancel()
			s, err := NewEngine(true).NewSession(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			f, err := s.Compile(c.src)
			if err != nil {
				t.Fatal(err)
			}
			if c.after > 0 {
				time.AfterFunc(c.after, cancel)
			}
			_, err = f.Where(bson.Doc(doc(t, `{}`)))
			if code(err) != c.code {
				t.Fatalf("got %v (code %d), want %d", err, code(err), c.code)
			}
			// The next call stops at once.
			if _, err := f.Where(doc(t, `{}`)); code(err) != c.code {
				t.Fatalf("second call: %v", err)
			}
		})
	}
}

// TestHeapWatchdog interrupts a script that grows the heap without bound.
func TestHeapWatchdog(t *testing.T) {
	old := MaxHeapGrowth
	MaxHeapGrowth = 64 << 20
	defer func() { MaxHeapGrowth = old }()
	s := session(t)
	_, err := call(t, s, `function() { var a = []; for (;;) { a.push("x".repeat(1000) + a.length); } }`)
	if code(err) != mongoerr.ExceededMemoryLimit {
		t.Fatalf("got %v, want ExceededMemoryLimit", err)
	}
}

func TestDisabled(t *testing.T) {
	if _, err := NewEngine(false).NewSession(context.Background()); !errors.Is(err, ErrDisabled) {
		t.Fatalf("got %v", err)
	}
	var e *Engine
	if e.Enabled() {
		t.Fatal("a nil engine is enabled")
	}
}

func TestEmitAndScope(t *testing.T) {
	s := session(t)
	if err := s.SetGlobals(doc(t, `{"factor": {"$numberInt": "10"}}`)); err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := s.SetEmit(func(k, v bson.Value) error {
		got = append(got, k.String()+"="+v.String())
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	f, err := s.Compile(`function() { for (var i = 0; i < this.n; i++) emit(this.k, i * factor); }`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Call(doc(t, `{"k": "a", "n": 3}`)); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ",") != `"a"=0.0,"a"=10.0,"a"=20.0` {
		t.Fatalf("emitted %v", got)
	}
	limit := errors.New("stop")
	_ = s.SetEmit(func(k, v bson.Value) error { return mongoerr.New(mongoerr.ExceededMemoryLimit, "%v", limit) })
	if _, err := f.Call(doc(t, `{"k": "a", "n": 3}`)); code(err) != mongoerr.ExceededMemoryLimit {
		t.Fatalf("emit's error: %v", err)
	}
}
