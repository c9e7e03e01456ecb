package bson

import (
	"errors"
	"math"
	"testing"
)

func TestExtJSONRelaxed(t *testing.T) {
	d := docOf("i", vInt32(1), "l", vInt64(1<<40), "f", vDouble(1.5), "g", vDouble(2), "inf", vDouble(math.Inf(-1)),
		"d", vDate(1356351330501), "old", vDate(-1), "s", vString("a\"b\n"), "dec", vDecimal("1.0"))
	got, err := d.MarshalExtJSON(false)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"i":1,"l":1099511627776,"f":1.5,"g":2.0,"inf":{"$numberDouble":"-Infinity"},` +
		`"d":{"$date":"2012-12-24T12:15:30.501Z"},"old":{"$date":{"$numberLong":"-1"}},"s":"a\"b\n",` +
		`"dec":{"$numberDecimal":"1.0"}}`
	if string(got) != want {
		t.Errorf("relaxed:\n got %s\nwant %s", got, want)
	}
	back, err := UnmarshalExtJSON(got, false)
	if err != nil {
		t.Fatal(err)
	}
	if CompareDocs(back, d) != 0 {
		t.Errorf("round trip: %s, want %s", back, d)
	}
	if v, _ := back.Lookup("l"); v.Type != TypeInt64 {
		t.Errorf("large bare integer parsed as %s", v.Type)
	}
}

func TestExtJSONCanonicalStrict(t *testing.T) {
	if _, err := UnmarshalExtJSON([]byte(`{"a":1}`), true); !errors.Is(err, ErrExtJSON) {
		t.Errorf("canonical accepted a bare number: %v", err)
	}
	d, err := UnmarshalExtJSON([]byte(`{"t":{"$timestamp":{"t":1,"i":2}},"m":{"$minKey":1}}`), true)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := d.Lookup("t"); v.Type != TypeTimestamp {
		t.Errorf("timestamp parsed as %s", v.Type)
	}
}

func TestExtJSONLegacyAndLookalikes(t *testing.T) {
	cases := []struct {
		in   string
		typ  Type
		canT bool
	}{
		{`{"v":{"$binary":"//8=","$type":"80"}}`, TypeBinary, true},
		{`{"v":{"$regex":"^a","$options":"mi"}}`, TypeRegex, true},
		{`{"v":{"$regex":{"$regularExpression":{"pattern":"a","options":""}}}}`, TypeDocument, true},
		{`{"v":{"$type":"string"}}`, TypeDocument, true},
		{`{"v":{"$ref":"c","$id":{"$oid":"57fd71e96e32ab4225b723fb"},"$db":"d"}}`, TypeDocument, true},
		{`{"v":{"$uuid":"73ffd264-44b3-4c69-90e8-e7d1dfc035d4"}}`, TypeBinary, true},
		{`{"v":{"$date":"2020-01-02T03:04:05+01:00"}}`, TypeDateTime, true},
	}
	for _, c := range cases {
		d, err := UnmarshalExtJSON([]byte(c.in), false)
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if v, _ := d.Lookup("v"); v.Type != c.typ {
			t.Errorf("%s: type %s, want %s", c.in, v.Type, c.typ)
		}
	}
	d, _ := UnmarshalExtJSON([]byte(`{"v":{"$date":"2020-01-02T03:04:05+01:00"}}`), false)
	if v, _ := d.Lookup("v"); v.DateTime() != 1577930645000 {
		t.Errorf("date with offset = %d", v.DateTime())
	}
	for _, bad := range []string{`[]`, `{"a":}`, `{"a":1} x`, `{"a":"\ud800"}`, `{"a":01}`, `{"a":{"$oid":"zz"}}`,
		`{"a":{"$numberInt":"+1"}}`, `{"a":{"$numberDouble":"0x1p3"}}`, `{"a":{"$numberInt":"2147483648"}}`} {
		if _, err := UnmarshalExtJSON([]byte(bad), false); err == nil {
			t.Errorf("UnmarshalExtJSON(%s) succeeded", bad)
		}
	}
}

func TestValidateStrictUTF8(t *testing.T) {
	good := docOf("é", vString("ü"))
	if err := ValidateStrict(good, MaxDepth); err != nil {
		t.Fatal(err)
	}
	badKey := docOf("\xff", vInt32(1))
	badStr := docOf("a", vString("\xc3"))
	badRegex := docOf("a", vRegex("\xff", ""))
	for _, d := range []Doc{badKey, badStr, badRegex} {
		if Validate(d, MaxDepth) != nil {
			t.Errorf("Validate rejected %x", []byte(d))
		}
		if ValidateStrict(d, MaxDepth) == nil {
			t.Errorf("ValidateStrict accepted %x", []byte(d))
		}
	}
}

func TestAppendExtJSON(t *testing.T) {
	got, err := AppendExtJSON([]byte("x="), vInt64(7), true)
	if err != nil || string(got) != `x={"$numberLong":"7"}` {
		t.Fatalf("AppendExtJSON = %s, %v", got, err)
	}
	if _, err := AppendExtJSON(nil, Value{Type: 0x42}, true); err == nil {
		t.Fatal("unknown type marshalled")
	}
}
