package e2e

// Rollback on a set of several members: a primary cut off from the others
// after w: 1 writes the set never commits takes them back when it learns
// of the new primary (and at restart when it was killed first), so that
// every member ends with the same data (dbHash) and nothing of the w: 1
// writes remains (internal/raftrepl/rollback.go).

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readpref"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"

	"github.com/cairndb/cairn/internal/testutil/netproxy"
)

// isolate cuts every link between member i and the others, both ways
// (clients still reach it).
func (s *raftSet) isolate(i int) {
	for j := range s.proxies {
		if j == i {
			continue
		}
		s.proxies[j].SetLink(uint64(i+1), netproxy.Link{Cut: true})
		s.proxies[i].SetLink(uint64(j+1), netproxy.Link{Cut: true})
	}
}

// heal lets every link through again.
func (s *raftSet) heal() {
	for _, p := range s.proxies {
		p.Heal()
	}
}

// dbHash returns member i's dbHash of db (md5 of every collection).
func (s *raftSet) dbHash(c *mongo.Client, db string) (string, bson.M, error) {
	var r struct {
		MD5         string `bson:"md5"`
		Collections bson.M `bson:"collections"`
	}
	cx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := c.Database(db, options.Database().SetReadPreference(readpref.PrimaryPreferred())).
		RunCommand(cx, bson.D{{Key: "dbHash", Value: 1}}).Decode(&r)
	return r.MD5, r.Collections, err
}

