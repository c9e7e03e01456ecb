package main

import (
	"strings"
	"testing"

	"github.com/cairndb/cairn/bson"
)

// rowJSON builds one row with the given header and returns its relaxed
// Extended JSON, or the error text.
func rowJSON(t *testing.T, header []string, typed bool, grace parseGrace, ignoreBlanks bool, fields []string) string {
	t.Helper()
	cols, err := parseColumns(header, typed)
	if err != nil {
		return "error: " + err.Error()
	}
	var b bson.Builder
	if err := newRowLayout(cols, grace, ignoreBlanks).build(&b, fields); err != nil {
		return "error: " + err.Error()
	}
	j, err := b.Finish().MarshalExtJSON(false)
	if err != nil {
		t.Fatal(err)
	}
	return string(j)
}

func TestImportRows(t *testing.T) {
	for _, tc := range []struct {
		name         string
		header       string
		typed        bool
		grace        parseGrace
		ignoreBlanks bool
		row          string
		want         string
	}{
		{name: "auto", header: "a,b,c,d,e,f", row: "1|3000000000|1.5|x|-7|", want: `{"a":1,"b":3000000000,"c":1.5,"d":"x","e":-7,"f":""}`},
		{name: "auto keeps non-numbers", header: "a,b,c", row: "12ab|1e3|.5", want: `{"a":"12ab","b":1000.0,"c":0.5}`},
		{name: "ignoreBlanks", header: "a,b,c", ignoreBlanks: true, row: "1||3", want: `{"a":1,"c":3}`},
		{name: "short row", header: "a,b,c", row: "1", want: `{"a":1}`},
		{name: "extra fields", header: "a", row: "1|x|2", want: `{"a":1,"field1":"x","field2":2}`},
		{name: "nested", header: "a.x,b,a.y.z", row: "1|2|3", want: `{"a":{"x":1,"y":{"z":3}},"b":2}`},
		{name: "typed", header: "s.string(),i.int32(),l.int64(),d.double(),b.boolean(),t.boolean()", typed: true,
			row: "007|7|7|7|true|0", want: `{"s":"007","i":7,"l":7,"d":7.0,"b":true,"t":false}`},
		{name: "typed date", header: "d.date(2006-01-02 15:04:05),m.date_ms(yyyy-MM-dd),o.date_oracle(DD/MM/YYYY)", typed: true,
			row:  "2013-07-15 10:20:30|2013-07-16|17/07/2013",
			want: `{"d":{"$date":"2013-07-15T10:20:30Z"},"m":{"$date":"2013-07-16T00:00:00Z"},"o":{"$date":"2013-07-17T00:00:00Z"}}`},
		{name: "typed binary and decimal", header: "h.binary(hex),b.binary(base64),x.decimal()", typed: true,
			row: "cafe|AQI=|1.10", want: `{"h":{"$binary":{"base64":"yv4=","subType":"00"}},"b":{"$binary":{"base64":"AQI=","subType":"00"}},"x":{"$numberDecimal":"1.10"}}`},
		{name: "typed auto", header: "a.auto(),b.auto()", typed: true, row: "5|x", want: `{"a":5,"b":"x"}`},
		{name: "grace stop", header: "a.int32()", typed: true, grace: graceStop, row: "x", want: `error: field a: cannot parse "x" as int32`},
		{name: "grace autoCast", header: "a.int32(),b.int32()", typed: true, grace: graceAutoCast, row: "x|3000000000", want: `{"a":"x","b":3000000000}`},
		{name: "grace skipField", header: "a.int32(),b.int32()", typed: true, grace: graceSkipField, row: "x|2", want: `{"b":2}`},
		{name: "grace skipRow", header: "a.int32(),b.int32()", typed: true, grace: graceSkipRow, row: "x|2", want: `error: row skipped`},
		{name: "untyped header with types flag", header: "a,b.int32()", typed: true, want: `error: could not parse type from header a`},
		{name: "unknown type", header: "a.int8()", typed: true, want: `error: header a.int8(): invalid type int8`},
		{name: "argument not allowed", header: "a.int32(x)", typed: true, want: `error: header a.int32(x): type int32 takes no argument`},
		{name: "bad binary encoding", header: "a.binary(base2)", typed: true, want: `error: header a.binary(base2): invalid binary encoding: base2`},
		{name: "duplicate", header: "a,a", want: `error: fields cannot be identical: "a"`},
		{name: "conflict", header: "a,a.b", want: `error: fields "a" and "a.b" are incompatible`},
		{name: "empty part", header: "a..b", want: `error: field "a..b" has an empty part`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := rowJSON(t, strings.Split(tc.header, ","), tc.typed, tc.grace, tc.ignoreBlanks, strings.Split(tc.row, "|"))
			if !strings.HasPrefix(got, tc.want) {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestConvertLayout(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"yyyy-MM-dd HH:mm:ss.fff", "2006-01-02 15:04:05.000"},
		{"dddd, MMMM d yyyy 'at' h tt", "Monday, January 2 2006 at 3 PM"},
	} {
		if got := convertLayout(tc.in, msDateTokens, false); got != tc.want {
			t.Errorf("ms %q: got %q, want %q", tc.in, got, tc.want)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"YYYY-MM-DD HH24:MI:SS", "2006-01-02 15:04:05"},
		{"dd-mon-yy hh12.mi am", "02-Jan-06 03.04 PM"},
	} {
		if got := convertLayout(tc.in, oracleDateTokens, true); got != tc.want {
			t.Errorf("oracle %q: got %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestSplitTabs(t *testing.T) {
	got := splitTabs(nil, "a\t\tb\t")
	if strings.Join(got, "|") != "a||b|" || len(got) != 4 {
		t.Fatalf("got %q", got)
	}
}

func TestConnectionString(t *testing.T) {
	for _, tc := range []struct {
		c    connFlags
		want string
	}{
		{connFlags{host: "localhost"}, "mongodb://localhost:27017/?directConnection=true"},
		{connFlags{host: "db1", port: 27018}, "mongodb://db1:27018/?directConnection=true"},
		{connFlags{host: "db1:1234", port: 27018}, "mongodb://db1:27018/?directConnection=true"},
		{connFlags{host: "rs0/a:1,b"}, "mongodb://a:1,b:27017/?replicaSet=rs0"},
		{connFlags{host: "h", tlsCAFile: "/ca.pem"}, "mongodb://h:27017/?directConnection=true&tls=true&tlsCAFile=%2Fca.pem"},
		{connFlags{uri: "mongodb://x/?tls=true", host: "ignored"}, "mongodb://x/?tls=true"},
	} {
		if got := tc.c.connectionString(); got != tc.want {
			t.Errorf("%+v: got %s, want %s", tc.c, got, tc.want)
		}
	}
}
