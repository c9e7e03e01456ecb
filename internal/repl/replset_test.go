package repl

import (
	"testing"
	"time"

	dbson "go.mongodb.org/mongo-driver/v2/bson"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

func doc(t *testing.T, d dbson.D) bson.Doc {
	t.Helper()
	raw, err := dbson.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return bson.Doc(raw)
}

func TestParseConfig(t *testing.T) {
	m0 := dbson.D{{Key: "_id", Value: 0}, {Key: "host", Value: "h:1"}}
	cases := []struct {
		name string
		cfg  dbson.D
		code int32
	}{
		{"minimal", dbson.D{{Key: "_id", Value: "rs0"}, {Key: "members", Value: dbson.A{m0}}}, 0},
		{"full", dbson.D{{Key: "_id", Value: "rs0"}, {Key: "version", Value: 3}, {Key: "protocolVersion", Value: int64(1)},
			{Key: "members", Value: dbson.A{dbson.D{{Key: "_id", Value: 1}, {Key: "host", Value: "h:1"}, {Key: "priority", Value: 2.5},
				{Key: "tags", Value: dbson.D{{Key: "dc", Value: "east"}}}, {Key: "votes", Value: 1}}}},
			{Key: "settings", Value: dbson.D{{Key: "electionTimeoutMillis", Value: 5000}, {Key: "getLastErrorModes", Value: dbson.D{{Key: "east", Value: dbson.D{{Key: "dc", Value: 1}}}}}}}}, 0},
		{"no _id", dbson.D{{Key: "members", Value: dbson.A{m0}}}, mongoerr.InvalidReplicaSetConfig},
		{"numeric _id", dbson.D{{Key: "_id", Value: 1}, {Key: "members", Value: dbson.A{m0}}}, mongoerr.InvalidReplicaSetConfig},
		{"no members", dbson.D{{Key: "_id", Value: "rs0"}, {Key: "members", Value: dbson.A{}}}, mongoerr.InvalidReplicaSetConfig},
		{"member without host", dbson.D{{Key: "_id", Value: "rs0"}, {Key: "members", Value: dbson.A{dbson.D{{Key: "_id", Value: 0}}}}}, mongoerr.InvalidReplicaSetConfig},
		{"member id out of range", dbson.D{{Key: "_id", Value: "rs0"}, {Key: "members", Value: dbson.A{dbson.D{{Key: "_id", Value: 256}, {Key: "host", Value: "h:1"}}}}}, mongoerr.InvalidReplicaSetConfig},
		{"arbiter only", dbson.D{{Key: "_id", Value: "rs0"}, {Key: "members", Value: dbson.A{dbson.D{{Key: "_id", Value: 0}, {Key: "host", Value: "h:1"}, {Key: "arbiterOnly", Value: true}}}}}, mongoerr.InvalidReplicaSetConfig},
		{"protocol 0", dbson.D{{Key: "_id", Value: "rs0"}, {Key: "protocolVersion", Value: 0}, {Key: "members", Value: dbson.A{m0}}}, mongoerr.InvalidReplicaSetConfig},
		{"version 0", dbson.D{{Key: "_id", Value: "rs0"}, {Key: "version", Value: 0}, {Key: "members", Value: dbson.A{m0}}}, mongoerr.InvalidReplicaSetConfig},
		{"unknown setting", dbson.D{{Key: "_id", Value: "rs0"}, {Key: "members", Value: dbson.A{m0}}, {Key: "settings", Value: dbson.D{{Key: "x", Value: 1}}}}, mongoerr.InvalidReplicaSetConfig},
		{"bad mode count", dbson.D{{Key: "_id", Value: "rs0"}, {Key: "members", Value: dbson.A{m0}}, {Key: "settings", Value: dbson.D{{Key: "getLastErrorModes", Value: dbson.D{{Key: "m", Value: dbson.D{{Key: "dc", Value: 0}}}}}}}}, mongoerr.InvalidReplicaSetConfig},
	}
	for _, tc := range cases {
		cfg, err := ParseConfig(doc(t, tc.cfg))
		if tc.code != 0 {
			if err == nil || mongoerr.As(err).Code != tc.code {
				t.Fatalf("%s: err %v, want code %d", tc.name, err, tc.code)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		// The normalized document parses back to the same configuration.
		back, err := ParseConfig(cfg.Doc())
		if err != nil || back.Doc().String() != cfg.Doc().String() {
			t.Fatalf("%s: round trip: %v\n%s\n%s", tc.name, err, cfg.Doc().String(), back.Doc().String())
		}
	}
	full, _ := ParseConfig(doc(t, cases[1].cfg))
	if err := full.CheckWriteMode("east"); err != nil {
		t.Fatalf("mode east: %v", err)
	}
	if err := full.CheckWriteMode("west"); mongoerr.As(err).Code != mongoerr.UnknownReplWriteConcern {
		t.Fatalf("mode west: %v", err)
	}
	full.Members[0].Tags = doc(t, dbson.D{})
	if err := full.CheckWriteMode("east"); mongoerr.As(err).Code != mongoerr.UnsatisfiableWriteConcern {
		t.Fatalf("mode east without the tag: %v", err)
	}
}

// TestSetLifecycle: initiation elects the member, a forced step down and
// a freeze keep it a secondary, unfreezing elects it in the next term, and
// every change closes the topology channel.
func TestSetLifecycle(t *testing.T) {
	s := NewSet("rs0", nil)
	var stored []int64
	s.SetPersister(func(cfg *Config, term int64) (Timestamp, error) {
		stored = append(stored, term)
		if got := s.WriteTerm(); got != term {
			t.Errorf("the election's own writes are stamped with term %d, want %d", got, term)
		}
		return s.Clock.Next(), nil
	})
	defer s.Stop()
	counter, changed := s.Topology()
	if s.IsWritablePrimary() || s.Status().Config != nil {
		t.Fatal("primary before initiation")
	}
	if err := s.Initiate(DefaultConfig("rs0", "h:1")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	default:
		t.Fatal("initiation did not signal a topology change")
	}
	if err := s.Initiate(DefaultConfig("rs0", "h:1")); mongoerr.As(err).Code != mongoerr.AlreadyInitialized {
		t.Fatalf("second initiate: %v", err)
	}
	st := s.Status()
	if st.Term != 1 || st.State != StatePrimary || st.Counter <= counter || st.Config.Term != 1 || st.Applied != st.ElectionTS {
		t.Fatalf("after initiation: %+v", st)
	}
	if _, _, err := s.Freeze(10); mongoerr.As(err).Code != mongoerr.NotSecondary {
		t.Fatalf("freeze a primary: %v", err)
	}
	if err := s.StepDown(time.Hour); err != nil {
		t.Fatal(err)
	}
	if s.IsWritablePrimary() {
		t.Fatal("primary after step down")
	}
	if _, warning, err := s.Freeze(1); err != nil || warning == "" {
		t.Fatalf("freeze 1: %q %v", warning, err)
	}
	if info, _, err := s.Freeze(0); err != nil || info != "unfreezing" {
		t.Fatalf("unfreeze: %q %v", info, err)
	}
	if st := s.Status(); st.Term != 2 || st.State != StatePrimary || s.WriteTerm() != 2 {
		t.Fatalf("after unfreezing: %+v, write term %d", st, s.WriteTerm())
	}
	if id := ElectionID(2); id != [12]byte{0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 2} {
		t.Fatalf("ElectionID(2) = %x", id)
	}
	if len(stored) != 2 || stored[1] != 2 {
		t.Fatalf("terms stored: %v", stored)
	}
	if moved, err := s.Rehost("h:2"); err != nil || !moved || s.Status().Config.Members[0].Host != "h:2" || s.Status().Config.Version != 2 {
		t.Fatalf("rehost: %v %v %+v", moved, err, s.Status().Config)
	}
}
