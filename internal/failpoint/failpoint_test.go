package failpoint

import (
	"sync"
	"testing"

	dbson "go.mongodb.org/mongo-driver/v2/bson"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

func doc(t testing.TB, d dbson.D) bson.Doc {
	t.Helper()
	b, err := dbson.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return bson.Doc(b)
}

func configure(t testing.TB, r *Registry, d dbson.D) (int64, error) {
	t.Helper()
	return r.Configure(doc(t, d))
}

// TestModes: which of 10 matching evaluations fire, per mode.
func TestModes(t *testing.T) {
	tests := []struct {
		name string
		mode any
		want string // one character per evaluation: x fires, . does not
		on   bool   // the point is still on afterwards
	}{
		{"alwaysOn", "alwaysOn", "xxxxxxxxxx", true},
		{"off", "off", "..........", false},
		{"times 3", dbson.D{{Key: "times", Value: 3}}, "xxx.......", false},
		{"times 1 int64", dbson.D{{Key: "times", Value: int64(1)}}, "x.........", false},
		{"times 2 double", dbson.D{{Key: "times", Value: 2.0}}, "xx........", false},
		{"times 0 fires once, as mongod", dbson.D{{Key: "times", Value: 0}}, "x.........", false},
		{"skip 2", dbson.D{{Key: "skip", Value: 2}}, "..xxxxxxxx", true},
		{"skip 0", dbson.D{{Key: "skip", Value: 0}}, "xxxxxxxxxx", true},
		{"probability 1", dbson.D{{Key: "activationProbability", Value: 1.0}}, "xxxxxxxxxx", true},
		{"probability 0", dbson.D{{Key: "activationProbability", Value: 0}}, "..........", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRegistry(Def{Name: "fp"})
			if _, err := configure(t, r, dbson.D{{Key: "configureFailPoint", Value: "fp"}, {Key: "mode", Value: tc.mode}}); err != nil {
				t.Fatal(err)
			}
			got := ""
			for range len(tc.want) {
				if _, ok := r.Point("fp").Eval(nil); ok {
					got += "x"
				} else {
					got += "."
				}
			}
			if got != tc.want {
				t.Errorf("fired %q, want %q", got, tc.want)
			}
			if r.Active() != tc.on {
				t.Errorf("Active() = %v, want %v", r.Active(), tc.on)
			}
		})
	}
}

// TestPredicateDoesNotCount: evaluations the predicate refuses neither fire
// nor use up times or skip.
func TestPredicateDoesNotCount(t *testing.T) {
	r := NewRegistry(Def{Name: "fp"})
	if _, err := configure(t, r, dbson.D{{Key: "configureFailPoint", Value: "fp"}, {Key: "mode", Value: dbson.D{{Key: "skip", Value: 1}}}}); err != nil {
		t.Fatal(err)
	}
	p := r.Point("fp")
	no := func(*Config) bool { return false }
	for range 5 {
		if _, ok := p.Eval(no); ok {
			t.Fatal("fired although the predicate said no")
		}
	}
	if _, ok := p.Eval(nil); ok {
		t.Fatal("the first matching evaluation should be skipped")
	}
	if _, ok := p.Eval(nil); !ok {
		t.Fatal("the second matching evaluation should fire")
	}
	if p.Hits() != 1 {
		t.Fatalf("hits %d, want 1", p.Hits())
	}
}

