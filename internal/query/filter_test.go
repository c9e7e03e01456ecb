package query

import (
	"testing"
)

type matchCase struct {
	filter string
	doc    string
	want   bool
}

func runMatchCases(t *testing.T, cases []matchCase) {
	t.Helper()
	for _, c := range cases {
		f, err := ParseFilter(d(t, c.filter), nil)
		if err != nil {
			t.Errorf("ParseFilter(%s): %v", c.filter, err)
			continue
		}
		if got := f.Match(d(t, c.doc)); got != c.want {
			t.Errorf("filter %s on %s = %v, want %v", c.filter, c.doc, got, c.want)
		}
	}
}

func TestFilterEquality(t *testing.T) {
	runMatchCases(t, []matchCase{
		{`{"a": 1}`, `{"a": 1}`, true},
		{`{"a": 1}`, `{"a": 1.0}`, true},
		{`{"a": 1}`, `{"a": {"$numberLong": "1"}}`, true},
		{`{"a": 1}`, `{"a": {"$numberDecimal": "1.00"}}`, true},
		{`{"a": 1}`, `{"a": "1"}`, false},
		{`{"a": 1}`, `{"a": [1, 2]}`, true},
		{`{"a": 1}`, `{"a": [[1], 2]}`, false},
		{`{"a": [1]}`, `{"a": [[1], 2]}`, true},
		{`{"a": [1, 2]}`, `{"a": [1, 2]}`, true},
		{`{"a": [2, 1]}`, `{"a": [1, 2]}`, false},
		{`{"a": 1}`, `{"b": 1}`, false},
		{`{"a": null}`, `{"b": 1}`, true},
		{`{"a": null}`, `{"a": null}`, true},
		{`{"a": null}`, `{"a": {"$undefined": true}}`, true},
		{`{"a": null}`, `{"a": []}`, false},
		{`{"a": null}`, `{"a": [null]}`, true},
		{`{"a": null}`, `{"a": [1]}`, false},
		{`{"a.b": null}`, `{"a": 5}`, true},
		{`{"a.b": null}`, `{"a": [1, 2]}`, false},
		{`{"a.b": null}`, `{"a": [{"b": 1}, {"c": 1}]}`, true},
		{`{"a.b": null}`, `{"a": [{"b": 1}]}`, false},
		{`{"a.b": 1}`, `{"a": {"b": 1}}`, true},
		{`{"a.b": 1}`, `{"a": [{"b": 2}, {"b": 1}]}`, true},
		{`{"a.b": 1}`, `{"a": [{"b": [2, 1]}]}`, true},
		{`{"a.b": 1}`, `{"a": [[{"b": 1}]]}`, false},
		{`{"a.0": 1}`, `{"a": [1, 2]}`, true},
		{`{"a.1": 1}`, `{"a": [1, 2]}`, false},
		{`{"a.0": 1}`, `{"a": {"0": 1}}`, true},
		{`{"a.0": 1}`, `{"a": [{"0": 1}]}`, true},
		{`{"a.0.b": 1}`, `{"a": [{"b": 1}]}`, true},
		{`{"a.0.b": 1}`, `{"a": [{"b": 2}, {"b": 1}]}`, false},
		{`{"a.0.0": 1}`, `{"a": [[1]]}`, true},
		{`{"a.1.b": 1}`, `{"a": [{"b": 2}, {"b": 1}]}`, true},
		{`{"a": {"b": 1}}`, `{"a": {"b": 1}}`, true},
		{`{"a": {"b": 1}}`, `{"a": {"b": 1, "c": 2}}`, false},
		{`{"a": {"b": 1, "c": 2}}`, `{"a": {"c": 2, "b": 1}}`, false},
		{`{"a": {"$eq": {"$gt": 1}}}`, `{"a": {"$gt": 1}}`, true},
		{`{"a": {"$eq": {"$numberDouble": "NaN"}}}`, `{"a": {"$numberDouble": "NaN"}}`, true},
		{`{"a": {"$gt": {"$numberDouble": "NaN"}}}`, `{"a": 1}`, false},
		{`{"a": {"$eq": {"$regularExpression": {"pattern": "x", "options": ""}}}}`, `{"a": "x"}`, false},
		{`{"a": {"$eq": {"$regularExpression": {"pattern": "x", "options": ""}}}}`, `{"a": {"$regularExpression": {"pattern": "x", "options": ""}}}`, true},
		{`{"$ref": "x"}`, `{"$ref": "x"}`, true},
		{`{}`, `{"a": 1}`, true},
	})
}

