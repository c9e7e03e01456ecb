package conformance

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// specFile is one unified-format test file.
type specFile struct {
	Suite             string     `bson:"-"` // the folder: crud-unified...
	Name              string     `bson:"-"` // file name without ".json"
	Description       string     `bson:"description"`
	SchemaVersion     string     `bson:"schemaVersion"`
	RunOnRequirements []bson.Raw `bson:"runOnRequirements"`
	CreateEntities    []bson.Raw `bson:"createEntities"`
	InitialData       []collData `bson:"initialData"`
	Tests             []specTest `bson:"tests"`
}

// collData is the unified format's collectionData: initialData or outcome.
type collData struct {
	CollectionName string     `bson:"collectionName"`
	DatabaseName   string     `bson:"databaseName"`
	CreateOptions  bson.Raw   `bson:"createOptions"`
	Documents      []bson.Raw `bson:"documents"`
}

type specTest struct {
	Description       string      `bson:"description"`
	RunOnRequirements []bson.Raw  `bson:"runOnRequirements"`
	SkipReason        string      `bson:"skipReason"`
	Operations        []operation `bson:"operations"`
	ExpectEvents      []bson.Raw  `bson:"expectEvents"`
	Outcome           []collData  `bson:"outcome"`
}

type operation struct {
	Name                 string        `bson:"name"`
	Object               string        `bson:"object"`
	Arguments            bson.Raw      `bson:"arguments"`
	ExpectResult         bson.RawValue `bson:"expectResult"`
	ExpectError          bson.Raw      `bson:"expectError"`
	SaveResultAsEntity   string        `bson:"saveResultAsEntity"`
	IgnoreResultAndError bool          `bson:"ignoreResultAndError"`
}

// loadSpecFile reads and decodes one JSON test file. Extended JSON (relaxed
// or canonical) keeps BSON types: 1 is an int32, 1.0 a double.
func loadSpecFile(path, name string) (*specFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var raw bson.Raw
	if err := bson.UnmarshalExtJSON(data, false, &raw); err != nil {
		return nil, fmt.Errorf("%s: parsing Extended JSON: %w", name, err)
	}
	f := &specFile{Name: name}
	if err := bson.Unmarshal(raw, f); err != nil {
		return nil, fmt.Errorf("%s: decoding test file: %w", name, err)
	}
	if !supportedSchema(f.SchemaVersion) {
		return nil, fmt.Errorf("%s: unsupported schemaVersion %q", name, f.SchemaVersion)
	}
	return f, nil
}

// The runner implements the parts of schema 1.x that the CRUD files use.
func supportedSchema(v string) bool {
	return strings.HasPrefix(v, "1.") || v == "1"
}

// serverInfo is what runOnRequirements are evaluated against.
type serverInfo struct {
	Version  [3]int
	Topology string // "single", "replicaset", "sharded", "load-balanced"
	// SetName is hello's setName (a replica set's members only).
	SetName string
	// Params is getParameter '*' (nil if the server refused it).
	Params bson.Raw
	// What the server lacks, with the probe's answer ("" = supported).
	FailPoints, Transactions, ChangeStreams string
}

func (s serverInfo) String() string {
	return fmt.Sprintf("%d.%d.%d %s", s.Version[0], s.Version[1], s.Version[2], s.Topology)
}

func parseVersion(s string) ([3]int, error) {
	var v [3]int
	parts := strings.Split(s, ".")
	if len(parts) > 3 {
		parts = parts[:3]
	}
	for i, p := range parts {
		// Pre-release suffixes ("4.9.0-alpha") are discarded.
		if j := strings.IndexFunc(p, func(r rune) bool { return r < '0' || r > '9' }); j >= 0 {
			p = p[:j]
		}
		n, err := strconv.Atoi(p)
		if err != nil {
			return v, fmt.Errorf("bad version %q", s)
		}
		v[i] = n
	}
	return v, nil
}

func compareVersions(a, b [3]int) int {
	for i := range a {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

// unmetRequirement returns "" when the server satisfies req, else why not.
func (s serverInfo) unmetRequirement(req bson.Raw) string {
	elems, err := req.Elements()
	if err != nil {
		return "malformed runOnRequirement"
	}
	for _, e := range elems {
		v := e.Value()
		switch e.Key() {
		case "minServerVersion":
			want, err := parseVersion(v.StringValue())
			if err != nil {
				return err.Error()
			}
			if compareVersions(s.Version, want) < 0 {
				return "requires server >= " + v.StringValue()
			}
		case "maxServerVersion":
			want, err := parseVersion(v.StringValue())
			if err != nil {
				return err.Error()
			}
			if compareVersions(s.Version, want) > 0 {
				return "requires server <= " + v.StringValue()
			}
		case "topologies":
			vals, _ := v.Array().Values()
			var names []string
			ok := false
			for _, t := range vals {
				name := t.StringValue()
				names = append(names, name)
				if name == s.Topology || (name == "sharded-replicaset" && s.Topology == "sharded") {
					ok = true
				}
			}
			if !ok {
				return "requires topology " + strings.Join(names, "|")
			}
		case "serverless":
			if v.StringValue() == "require" {
				return "requires serverless"
			}
		case "auth":
			if v.Boolean() {
				return "requires authentication"
			}
		case "authMechanism":
			return "requires auth mechanism " + v.StringValue()
		case "csfle":
			if v.Boolean() {
				return "requires client-side field level encryption"
			}
		case "serverParameters":
			if why := s.unmetParameters(v.Document()); why != "" {
				return why
			}
		default:
			return "unknown runOnRequirement " + e.Key()
		}
	}
	return ""
}

// unmetRequirements returns "" if reqs is empty or any requirement is met,
// else the reason the first one is not.
func (s serverInfo) unmetRequirements(reqs []bson.Raw) string {
	if len(reqs) == 0 {
		return ""
	}
	first := ""
	for _, r := range reqs {
		why := s.unmetRequirement(r)
		if why == "" {
			return ""
		}
		if first == "" {
			first = why
		}
	}
	return first
}

// unmetParameters checks a serverParameters requirement against
// getParameter '*'.
func (s serverInfo) unmetParameters(want bson.Raw) string {
	if s.Params == nil {
		return "requires server parameters " + want.String() + " (getParameter '*' failed)"
	}
	elems, _ := want.Elements()
	for _, e := range elems {
		got, err := s.Params.LookupErr(e.Key())
		if err != nil {
			return "requires server parameter " + e.Key() + " (the server has none)"
		}
		if (matcher{}).matchNested(e.Value(), got) != nil {
			return fmt.Sprintf("requires server parameter %s: %s (the server has %s)", e.Key(), e.Value(), got)
		}
	}
	return ""
}