// TestCountIsTimesEntered: configureFailPoint answers how many times the
// point fired before, and the count is never reset.
func TestCountIsTimesEntered(t *testing.T) {
	r := NewRegistry(Def{Name: "fp"})
	set := func(mode any) int64 {
		n, err := configure(t, r, dbson.D{{Key: "configureFailPoint", Value: "fp"}, {Key: "mode", Value: mode}})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := set(dbson.D{{Key: "times", Value: 2}}); n != 0 {
		t.Fatalf("count %d, want 0", n)
	}
	for range 4 {
		r.Point("fp").Eval(nil)
	}
	if n := set("alwaysOn"); n != 2 {
		t.Fatalf("count %d, want 2", n)
	}
	r.Point("fp").Eval(nil)
	if n := set("off"); n != 3 {
		t.Fatalf("count %d, want 3", n)
	}
	if r.Active() {
		t.Fatal("still active after off")
	}
}

// TestTimesExactUnderConcurrency: {times: n} fires exactly n times when
// many goroutines evaluate it at once, and the registry's active count
// returns to zero.
func TestTimesExactUnderConcurrency(t *testing.T) {
	r := NewRegistry(Def{Name: "a"}, Def{Name: "b"})
	if _, err := configure(t, r, dbson.D{{Key: "configureFailPoint", Value: "a"}, {Key: "mode", Value: dbson.D{{Key: "times", Value: 100}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := configure(t, r, dbson.D{{Key: "configureFailPoint", Value: "b"}, {Key: "mode", Value: "alwaysOn"}}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				r.Point("a").Eval(nil)
			}
		}()
	}
	wg.Wait()
	if h := r.Point("a").Hits(); h != 100 {
		t.Fatalf("fired %d times, want 100", h)
	}
	if r.active.Load() != 1 {
		t.Fatalf("active points %d, want 1 (b)", r.active.Load())
	}
	configure(t, r, dbson.D{{Key: "configureFailPoint", Value: "b"}, {Key: "mode", Value: "off"}})
	if r.Active() {
		t.Fatal("active after every point is off")
	}
}

// TestConfigureErrors: mongod's codes for bad requests.
func TestConfigureErrors(t *testing.T) {
	tests := []struct {
		name string
		cmd  dbson.D
		code int32
	}{
		{"unknown point", dbson.D{{Key: "configureFailPoint", Value: "noSuchPoint"}, {Key: "mode", Value: "alwaysOn"}}, mongoerr.FailPointSetFailed},
		{"no mode", dbson.D{{Key: "configureFailPoint", Value: "failCommand"}}, mongoerr.IllegalOperation},
		{"unknown mode", dbson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: "sometimes"}}, mongoerr.BadValue},
		{"mode number", dbson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: 1}}, mongoerr.TypeMismatch},
		{"empty mode document", dbson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: dbson.D{}}}, mongoerr.BadValue},
		{"negative times", dbson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: dbson.D{{Key: "times", Value: -1}}}}, mongoerr.BadValue},
		{"huge skip", dbson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: dbson.D{{Key: "skip", Value: int64(1) << 40}}}}, mongoerr.BadValue},
		{"times string", dbson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: dbson.D{{Key: "times", Value: "1"}}}}, mongoerr.TypeMismatch},
		{"probability over 1", dbson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: dbson.D{{Key: "activationProbability", Value: 1.5}}}}, mongoerr.BadValue},
		{"probability string", dbson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: dbson.D{{Key: "activationProbability", Value: "x"}}}}, mongoerr.TypeMismatch},
		{"data not a document", dbson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: "alwaysOn"}, {Key: "data", Value: 1}}, mongoerr.TypeMismatch},
		{"blockConnection without blockTimeMS", fc(dbson.D{{Key: "failCommands", Value: dbson.A{"ping"}}, {Key: "blockConnection", Value: true}}), mongoerr.InvalidOptions},
		{"negative blockTimeMS", fc(dbson.D{{Key: "blockConnection", Value: true}, {Key: "blockTimeMS", Value: -5}}), mongoerr.InvalidOptions},
		{"failCommands not an array", fc(dbson.D{{Key: "failCommands", Value: "ping"}}), mongoerr.TypeMismatch},
		{"failCommands of numbers", fc(dbson.D{{Key: "failCommands", Value: dbson.A{1}}}), mongoerr.TypeMismatch},
		{"errorCode string", fc(dbson.D{{Key: "errorCode", Value: "2"}}), mongoerr.TypeMismatch},
		{"errorCode fraction", fc(dbson.D{{Key: "errorCode", Value: 2.5}}), mongoerr.TypeMismatch},
		{"errorLabels not an array", fc(dbson.D{{Key: "errorLabels", Value: "x"}}), mongoerr.TypeMismatch},
		{"errorLabels of numbers", fc(dbson.D{{Key: "errorLabels", Value: dbson.A{1}}}), mongoerr.TypeMismatch},
		{"writeConcernError not a document", fc(dbson.D{{Key: "writeConcernError", Value: 1}}), mongoerr.TypeMismatch},
		{"closeConnection number", fc(dbson.D{{Key: "closeConnection", Value: 1}}), mongoerr.TypeMismatch},
		{"appName number", fc(dbson.D{{Key: "appName", Value: 1}}), mongoerr.TypeMismatch},
		{"unsupported errorExtraInfo", fc(dbson.D{{Key: "errorExtraInfo", Value: dbson.D{}}}), mongoerr.BadValue},
		{"getMore closeConnection true", dbson.D{{Key: "configureFailPoint", Value: FailGetMoreAfterCursorCheckout}, {Key: "mode", Value: "alwaysOn"}, {Key: "data", Value: dbson.D{{Key: "closeConnection", Value: true}}}}, mongoerr.BadValue},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRegistry(Defs()...)
			_, err := configure(t, r, tc.cmd)
			if err == nil {
				t.Fatalf("accepted, want code %d", tc.code)
			}
			if e := mongoerr.As(err); e.Code != tc.code {
				t.Fatalf("code %d (%v), want %d", e.Code, err, tc.code)
			}
			if r.Active() {
				t.Fatal("a refused configuration turned the point on")
			}
		})
	}
}

