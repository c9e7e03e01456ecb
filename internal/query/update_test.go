package query

import (
	"strings"
	"testing"

	"github.com/cairndb/cairn/bson"
)

type updateCase struct {
	doc, update, want string
	filters           []string
}

func parseUpd(t *testing.T, upd string, filters []string) (*Update, error) {
	t.Helper()
	var fs []bson.Doc
	for _, f := range filters {
		fs = append(fs, d(t, f))
	}
	v := val(t, upd)
	return ParseUpdate(v, fs, nil)
}

func runUpdateCases(t *testing.T, cases []updateCase) {
	t.Helper()
	for _, c := range cases {
		u, err := parseUpd(t, c.update, c.filters)
		if err != nil {
			t.Errorf("ParseUpdate(%s): %v", c.update, err)
			continue
		}
		doc := d(t, c.doc)
		got, changed, err := u.Apply(nil, doc, &MatchDetails{}, false)
		if err != nil {
			t.Errorf("update %s on %s: %v", c.update, c.doc, err)
			continue
		}
		if js(t, got) != normJSON(t, c.want) {
			t.Errorf("update %s on %s:\n got %s\nwant %s", c.update, c.doc, js(t, got), normJSON(t, c.want))
		}
		if changed != (js(t, got) != js(t, doc)) {
			t.Errorf("update %s on %s: changed=%v", c.update, c.doc, changed)
		}
	}
}

func TestUpdateSetUnset(t *testing.T) {
	runUpdateCases(t, []updateCase{
		{`{"_id": 1, "a": 1}`, `{"$set": {"a": 2}}`, `{"_id": 1, "a": 2}`, nil},
		{`{"_id": 1, "a": 1}`, `{"$set": {"z": 1, "b": 2, "10": 1, "9": 1}}`, `{"_id": 1, "a": 1, "9": 1, "10": 1, "b": 2, "z": 1}`, nil},
		{`{"_id": 1}`, `{"$set": {"a.b.c": 1}}`, `{"_id": 1, "a": {"b": {"c": 1}}}`, nil},
		{`{"_id": 1, "a": {"x": 1}}`, `{"$set": {"a.b": 1, "a.x": 2}}`, `{"_id": 1, "a": {"x": 2, "b": 1}}`, nil},
		{`{"_id": 1, "a": [1, 2]}`, `{"$set": {"a.1": 5}}`, `{"_id": 1, "a": [1, 5]}`, nil},
		{`{"_id": 1, "a": [1]}`, `{"$set": {"a.3": 5}}`, `{"_id": 1, "a": [1, null, null, 5]}`, nil},
		{`{"_id": 1}`, `{"$set": {"a.0": 5}}`, `{"_id": 1, "a": {"0": 5}}`, nil},
		{`{"_id": 1, "a": [{"b": 1}, {"b": 2}]}`, `{"$set": {"a.1.b": 5}}`, `{"_id": 1, "a": [{"b": 1}, {"b": 5}]}`, nil},
		{`{"_id": 1, "a": 1, "b": 2}`, `{"$unset": {"a": ""}}`, `{"_id": 1, "b": 2}`, nil},
		{`{"_id": 1, "a": [1, 2]}`, `{"$unset": {"a.0": 1}}`, `{"_id": 1, "a": [null, 2]}`, nil},
		{`{"_id": 1}`, `{"$unset": {"a.b": 1}}`, `{"_id": 1}`, nil},
		{`{"_id": 1, "a": 5}`, `{"$unset": {"a.b": 1}}`, `{"_id": 1, "a": 5}`, nil},
		{`{"_id": 1}`, `{"$set": {}}`, `{"_id": 1}`, nil},
		{`{"_id": 1, "a": 1}`, `{"$set": {"_id": 1}}`, `{"_id": 1, "a": 1}`, nil},
		{`{"_id": 1}`, `{"$setOnInsert": {"a": 1}}`, `{"_id": 1}`, nil},
		{`{"_id": 1, "a": {"b": 1}}`, `{"$set": {"a": {"$x": 1}}}`, `{"_id": 1, "a": {"$x": 1}}`, nil},
	})
}

