package conformance

import (
	"fmt"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// ej parses relaxed or canonical Extended JSON into a value. A top-level
// document or array is written as-is; scalars are wrapped as {"v": ...}.
func ej(t *testing.T, s string) bson.RawValue {
	t.Helper()
	var doc bson.Raw
	if err := bson.UnmarshalExtJSON([]byte(`{"v": `+s+`}`), false, &doc); err != nil {
		t.Fatalf("bad Extended JSON %s: %v", s, err)
	}
	return doc.Lookup("v")
}

type fakeEntities map[string]bson.RawValue

func (f fakeEntities) bsonEntity(name string) (bson.RawValue, error) {
	if v, ok := f[name]; ok {
		return v, nil
	}
	return missing, fmt.Errorf("no entity %q", name)
}

func (f fakeEntities) sessionLsid(name string) (bson.Raw, error) {
	return nil, fmt.Errorf("no session %q", name)
}

func TestMatch(t *testing.T) {
	ents := fakeEntities{"id0": mustValue(int32(7))}
	cases := []struct {
		name     string
		expected string
		actual   string // "" means no actual value
		root     bool
		ok       bool
	}{
		// Numbers compare by value across int32, int64 and double.
		{"int32 = int64", `1`, `{"$numberLong": "1"}`, false, true},
		{"int32 = double", `1`, `1.0`, false, true},
		{"int64 = double", `{"$numberLong": "42"}`, `42.0`, false, true},
		{"int32 != double fraction", `1`, `1.5`, false, false},
		{"int32 != int32", `1`, `2`, false, false},
		{"big int64 != nearby double", `{"$numberLong": "9007199254740993"}`, `9007199254740992.0`, false, false},
		{"number != string", `1`, `"1"`, false, false},
		{"decimal needs decimal", `{"$numberDecimal": "1"}`, `1`, false, false},
		{"decimal = decimal", `{"$numberDecimal": "1.5"}`, `{"$numberDecimal": "1.5"}`, false, true},
		{"null = null", `null`, `null`, false, true},
		{"null != missing", `null`, ``, false, false},
		{"string", `"a"`, `"a"`, false, true},
		{"bool type differs from int", `true`, `1`, false, false},

		// Root documents allow extra fields; nested ones do not.
		{"root extra field", `{"x": 1}`, `{"x": 1, "y": 2}`, true, true},
		{"nested extra field", `{"x": 1}`, `{"x": 1, "y": 2}`, false, false},
		{"root nested extra field", `{"a": {"x": 1}}`, `{"a": {"x": 1, "y": 2}}`, true, false},
		{"root missing field", `{"x": 1, "y": 1}`, `{"x": 1}`, true, false},
		{"key order ignored", `{"x": 1, "y": 2}`, `{"y": 2, "x": 1}`, false, true},
		{"document vs scalar", `{"x": 1}`, `1`, true, false},
		{"array elements not root", `{"a": [{"x": 1}]}`, `{"a": [{"x": 1, "y": 1}]}`, true, false},

		// Arrays must have the same length and match in order.
		{"array equal", `[1, 2, 3]`, `[1, 2, 3]`, false, true},
		{"array longer", `[1, 2, 3]`, `[1, 2, 3, 4]`, false, false},
		{"array shorter", `[1, 2]`, `[1]`, false, false},
		{"array order", `[1, 2]`, `[2, 1]`, false, false},
		{"array vs document", `[1]`, `{"0": 1}`, false, false},

		// $$exists
		{"$$exists true present", `{"a": {"$$exists": true}}`, `{"a": null}`, false, true},
		{"$$exists true absent", `{"a": {"$$exists": true}}`, `{}`, false, false},
		{"$$exists false absent", `{"a": {"$$exists": false}}`, `{}`, false, true},
		{"$$exists false present", `{"a": {"$$exists": false}}`, `{"a": 1}`, false, false},
		{"$$exists false absent nested doc", `{"b": 1, "a": {"$$exists": false}}`, `{"b": 1}`, false, true},

		// $$type
		{"$$type int", `{"$$type": "int"}`, `1`, false, true},
		{"$$type long vs int", `{"$$type": "long"}`, `1`, false, false},
		{"$$type list", `{"$$type": ["int", "long"]}`, `{"$numberLong": "5"}`, false, true},
		{"$$type object", `{"$$type": "object"}`, `{"x": 1}`, false, true},
		{"$$type array ignores elements", `{"$$type": "array"}`, `[1]`, false, true},
		{"$$type int on array", `{"$$type": "int"}`, `[1]`, false, false},
		{"$$type number", `{"$$type": "number"}`, `2.5`, false, true},
		{"$$type objectId", `{"$$type": "objectId"}`, `{"$oid": "5f0000000000000000000000"}`, false, true},
		{"$$type field missing", `{"a": {"$$type": "int"}}`, `{}`, true, false},
		{"$$type unknown name", `{"$$type": "integer"}`, `1`, false, false},

		// $$unsetOrMatches
		{"$$unsetOrMatches unset", `{"a": {"$$unsetOrMatches": 1}}`, `{}`, false, true},
		{"$$unsetOrMatches matches", `{"a": {"$$unsetOrMatches": 1}}`, `{"a": 1.0}`, false, true},
		{"$$unsetOrMatches differs", `{"a": {"$$unsetOrMatches": 1}}`, `{"a": 2}`, false, false},
		{"$$unsetOrMatches whole result unset", `{"$$unsetOrMatches": {"x": 1}}`, ``, true, true},
		{"$$unsetOrMatches keeps root", `{"$$unsetOrMatches": {"x": 1}}`, `{"x": 1, "y": 1}`, true, true},
		{"$$unsetOrMatches nested no extras", `{"a": {"$$unsetOrMatches": {"x": 1}}}`, `{"a": {"x": 1, "y": 1}}`, true, false},
		{"$$unsetOrMatches nested operator", `{"a": {"$$unsetOrMatches": {"$$type": "int"}}}`, `{"a": "s"}`, false, false},

		// $$lte
		{"$$lte less", `{"$$lte": 5}`, `4`, false, true},
		{"$$lte equal across types", `{"$$lte": 1}`, `1.0`, false, true},
		{"$$lte greater", `{"$$lte": 1}`, `1.1`, false, false},
		{"$$lte not a number", `{"$$lte": 1}`, `"0"`, false, false},

		// $$matchesEntity
		{"$$matchesEntity equal", `{"$$matchesEntity": "id0"}`, `{"$numberLong": "7"}`, false, true},
		{"$$matchesEntity differs", `{"$$matchesEntity": "id0"}`, `8`, false, false},
		{"$$matchesEntity unknown", `{"$$matchesEntity": "nope"}`, `7`, false, false},

		// $$matchAsDocument / $$matchAsRoot
		{"$$matchAsDocument", `{"$$matchAsDocument": {"x": 1}}`, `"{\"x\": {\"$numberLong\": \"1\"}}"`, false, true},
		{"$$matchAsDocument no extras", `{"$$matchAsDocument": {"x": 1}}`, `"{\"x\": 1, \"y\": 2}"`, false, false},
		{"$$matchAsDocument with root", `{"$$matchAsDocument": {"$$matchAsRoot": {"x": 1}}}`, `"{\"x\": 1, \"y\": 2}"`, false, true},
		{"$$matchAsDocument needs string", `{"$$matchAsDocument": {"x": 1}}`, `{"x": 1}`, false, false},
		{"$$matchAsRoot allows extras", `{"a": {"$$matchAsRoot": {"x": 1}}}`, `{"a": {"x": 1, "y": 2}}`, false, true},
		{"$$matchAsRoot still checks values", `{"a": {"$$matchAsRoot": {"x": 1}}}`, `{"a": {"x": 2}}`, false, false},

		{"unknown operator", `{"$$nope": 1}`, `1`, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			act := missing
			if c.actual != "" {
				act = ej(t, c.actual)
			}
			m := matcher{entities: ents}
			err := m.match("", ej(t, c.expected), act, c.root)
			if c.ok && err != nil {
				t.Errorf("expected %s to match %s, got: %v", c.expected, c.actual, err)
			}
			if !c.ok && err == nil {
				t.Errorf("expected %s not to match %s", c.expected, c.actual)
			}
		})
	}
}