// fc is a failCommand configuration with data d.
func fc(d dbson.D) dbson.D {
	return dbson.D{{Key: "configureFailPoint", Value: FailCommand}, {Key: "mode", Value: "alwaysOn"}, {Key: "data", Value: d}}
}

// TestFilterMatches: which commands failCommand's data selects.
func TestFilterMatches(t *testing.T) {
	find := Target{Names: []string{"find"}, NS: "db.c", AppName: "app1", ThreadName: "conn7"}
	hello := Target{Names: []string{"isMaster", "ismaster"}, NS: "admin", ThreadName: "conn7"}
	cfp := Target{Names: []string{"configureFailPoint"}, NS: "admin"}
	tests := []struct {
		name string
		data dbson.D
		t    Target
		want bool
	}{
		{"named", dbson.D{{Key: "failCommands", Value: dbson.A{"insert", "find"}}}, find, true},
		{"not named", dbson.D{{Key: "failCommands", Value: dbson.A{"insert"}}}, find, false},
		{"alias", dbson.D{{Key: "failCommands", Value: dbson.A{"ismaster"}}}, hello, true},
		{"no failCommands", dbson.D{{Key: "errorCode", Value: 2}}, find, false},
		{"failAllCommands", dbson.D{{Key: "failAllCommands", Value: true}}, find, true},
		{"configureFailPoint never", dbson.D{{Key: "failCommands", Value: dbson.A{"configureFailPoint"}}}, cfp, false},
		{"configureFailPoint never, failAllCommands", dbson.D{{Key: "failAllCommands", Value: true}}, cfp, false},
		{"appName matches", dbson.D{{Key: "failCommands", Value: dbson.A{"find"}}, {Key: "appName", Value: "app1"}}, find, true},
		{"appName differs", dbson.D{{Key: "failCommands", Value: dbson.A{"find"}}, {Key: "appName", Value: "app2"}}, find, false},
		{"appName empty vs none", dbson.D{{Key: "failCommands", Value: dbson.A{"isMaster"}}, {Key: "appName", Value: ""}}, hello, true},
		{"namespace matches", dbson.D{{Key: "failCommands", Value: dbson.A{"find"}}, {Key: "namespace", Value: "db.c"}}, find, true},
		{"namespace differs", dbson.D{{Key: "failCommands", Value: dbson.A{"find"}}, {Key: "namespace", Value: "db.d"}}, find, false},
		{"threadName matches", dbson.D{{Key: "failCommands", Value: dbson.A{"find"}}, {Key: "threadName", Value: "conn7"}}, find, true},
		{"threadName differs", dbson.D{{Key: "failCommands", Value: dbson.A{"find"}}, {Key: "threadName", Value: "conn8"}}, find, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := parseCommandData(doc(t, tc.data))
			if err != nil {
				t.Fatal(err)
			}
			if got := d.Matches(tc.t); got != tc.want {
				t.Errorf("Matches = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestCommandData: what failCommand's data makes of a command.
func TestCommandData(t *testing.T) {
	d, err := parseCommandData(doc(t, dbson.D{{Key: "failCommands", Value: dbson.A{"insert"}}, {Key: "writeConcernError", Value: dbson.D{{Key: "code", Value: 91}}}}))
	if err != nil {
		t.Fatal(err)
	}
	if d.BeforeRun() || d.Error() != nil {
		t.Error("a writeConcernError-only failCommand must let the command run")
	}
	d, err = parseCommandData(doc(t, dbson.D{{Key: "errorCode", Value: 91}, {Key: "errorLabels", Value: dbson.A{}}}))
	if err != nil {
		t.Fatal(err)
	}
	if !d.BeforeRun() || d.Error() == nil || d.Error().Code != 91 || !d.HasErrorLabels || d.ErrorLabels.Len() != 0 {
		t.Errorf("errorCode 91 with empty labels: %+v", d)
	}
	g, err := parseGetMoreData(doc(t, dbson.D{{Key: "closeConnection", Value: false}}))
	if err != nil {
		t.Fatal(err)
	}
	if g.Error().Code != mongoerr.InternalError || !g.Matches(Target{Names: []string{"getMore"}}) || g.Matches(Target{Names: []string{"find"}}) {
		t.Errorf("getMore data: %+v", g)
	}
}

// TestRetryableWriteError: mongod's rule for the label.
func TestRetryableWriteError(t *testing.T) {
	tests := []struct {
		name            string
		cmd             string
		txn, autocommit bool
		code, wcCode    int32
		want            bool
	}{
		{"retryable write, retriable code", "insert", true, false, mongoerr.NotWritablePrimary, 0, true},
		{"retryable write, shutdown", "update", true, false, mongoerr.ShutdownInProgress, 0, true},
		{"retryable write, other code", "insert", true, false, mongoerr.DuplicateKey, 0, false},
		{"no txnNumber", "insert", false, false, mongoerr.NotWritablePrimary, 0, false},
		{"in a transaction", "insert", true, true, mongoerr.NotWritablePrimary, 0, false},
		{"commitTransaction", "commitTransaction", true, true, mongoerr.NotWritablePrimary, 0, true},
		{"write concern error code", "insert", true, false, 0, mongoerr.PrimarySteppedDown, true},
		{"write concern error, not retriable", "insert", true, false, 0, mongoerr.WriteConcernTimeout, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := RetryableWriteError(tc.cmd, tc.txn, tc.autocommit, tc.code, tc.wcCode); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// BenchmarkInactive is the cost of fail points to a command while none is
// on: one atomic load.
func BenchmarkInactive(b *testing.B) {
	r := NewRegistry(Defs()...)
	n := 0
	for i := 0; i < b.N; i++ {
		if r.Active() {
			n++
		}
	}
	if n != 0 {
		b.Fatal("active")
	}
}

// TestTransactionalWriteData: onPrimaryTransactionalWrite's data, as
// mongod reads it (closeConnection true unless given false).
func TestTransactionalWriteData(t *testing.T) {
	tests := []struct {
		name     string
		data     dbson.D
		close    bool
		code     int32
		hasCode  bool
		wantCode int32
	}{
		{"no data", dbson.D{}, true, 0, false, 0},
		{"fail code", dbson.D{{Key: "failBeforeCommitExceptionCode", Value: 1}}, true, 1, true, 0},
		{"no close", dbson.D{{Key: "closeConnection", Value: false}, {Key: "failBeforeCommitExceptionCode", Value: int64(91)}}, false, 91, true, 0},
		{"close not bool", dbson.D{{Key: "closeConnection", Value: 1}}, false, 0, false, mongoerr.TypeMismatch},
		{"code not a number", dbson.D{{Key: "failBeforeCommitExceptionCode", Value: "x"}}, false, 0, false, mongoerr.TypeMismatch},
		{"unknown field", dbson.D{{Key: "errorCode", Value: 1}}, false, 0, false, mongoerr.BadValue},
	}
	for _, tt := range tests {
		d, err := parseTransactionalWriteData(doc(t, tt.data))
		if tt.wantCode != 0 {
			if e, ok := err.(*mongoerr.Error); !ok || e.Code != tt.wantCode {
				t.Errorf("%s: %v, want code %d", tt.name, err, tt.wantCode)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if d.CloseConnection != tt.close || d.FailCode != tt.code || d.HasFailCode != tt.hasCode {
			t.Errorf("%s: %+v", tt.name, d)
		}
	}
	r := NewRegistry(Defs()...)
	if _, err := configure(t, r, dbson.D{{Key: "configureFailPoint", Value: OnPrimaryTransactionalWrite}, {Key: "mode", Value: dbson.D{{Key: "times", Value: 1}}}}); err != nil {
		t.Fatalf("configure: %v", err)
	}
	if cfg, ok := r.Point(OnPrimaryTransactionalWrite).Eval(nil); !ok || !cfg.Parsed.(*TransactionalWriteData).CloseConnection {
		t.Error("times 1 with no data did not fire with closeConnection")
	}
}
