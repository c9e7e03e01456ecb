package query

import (
	"bytes"
	"testing"
)

func TestParseCollation(t *testing.T) {
	for _, c := range []struct {
		spec string
		code int32
		nil_ bool
		msg  string
	}{
		{`{"locale": "simple"}`, 0, true, ""},
		{`{"locale": "simple", "strength": 1, "version": "1"}`, 0, true, ""},
		{`{"locale": "en"}`, 0, false, ""},
		{`{"locale": "en_US", "strength": 2, "caseLevel": false, "numericOrdering": true}`, 0, false, ""},
		{`{"locale": "en", "strength": 2.9}`, 0, false, ""},
		{`{"locale": "fr_CA", "backwards": true, "alternate": "shifted", "maxVariable": "space", "caseFirst": "upper"}`, 0, false, ""},
		{`{"locale": "de@collation=phonebook"}`, 0, false, ""},
		{`{}`, 40414, false, "BSON field 'collation.locale' is missing but a required field"},
		{`{"locale": null}`, 40414, false, ""},
		{`{"locale": 5}`, 14, false, "BSON field 'collation.locale' is the wrong type 'int', expected type 'string'"},
		{`{"locale": "en", "bogus": 1}`, 40415, false, "BSON field 'collation.bogus' is an unknown field."},
		{`{"locale": "en", "strength": 6}`, 2, false, "BSON field 'strength' value must be <= 5, actual value '6'"},
		{`{"locale": "simple", "strength": 9}`, 2, false, ""},
		{`{"locale": "en", "strength": 0}`, 2, false, "Enumeration value '0' for field 'collation.strength' is not a valid value."},
		{`{"locale": "en", "backwards": 1}`, 14, false, "Field 'backwards' should be a boolean value, but found: int"},
		{`{"locale": "zz_nope"}`, 2, false, `Field 'locale' is invalid in: { locale: "zz_nope" }`},
		{`{"locale": "EN"}`, 2, false, `Field 'locale' is invalid in: { locale: "EN" }. Did you mean 'en'?`},
		{`{"locale": "en-US"}`, 2, false, `Field 'locale' is invalid in: { locale: "en-US" }. Did you mean 'en_US'?`},
		{`{"locale": "de@collation=nope"}`, 2, false, `Field 'locale' is invalid in: { locale: "de@collation=nope" }. Did you mean 'de'?`},
		{`{"locale": "en", "strength": 1, "backwards": true}`, 2, false, `'backwards' is invalid with 'strength' of 1 in: { locale: "en", strength: 1, backwards: true }`},
		{`{"locale": "en", "strength": 1, "caseFirst": "upper"}`, 2, false, `'caseFirst' is invalid unless 'caseLevel' is on or 'strength' is greater than 2 in: { locale: "en", strength: 1, caseFirst: "upper" }`},
		{`{"locale": "en", "version": "1"}`, 161, false, ""},
		{`{"locale": "en", "caseFirst": "x"}`, 2, false, ""},
	} {
		coll, err := ParseCollation(d(t, c.spec))
		if errCode(err) != c.code || (c.msg != "" && (err == nil || err.Error() != c.msg)) {
			t.Errorf("ParseCollation(%s) = %v, want code %d", c.spec, err, c.code)
			continue
		}
		if err == nil && (coll == nil) != c.nil_ {
			t.Errorf("ParseCollation(%s) nil = %v", c.spec, coll == nil)
		}
	}
}

func TestCollatedMatchAndSort(t *testing.T) {
	coll, err := ParseCollation(d(t, `{"locale": "en", "strength": 2}`))
	if err != nil {
		t.Fatal(err)
	}
	opts := &Options{Collation: coll}
	f, err := ParseFilter(d(t, `{"name": "JOHN"}`), opts)
	if err != nil {
		t.Fatal(err)
	}
	if !f.Match(d(t, `{"name": "john"}`)) {
		t.Error("strength 2 should ignore case")
	}
	if f.Match(d(t, `{"name": "jöhn"}`)) {
		t.Error("strength 2 should not ignore diacritics")
	}
	if _, ok := f.IDEquality(); ok {
		t.Error("no _id here")
	}
	g, _ := ParseFilter(d(t, `{"_id": "A"}`), opts)
	if _, ok := g.IDEquality(); ok {
		t.Error("collated string _id must not be a point lookup")
	}

	num, _ := ParseCollation(d(t, `{"locale": "en", "numericOrdering": true}`))
	s, err := ParseSort(d(t, `{"v": 1}`), &Options{Collation: num})
	if err != nil {
		t.Fatal(err)
	}
	a, b := d(t, `{"v": "item10"}`), d(t, `{"v": "item9"}`)
	if s.Compare(a, b) <= 0 {
		t.Error("numericOrdering: item9 < item10")
	}
	if bytes.Compare(s.Key(nil, a), s.Key(nil, b)) <= 0 {
		t.Error("sort keys disagree with Compare under collation")
	}
	u, err := ParseUpdate(val(t, `{"$addToSet": {"tags": "A"}}`), nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	got, changed, err := u.Apply(nil, d(t, `{"_id": 1, "tags": ["a"]}`), nil, false)
	if err != nil || changed {
		t.Errorf("$addToSet under case-insensitive collation: %s changed=%v err=%v", js(t, got), changed, err)
	}
}

func TestAllICULocalesResolve(t *testing.T) {
	for loc := range icuLocales {
		c, err := ParseCollation(d(t, `{"locale": "`+loc+`"}`))
		if err != nil {
			t.Errorf("%s: %v", loc, err)
			continue
		}
		c.CompareStrings("a", "b")
	}
	for loc := range icuVariants {
		if _, err := ParseCollation(d(t, `{"locale": "`+loc+`"}`)); err != nil {
			t.Errorf("%s: %v", loc, err)
		}
	}
}

func TestCaseFirst(t *testing.T) {
	for _, c := range []struct {
		spec string
		want int // sign of compare("a", "A")
	}{
		{`{"locale": "en"}`, -1},
		{`{"locale": "en", "caseFirst": "lower"}`, -1},
		{`{"locale": "en", "caseFirst": "upper"}`, 1},
		{`{"locale": "en", "strength": 2}`, 0},
	} {
		coll, err := ParseCollation(d(t, c.spec))
		if err != nil {
			t.Fatal(err)
		}
		r := coll.CompareStrings("a", "A")
		if sign(r) != c.want {
			t.Errorf("%s: compare(a, A) = %d, want sign %d", c.spec, r, c.want)
		}
		ka, kA := coll.Key(nil, "a"), coll.Key(nil, "A")
		if sign(bytes.Compare(ka, kA)) != c.want {
			t.Errorf("%s: keys disagree", c.spec)
		}
		if coll.CompareStrings("apple", "Banana") >= 0 {
			t.Errorf("%s: apple < Banana at the primary level", c.spec)
		}
	}
}

func sign(x int) int {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}