func TestUpdateArithmetic(t *testing.T) {
	runUpdateCases(t, []updateCase{
		{`{"_id": 1, "a": 1}`, `{"$inc": {"a": 2}}`, `{"_id": 1, "a": 3}`, nil},
		{`{"_id": 1, "a": 1}`, `{"$inc": {"a": 2.5}}`, `{"_id": 1, "a": 3.5}`, nil},
		{`{"_id": 1, "a": 2147483647}`, `{"$inc": {"a": 1}}`, `{"_id": 1, "a": {"$numberLong": "2147483648"}}`, nil},
		{`{"_id": 1, "a": {"$numberLong": "5"}}`, `{"$inc": {"a": 1}}`, `{"_id": 1, "a": {"$numberLong": "6"}}`, nil},
		{`{"_id": 1}`, `{"$inc": {"a": 1}}`, `{"_id": 1, "a": 1}`, nil},
		{`{"_id": 1, "a": {"$numberDecimal": "1.1"}}`, `{"$inc": {"a": 1}}`, `{"_id": 1, "a": {"$numberDecimal": "2.1"}}`, nil},
		{`{"_id": 1, "a": 3}`, `{"$mul": {"a": 2}}`, `{"_id": 1, "a": 6}`, nil},
		{`{"_id": 1}`, `{"$mul": {"a": 2}}`, `{"_id": 1, "a": 0}`, nil},
		{`{"_id": 1}`, `{"$mul": {"a": 2.5}}`, `{"_id": 1, "a": 0.0}`, nil},
		{`{"_id": 1}`, `{"$mul": {"a": {"$numberLong": "2"}}}`, `{"_id": 1, "a": {"$numberLong": "0"}}`, nil},
		{`{"_id": 1, "a": 5}`, `{"$min": {"a": 3}}`, `{"_id": 1, "a": 3}`, nil},
		{`{"_id": 1, "a": 5}`, `{"$min": {"a": 7}}`, `{"_id": 1, "a": 5}`, nil},
		{`{"_id": 1, "a": 5}`, `{"$max": {"a": 7}}`, `{"_id": 1, "a": 7}`, nil},
		{`{"_id": 1, "a": 5}`, `{"$max": {"a": "x"}}`, `{"_id": 1, "a": "x"}`, nil},
		{`{"_id": 1, "a": 5}`, `{"$min": {"a": null}}`, `{"_id": 1, "a": null}`, nil},
		{`{"_id": 1}`, `{"$max": {"a": 1}}`, `{"_id": 1, "a": 1}`, nil},
		{`{"_id": 1, "a": 5}`, `{"$bit": {"a": {"and": 4}}}`, `{"_id": 1, "a": 4}`, nil},
		{`{"_id": 1, "a": 5}`, `{"$bit": {"a": {"or": 2}}}`, `{"_id": 1, "a": 7}`, nil},
		{`{"_id": 1, "a": 5}`, `{"$bit": {"a": {"xor": {"$numberLong": "1"}}}}`, `{"_id": 1, "a": {"$numberLong": "4"}}`, nil},
	})
}

func TestUpdateRename(t *testing.T) {
	runUpdateCases(t, []updateCase{
		{`{"_id": 1, "a": 1, "b": 2}`, `{"$rename": {"a": "c"}}`, `{"_id": 1, "b": 2, "c": 1}`, nil},
		{`{"_id": 1, "a": 1, "b": 2}`, `{"$rename": {"a": "b"}}`, `{"_id": 1, "b": 1}`, nil},
		{`{"_id": 1, "b": 2}`, `{"$rename": {"a": "c"}}`, `{"_id": 1, "b": 2}`, nil},
		{`{"_id": 1, "a": {"x": 1}}`, `{"$rename": {"a.x": "b.y"}}`, `{"_id": 1, "a": {}, "b": {"y": 1}}`, nil},
	})
}