func TestFilterComparison(t *testing.T) {
	runMatchCases(t, []matchCase{
		{`{"a": {"$gt": 1}}`, `{"a": 2}`, true},
		{`{"a": {"$gt": 1}}`, `{"a": 1}`, false},
		{`{"a": {"$gt": 1}}`, `{"a": "2"}`, false},
		{`{"a": {"$gt": 1}}`, `{"a": [0, 5]}`, true},
		{`{"a": {"$gt": 1, "$lt": 3}}`, `{"a": [0, 5]}`, true},
		{`{"a": {"$elemMatch": {"$gt": 1, "$lt": 3}}}`, `{"a": [0, 5]}`, false},
		{`{"a": {"$elemMatch": {"$gt": 1, "$lt": 3}}}`, `{"a": [0, 2]}`, true},
		{`{"a": {"$gte": 1}}`, `{"a": 1.0}`, true},
		{`{"a": {"$lt": "b"}}`, `{"a": "a"}`, true},
		{`{"a": {"$lt": "b"}}`, `{"a": 1}`, false},
		{`{"a": {"$gte": null}}`, `{}`, true},
		{`{"a": {"$lte": null}}`, `{"a": null}`, true},
		{`{"a": {"$gt": null}}`, `{"a": null}`, false},
		{`{"a": {"$lt": null}}`, `{}`, false},
		{`{"a": {"$gt": {"$minKey": 1}}}`, `{"a": "x"}`, true},
		{`{"a": {"$gt": {"$minKey": 1}}}`, `{"a": null}`, true},
		{`{"a": {"$lt": {"$maxKey": 1}}}`, `{"a": {"x": 1}}`, true},
		{`{"a": {"$lt": {"$maxKey": 1}}}`, `{"a": {"$maxKey": 1}}`, false},
		{`{"a": {"$lt": {"$maxKey": 1}}}`, `{}`, true},
		{`{"a": {"$gte": {"$minKey": 1}}}`, `{}`, true},
		{`{"a": {"$lte": {"$minKey": 1}}}`, `{}`, false},
		{`{"a": {"$gt": {"$minKey": 1}}}`, `{"a": {"$undefined": true}}`, true},
		{`{"a": {"$gt": {"$date": "2020-01-01T00:00:00Z"}}}`, `{"a": {"$date": "2021-01-01T00:00:00Z"}}`, true},
		{`{"a": {"$gt": {"$date": "2020-01-01T00:00:00Z"}}}`, `{"a": 5}`, false},
		{`{"a": {"$gt": [1]}}`, `{"a": [2]}`, true},
		{`{"a": {"$gt": [1]}}`, `{"a": [[2]]}`, true},
		{`{"a": {"$gt": {"$numberLong": "9007199254740992"}}}`, `{"a": 9007199254740992.0}`, false},
		{`{"a": {"$gt": {"$numberLong": "9007199254740992"}}}`, `{"a": {"$numberLong": "9007199254740993"}}`, true},
		{`{"a": {"$ne": 1}}`, `{"a": [1, 2]}`, false},
		{`{"a": {"$ne": 1}}`, `{"a": [2, 3]}`, true},
		{`{"a": {"$ne": 1}}`, `{}`, true},
		{`{"a": {"$ne": null}}`, `{}`, false},
		{`{"a": {"$ne": null}}`, `{"a": [1, null]}`, false},
		{`{"a.b": {"$ne": 1}}`, `{"a": [{"b": 1}, {"b": 2}]}`, false},
	})
}