func TestMatchResultKinds(t *testing.T) {
	m := matcher{}
	docs := []bson.Raw{ej(t, `{"_id": 1, "x": 1}`).Document(), ej(t, `{"_id": 2, "x": 2}`).Document()}
	// Iterated results: each document is a root document.
	if err := matchResult(m, ej(t, `[{"_id": 1}, {"_id": 2}]`), opResult{iter: true, docs: docs}); err != nil {
		t.Errorf("find result with extra fields should match: %v", err)
	}
	if err := matchResult(m, ej(t, `[{"_id": 1}]`), opResult{iter: true, docs: docs}); err == nil {
		t.Error("find result with a missing document should not match")
	}
	// A distinct result is an array of values: documents in it are not root.
	distinct := opResult{value: arrayValue(docs)}
	if err := matchResult(m, ej(t, `[{"_id": 1}, {"_id": 2}]`), distinct); err == nil {
		t.Error("distinct result with extra fields in documents should not match")
	}
	// A scalar result.
	if err := matchResult(m, ej(t, `3`), opResult{value: mustValue(int64(3))}); err != nil {
		t.Errorf("count 3 should match int64 3: %v", err)
	}
	// An absent result matches only $$unsetOrMatches.
	if err := matchResult(m, ej(t, `{"$$unsetOrMatches": {"insertedId": 1}}`), opResult{}); err != nil {
		t.Errorf("absent result should match $$unsetOrMatches: %v", err)
	}
	if err := matchResult(m, ej(t, `{"insertedId": 1}`), opResult{}); err == nil {
		t.Error("absent result should not match a document")
	}
}