// waitSameData waits (up to 60 s) until every running member's dbHash of
// db is the same, and returns it.
func (s *raftSet) waitSameData(db string) string {
	s.t.Helper()
	clients := make([]*mongo.Client, len(s.members))
	for i := range s.members {
		clients[i] = s.direct(i)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		var first string
		same, desc := true, []string{}
		for i, m := range s.members {
			if m == nil || m.Exited() {
				continue
			}
			h, colls, err := s.dbHash(clients[i], db)
			if err != nil {
				same = false
				desc = append(desc, err.Error())
				continue
			}
			desc = append(desc, h+" "+bsonString(colls))
			if first == "" {
				first = h
			} else if h != first {
				same = false
			}
		}
		if same && first != "" {
			return first
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("members' data still differ after 60s:\n%s\n%s", strings.Join(desc, "\n"), s.logs())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func bsonString(m bson.M) string {
	b, _ := bson.MarshalExtJSON(m, false, false)
	return string(b)
}

// waitOtherPrimary waits (up to 30 s) until a member other than old says
// it is primary.
func (s *raftSet) waitOtherPrimary(old int) int {
	s.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		for i := range s.members {
			if i == old || s.members[i] == nil || s.members[i].Exited() {
				continue
			}
			if h, err := s.hello(s.poller(i)); err == nil && h["isWritablePrimary"] == true {
				return i
			}
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("no other primary than %d within 30s\n%s", old, s.logs())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// uncommittedWrites runs w: 1 writes on member p directly: an insert, an
// update, a delete, a retryable findAndModify and a new collection with
// an index; they must all succeed (p is still primary).
func uncommittedWrites(t *testing.T, c *mongo.Client) {
	t.Helper()
	// j: true, so that a kill -9 right after finds them on disk.
	journal := true
	w1 := options.Collection().SetWriteConcern(&writeconcern.WriteConcern{W: 1, Journal: &journal})
	r := c.Database("test").Collection("r", w1)
	if _, err := r.InsertOne(ctx(t), bson.D{{Key: "_id", Value: 100}, {Key: "v", Value: "w1"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.UpdateOne(ctx(t), bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "v", Value: "w1"}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.DeleteOne(ctx(t), bson.D{{Key: "_id", Value: 2}}); err != nil {
		t.Fatal(err)
	}
	if err := r.FindOneAndUpdate(ctx(t), bson.D{{Key: "_id", Value: 3}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}}).Err(); err != nil {
		t.Fatal(err)
	}
	fresh := c.Database("test").Collection("fresh", w1)
	if _, err := fresh.InsertOne(ctx(t), bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	if _, err := fresh.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
}

// seedRollback starts a proxied 3-member set and writes five documents
// with w: "majority".
func seedRollback(t *testing.T) (*raftSet, *mongo.Collection) {
	s := startRaftSetWith(t, 3, nil, time.Now().UnixNano())
	c := s.client()
	coll := c.Database("test").Collection("r", options.Collection().SetWriteConcern(writeconcern.Majority()))
	for i := 1; i <= 5; i++ {
		if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: i}, {Key: "v", Value: "committed"}, {Key: "n", Value: 0}}); err != nil {
			t.Fatalf("%v\n%s", err, s.logs())
		}
	}
	return s, coll
}

// checkRolledBack checks that member i holds the committed state: the
// w: 1 writes are gone, the new primary's writes are there.
func checkRolledBack(t *testing.T, s *raftSet, i int) {
	t.Helper()
	r := s.direct(i).Database("test", options.Database().SetReadPreference(readpref.SecondaryPreferred())).Collection("r")
	var docs []bson.D
	cur, err := r.Find(ctx(t), bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		t.Fatal(err)
	}
	if err := cur.All(ctx(t), &docs); err != nil {
		t.Fatal(err)
	}
	b, _ := bson.MarshalExtJSON(bson.D{{Key: "d", Value: docs}}, false, false)
	got := string(b)
	want := `{"d":[{"_id":1,"v":"new primary","n":0},{"_id":2,"v":"committed","n":0},{"_id":3,"v":"committed","n":0},{"_id":4,"v":"committed","n":0},{"_id":5,"v":"committed","n":0},{"_id":200}]}`
	if got != want {
		t.Fatalf("member %d holds\n%s\nwant\n%s\n%s", i, got, want, s.logs())
	}
	names, err := s.direct(i).Database("test").ListCollectionNames(ctx(t), bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if n == "fresh" {
			t.Fatalf("member %d still has the collection created by a w: 1 write the set never committed", i)
		}
	}
}

// TestRaftSetRollback: the primary, cut off from the two others, takes
// w: 1 writes (insert, update, delete, findAndModify, a new collection and
// an index); the others elect a new primary that takes majority writes;
// once the links heal, the old primary rolls back its writes and every
// member holds the same data.
func TestRaftSetRollback(t *testing.T) {
	s, coll := seedRollback(t)
	p := s.primary()
	s.isolate(p)
	uncommittedWrites(t, s.direct(p))
	q := s.waitOtherPrimary(p)
	t.Logf("old primary %d, new primary %d", p, q)
	nc := s.direct(q).Database("test").Collection("r", options.Collection().SetWriteConcern(writeconcern.Majority()))
	if _, err := nc.UpdateOne(ctx(t), bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "v", Value: "new primary"}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := nc.InsertOne(ctx(t), bson.D{{Key: "_id", Value: 200}}); err != nil {
		t.Fatal(err)
	}
	s.heal()
	s.waitSameData("test")
	for i := range s.members {
		checkRolledBack(t, s, i)
	}
	if !strings.Contains(s.members[p].Logs(), "Rolled back the writes the set did not commit") {
		t.Fatalf("member %d did not log its rollback\n%s", p, s.logs())
	}
	// The set takes majority writes again through the URI.
	if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: 300}}); err != nil {
		t.Fatal(err)
	}
	s.waitSameData("test")
}

// TestRaftSetRollbackAtRestart: the isolated primary takes w: 1 writes
// and is killed (kill -9) before it learns of the new primary; restarted,
// it takes them back before it runs Raft and ends with the set's data.
func TestRaftSetRollbackAtRestart(t *testing.T) {
	s, _ := seedRollback(t)
	p := s.primary()
	s.isolate(p)
	uncommittedWrites(t, s.direct(p))
	s.members[p].Kill()
	q := s.waitOtherPrimary(p)
	nc := s.direct(q).Database("test").Collection("r", options.Collection().SetWriteConcern(writeconcern.Majority()))
	if _, err := nc.UpdateOne(ctx(t), bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "v", Value: "new primary"}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := nc.InsertOne(ctx(t), bson.D{{Key: "_id", Value: 200}}); err != nil {
		t.Fatal(err)
	}
	s.heal()
	s.start(p)
	s.waitSameData("test")
	for i := range s.members {
		checkRolledBack(t, s, i)
	}
	if !strings.Contains(s.members[p].Logs(), "Rolled back at start") {
		t.Fatalf("member %d did not log its rollback at start\n%s", p, s.logs())
	}
}
