package e2e

// Initial sync of members added to a running set: a one-member set of
// 100,000 documents grows by replSetReconfig (rs.add) into two members,
// then three while a writer writes; each new member receives a Raft
// snapshot of the data in chunks, then the log, and ends with the same
// data (dbHash per collection) as the primary.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"

	"github.com/cairndb/cairn/internal/testutil/cairndtest"
)

const initialSyncDocs = 100000

func TestRaftInitialSync(t *testing.T) {
	s := &raftSet{t: t, name: "rs0", members: make([]*cairndtest.Server, 3)}
	for i := 0; i < 3; i++ {
		p, err := cairndtest.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		s.ports = append(s.ports, p)
		s.dirs = append(s.dirs, t.TempDir())
	}
	t.Cleanup(func() {
		for i, m := range s.members {
			if m != nil && !m.Exited() {
				if err := m.Stop(); err != nil {
					t.Errorf("stopping member %d: %v", i, err)
				}
			}
		}
	})
	s.start(0)
	c0 := s.direct(0)
	admin := c0.Database("admin")
	cfg := bson.D{{Key: "_id", Value: s.name}, {Key: "members", Value: bson.A{bson.D{{Key: "_id", Value: 0}, {Key: "host", Value: s.host(0)}}}}}
	if err := admin.RunCommand(ctx(t), bson.D{{Key: "replSetInitiate", Value: cfg}}).Err(); err != nil {
		t.Fatalf("replSetInitiate: %v", err)
	}
	waitPrimary(t, c0)

	// The data: 100,000 documents of about 200 bytes, a secondary index,
	// and a second collection.
	coll := c0.Database("test").Collection("big")
	pad := strings.Repeat("x", 150)
	start := time.Now()
	for b := 0; b < initialSyncDocs/1000; b++ {
		docs := make([]any, 1000)
		for j := range docs {
			id := b*1000 + j
			docs[j] = bson.D{{Key: "_id", Value: id}, {Key: "k", Value: id % 977}, {Key: "s", Value: fmt.Sprintf("doc-%d", id)}, {Key: "pad", Value: pad}}
		}
		if _, err := coll.InsertMany(ctx(t), docs); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := coll.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "k", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c0.Database("other").Collection("small").InsertOne(ctx(t), bson.D{{Key: "_id", Value: "a"}}); err != nil {
		t.Fatal(err)
	}
	t.Logf("loaded %d documents in %v", initialSyncDocs, time.Since(start).Round(time.Millisecond))

	// rs.add: the one-member set grows into two.
	s.start(1)
	version := configVersion(t, admin)
	two := bson.A{bson.D{{Key: "_id", Value: 0}, {Key: "host", Value: s.host(0)}}, bson.D{{Key: "_id", Value: 1}, {Key: "host", Value: s.host(1)}}}
	addStart := time.Now()
	if err := admin.RunCommand(ctx(t), bson.D{{Key: "replSetReconfig", Value: bson.D{{Key: "_id", Value: s.name}, {Key: "version", Value: version + 1}, {Key: "members", Value: two}}}}).Err(); err != nil {
		t.Fatalf("replSetReconfig adding member 1: %v\n%s", err, s.logs())
	}
	waitSecondaryState(t, s, 1, 90*time.Second)
	t.Logf("member 1: SECONDARY %v after the reconfig", time.Since(addStart).Round(time.Millisecond))
	reportSync(t, s, 1)
	compareHashes(t, s, []int{0, 1}, "test", "other")

	// rs.add of a third member while a writer writes with w: majority.
	s.start(2)
	var stop atomic.Bool
	var wrote atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		wc := c0.Database("test").Collection("live", options.Collection().SetWriteConcern(writeconcern.Majority()))
		for i := 0; !stop.Load() && i < 100000; i++ {
			cx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			_, err := wc.InsertOne(cx, bson.D{{Key: "_id", Value: i}, {Key: "at", Value: time.Now()}})
			cancel()
			if err != nil {
				t.Errorf("write %d during the initial sync: %v", i, err)
				return
			}
			wrote.Add(1)
		}
	}()
	three := append(two, bson.D{{Key: "_id", Value: 2}, {Key: "host", Value: s.host(2)}})
	if err := admin.RunCommand(ctx(t), bson.D{{Key: "replSetReconfig", Value: bson.D{{Key: "_id", Value: s.name}, {Key: "version", Value: version + 2}, {Key: "members", Value: three}}}}).Err(); err != nil {
		t.Fatalf("replSetReconfig adding member 2: %v\n%s", err, s.logs())
	}
	waitSecondaryState(t, s, 2, 90*time.Second)
	time.Sleep(300 * time.Millisecond)
	stop.Store(true)
	wg.Wait()
	t.Logf("%d majority writes during the third member's initial sync", wrote.Load())
	reportSync(t, s, 2)
	// A w: 3 write: every member holds every write before it.
	if _, err := c0.Database("test").Collection("live", options.Collection().SetWriteConcern(&writeconcern.WriteConcern{W: 3})).
		InsertOne(ctx(t), bson.D{{Key: "_id", Value: "last"}}); err != nil {
		t.Fatalf("w: 3: %v\n%s", err, s.logs())
	}
	waitApplied(t, s, []int{1, 2}, "test", "live", wrote.Load()+1)
	compareHashes(t, s, []int{0, 1, 2}, "test", "other")
	s.waitHealthy(3)
	// Both new members were promoted to voters once caught up.
	deadline := time.Now().Add(30 * time.Second)
	for {
		var st struct {
			Voting int32 `bson:"votingMembersCount"`
		}
		if err := admin.RunCommand(ctx(t), bson.D{{Key: "replSetGetStatus", Value: 1}}).Decode(&st); err != nil {
			t.Fatal(err)
		}
		if st.Voting == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("votingMembersCount %d, want 3\n%s", st.Voting, s.logs())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func waitPrimary(t *testing.T, c *mongo.Client) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		var h bson.M
		if err := c.Database("admin").RunCommand(ctx(t), bson.D{{Key: "hello", Value: 1}}).Decode(&h); err == nil && h["isWritablePrimary"] == true {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("no primary within 20s")
}

func configVersion(t *testing.T, admin *mongo.Database) int64 {
	t.Helper()
	var r struct {
		Config struct {
			Version int64 `bson:"version"`
		} `bson:"config"`
	}
	if err := admin.RunCommand(ctx(t), bson.D{{Key: "replSetGetConfig", Value: 1}}).Decode(&r); err != nil {
		t.Fatal(err)
	}
	return r.Config.Version
}

// waitSecondaryState waits until member i says it is SECONDARY, logging
// its initial-sync progress as it goes.
func waitSecondaryState(t *testing.T, s *raftSet, i int, d time.Duration) {
	t.Helper()
	c := s.direct(i)
	deadline := time.Now().Add(d)
	sawStartup2 := false
	for {
		var st bson.M
		err := c.Database("admin").RunCommand(ctx(t), bson.D{{Key: "replSetGetStatus", Value: 1}}).Decode(&st)
		if err == nil {
			if st["myState"] == int32(5) {
				sawStartup2 = true
				if is, ok := st["initialSyncStatus"].(bson.M); ok {
					t.Logf("member %d STARTUP2: copied %v of ~%v bytes, %v of %v records", i, is["approxTotalBytesCopied"], is["approxTotalDataSize"], is["recordsCopied"], is["approxTotalRecords"])
				}
			}
			if st["myState"] == int32(2) {
				if !sawStartup2 {
					t.Logf("member %d: STARTUP2 not seen (the sync was faster than the polling)", i)
				}
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("member %d not SECONDARY within %v (%v)\n%s", i, d, err, s.logs())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// reportSync logs member i's finished initial sync and its throughput.
func reportSync(t *testing.T, s *raftSet, i int) {
	t.Helper()
	var st struct {
		InitialSyncStatus *struct {
			Attempts []struct {
				DurationMillis int64  `bson:"durationMillis"`
				Status         string `bson:"status"`
				Bytes          int64  `bson:"bytesCopied"`
				Records        int64  `bson:"recordsCopied"`
			} `bson:"initialSyncAttempts"`
		} `bson:"initialSyncStatus"`
	}
	if err := s.direct(i).Database("admin").RunCommand(ctx(t), bson.D{{Key: "replSetGetStatus", Value: 1}, {Key: "initialSync", Value: 1}}).Decode(&st); err != nil {
		t.Fatal(err)
	}
	if st.InitialSyncStatus == nil || len(st.InitialSyncStatus.Attempts) == 0 {
		t.Fatalf("member %d reports no initial sync\n%s", i, s.logs())
	}
	a := st.InitialSyncStatus.Attempts[len(st.InitialSyncStatus.Attempts)-1]
	if a.Status != "OK" || a.Records < initialSyncDocs {
		t.Fatalf("member %d's initial sync: %+v", i, a)
	}
	t.Logf("member %d initial sync: %d records, %.1f MB in %d ms: %.1f MB/s", i, a.Records, float64(a.Bytes)/1e6, a.DurationMillis,
		float64(a.Bytes)/1e6/(float64(a.DurationMillis)/1000))
}

// waitApplied waits until db.coll holds want documents on members.
func waitApplied(t *testing.T, s *raftSet, members []int, db, coll string, want int64) {
	t.Helper()
	for _, i := range members {
		c := s.direct(i)
		deadline := time.Now().Add(30 * time.Second)
		for {
			var r struct {
				N int64 `bson:"n"`
			}
			err := c.Database(db).RunCommand(ctx(t), bson.D{{Key: "count", Value: coll}, {Key: "$readPreference", Value: bson.D{{Key: "mode", Value: "secondaryPreferred"}}}}).Decode(&r)
			if err == nil && r.N >= want {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("member %d: %s.%s has %d of %d documents (%v)", i, db, coll, r.N, want, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// compareHashes compares the dbHash of each database on the members.
func compareHashes(t *testing.T, s *raftSet, members []int, dbs ...string) {
	t.Helper()
	for _, db := range dbs {
		var want bson.M
		for _, i := range members {
			var r struct {
				Collections bson.M `bson:"collections"`
			}
			if err := s.direct(i).Database(db).RunCommand(ctx(t), bson.D{{Key: "dbHash", Value: 1}}).Decode(&r); err != nil {
				t.Fatalf("dbHash on member %d: %v", i, err)
			}
			if len(r.Collections) == 0 {
				t.Fatalf("member %d: %s has no collections", i, db)
			}
			if want == nil {
				want = r.Collections
				continue
			}
			for name, h := range want {
				if r.Collections[name] != h {
					t.Errorf("member %d: %s.%s hash %v, member %d's %v", i, db, name, r.Collections[name], members[0], h)
				}
			}
			if len(r.Collections) != len(want) {
				t.Errorf("member %d: %s has collections %v, member %d %v", i, db, r.Collections, members[0], want)
			}
		}
	}
}