func TestExactEqual(t *testing.T) {
	cases := []struct {
		a, b string
		ok   bool
	}{
		{`{"_id": 1, "x": 1}`, `{"x": 1.0, "_id": {"$numberLong": "1"}}`, true},
		{`{"_id": 1}`, `{"_id": 1, "x": 1}`, false},
		{`{"_id": 1, "x": 1}`, `{"_id": 1}`, false},
		{`{"_id": 1, "a": {"b": 1}}`, `{"_id": 1, "a": {"b": 1, "c": 1}}`, false},
		{`{"_id": 1, "a": [1, 2]}`, `{"_id": 1, "a": [2, 1]}`, false},
	}
	for _, c := range cases {
		err := exactEqual(ej(t, c.a).Document(), ej(t, c.b).Document())
		if (err == nil) != c.ok {
			t.Errorf("exactEqual(%s, %s) = %v, want ok=%v", c.a, c.b, err, c.ok)
		}
	}
}

func TestRequirements(t *testing.T) {
	s := serverInfo{Version: [3]int{7, 0, 0}, Topology: "single"}
	cases := []struct {
		req  string
		want string // "" if met, else a substring of the reason
	}{
		{`{"minServerVersion": "4.4"}`, ""},
		{`{"minServerVersion": "7.0"}`, ""},
		{`{"minServerVersion": "7.0.1"}`, ">= 7.0.1"},
		{`{"minServerVersion": "8.2.0"}`, ">= 8.2.0"},
		{`{"maxServerVersion": "7.99"}`, ""},
		{`{"maxServerVersion": "4.2.99"}`, "<= 4.2.99"},
		{`{"topologies": ["single", "replicaset"]}`, ""},
		{`{"topologies": ["replicaset", "sharded"]}`, "topology"},
		{`{"serverless": "forbid"}`, ""},
		{`{"serverless": "require"}`, "serverless"},
		{`{"auth": true}`, "auth"},
		{`{"csfle": true}`, "encryption"},
		{`{"serverParameters": {"x": 1}}`, "server parameters"},
	}
	for _, c := range cases {
		got := s.unmetRequirement(ej(t, c.req).Document())
		if (got == "") != (c.want == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: got %q, want %q", c.req, got, c.want)
		}
	}
	// Any one met requirement is enough.
	reqs := []bson.Raw{ej(t, `{"minServerVersion": "8.0"}`).Document(), ej(t, `{"maxServerVersion": "7.0"}`).Document()}
	if got := s.unmetRequirements(reqs); got != "" {
		t.Errorf("one requirement is met, got %q", got)
	}
}

func TestKnownFailuresParse(t *testing.T) {
	kf, err := parseKnownFailures(strings.NewReader("# comment\n\ncrud-unified/find/Find with filter # server: wrong\ncrud-unified/updateOne/x/y\n"))
	if err != nil {
		t.Fatal(err)
	}
	if kf["crud-unified/find/Find with filter"] != "server: wrong" || kf["crud-unified/updateOne/x/y"] != "" || len(kf) != 2 {
		t.Errorf("got %v", kf)
	}
	if _, err := parseKnownFailures(strings.NewReader("find/Find with filter\n")); err == nil {
		t.Error("a line without suite/file/description should be an error")
	}
	if _, err := parseKnownFailures(strings.NewReader("s/a/b\ns/a/b # again\n")); err == nil {
		t.Error("a duplicate line should be an error")
	}
}

func TestKnownFailuresFileIsValid(t *testing.T) {
	if _, err := LoadKnownFailures(knownFailuresFile); err != nil {
		t.Fatal(err)
	}
}

func TestNumericTypeDiff(t *testing.T) {
	cases := []struct {
		a, b string
		diff bool
	}{
		{`{"x": 1}`, `{"x": 1}`, false},
		{`{"x": 1}`, `{"x": {"$numberLong": "1"}}`, true},
		{`{"a": [1, {"b": 2.0}]}`, `{"a": [1, {"b": 2}]}`, true},
		{`{"a": [1, {"b": 2.0}]}`, `{"a": [1, {"b": 2.0}]}`, false},
		{`{"x": "1"}`, `{"x": 1}`, false}, // not a numeric difference
	}
	for _, c := range cases {
		d := numericTypeDiff("", ej(t, c.a), ej(t, c.b))
		if (d != "") != c.diff {
			t.Errorf("numericTypeDiff(%s, %s) = %q, want difference: %v", c.a, c.b, d, c.diff)
		}
	}
}
