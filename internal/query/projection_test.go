package query

import "testing"

func TestProjection(t *testing.T) {
	cases := []struct {
		proj, filter, doc, want string
	}{
		{`{}`, `{}`, `{"_id": 1, "a": 1}`, `{"_id": 1, "a": 1}`},
		{`{"a": 1}`, `{}`, `{"b": 2, "a": 1, "_id": 1}`, `{"a": 1, "_id": 1}`},
		{`{"a": 1, "_id": 0}`, `{}`, `{"_id": 1, "a": 1, "b": 2}`, `{"a": 1}`},
		{`{"a": 0}`, `{}`, `{"_id": 1, "a": 1, "b": 2}`, `{"_id": 1, "b": 2}`},
		{`{"_id": 0}`, `{}`, `{"_id": 1, "a": 1}`, `{"a": 1}`},
		{`{"_id": 1}`, `{}`, `{"_id": 1, "a": 1}`, `{"_id": 1}`},
		{`{"a.b": 1}`, `{}`, `{"_id": 1, "a": {"b": 1, "c": 2}}`, `{"_id": 1, "a": {"b": 1}}`},
		{`{"a": {"b": 1}}`, `{}`, `{"_id": 1, "a": {"b": 1, "c": 2}}`, `{"_id": 1, "a": {"b": 1}}`},
		{`{"a.b": 1}`, `{}`, `{"_id": 1, "a": [{"b": 1, "c": 2}, 5, {"c": 1}, [{"b": 3}]]}`, `{"_id": 1, "a": [{"b": 1}, {}, [{"b": 3}]]}`},
		{`{"a.b": 1}`, `{}`, `{"_id": 1, "a": 5}`, `{"_id": 1}`},
		{`{"a.b": 0}`, `{}`, `{"_id": 1, "a": [{"b": 1, "c": 2}, 5]}`, `{"_id": 1, "a": [{"c": 2}, 5]}`},
		{`{"a.b": 0}`, `{}`, `{"_id": 1, "a": [{"b": 1, "c": 2}, [{"b": 3, "c": 4}, [{"b": 5}], 6], 7]}`, `{"_id": 1, "a": [{"c": 2}, [{"c": 4}, [{}], 6], 7]}`},
		{`{"a.b.c": 0}`, `{}`, `{"_id": 1, "a": {"b": [{"c": 1, "d": 2}, 3]}}`, `{"_id": 1, "a": {"b": [{"d": 2}, 3]}}`},
		{`{"a": {"$slice": 2}}`, `{}`, `{"_id": 1, "a": [1, 2, 3], "b": 1}`, `{"_id": 1, "a": [1, 2], "b": 1}`},
		{`{"a": {"$slice": -2}}`, `{}`, `{"_id": 1, "a": [1, 2, 3]}`, `{"_id": 1, "a": [2, 3]}`},
		{`{"a": {"$slice": [1, 1]}}`, `{}`, `{"_id": 1, "a": [1, 2, 3]}`, `{"_id": 1, "a": [2]}`},
		{`{"a": {"$slice": [-5, 2]}}`, `{}`, `{"_id": 1, "a": [1, 2, 3]}`, `{"_id": 1, "a": [1, 2]}`},
		{`{"b": 1, "a": {"$slice": 1}}`, `{}`, `{"_id": 1, "a": [1, 2, 3], "b": 1, "c": 1}`, `{"_id": 1, "a": [1], "b": 1}`},
		{`{"a": {"$elemMatch": {"x": 2}}}`, `{}`, `{"_id": 1, "a": [{"x": 1}, {"x": 2, "y": 1}], "b": 1}`, `{"_id": 1, "a": [{"x": 2, "y": 1}]}`},
		{`{"a": {"$elemMatch": {"x": 9}}, "b": 1}`, `{}`, `{"_id": 1, "a": [{"x": 1}], "b": 1}`, `{"_id": 1, "b": 1}`},
		{`{"a": {"$elemMatch": {"x": 1}}, "b": 1}`, `{}`, `{"_id": 1, "a": [{"x": 1}], "b": 1}`, `{"_id": 1, "b": 1, "a": [{"x": 1}]}`},
		{`{"a.$": 1}`, `{"a": {"$gt": 1}}`, `{"_id": 1, "a": [1, 2, 3]}`, `{"_id": 1, "a": [2]}`},
		{`{"a.$": 1}`, `{"a.b": 2}`, `{"_id": 1, "a": [{"b": 1}, {"b": 2}]}`, `{"_id": 1, "a": [{"b": 2}]}`},
		{`{"x": "lit", "a": 1}`, `{}`, `{"_id": 1, "a": 1}`, `{"_id": 1, "a": 1, "x": "lit"}`},
		{`{"x": "$a.b"}`, `{}`, `{"_id": 1, "a": {"b": 7}}`, `{"_id": 1, "x": 7}`},
		{`{"x": "$a.b"}`, `{}`, `{"_id": 1, "a": [{"b": 7}, {"b": 8}, {}]}`, `{"_id": 1, "x": [7, 8]}`},
		{`{"x": {"$literal": 1}}`, `{}`, `{"_id": 1}`, `{"_id": 1, "x": 1}`},
	}
	for _, c := range cases {
		p, err := ParseProjection(d(t, c.proj), nil)
		if err != nil {
			t.Errorf("ParseProjection(%s): %v", c.proj, err)
			continue
		}
		f, _ := ParseFilter(d(t, c.filter), nil)
		doc := d(t, c.doc)
		var md MatchDetails
		if !f.MatchDetails(doc, &md) {
			t.Errorf("filter %s does not match %s", c.filter, c.doc)
			continue
		}
		got, err := p.Apply(nil, doc, &md)
		if err != nil {
			t.Errorf("projection %s of %s: %v", c.proj, c.doc, err)
			continue
		}
		if js(t, got) != normJSON(t, c.want) {
			t.Errorf("projection %s of %s:\n got %s\nwant %s", c.proj, c.doc, js(t, got), normJSON(t, c.want))
		}
	}
}