func TestFilterInNin(t *testing.T) {
	runMatchCases(t, []matchCase{
		{`{"a": {"$in": [1, 2]}}`, `{"a": 2}`, true},
		{`{"a": {"$in": [1, 2]}}`, `{"a": [3, 2]}`, true},
		{`{"a": {"$in": [1, 2]}}`, `{"a": 3}`, false},
		{`{"a": {"$in": []}}`, `{"a": 3}`, false},
		{`{"a": {"$in": [null]}}`, `{}`, true},
		{`{"a": {"$in": [[1, 2]]}}`, `{"a": [1, 2]}`, true},
		{`{"a": {"$in": [{"$regularExpression": {"pattern": "^x", "options": ""}}]}}`, `{"a": "xyz"}`, true},
		{`{"a": {"$in": [{"$regularExpression": {"pattern": "^x", "options": "i"}}]}}`, `{"a": ["q", "Xy"]}`, true},
		{`{"a": {"$nin": [1, 2]}}`, `{"a": 3}`, true},
		{`{"a": {"$nin": [1, 2]}}`, `{"a": [3, 1]}`, false},
		{`{"a": {"$nin": []}}`, `{}`, true},
		{`{"a": {"$nin": [null]}}`, `{}`, false},
	})
}

func TestFilterLogical(t *testing.T) {
	runMatchCases(t, []matchCase{
		{`{"$and": [{"a": 1}, {"b": 2}]}`, `{"a": 1, "b": 2}`, true},
		{`{"$and": [{"a": 1}, {"b": 2}]}`, `{"a": 1, "b": 3}`, false},
		{`{"$or": [{"a": 1}, {"b": 2}]}`, `{"a": 0, "b": 2}`, true},
		{`{"$or": [{"a": 1}, {"b": 2}]}`, `{"a": 0, "b": 3}`, false},
		{`{"$nor": [{"a": 1}, {"b": 2}]}`, `{"a": 0, "b": 3}`, true},
		{`{"$nor": [{"a": 1}]}`, `{"a": 1}`, false},
		{`{"a": {"$not": {"$gt": 2}}}`, `{"a": 1}`, true},
		{`{"a": {"$not": {"$gt": 2}}}`, `{"a": 3}`, false},
		{`{"a": {"$not": {"$gt": 2}}}`, `{}`, true},
		{`{"a": {"$not": {"$gt": 2}}}`, `{"a": [1, 3]}`, false},
		{`{"a": {"$not": {"$regularExpression": {"pattern": "^a", "options": ""}}}}`, `{"a": "bc"}`, true},
		{`{"a": {"$not": {"$regularExpression": {"pattern": "^a", "options": ""}}}}`, `{"a": "abc"}`, false},
		{`{"$comment": "x", "a": 1}`, `{"a": 1}`, true},
		{`{"$alwaysFalse": 1}`, `{"a": 1}`, false},
		{`{"$alwaysTrue": 1}`, `{"a": 1}`, true},
	})
}

