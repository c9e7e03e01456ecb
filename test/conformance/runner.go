package conformance

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readconcern"
	"go.mongodb.org/mongo-driver/v2/mongo/readpref"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"
)

// skipError means a test cannot run; the reason is reported.
type skipError struct{ reason string }

func (e *skipError) Error() string { return "skipped: " + e.reason }

// skipf skips for a limitation of the runner.
func skipf(format string, a ...any) error {
	return &skipError{reason: "runner: " + fmt.Sprintf(format, a...)}
}

// needsf skips for something the test needs that the server lacks.
func needsf(format string, a ...any) error {
	return &skipError{reason: "needs " + fmt.Sprintf(format, a...)}
}

// skipReason returns the reason if err is (or wraps) a skipError.
func skipReason(err error) (string, bool) {
	var s *skipError
	if errors.As(err, &s) {
		return s.reason, true
	}
	return "", false
}

// Status is a test's outcome.
type Status int

// Test outcomes.
const (
	Passed Status = iota
	Failed
	Skipped
)

func (s Status) String() string {
	return [...]string{"passed", "failed", "skipped"}[s]
}

// Result is the outcome of one spec test.
type Result struct {
	Status Status
	Reason string   // skip reason or failure message
	Notes  []string // observations that do not fail the test
}

// Runner runs unified-format tests against one server.
type Runner struct {
	URI      string        // the server's connection string
	Internal *mongo.Client // the "internal MongoClient" for setup and outcome checks
	Server   serverInfo
	// DriverSkips maps "file/description" to the reason the Go driver
	// cannot run that test, whatever the server does.
	DriverSkips map[string]string
	// Timeout bounds one test.
	Timeout time.Duration
}

// NewRunner connects the internal client and reads the server's version and
// topology.
func NewRunner(ctx context.Context, uri string) (*Runner, error) {
	client, err := mongo.Connect(options.Client().ApplyURI(uri).SetServerSelectionTimeout(10 * time.Second).
		SetServerMonitoringMode(monitoringMode))
	if err != nil {
		return nil, err
	}
	r := &Runner{URI: uri, Internal: client, DriverSkips: driverSkips, Timeout: 30 * time.Second}
	if r.Server, err = detectServer(ctx, client); err != nil {
		_ = client.Disconnect(ctx)
		return nil, err
	}
	if r.URI, err = topologyURI(uri, r.Server.SetName); err != nil {
		_ = client.Disconnect(ctx)
		return nil, err
	}
	return r, nil
}

// topologyURI is the URI the tests' clients connect with. As drivers'
// runners connect to a replica set, it names the set (replicaSet=NAME)
// rather than connecting directly to one host: the driver then sees a
// ReplicaSetWithPrimary topology, not a Single one (to which the Go
// driver sends $readPreference: primaryPreferred). directConnection (as
// cairndtest's URIs have it) gives way to replicaSet; a URI that already
// names a set is kept.
func topologyURI(uri, setName string) (string, error) {
	if setName == "" {
		return uri, nil
	}
	u, err := url.Parse(uri)
	if err != nil {
		return "", fmt.Errorf("server URI: %w", err)
	}
	q := u.Query()
	if q.Has("replicaSet") || q.Has("loadBalanced") {
		return uri, nil
	}
	q.Del("directConnection")
	q.Set("replicaSet", setName)
	u.RawQuery = q.Encode()
	if u.Path == "" {
		u.Path = "/"
	}
	return u.String(), nil
}

// Close disconnects the internal client.
func (r *Runner) Close(ctx context.Context) error { return r.Internal.Disconnect(ctx) }

