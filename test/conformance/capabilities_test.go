package conformance

import (
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func opsOf(t *testing.T, js string) []operation {
	t.Helper()
	var tc specTest
	if err := bson.Unmarshal(ej(t, `{"operations": `+js+`}`).Document(), &tc); err != nil {
		t.Fatal(err)
	}
	return tc.Operations
}

func TestMissingFeature(t *testing.T) {
	lacking := serverInfo{Transactions: "transactions (issue 22): no", ChangeStreams: "change streams (issue 23): no"}
	nested := `[{"name": "withTransaction", "object": "session0", "arguments": {"callback": [
		{"name": "insertOne", "object": "c"}, {"name": "createChangeStream", "object": "c"}]}}]`
	cases := []struct {
		name, suite, ops string
		server           serverInfo
		want             string // a prefix of the reason, "" for none
	}{
		{"crud test", "crud-unified", `[{"name": "find", "object": "c"}]`, lacking, ""},
		{"startTransaction", "sessions-unified", `[{"name": "startTransaction", "object": "s"}]`, lacking, "needs transactions"},
		{"transactions suite", "transactions-unified", `[{"name": "insertOne", "object": "c"}]`, lacking, "needs transactions"},
		{"change stream", "crud-unified", `[{"name": "createChangeStream", "object": "c"}]`, lacking, "needs change streams"},
		{"inside withTransaction", "crud-unified", nested, serverInfo{ChangeStreams: "change streams"}, "needs change streams"},
		{"server has both", "transactions-unified", nested, serverInfo{}, ""},
	}
	for _, c := range cases {
		tc := &specTest{Operations: opsOf(t, c.ops)}
		got := c.server.missingFeature(c.suite, tc)
		if (c.want == "") != (got == "") || !strings.HasPrefix(got, c.want) {
			t.Errorf("%s: missingFeature = %q, want prefix %q", c.name, got, c.want)
		}
	}
}

func TestServerParametersRequirement(t *testing.T) {
	params := ej(t, `{"enableTestCommands": true, "requireApiVersion": false, "ttlMonitorSleepSecs": 60}`).Document()
	s := serverInfo{Version: [3]int{7, 0, 0}, Topology: "single", Params: params}
	cases := []struct {
		req  string
		want string // "" when met, else a substring of the reason
	}{
		{`{"serverParameters": {"enableTestCommands": true}}`, ""},
		{`{"serverParameters": {"ttlMonitorSleepSecs": 60.0}}`, ""},
		{`{"serverParameters": {"requireApiVersion": true}}`, "requireApiVersion"},
		{`{"serverParameters": {"noSuchParameter": 1}}`, "the server has none"},
	}
	for _, c := range cases {
		got := s.unmetRequirement(ej(t, c.req).Document())
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: got %q, want %q", c.req, got, c.want)
		}
	}
	if got := (serverInfo{}).unmetParameters(ej(t, `{"x": 1}`).Document()); !strings.Contains(got, "getParameter") {
		t.Errorf("without getParameter '*': got %q", got)
	}
}

func TestPoolEventExpectations(t *testing.T) {
	c := &clientEntity{id: "c", pool: []poolEvent{{kind: "connectionCheckOutStartedEvent"},
		{kind: "connectionCheckedOutEvent"}, {kind: "connectionClosedEvent", reason: "error"}}}
	docs := func(js string) []bson.Raw {
		var out []bson.Raw
		vals, _ := ej(t, js).Array().Values()
		for _, v := range vals {
			out = append(out, v.Document())
		}
		return out
	}
	cases := []struct {
		expected    string
		ignoreExtra bool
		ok          bool
	}{
		{`[{"connectionCheckOutStartedEvent": {}}, {"connectionCheckedOutEvent": {}}, {"connectionClosedEvent": {"reason": "error"}}]`, false, true},
		{`[{"connectionCheckOutStartedEvent": {}}]`, true, true},
		{`[{"connectionCheckOutStartedEvent": {}}]`, false, false},
		{`[{"connectionCheckedOutEvent": {}}]`, true, false},
		{`[{"connectionCheckOutStartedEvent": {}}, {"connectionCheckedOutEvent": {}}, {"connectionClosedEvent": {"reason": "idle"}}]`, false, false},
		{`[{"connectionCheckOutStartedEvent": {}}, {"connectionCheckedOutEvent": {}}, {"connectionClosedEvent": {}}, {"connectionCheckedInEvent": {}}]`, false, false},
	}
	for _, tc := range cases {
		err := checkPoolEvents(c, docs(tc.expected), tc.ignoreExtra)
		if (err == nil) != tc.ok {
			t.Errorf("%s (ignoreExtra %v): err = %v, want ok %v", tc.expected, tc.ignoreExtra, err, tc.ok)
		}
	}
}

// TestTopologyURI: clients of a replica set name it, as drivers' runners
// connect them, unless the URI already says how to connect.
func TestTopologyURI(t *testing.T) {
	for _, c := range []struct{ uri, set, want string }{
		{"mongodb://127.0.0.1:27017", "rs0", "mongodb://127.0.0.1:27017/?replicaSet=rs0"},
		{"mongodb://127.0.0.1:27017/?w=1", "rs0", "mongodb://127.0.0.1:27017/?replicaSet=rs0&w=1"},
		{"mongodb://127.0.0.1:27017/?directConnection=true", "rs0", "mongodb://127.0.0.1:27017/?replicaSet=rs0"},
		{"mongodb://127.0.0.1:27017/?replicaSet=x", "rs0", "mongodb://127.0.0.1:27017/?replicaSet=x"},
		{"mongodb://127.0.0.1:27017", "", "mongodb://127.0.0.1:27017"},
	} {
		got, err := topologyURI(c.uri, c.set)
		if err != nil || got != c.want {
			t.Errorf("topologyURI(%q, %q) = %q, %v; want %q", c.uri, c.set, got, err, c.want)
		}
	}
}