func TestProjectionErrors(t *testing.T) {
	cases := []struct {
		proj string
		code int32
		msg  string
	}{
		{`{"a": 1, "b": 0}`, 31254, "Cannot do exclusion on field b in inclusion projection"},
		{`{"a": 0, "b": 1}`, 31253, "Cannot do inclusion on field b in exclusion projection"},
		{`{"a": 1, "a.b": 1}`, 31249, "Path collision at a.b remaining portion b"},
		{`{"a.b": 1, "a": 1}`, 31250, "Path collision at a"},
		{`{"a": {"$slice": "x"}}`, 28667, `Invalid $slice syntax. The given syntax { $slice: "x" } did not match the find() syntax because :: Location31273: $slice only supports numbers and [skip, limit] arrays :: The given syntax did not match the expression $slice syntax. :: caused by :: Expression $slice takes at least 2 arguments, and at most 3, but 1 were passed in.`},
		{`{"a": {"$slice": [1, 2, 3, 4]}}`, 28667, ""},
		{`{"a.b": {"$elemMatch": {"x": 1}}}`, 31275, "Cannot use $elemMatch projection on a nested field."},
		{`{"a": {"$elemMatch": 1}}`, 31274, "elemMatch: Invalid argument, object required, but got int"},
		{`{"a.$": 1, "b": {"$elemMatch": {"x": 1}}}`, 31255, "Cannot specify positional operator and $elemMatch."},
		{`{"b": {"$elemMatch": {"x": 1}}, "a.$": 1}`, 31256, "Cannot specify positional operator and $elemMatch."},
		{`{"a": 0, "x": {"$add": [1, 2]}}`, 31252, "Cannot use expression other than $meta in exclusion projection"},
		{`{"a": 0, "x": "lit"}`, 31310, `Cannot use an expression x: "lit" in an exclusion projection`},
		{`{"x": "lit", "a": 0}`, 31254, ""},
		{`{".$": 1}`, 5392900, ""},
		{`{"a.$": 1, "b.$": 1}`, 31276, ""},
		{`{"a.$.b": 1}`, 31394, ""},
		{`{"v.$.foo.$": 1}`, 31394, ""},
		{`{"$.v.$.foo": 1}`, 31394, ""},
		{`{"v..$": 1}`, 40353, "FieldPath must not end with a '.'."},
		{`{"$": 1}`, 16410, ""},
		{`{"$.foo.$": 1}`, 16410, ""},
		{`{"v.$foo": 1}`, 16410, ""},
		{`{"": 1}`, 40352, ""},
		{`{"v.$": false}`, 31395, "positional projection cannot be used with exclusion"},
		{`{"s": {"$meta": "textScore"}}`, 40218, ""},
		{`{"s": {"$meta": "bogus"}}`, 17308, ""},
		{`{"$a": 1}`, 16410, ""},
		{`{"a": {}}`, 51270, "Invalid empty sub-projection: a"},
		{`{"a": {"$foo": 1}}`, 31325, "Unknown expression $foo"},
		{`{"a": {"$slice": 1, "b": 1}}`, 16410, ""},
		{`{"a.$": {"$slice": 1}}`, 31271, ""},
		{`{"a.$": "x"}`, 31308, ""},
	}
	for _, c := range cases {
		_, err := ParseProjection(d(t, c.proj), nil)
		if errCode(err) != c.code || (c.msg != "" && err.Error() != c.msg) {
			t.Errorf("ParseProjection(%s) = %d %v, want %d %q", c.proj, errCode(err), err, c.code, c.msg)
		}
	}
}