func TestFilterElementOps(t *testing.T) {
	runMatchCases(t, []matchCase{
		{`{"a": {"$exists": true}}`, `{"a": null}`, true},
		{`{"a": {"$exists": true}}`, `{}`, false},
		{`{"a": {"$exists": false}}`, `{}`, true},
		{`{"a": {"$exists": 0}}`, `{"a": 1}`, false},
		{`{"a.b": {"$exists": true}}`, `{"a": [{"c": 1}, {"b": 1}]}`, true},
		{`{"a.b": {"$exists": false}}`, `{"a": [{"c": 1}, {"b": 1}]}`, false},
		{`{"a.b": {"$exists": false}}`, `{"a": [1]}`, true},
		{`{"a": {"$type": "string"}}`, `{"a": "x"}`, true},
		{`{"a": {"$type": 2}}`, `{"a": "x"}`, true},
		{`{"a": {"$type": 2.0}}`, `{"a": 1}`, false},
		{`{"a": {"$type": "number"}}`, `{"a": {"$numberDecimal": "1"}}`, true},
		{`{"a": {"$type": "number"}}`, `{"a": "1"}`, false},
		{`{"a": {"$type": ["string", "int"]}}`, `{"a": 1}`, true},
		{`{"a": {"$type": "array"}}`, `{"a": []}`, true},
		{`{"a": {"$type": "array"}}`, `{"a": [[1]]}`, true},
		{`{"a": {"$type": "int"}}`, `{"a": ["x", 1]}`, true},
		{`{"a": {"$type": "null"}}`, `{}`, false},
		{`{"a": {"$type": "null"}}`, `{"a": null}`, true},
		{`{"a": {"$type": -1}}`, `{"a": {"$minKey": 1}}`, true},
		{`{"a": {"$type": "maxKey"}}`, `{"a": {"$maxKey": 1}}`, true},
	})
}

func TestFilterArrayOps(t *testing.T) {
	runMatchCases(t, []matchCase{
		{`{"a": {"$size": 2}}`, `{"a": [1, 2]}`, true},
		{`{"a": {"$size": 2}}`, `{"a": [[1, 2]]}`, false},
		{`{"a": {"$size": 0}}`, `{"a": []}`, true},
		{`{"a": {"$size": 0}}`, `{}`, false},
		{`{"a": {"$size": 1.0}}`, `{"a": [3]}`, true},
		{`{"a.b": {"$size": 1}}`, `{"a": [{"b": [1]}, {"b": 2}]}`, true},
		{`{"a": {"$all": [1, 2]}}`, `{"a": [2, 3, 1]}`, true},
		{`{"a": {"$all": [1, 2]}}`, `{"a": [2, 3]}`, false},
		{`{"a": {"$all": [1]}}`, `{"a": 1}`, true},
		{`{"a": {"$all": []}}`, `{"a": [1]}`, false},
		{`{"a": {"$all": [[1, 2]]}}`, `{"a": [1, 2]}`, true},
		{`{"a": {"$all": [[1, 2]]}}`, `{"a": [[1, 2], 3]}`, true},
		{`{"a": {"$all": [{"$elemMatch": {"b": 1}}, {"$elemMatch": {"c": 2}}]}}`, `{"a": [{"b": 1}, {"c": 2}]}`, true},
		{`{"a": {"$all": [{"$elemMatch": {"b": 1, "c": 2}}]}}`, `{"a": [{"b": 1}, {"c": 2}]}`, false},
		{`{"a": {"$elemMatch": {"b": 1, "c": 2}}}`, `{"a": [{"b": 1, "c": 2}]}`, true},
		{`{"a": {"$elemMatch": {"b": 1, "c": 2}}}`, `{"a": [{"b": 1}, {"c": 2}]}`, false},
		{`{"a": {"$elemMatch": {"b": 1}}}`, `{"a": {"b": 1}}`, false},
		{`{"a": {"$elemMatch": {"0": 1}}}`, `{"a": [[1, 2]]}`, true},
		{`{"a": {"$elemMatch": {"$eq": 1}}}`, `{"a": [1]}`, true},
		{`{"a": {"$elemMatch": {"$eq": 1}}}`, `{"a": 1}`, false},
		{`{"a": {"$elemMatch": {"$not": {"$eq": 1}}}}`, `{"a": [1, 2]}`, true},
		{`{"a": {"$elemMatch": {"$not": {"$eq": 1}}}}`, `{"a": [1]}`, false},
		{`{"a": {"$elemMatch": {"$and": [{"b": 1}]}}}`, `{"a": [{"b": 1}]}`, true},
		{`{"a.b": {"$elemMatch": {"$gt": 1}}}`, `{"a": [{"b": [0]}, {"b": [2]}]}`, true},
	})
}