func detectServer(ctx context.Context, c *mongo.Client) (serverInfo, error) {
	var s serverInfo
	admin := c.Database("admin")
	var hello bson.M
	if err := admin.RunCommand(ctx, bson.D{{Key: "hello", Value: 1}}).Decode(&hello); err != nil {
		return s, fmt.Errorf("hello: %w", err)
	}
	switch {
	case hello["msg"] == "isdbgrid":
		s.Topology = "sharded"
	case hello["setName"] != nil:
		s.Topology = "replicaset"
		s.SetName, _ = hello["setName"].(string)
	default:
		s.Topology = "single"
	}
	var bi struct {
		Version      string  `bson:"version"`
		VersionArray []int32 `bson:"versionArray"`
	}
	err := admin.RunCommand(ctx, bson.D{{Key: "buildInfo", Value: 1}}).Decode(&bi)
	switch {
	case err == nil && len(bi.VersionArray) >= 3:
		for i := range s.Version {
			s.Version[i] = int(bi.VersionArray[i])
		}
	case err == nil:
		if s.Version, err = parseVersion(bi.Version); err != nil {
			return s, fmt.Errorf("buildInfo: %w", err)
		}
	default:
		// No buildInfo: infer the version from the wire protocol version.
		wire, ok := hello["maxWireVersion"].(int32)
		v, known := wireVersions[wire]
		if !ok || !known {
			return s, fmt.Errorf("buildInfo: %w; maxWireVersion %v unknown", err, hello["maxWireVersion"])
		}
		s.Version = v
	}
	// A diagnostic: evaluate runOnRequirements as if the server were of
	// another topology, to exercise the runner on tests the server's own
	// topology would skip. The counts of such a run are not the server's.
	if t := os.Getenv("CAIRN_CONFORMANCE_PRETEND_TOPOLOGY"); t != "" {
		s.Topology = t
	}
	probeCapabilities(ctx, c, &s)
	return s, nil
}

// wireVersions maps maxWireVersion to the server release that introduced it.
var wireVersions = map[int32][3]int{
	13: {5, 0, 0}, 14: {5, 1, 0}, 17: {6, 0, 0}, 21: {7, 0, 0},
	25: {8, 0, 0}, 26: {8, 1, 0}, 27: {8, 2, 0},
}

// Run executes one test of a file.
func (r *Runner) Run(ctx context.Context, f *specFile, t *specTest) Result {
	if why := r.Server.unmetRequirements(f.RunOnRequirements); why != "" {
		return Result{Status: Skipped, Reason: why}
	}
	if why := r.Server.unmetRequirements(t.RunOnRequirements); why != "" {
		return Result{Status: Skipped, Reason: why}
	}
	if t.SkipReason != "" {
		return Result{Status: Skipped, Reason: "test file: " + t.SkipReason}
	}
	if why, ok := r.DriverSkips[f.Suite+"/"+f.Name+"/"+t.Description]; ok {
		return Result{Status: Skipped, Reason: "Go driver: " + why}
	}
	if why, ok := driverFileSkips[f.Suite+"/"+f.Name]; ok && r.DriverSkips != nil {
		return Result{Status: Skipped, Reason: "Go driver: " + why}
	}
	if why, ok := memberSkips[f.Suite+"/"+f.Name+"/"+t.Description]; ok && r.Server.Topology == "replicaset" {
		return Result{Status: Skipped, Reason: why}
	}
	// A deadline would make the driver add maxTimeMS to every command (which
	// tests assert on), so the test is bounded by cancellation instead.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	watchdog := time.AfterFunc(r.Timeout, cancel)
	defer watchdog.Stop()
	var notes []string
	err := r.run(ctx, f, t, &notes)
	if why, ok := skipReason(err); ok {
		return Result{Status: Skipped, Reason: why}
	}
	if err != nil {
		if why := r.Server.missingFeature(f.Suite, t); why != "" {
			return Result{Status: Skipped, Reason: why, Notes: append(notes, "failure: "+err.Error())}
		}
		return Result{Status: Failed, Reason: err.Error(), Notes: notes}
	}
	return Result{Status: Passed, Notes: notes}
}