func TestUpdateArrays(t *testing.T) {
	runUpdateCases(t, []updateCase{
		{`{"_id": 1, "a": [1]}`, `{"$push": {"a": 2}}`, `{"_id": 1, "a": [1, 2]}`, nil},
		{`{"_id": 1}`, `{"$push": {"a": 2}}`, `{"_id": 1, "a": [2]}`, nil},
		{`{"_id": 1, "a": [1]}`, `{"$push": {"a": [2, 3]}}`, `{"_id": 1, "a": [1, [2, 3]]}`, nil},
		{`{"_id": 1, "a": [1]}`, `{"$push": {"a": {"$each": [2, 3]}}}`, `{"_id": 1, "a": [1, 2, 3]}`, nil},
		{`{"_id": 1, "a": [1, 2]}`, `{"$push": {"a": {"$each": [9], "$position": 1}}}`, `{"_id": 1, "a": [1, 9, 2]}`, nil},
		{`{"_id": 1, "a": [1, 2]}`, `{"$push": {"a": {"$each": [9], "$position": -1}}}`, `{"_id": 1, "a": [1, 9, 2]}`, nil},
		{`{"_id": 1, "a": [3, 1]}`, `{"$push": {"a": {"$each": [2], "$sort": 1}}}`, `{"_id": 1, "a": [1, 2, 3]}`, nil},
		{`{"_id": 1, "a": [3, 1]}`, `{"$push": {"a": {"$each": [2], "$sort": -1, "$slice": 2}}}`, `{"_id": 1, "a": [3, 2]}`, nil},
		{`{"_id": 1, "a": [3, 1]}`, `{"$push": {"a": {"$each": [2], "$slice": -2}}}`, `{"_id": 1, "a": [1, 2]}`, nil},
		{`{"_id": 1, "a": [{"x": 3}, {"x": 1}]}`, `{"$push": {"a": {"$each": [{"x": 2}], "$sort": {"x": 1}}}}`, `{"_id": 1, "a": [{"x": 1}, {"x": 2}, {"x": 3}]}`, nil},
		{`{"_id": 1, "a": [1, 2]}`, `{"$push": {"a": {"$each": [], "$slice": 0}}}`, `{"_id": 1, "a": []}`, nil},
		{`{"_id": 1, "a": [1, 2]}`, `{"$addToSet": {"a": 2}}`, `{"_id": 1, "a": [1, 2]}`, nil},
		{`{"_id": 1, "a": [1, 2]}`, `{"$addToSet": {"a": 3}}`, `{"_id": 1, "a": [1, 2, 3]}`, nil},
		{`{"_id": 1, "a": [1, 2]}`, `{"$addToSet": {"a": {"$each": [2, 3, 3]}}}`, `{"_id": 1, "a": [1, 2, 3]}`, nil},
		{`{"_id": 1}`, `{"$addToSet": {"a": {"$each": [1, 1]}}}`, `{"_id": 1, "a": [1]}`, nil},
		{`{"_id": 1, "a": [1, 2, 3]}`, `{"$pop": {"a": 1}}`, `{"_id": 1, "a": [1, 2]}`, nil},
		{`{"_id": 1, "a": [1, 2, 3]}`, `{"$pop": {"a": -1}}`, `{"_id": 1, "a": [2, 3]}`, nil},
		{`{"_id": 1}`, `{"$pop": {"a": -1}}`, `{"_id": 1}`, nil},
		{`{"_id": 1, "a": [1, 2, 3, 2]}`, `{"$pull": {"a": 2}}`, `{"_id": 1, "a": [1, 3]}`, nil},
		{`{"_id": 1, "a": [1, 2, 3, 4]}`, `{"$pull": {"a": {"$gte": 3}}}`, `{"_id": 1, "a": [1, 2]}`, nil},
		{`{"_id": 1, "a": [{"b": 1, "c": 1}, {"b": 2}]}`, `{"$pull": {"a": {"b": 1}}}`, `{"_id": 1, "a": [{"b": 2}]}`, nil},
		{`{"_id": 1, "a": [[1, 2], [3]]}`, `{"$pull": {"a": [3]}}`, `{"_id": 1, "a": [[1, 2]]}`, nil},
		{`{"_id": 1, "a": ["ab", "cd"]}`, `{"$pull": {"a": {"$regularExpression": {"pattern": "^a", "options": ""}}}}`, `{"_id": 1, "a": ["cd"]}`, nil},
		{`{"_id": 1, "a": [1, 2, 3, 1]}`, `{"$pullAll": {"a": [1, 3]}}`, `{"_id": 1, "a": [2]}`, nil},
		{`{"_id": 1, "a": [1, 2, 3]}`, `{"$set": {"a.$[]": 0}}`, `{"_id": 1, "a": [0, 0, 0]}`, nil},
		{`{"_id": 1, "a": [{"b": 1}, {"b": 2}]}`, `{"$inc": {"a.$[].b": 10}}`, `{"_id": 1, "a": [{"b": 11}, {"b": 12}]}`, nil},
		{`{"_id": 1, "a": [1, 5, 2, 7]}`, `{"$set": {"a.$[x]": 0}}`, `{"_id": 1, "a": [1, 0, 2, 0]}`, []string{`{"x": {"$gt": 4}}`}},
		{`{"_id": 1, "a": [{"b": 1, "c": 0}, {"b": 2, "c": 0}]}`, `{"$set": {"a.$[e].c": 9}}`, `{"_id": 1, "a": [{"b": 1, "c": 0}, {"b": 2, "c": 9}]}`, []string{`{"e.b": 2}`}},
		{`{"_id": 1, "a": [[1, 2], [3]]}`, `{"$set": {"a.$[].$[y]": 0}}`, `{"_id": 1, "a": [[0, 2], [3]]}`, []string{`{"y": 1}`}},
	})
}