func TestFilterRegex(t *testing.T) {
	runMatchCases(t, []matchCase{
		{`{"a": {"$regex": "^ab"}}`, `{"a": "abc"}`, true},
		{`{"a": {"$regex": "^AB", "$options": "i"}}`, `{"a": "abc"}`, true},
		{`{"a": {"$regex": "^b", "$options": "m"}}`, `{"a": "a\nb"}`, true},
		{`{"a": {"$regex": "^b"}}`, `{"a": "a\nb"}`, false},
		{`{"a": {"$regex": "a.b", "$options": "s"}}`, `{"a": "a\nb"}`, true},
		{`{"a": {"$regex": "a.b"}}`, `{"a": "a\nb"}`, false},
		{`{"a": {"$regex": "a b # comment\n c", "$options": "x"}}`, `{"a": "abc"}`, true},
		{`{"a": {"$regex": "c$"}}`, `{"a": "abc\n"}`, true},
		{`{"a": {"$regex": "c$"}}`, `{"a": "abc\nd"}`, false},
		{`{"a": {"$regex": "x"}}`, `{"a": 1}`, false},
		{`{"a": {"$regex": "x"}}`, `{"a": ["y", "x"]}`, true},
		{`{"a": {"$regularExpression": {"pattern": "^a", "options": ""}}}`, `{"a": "abc"}`, true},
		{`{"a": {"$regularExpression": {"pattern": "^a", "options": ""}}}`, `{"a": {"$symbol": "abc"}}`, true},
		{`{"a": {"$regex": {"$regularExpression": {"pattern": "^A", "options": "i"}}}}`, `{"a": "abc"}`, true},
		{`{"a": {"$regex": "é"}}`, `{"a": "café"}`, true},
	})
}

func TestFilterModAndBits(t *testing.T) {
	runMatchCases(t, []matchCase{
		{`{"a": {"$mod": [4, 0]}}`, `{"a": 8}`, true},
		{`{"a": {"$mod": [4, 1]}}`, `{"a": 9.9}`, true},
		{`{"a": {"$mod": [4, -1]}}`, `{"a": -5}`, true},
		{`{"a": {"$mod": [4.5, 1]}}`, `{"a": 5}`, true},
		{`{"a": {"$mod": [4, 0]}}`, `{"a": "8"}`, false},
		{`{"a": {"$mod": [4, 0]}}`, `{"a": {"$numberDouble": "NaN"}}`, false},
		{`{"a": {"$mod": [-1, 0]}}`, `{"a": {"$numberLong": "-9223372036854775808"}}`, true},
		{`{"a": {"$bitsAllSet": 5}}`, `{"a": 7}`, true},
		{`{"a": {"$bitsAllSet": 5}}`, `{"a": 6}`, false},
		{`{"a": {"$bitsAllSet": [0, 2]}}`, `{"a": 5}`, true},
		{`{"a": {"$bitsAnySet": [1]}}`, `{"a": 5}`, false},
		{`{"a": {"$bitsAllClear": [1]}}`, `{"a": 5}`, true},
		{`{"a": {"$bitsAnyClear": [0, 1]}}`, `{"a": 5}`, true},
		{`{"a": {"$bitsAllSet": [63]}}`, `{"a": -1}`, true},
		{`{"a": {"$bitsAllSet": [200]}}`, `{"a": -1}`, true},
		{`{"a": {"$bitsAllClear": [200]}}`, `{"a": 1}`, true},
		{`{"a": {"$bitsAllSet": 1}}`, `{"a": 1.5}`, false},
		{`{"a": {"$bitsAllSet": 1}}`, `{"a": 3.0}`, true},
		{`{"a": {"$bitsAllSet": 1}}`, `{"a": "1"}`, false},
		{`{"a": {"$bitsAllSet": [0, 9]}}`, `{"a": {"$binary": {"base64": "AQI=", "subType": "00"}}}`, true},
		{`{"a": {"$bitsAnySet": {"$binary": {"base64": "AQ==", "subType": "00"}}}}`, `{"a": 3}`, true},
	})
}