func (r *Runner) run(ctx context.Context, f *specFile, t *specTest, notes *[]string) error {
	// Sessions (and their transactions) left by an earlier test must not
	// block this one; servers without the command ignore it.
	_ = r.Internal.Database("admin").RunCommand(ctx, bson.D{{Key: "killAllSessions", Value: bson.A{}}}).Err()
	if err := r.setUp(ctx, f.InitialData); err != nil {
		return fmt.Errorf("initialData: %w", err)
	}
	if len(f.InitialData) == 0 {
		// A file without initialData assumes its collections hold nothing
		// an earlier file left (the files run in no fixed order per server).
		if err := r.dropEntityCollections(ctx, f.CreateEntities); err != nil {
			return err
		}
	}
	em := newEntityMap()
	em.server = r.Server
	em.internal = r.Internal
	em.baseURI = r.URI
	em.notes = notes
	defer em.close(context.Background())
	for _, e := range f.CreateEntities {
		if err := em.createEntity(ctx, r.URI, e); err != nil {
			return fmt.Errorf("createEntities: %w", err)
		}
	}
	m := matcher{entities: em}
	for i, op := range t.Operations {
		if err := runAndCheck(ctx, em, m, op, notes); err != nil {
			if _, ok := skipReason(err); ok {
				return err
			}
			return fmt.Errorf("operation %d (%s on %s): %w", i, op.Name, op.Object, err)
		}
	}
	for _, c := range em.clients {
		c.stopRecording()
	}
	for _, exp := range t.ExpectEvents {
		if err := checkExpectedEvents(em, exp); err != nil {
			if _, ok := skipReason(err); ok {
				return err
			}
			return fmt.Errorf("expectEvents: %w", err)
		}
	}
	for _, want := range t.Outcome {
		if err := r.checkOutcome(ctx, want, notes); err != nil {
			return fmt.Errorf("outcome: %w", err)
		}
	}
	return nil
}

func runAndCheck(ctx context.Context, em *entityMap, m matcher, op operation, notes *[]string) error {
	res, err := runOperation(ctx, em, op)
	if err != nil {
		return err
	}
	return checkOperation(em, m, op, res, notes)
}

// checkOperation applies an operation's expectations to its result and
// saves the result as an entity when asked.
func checkOperation(em *entityMap, m matcher, op operation, res opResult, notes *[]string) error {
	if op.IgnoreResultAndError {
		return nil
	}
	if op.ExpectError != nil {
		if res.err != nil && weakErrorAssertion(op.ExpectError) {
			// The test only asserts that some error happened: record which.
			*notes = append(*notes, fmt.Sprintf("%s raised (as expected): %v", op.Name, res.err))
		}
		return checkExpectedError(m, op.ExpectError, res)
	}
	if res.err != nil {
		return fmt.Errorf("unexpected error: %w", res.err)
	}
	if !isMissing(op.ExpectResult) {
		if err := matchResult(m, op.ExpectResult, res); err != nil {
			return fmt.Errorf("result: %w\nactual: %s", err, show(res.resultValue()))
		}
	}
	if name := op.SaveResultAsEntity; name != "" {
		if res.cursor != nil {
			if err := em.add(name, "cursor"); err != nil {
				return err
			}
			em.cursors[name] = res.cursor
			return nil
		}
		if res.coll != nil {
			if err := em.add(name, "collection"); err != nil {
				return err
			}
			em.colls[name] = res.coll
			return nil
		}
		if res.stream != nil {
			if err := em.add(name, "changeStream"); err != nil {
				return err
			}
			em.streams[name] = res.stream
			return nil
		}
		if err := em.add(name, "value"); err != nil {
			return err
		}
		em.values[name] = res.resultValue()
	}
	return nil
}

// matchResult applies expectResult: iterated results are arrays of root
// documents; single documents are root documents; other values (distinct's
// array, counts) match exactly.
func matchResult(m matcher, expected bson.RawValue, res opResult) error {
	if res.iter {
		return matchDocList(m, expected, res.docs)
	}
	if res.value.Type == bson.TypeEmbeddedDocument {
		return m.matchRoot(expected, res.value)
	}
	return m.matchNested(expected, res.value)
}

func matchDocList(m matcher, expected bson.RawValue, docs []bson.Raw) error {
	if d, ok := expected.DocumentOK(); ok {
		// A special operator applied to the whole list.
		if _, _, ok := specialOperator(d); ok {
			return m.matchRoot(expected, arrayValue(docs))
		}
	}
	arr, ok := expected.ArrayOK()
	if !ok {
		return fmt.Errorf("expected %s, got a list of %d documents", expected, len(docs))
	}
	vals, _ := arr.Values()
	if len(vals) != len(docs) {
		return fmt.Errorf("expected %d documents, got %d: %s", len(vals), len(docs), arrayValue(docs))
	}
	for i, v := range vals {
		if err := m.matchRoot(v, docValue(docs[i])); err != nil {
			return fmt.Errorf("document %d: %w", i, err)
		}
	}
	return nil
}