func TestUpdatePositional(t *testing.T) {
	f, _ := ParseFilter(d(t, `{"a.b": 2}`), nil)
	u, err := parseUpd(t, `{"$set": {"a.$.c": 1}}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	doc := d(t, `{"_id": 1, "a": [{"b": 1}, {"b": 2}]}`)
	var md MatchDetails
	if !f.MatchDetails(doc, &md) {
		t.Fatal("no match")
	}
	got, _, err := u.Apply(nil, doc, &md, false)
	if err != nil {
		t.Fatal(err)
	}
	if want := normJSON(t, `{"_id": 1, "a": [{"b": 1}, {"b": 2, "c": 1}]}`); js(t, got) != want {
		t.Errorf("got %s want %s", js(t, got), want)
	}
	if _, _, err := u.Apply(nil, doc, &MatchDetails{}, false); errCode(err) != 2 {
		t.Errorf("positional without match: %v", err)
	}
}

func TestUpdateReplacement(t *testing.T) {
	runUpdateCases(t, []updateCase{
		{`{"_id": 1, "a": 1}`, `{"b": 2}`, `{"_id": 1, "b": 2}`, nil},
		{`{"_id": 1, "a": 1}`, `{"b": 2, "_id": 1}`, `{"_id": 1, "b": 2}`, nil},
		{`{"_id": 1, "a": 1}`, `{}`, `{"_id": 1}`, nil},
		{`{"_id": 1, "a": 1}`, `{"a.b": 1, "c": {"$d": 1}}`, `{"_id": 1, "a.b": 1, "c": {"$d": 1}}`, nil},
	})
}

func TestUpdateUpsertInsert(t *testing.T) {
	u, err := parseUpd(t, `{"$set": {"b": 1}, "$setOnInsert": {"c": 2}}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := u.Apply(nil, d(t, `{"_id": 5, "a": 1}`), nil, true)
	if err != nil {
		t.Fatal(err)
	}
	if want := normJSON(t, `{"_id": 5, "a": 1, "b": 1, "c": 2}`); js(t, got) != want {
		t.Errorf("got %s want %s", js(t, got), want)
	}
}

func TestUpdateErrors(t *testing.T) {
	cases := []struct {
		doc, update string
		code        int32
		msg         string
	}{
		{`{"_id": 1}`, `{"$foo": {"a": 1}}`, 9, "Unknown modifier: $foo. Expected a valid update modifier or pipeline-style update specified as an array"},
		{`{"_id": 1}`, `{"$set": 1}`, 9, "Modifiers operate on fields but we found type int instead. For example: {$mod: {<field>: ...}} not {$set: 1}"},
		{`{"_id": 1}`, `{"$set": {"a": 1}, "b": 1}`, 9, "Unknown modifier: b. Expected a valid update modifier or pipeline-style update specified as an array"},
		{`{"_id": 1}`, `{"a": 1, "$set": {"b": 1}}`, 52, ""},
		{`{"_id": 1}`, `{"$set": {"a": 1}, "$inc": {"a.b": 1}}`, 40, "Updating the path 'a.b' would create a conflict at 'a'"},
		{`{"_id": 1}`, `{"$set": {"a.b": 1}, "$inc": {"a": 1}}`, 40, "Updating the path 'a' would create a conflict at 'a'"},
		{`{"_id": 1}`, `{"$set": {"_id": 2}}`, 66, "Performing an update on the path '_id' would modify the immutable field '_id'"},
		{`{"_id": 1}`, `{"$unset": {"_id": 1}}`, 66, "Performing an update on the path '_id' would modify the immutable field '_id'"},
		{`{"_id": 1}`, `{"_id": 2}`, 66, "After applying the update, the (immutable) field '_id' was found to have been altered to _id: 2"},
		{`{"_id": 1}`, `{"$set": {"": 1}}`, 56, "An empty update path is not valid."},
		{`{"_id": 1}`, `{"$set": {"a..b": 1}}`, 56, "The update path 'a..b' contains an empty field name, which is not allowed."},
		{`{"_id": 1}`, `{"$set": {"$a": 1}}`, 52, ""},
		{`{"_id": 1, "a": 5}`, `{"$set": {"a.b": 1}}`, 28, "Cannot create field 'b' in element {a: 5}"},
		{`{"_id": 1, "a": [1]}`, `{"$set": {"a.b": 1}}`, 28, "Cannot create field 'b' in element {a: [ 1 ]}"},
		{`{"_id": 1, "a": "x"}`, `{"$inc": {"a": 1}}`, 14, "Cannot apply $inc to a value of non-numeric type. {_id: 1} has the field 'a' of non-numeric type string"},
		{`{"_id": 1}`, `{"$inc": {"a": "x"}}`, 14, `Cannot increment with non-numeric argument: {a: "x"}`},
		{`{"_id": 1, "a": {"$numberLong": "9223372036854775807"}}`, `{"$inc": {"a": 1}}`, 2, ""},
		{`{"_id": 1, "a": 1}`, `{"$push": {"a": 1}}`, 2, "The field 'a' must be an array but is of type int in document {_id: 1}"},
		{`{"_id": 1}`, `{"$push": {"a": {"$each": 1}}}`, 2, "The argument to $each in $push must be an array but it was of type: int"},
		{`{"_id": 1}`, `{"$push": {"a": {"$each": [1], "$foo": 1}}}`, 9, "Unrecognized clause in $push: $foo"},
		{`{"_id": 1, "a": 1}`, `{"$addToSet": {"a": 1}}`, 2, "Cannot apply $addToSet to non-array field. Field named 'a' has non-array type int"},
		{`{"_id": 1, "a": 1}`, `{"$pop": {"a": 1}}`, 14, "Path 'a' contains an element of non-array type 'int'"},
		{`{"_id": 1}`, `{"$pop": {"a": 2}}`, 2, "$pop expects 1 or -1, found: 2"},
		{`{"_id": 1, "a": 1}`, `{"$pull": {"a": 1}}`, 2, "Cannot apply $pull to a non-array value"},
		{`{"_id": 1}`, `{"$pullAll": {"a": 1}}`, 2, "$pullAll requires an array argument but was given a int"},
		{`{"_id": 1}`, `{"$rename": {"a": 1}}`, 2, "The 'to' field for $rename must be a string: a: 1"},
		{`{"_id": 1}`, `{"$rename": {"a": "a"}}`, 2, `The source and target field for $rename must differ: a: "a"`},
		{`{"_id": 1}`, `{"$rename": {"a": "a.b"}}`, 2, `The source and target field for $rename must not be on the same path: a: "a.b"`},
		{`{"_id": 1}`, `{"$set": {"a.$[]": 1}}`, 2, "The path 'a' must exist in the document in order to apply array updates."},
		{`{"_id": 1, "a": 5}`, `{"$set": {"a.$[]": 1}}`, 2, "Cannot apply array updates to non-array element a: 5"},
		{`{"_id": 1}`, `{"$set": {"a.$[x]": 1}}`, 2, "No array filter found for identifier 'x' in path 'a.$[x]'"},
		{`{"_id": 1}`, `{"$set": {"a.$.b.$": 1}}`, 2, "Too many positional (i.e. '$') elements found in path 'a.$.b.$'"},
		{`{"_id": 1}`, `{"$currentDate": {"a": 1}}`, 2, ""},
		{`{"_id": 1}`, `{"$bit": {"a": {"foo": 1}}}`, 2, ""},
		{`{"_id": 1}`, `{"$bit": {"a": {"and": 1.0}}}`, 2, ""},
		{`{"_id": 1, "a": [1, 2]}`, `{"$set": {"a.$[]": 1, "a.0": 2}}`, 40, "Updating the path 'a.0' would create a conflict at 'a'"},
		{`{"_id": 1, "a": [{"b": 1}]}`, `{"$set": {"a.$[].c": 0, "a.1.d": 5}}`, 40, "Updating the path 'a.1.d' would create a conflict at 'a'"},
		{`{"_id": 1, "a": [1, 2]}`, `{"$set": {"a.$[]": 1, "a.$": 2}}`, 40, ""},
		{`{"_id": 1, "a": [1, 2]}`, `{"$set": {"a.$": 1, "a.0": 2}}`, 40, "Update created a conflict at 'a.0'"},
		{`{"_id": 1}`, `{"$set": {"_id": [1]}}`, 66, ""},
	}
	for _, c := range cases {
		u, err := parseUpd(t, c.update, nil)
		if err == nil {
			_, _, err = u.Apply(nil, d(t, c.doc), &MatchDetails{HasKey: true, ElemMatchKey: "0"}, false)
		}
		if err == nil {
			t.Errorf("update %s on %s succeeded, want code %d", c.update, c.doc, c.code)
			continue
		}
		if errCode(err) != c.code || (c.msg != "" && err.Error() != c.msg) {
			t.Errorf("update %s on %s = %d %q, want %d %q", c.update, c.doc, errCode(err), err, c.code, c.msg)
		}
	}
}

func TestArrayFilterErrors(t *testing.T) {
	cases := []struct {
		update  string
		filters []string
		code    int32
	}{
		{`{"$set": {"a.$[x]": 1}}`, []string{`{"x": 1}`, `{"y": 1}`}, 9},
		{`{"$set": {"a.$[x]": 1}}`, []string{`{"x": 1, "y": 1}`}, 9},
		{`{"$set": {"a.$[x]": 1}}`, []string{`{"x": 1}`, `{"x": 2}`}, 9},
		{`{"$set": {"a.$[X]": 1}}`, []string{`{"X": 1}`}, 9},
		{`{"$set": {"a.$[x]": 1}}`, []string{`{}`}, 9},
	}
	for _, c := range cases {
		_, err := parseUpd(t, c.update, c.filters)
		if errCode(err) != c.code {
			t.Errorf("%s with %v: %v, want code %d", c.update, c.filters, err, c.code)
		}
	}
}

func TestUpsertSeed(t *testing.T) {
	cases := []struct {
		filter, want string
		code         int32
	}{
		{`{"b": 1, "_id": 2, "a": 3}`, `{"_id": 2, "a": 3, "b": 1}`, 0},
		{`{"a.b": 1, "a.c": {"$eq": 2}, "x": {"$gt": 1}}`, `{"a": {"b": 1, "c": 2}}`, 0},
		{`{"$and": [{"a": 1}, {"b": {"$in": [2]}}], "$or": [{"c": 3}]}`, `{"a": 1, "b": 2, "c": 3}`, 0},
		{`{"$or": [{"a": 1}, {"b": 2}]}`, `{}`, 0},
		{`{"a": 1, "a.b": 2}`, ``, 54},
		{`{"$and": [{"a": 1}, {"a": 2}]}`, ``, 54},
	}
	for _, c := range cases {
		f, err := ParseFilter(d(t, c.filter), nil)
		if err != nil {
			t.Fatal(err)
		}
		var b bson.Builder
		err = f.UpsertSeed(&b)
		if c.code != 0 {
			if errCode(err) != c.code {
				t.Errorf("seed of %s: %v, want code %d", c.filter, err, c.code)
			}
			continue
		}
		if err != nil {
			t.Errorf("seed of %s: %v", c.filter, err)
			continue
		}
		if got := js(t, b.Finish()); got != normJSON(t, c.want) {
			t.Errorf("seed of %s = %s, want %s", c.filter, got, normJSON(t, c.want))
		}
	}
	f, _ := ParseFilter(d(t, `{"_id": 7, "a": 1}`), nil)
	if v, ok := f.IDEquality(); !ok || v.Int32() != 7 {
		t.Errorf("IDEquality = %v %v", v, ok)
	}
}

func TestUpdateMergedPaths(t *testing.T) {
	runUpdateCases(t, []updateCase{
		{`{"_id": 1, "a": [{"b": 1}, {"b": 2}]}`, `{"$set": {"a.$[x].c": 0, "a.$[].d": 1}}`, `{"_id": 1, "a": [{"b": 1, "d": 1}, {"b": 2, "c": 0, "d": 1}]}`, []string{`{"x.b": 2}`}},
	})
	u, _ := parseUpd(t, `{"$set": {"a.$.c": 1, "a.0.d": 2}}`, nil)
	got, _, err := u.Apply(nil, d(t, `{"_id": 1, "a": [{"b": 1}]}`), &MatchDetails{HasKey: true, ElemMatchKey: "0"}, false)
	if err != nil || js(t, got) != normJSON(t, `{"_id": 1, "a": [{"b": 1, "c": 1, "d": 2}]}`) {
		t.Errorf("positional merged with explicit index: %s %v", js(t, got), err)
	}
}

func TestUpdateArrayPathMustExist(t *testing.T) {
	for _, upd := range []string{`{"$unset": {"a.$[]": 1}}`, `{"$unset": {"x.a.$[].b": 1}}`, `{"$set": {"x.a.$[]": 1}}`} {
		u, err := parseUpd(t, upd, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = u.Apply(nil, d(t, `{"_id": 1}`), nil, false)
		if errCode(err) != 2 || !strings.Contains(err.Error(), "must exist in the document in order to apply array updates") {
			t.Errorf("%s: %v", upd, err)
		}
	}
}

func TestRenameThroughArrays(t *testing.T) {
	cases := []struct{ doc, update, want, msg string }{
		{`{"_id": "x", "a": [{"b": 1}]}`, `{"$rename": {"a.0.b": "c"}}`, ``, "The source field cannot be an array element, 'a.0.b' in doc with _id: \"x\" has an array field called 'a'"},
		{`{"_id": 1, "a": [{"a": 1}, {"b": 2}]}`, `{"$rename": {"a.a": "b"}}`, `{"_id": 1, "a": [{"a": 1}, {"b": 2}]}`, ""},
		{`{"_id": 1, "x": 1, "a": [{"b": 1}]}`, `{"$rename": {"x": "a.0.c"}}`, ``, "The destination field cannot be an array element, 'a.0.c' in doc with _id: 1 has an array field called 'a'"},
	}
	for _, c := range cases {
		u, err := parseUpd(t, c.update, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := u.Apply(nil, d(t, c.doc), nil, false)
		if c.msg != "" {
			if errCode(err) != 2 || err.Error() != c.msg {
				t.Errorf("%s on %s: %v, want %q", c.update, c.doc, err, c.msg)
			}
			continue
		}
		if err != nil || js(t, got) != normJSON(t, c.want) {
			t.Errorf("%s on %s: %s %v", c.update, c.doc, js(t, got), err)
		}
	}
}

func TestArithmeticIdentity(t *testing.T) {
	cases := []struct {
		doc, update, want string
		changed           bool
	}{
		{`{"_id": 1, "a": {"$numberDouble": "-0.0"}}`, `{"$inc": {"a": 0.0}}`, `{"_id": 1, "a": {"$numberDouble": "-0.0"}}`, false},
		{`{"_id": 1, "a": {"$numberDecimal": "1.0"}}`, `{"$inc": {"a": {"$numberDecimal": "0.00"}}}`, `{"_id": 1, "a": {"$numberDecimal": "1.0"}}`, false},
		{`{"_id": 1, "a": {"$numberDouble": "NaN"}}`, `{"$inc": {"a": 1.5}}`, `{"_id": 1, "a": {"$numberDouble": "NaN"}}`, true},
		{`{"_id": 1, "a": 5}`, `{"$inc": {"a": 0}}`, `{"_id": 1, "a": 5}`, false},
		{`{"_id": 1, "a": 5}`, `{"$mul": {"a": 1.0}}`, `{"_id": 1, "a": 5.0}`, true},
		{`{"_id": 1, "a": {"$numberDouble": "1.7976931348623157e308"}}`, `{"$inc": {"a": 42.13}}`, `{"_id": 1, "a": {"$numberDouble": "1.7976931348623157e308"}}`, false},
	}
	for _, c := range cases {
		u, err := parseUpd(t, c.update, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, changed, err := u.Apply(nil, d(t, c.doc), nil, false)
		if err != nil || changed != c.changed || js(t, got) != normJSON(t, c.want) {
			t.Errorf("%s on %s: %s changed=%v err=%v", c.update, c.doc, js(t, got), changed, err)
		}
	}
}