func TestFilterErrors(t *testing.T) {
	cases := []struct {
		filter string
		code   int32
		msg    string
	}{
		{`{"a": {"$foo": 1}}`, 2, "unknown operator: $foo"},
		{`{"$foo": 1}`, 2, "unknown top level operator: $foo"},
		{`{"$and": []}`, 2, "$and/$or/$nor must be a nonempty array"},
		{`{"$or": 1}`, 2, "$or must be an array"},
		{`{"$nor": [1]}`, 2, "$or/$and/$nor entries need to be full objects"},
		{`{"a": {"$in": 1}}`, 2, "$in needs an array"},
		{`{"a": {"$nin": 1}}`, 2, "$nin needs an array"},
		{`{"a": {"$in": [{"$gt": 1}]}}`, 2, "cannot nest $ under $in"},
		{`{"a": {"$size": "1"}}`, 2, "$size needs a number"},
		{`{"a": {"$size": -1}}`, 2, "$size may not be negative"},
		{`{"a": {"$size": 1.5}}`, 2, "$size must be a whole number"},
		{`{"a": {"$all": 1}}`, 2, "$all needs an array"},
		{`{"a": {"$all": [{"$elemMatch": {"b": 1}}, 1]}}`, 2, "$all/$elemMatch has to be consistent"},
		{`{"a": {"$all": [{"$gt": 1}]}}`, 2, "no $ expressions in $all"},
		{`{"a": {"$elemMatch": 1}}`, 2, "$elemMatch needs an Object"},
		{`{"a": {"$not": 1}}`, 2, "$not needs a regex or a document"},
		{`{"a": {"$not": {}}}`, 2, "$not cannot be empty"},
		{`{"a": {"$not": {"b": 1}}}`, 2, "unknown operator: b"},
		{`{"a": {"$mod": 1}}`, 2, "malformed mod, needs to be an array"},
		{`{"a": {"$mod": [1]}}`, 2, "malformed mod, not enough elements"},
		{`{"a": {"$mod": [1, 2, 3]}}`, 2, "malformed mod, too many elements"},
		{`{"a": {"$mod": ["1", 2]}}`, 2, "malformed mod, divisor not a number"},
		{`{"a": {"$mod": [1, "2"]}}`, 2, "malformed mod, remainder not a number"},
		{`{"a": {"$mod": [0, 2]}}`, 2, "divisor cannot be 0"},
		{`{"a": {"$type": "foo"}}`, 2, "Unknown type name alias: foo"},
		{`{"a": {"$type": 100}}`, 2, "Invalid numerical type code: 100"},
		{`{"a": {"$type": {}}}`, 14, "type must be represented as a number or a string"},
		{`{"a": {"$type": []}}`, 9, "a must match at least one type"},
		{`{"a": {"$regex": 1}}`, 2, "$regex has to be a string"},
		{`{"a": {"$options": "i"}}`, 2, "$options needs a $regex"},
		{`{"a": {"$regex": "x", "$options": "q"}}`, 51108, "invalid flag in regex options: q"},
		{`{"a": {"$regex": "(?=x)"}}`, 238, ""},
		{`{"a": {"$regex": "(x)\\1"}}`, 238, ""},
		{`{"a": {"$regex": "("}}`, 51091, ""},
		{`{"a": {"$gt": {"$regularExpression": {"pattern": "x", "options": ""}}}}`, 2, "Can't have RegEx as arg to predicate over field 'a'."},
		{`{"a": {"$ne": {"$regularExpression": {"pattern": "x", "options": ""}}}}`, 2, "Can't have regex as arg to $ne."},
		{`{"a": {"$bitsAllSet": -1}}`, 9, "Expected a positive number in: $bitsAllSet: -1"},
		{`{"a": {"$bitsAllSet": [-1]}}`, 2, "bit positions must be >= 0 but got: 0: -1"},
		{`{"a": {"$bitsAllSet": "x"}}`, 2, `$bitsAllSet takes an Array, a number, or a BinData but received: $bitsAllSet: "x"`},
		{`{"$expr": {"$foo": ["$a", 1]}}`, 168, "Unrecognized expression '$foo'"},
		{`{"$expr": {"$eq": ["$a", "$$x"]}}`, 17276, "Use of undefined variable: x"},
		{`{"$where": "true"}`, 2, "$where is not allowed in this context"}, // no Scripts: a validator, a partial filter
		{`{"$text": {"$search": "x"}}`, 27, ""},
		{`{"$jsonSchema": 1}`, 14, "$jsonSchema must be an object"},
		{`{"a": {"$near": [0, 0]}}`, 2, "$geoNear, $near, and $nearSphere are not allowed in this context"},
		{`{"a": {"$elemMatch": {"$expr": {}}}}`, 2, "$expr can only be applied to the top-level document"},
		{`{"$alwaysTrue": 2}`, 9, "$alwaysTrue must be an integer value of 1"},
		{`{"a": {"$undefined": true}}`, 2, "cannot compare to undefined"},
		{`{"a": {"$in": [{"$undefined": true}]}}`, 2, "InMatchExpression equality cannot be undefined"},
	}
	for _, c := range cases {
		_, err := ParseFilter(d(t, c.filter), nil)
		if err == nil {
			t.Errorf("ParseFilter(%s) succeeded, want code %d", c.filter, c.code)
			continue
		}
		if errCode(err) != c.code || (c.msg != "" && err.Error() != c.msg) {
			t.Errorf("ParseFilter(%s) = %d %q, want %d %q", c.filter, errCode(err), err, c.code, c.msg)
		}
	}
}