// setUp applies initialData with w:majority: drop, create, insert.
func (r *Runner) setUp(ctx context.Context, data []collData) error {
	wc := options.Database().SetWriteConcern(writeconcern.Majority())
	for _, cd := range data {
		db := r.Internal.Database(cd.DatabaseName, wc)
		if err := db.Collection(cd.CollectionName).Drop(ctx); err != nil {
			return fmt.Errorf("dropping %s.%s: %w", cd.DatabaseName, cd.CollectionName, err)
		}
		if cd.CreateOptions != nil || len(cd.Documents) == 0 {
			cmd := bson.D{{Key: "create", Value: cd.CollectionName}}
			elems, _ := cd.CreateOptions.Elements()
			for _, e := range elems {
				cmd = append(cmd, bson.E{Key: e.Key(), Value: e.Value()})
			}
			cmd = append(cmd, bson.E{Key: "writeConcern", Value: bson.D{{Key: "w", Value: "majority"}}})
			if err := db.RunCommand(ctx, cmd).Err(); err != nil {
				return fmt.Errorf("creating %s.%s: %w", cd.DatabaseName, cd.CollectionName, err)
			}
		}
		if len(cd.Documents) > 0 {
			if _, err := db.Collection(cd.CollectionName).InsertMany(ctx, cd.Documents); err != nil {
				return fmt.Errorf("inserting into %s.%s: %w", cd.DatabaseName, cd.CollectionName, err)
			}
		}
	}
	return nil
}

// dropEntityCollections drops the collections named by collection entities.
func (r *Runner) dropEntityCollections(ctx context.Context, entities []bson.Raw) error {
	dbs := map[string]string{}
	for _, e := range entities {
		if d, err := e.LookupErr("database"); err == nil {
			a := newArgs(d.Document())
			dbs[a.str("id")] = a.str("databaseName")
		}
	}
	for _, e := range entities {
		if c, err := e.LookupErr("collection"); err == nil {
			a := newArgs(c.Document())
			db, coll := dbs[a.str("database")], a.str("collectionName")
			if db == "" || coll == "" {
				continue
			}
			if err := r.Internal.Database(db).Collection(coll).Drop(ctx); err != nil {
				return fmt.Errorf("dropping %s.%s: %w", db, coll, err)
			}
		}
	}
	return nil
}

// checkOutcome compares a collection's contents, sorted by _id, exactly.
func (r *Runner) checkOutcome(ctx context.Context, want collData, notes *[]string) error {
	coll := r.Internal.Database(want.DatabaseName).Collection(want.CollectionName,
		options.Collection().SetReadPreference(readpref.Primary()).SetReadConcern(readconcern.Local()))
	cur, err := coll.Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return fmt.Errorf("reading %s.%s: %w", want.DatabaseName, want.CollectionName, err)
	}
	res := iterate(ctx, cur, nil)
	if res.err != nil {
		return fmt.Errorf("reading %s.%s: %w", want.DatabaseName, want.CollectionName, res.err)
	}
	if len(res.docs) != len(want.Documents) {
		return fmt.Errorf("%s.%s: expected %d documents %s, found %d: %s", want.DatabaseName, want.CollectionName,
			len(want.Documents), arrayValue(want.Documents), len(res.docs), arrayValue(res.docs))
	}
	for i := range res.docs {
		if err := exactEqual(want.Documents[i], res.docs[i]); err != nil {
			return fmt.Errorf("%s.%s document %d: %v\nexpected: %s\nfound:    %s", want.DatabaseName,
				want.CollectionName, i, err, want.Documents[i], res.docs[i])
		}
		if d := numericTypeDiff("", docValue(want.Documents[i]), docValue(res.docs[i])); d != "" {
			*notes = append(*notes, fmt.Sprintf("outcome %s.%s document %d: numeric type differs at %s",
				want.DatabaseName, want.CollectionName, i, d))
		}
	}
	return nil
}

// weakErrorAssertion reports whether an expectedError asserts neither a code
// nor a message.
func weakErrorAssertion(spec bson.Raw) bool {
	for _, k := range []string{"errorCode", "errorCodeName", "errorContains", "errorResponse", "writeErrors"} {
		if _, err := spec.LookupErr(k); err == nil {
			return false
		}
	}
	return true
}
