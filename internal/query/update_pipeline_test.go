package query

import "testing"

func TestUpdatePipeline(t *testing.T) {
	opts := &Options{Let: d(t, `{"x": "foo"}`)}
	cases := []struct{ doc, update, want string }{
		{`{"_id": 1, "y": 1}`, `[{"$set": {"x": 1}}]`, `{"_id": 1, "y": 1, "x": 1}`},
		{`{"_id": 1, "x": 3}`, `[{"$set": {"x": "$$x"}}]`, `{"_id": 1, "x": "foo"}`},
		{`{"_id": 1, "x": 1, "y": 2, "t": {"u": 1}}`, `[{"$project": {"x": 1}}, {"$addFields": {"foo": 1}}]`, `{"_id": 1, "x": 1, "foo": 1}`},
		{`{"_id": 1, "t": {"_id": 1, "u": 2}}`, `[{"$replaceRoot": {"newRoot": "$t"}}, {"$addFields": {"foo": 1}}]`, `{"_id": 1, "u": 2, "foo": 1}`},
		{`{"_id": 1, "foo": {}}`, `[{"$replaceWith": {"$setField": {"field": {"$literal": "$a"}, "value": 1, "input": "$$ROOT"}}}]`, `{"_id": 1, "foo": {}, "$a": 1}`},
		{`{"_id": 1, "foo": {}}`, `[{"$set": {"foo": {"$setField": {"field": {"$literal": "a.b"}, "value": 1, "input": "$foo"}}}}]`, `{"_id": 1, "foo": {"a.b": 1}}`},
		{`{"_id": 1, "a": 1, "b": {"c": 1, "d": 2}}`, `[{"$unset": ["a", "b.c"]}]`, `{"_id": 1, "b": {"d": 2}}`},
		{`{"_id": 1, "s": {"d": 4}}`, `[{"$addFields": {"s": {"f": "u"}, "n": {"$add": ["$s.d", 1]}}}]`, `{"_id": 1, "s": {"d": 4, "f": "u"}, "n": 5}`},
		{`{"_id": 1, "a": [{"b": 1}, 2]}`, `[{"$set": {"a.c": 0}}]`, `{"_id": 1, "a": [{"b": 1, "c": 0}, {"c": 0}]}`},
		{`{"_id": 1, "a": 1}`, `[{"$set": {"a": "$$REMOVE"}}]`, `{"_id": 1}`},
	}
	for _, c := range cases {
		u, err := ParseUpdate(val(t, c.update), nil, opts)
		if err != nil {
			t.Errorf("ParseUpdate(%s): %v", c.update, err)
			continue
		}
		got, _, err := u.Apply(nil, d(t, c.doc), nil, false)
		if err != nil {
			t.Errorf("update %s on %s: %v", c.update, c.doc, err)
			continue
		}
		if js(t, got) != normJSON(t, c.want) {
			t.Errorf("update %s on %s:\n got %s\nwant %s", c.update, c.doc, js(t, got), normJSON(t, c.want))
		}
	}
	for _, c := range []struct {
		update string
		code   int32
	}{
		{`[{"$match": {}}]`, 9},
		{`[{"$foo": {}}]`, 40324},
		{`[{"$set": {"a": 1}, "$unset": "b"}]`, 40323},
		{`[{"$unset": 1}]`, 31002},
		{`[{"$set": {"a": "$$nope"}}]`, 17276},
	} {
		if _, err := ParseUpdate(val(t, c.update), nil, nil); errCode(err) != c.code {
			t.Errorf("ParseUpdate(%s) = %v, want code %d", c.update, err, c.code)
		}
	}
	u, _ := ParseUpdate(val(t, `[{"$replaceWith": {"a": 1, "_id": 2}}]`), nil, nil)
	if _, _, err := u.Apply(nil, d(t, `{"_id": 1}`), nil, false); errCode(err) != 66 {
		t.Errorf("changing _id: %v", err)
	}
	u, _ = ParseUpdate(val(t, `[{"$replaceWith": {"a": 1}}]`), nil, nil)
	if got, _, err := u.Apply(nil, d(t, `{"_id": 1, "b": 1}`), nil, false); err != nil || js(t, got) != normJSON(t, `{"_id": 1, "a": 1}`) {
		t.Errorf("dropping _id keeps it: %s %v", js(t, got), err)
	}
}