func TestMatchDetails(t *testing.T) {
	cases := []struct {
		filter, doc, key string
	}{
		{`{"a": 2}`, `{"a": [1, 2, 3]}`, "1"},
		{`{"a.b": 2}`, `{"a": [{"b": 1}, {"b": 2}]}`, "1"},
		{`{"a.b": 2}`, `{"a": [{"b": 1}, {"b": [5, 2]}]}`, "1"},
		{`{"a": {"$elemMatch": {"b": 2}}}`, `{"a": [{"b": 1}, {"b": 2}]}`, "1"},
		{`{"x": 1, "a": {"$gt": 2}}`, `{"x": 1, "a": [1, 2, 3]}`, "2"},
		{`{"a": 1}`, `{"a": 1}`, ""},
	}
	for _, c := range cases {
		f, err := ParseFilter(d(t, c.filter), nil)
		if err != nil {
			t.Fatal(err)
		}
		var md MatchDetails
		if !f.MatchDetails(d(t, c.doc), &md) {
			t.Errorf("%s did not match %s", c.filter, c.doc)
			continue
		}
		if md.ElemMatchKey != c.key || md.HasKey != (c.key != "") {
			t.Errorf("%s on %s: key %q (%v), want %q", c.filter, c.doc, md.ElemMatchKey, md.HasKey, c.key)
		}
	}
}

