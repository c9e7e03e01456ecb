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
	}{
		{`{"locale": "simple"}`, 0, true},
		{`{"locale": "en"}`, 0, false},
		{`{"locale": "en_US", "strength": 2, "caseLevel": false, "numericOrdering": true}`, 0, false},
		{`{"locale": "fr", "backwards": true, "alternate": "shifted", "maxVariable": "space", "caseFirst": "upper"}`, 0, false},
		{`{}`, 40414, false},
		{`{"locale": "en", "foo": 1}`, 40415, false},
		{`{"locale": "en", "strength": 6}`, 2, false},
		{`{"locale": "en", "strength": "x"}`, 14, false},
		{`{"locale": "xx_YY"}`, 2, false},
		{`{"locale": "en", "caseFirst": "x"}`, 2, false},
		{`{"locale": "simple", "strength": 1}`, 2, false},
	} {
		coll, err := ParseCollation(d(t, c.spec))
		if errCode(err) != c.code {
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