func TestProjectionPositionalFirstArray(t *testing.T) {
	p, err := ParseProjection(d(t, `{"a.b.$": 1, "c": 1}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := ParseFilter(d(t, `{"a.b": 2}`), nil)
	doc := d(t, `{"_id": 1, "a": [{"b": 1, "x": 1}, {"b": 2, "x": 2}], "c": 3}`)
	var md MatchDetails
	if !f.MatchDetails(doc, &md) {
		t.Fatal("no match")
	}
	dst := make([]byte, 3, 512)
	got, err := p.Apply(dst, doc, &md)
	if err != nil {
		t.Fatal(err)
	}
	if want := normJSON(t, `{"_id": 1, "a": [{"b": 2}], "c": 3}`); js(t, got) != want {
		t.Errorf("got %s want %s", js(t, got), want)
	}
	if _, err := p.Apply(nil, doc, &MatchDetails{}); errCode(err) != 51246 {
		t.Errorf("no match key: %v", err)
	}
}

func TestProjectionTypeRules(t *testing.T) {
	doc := `{"_id": 1, "a": [1, 2, 3], "b": [{"x": 1}, {"x": 2}], "c": 5}`
	cases := []struct{ proj, want string }{
		// A find $slice makes an exclusion unless _id is included.
		{`{"a": {"$slice": 1}}`, `{"_id": 1, "a": [1], "b": [{"x": 1}, {"x": 2}], "c": 5}`},
		{`{"a": {"$slice": 1}, "_id": 1}`, `{"_id": 1, "a": [1]}`},
		{`{"a": {"$slice": 1}, "_id": 0}`, `{"a": [1], "b": [{"x": 1}, {"x": 2}], "c": 5}`},
		// $elemMatch alone makes an inclusion...
		{`{"b": {"$elemMatch": {"x": 2}}}`, `{"_id": 1, "b": [{"x": 2}]}`},
		{`{"b": {"$elemMatch": {"x": 2}}, "_id": 0}`, `{"b": [{"x": 2}]}`},
		// ...but with a find $slice it is an exclusion: in place, or gone.
		{`{"a": {"$slice": -1}, "b": {"$elemMatch": {"x": 2}}}`, `{"_id": 1, "a": [3], "b": [{"x": 2}], "c": 5}`},
		{`{"a": {"$slice": -1}, "b": {"$elemMatch": {"x": 9}}}`, `{"_id": 1, "a": [3], "c": 5}`},
		// A $slice that is not find()'s form is the $slice expression.
		{`{"s": {"$slice": ["$a", 1, 1]}}`, `{"_id": 1, "s": [2]}`},
		{`{"_id": 0}`, `{"a": [1, 2, 3], "b": [{"x": 1}, {"x": 2}], "c": 5}`},
	}
	for _, c := range cases {
		p, err := ParseProjection(d(t, c.proj), nil)
		if err != nil {
			t.Errorf("ParseProjection(%s): %v", c.proj, err)
			continue
		}
		got, err := p.Apply(nil, d(t, doc), nil)
		if err != nil || js(t, got) != normJSON(t, c.want) {
			t.Errorf("projection %s:\n got %s %v\nwant %s", c.proj, js(t, got), err, normJSON(t, c.want))
		}
	}
	p, err := ParseProjection(d(t, `{"a": {"$slice": [1, 0]}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Apply(nil, d(t, doc), nil); errCode(err) != 28724 {
		t.Errorf("$slice expression on a non-array: %v", err)
	}
}