func TestFilterExpr(t *testing.T) {
	opts := &Options{Let: d(t, `{"id": 2, "name": "x"}`)}
	cases := []matchCase{
		{`{"$expr": {"$eq": ["$_id", "$$id"]}}`, `{"_id": 2}`, true},
		{`{"$expr": {"$eq": ["$_id", "$$id"]}}`, `{"_id": 3}`, false},
		{`{"$expr": {"$gt": ["$a", "$b"]}}`, `{"a": 5, "b": 2}`, true},
		{`{"$expr": {"$gt": ["$a", "$b"]}}`, `{"a": "x", "b": 2}`, true},
		{`{"$expr": {"$and": [{"$eq": ["$name", "$$name"]}, {"$lt": [{"$add": ["$a", 1]}, 10]}]}}`, `{"name": "x", "a": 5}`, true},
		{`{"$expr": {"$eq": ["$missing", null]}}`, `{}`, false},
		{`{"$expr": {"$in": ["$a", [1, 2]]}}`, `{"a": 2}`, true},
		{`{"$expr": {"$in": ["$a", "$b"]}}`, `{"a": 2}`, false},
		{`{"$expr": "$flag"}`, `{"flag": 1}`, true},
		{`{"$expr": {"$eq": [{"$size": "$arr"}, 2]}}`, `{"arr": [1, 2]}`, true},
		{`{"$expr": {"$eq": ["$a.b", [1, 2]]}}`, `{"a": [{"b": 1}, {"c": 1}, {"b": 2}]}`, true},
	}
	for _, c := range cases {
		f, err := ParseFilter(d(t, c.filter), opts)
		if err != nil {
			t.Errorf("ParseFilter(%s): %v", c.filter, err)
			continue
		}
		if got := f.Match(d(t, c.doc)); got != c.want {
			t.Errorf("filter %s on %s = %v, want %v", c.filter, c.doc, got, c.want)
		}
	}
}

func TestFilterInLongList(t *testing.T) {
	runMatchCases(t, []matchCase{
		{`{"a": {"$in": [1, 2, 3, 4, 5, 6, 7, 8, "x", null, {"$numberDouble": "NaN"}]}}`, `{"a": 8.0}`, true},
		{`{"a": {"$in": [1, 2, 3, 4, 5, 6, 7, 8, "x", null, {"$numberDouble": "NaN"}]}}`, `{"a": "x"}`, true},
		{`{"a": {"$in": [1, 2, 3, 4, 5, 6, 7, 8, "x", null, {"$numberDouble": "NaN"}]}}`, `{}`, true},
		{`{"a": {"$in": [1, 2, 3, 4, 5, 6, 7, 8, "x", null, {"$numberDouble": "NaN"}]}}`, `{"a": {"$numberDouble": "NaN"}}`, true},
		{`{"a": {"$in": [1, 2, 3, 4, 5, 6, 7, 8, "x", null]}}`, `{"a": [9, {"$numberLong": "3"}]}`, true},
		{`{"a": {"$in": [1, 2, 3, 4, 5, 6, 7, 8, "x", null]}}`, `{"a": [9, "y"]}`, false},
		{`{"a": {"$in": [1, 2, 3, 4, 5, 6, 7, 8, [1, 2]]}}`, `{"a": [1, 2]}`, true},
		{`{"a": {"$nin": [1, 2, 3, 4, 5, 6, 7, 8, 9]}}`, `{"a": 10}`, true},
	})
}

func TestExprErrorReported(t *testing.T) {
	f, err := ParseFilter(d(t, `{"$expr": {"$add": ["$a", 1]}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	var md MatchDetails
	if f.MatchDetails(d(t, `{"a": "x"}`), &md) || errCode(md.Err) != 14 {
		t.Errorf("want TypeMismatch (14, since MongoDB 6.1), got %v", md.Err)
	}
	g, _ := ParseFilter(d(t, `{"a": {"$ne": 1}, "b": 2}`), nil)
	md = MatchDetails{}
	if !g.MatchDetails(d(t, `{"a": [2, 3], "b": [1, 2]}`), &md) || md.ElemMatchKey != "1" {
		t.Errorf("negation must not record positions: %+v", md)
	}
}
