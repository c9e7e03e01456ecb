package e2e

// Member authentication by --keyFile: a three-member set with access
// control replicates (its members authenticate to each other as __system
// with the key), and the members' commands refuse every other client.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readpref"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"

	"github.com/cairndb/cairn/internal/testutil/cairndtest"
)

func TestRaftKeyFile(t *testing.T) {
	key := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(key, []byte("c2VjcmV0LWtleS1vZi10aGUtc2V0\n  Zm9yLWNhaXJu\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := &raftSet{t: t, name: "rs0", members: make([]*cairndtest.Server, 3), extra: []string{"--keyFile", key}}
	for i := 0; i < 3; i++ {
		p, err := cairndtest.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		s.ports = append(s.ports, p)
		s.dirs = append(s.dirs, t.TempDir())
		s.start(i)
	}
	t.Cleanup(func() {
		for _, m := range s.members {
			if m != nil && !m.Exited() {
				m.Stop()
			}
		}
	})
	// The localhost exception: the first user, then everything as it.
	createUser(t, s.direct(0).Database("admin"), "admin", "pw", bson.A{"root"})
	cred := options.Credential{Username: "admin", Password: "pw", AuthSource: "admin"}
	root0 := dial(t, "mongodb://"+s.host(0)+"/?directConnection=true", options.Client().SetAuth(cred))
	members := bson.A{}
	for i := 0; i < 3; i++ {
		members = append(members, bson.D{{Key: "_id", Value: i}, {Key: "host", Value: s.host(i)}})
	}
	if err := root0.Database("admin").RunCommand(ctx(t), bson.D{{Key: "replSetInitiate", Value: bson.D{{Key: "_id", Value: s.name}, {Key: "members", Value: members}}}}).Err(); err != nil {
		t.Fatalf("replSetInitiate with --keyFile: %v\n%s", err, s.logs())
	}
	s.waitHealthy(3)

	c := s.client(options.Client().SetAuth(cred))
	coll := c.Database("test").Collection("k", options.Collection().SetWriteConcern(writeconcern.Majority()))
	if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: 1}, {Key: "v", Value: "replicated"}}); err != nil {
		t.Fatalf("majority write with access control: %v\n%s", err, s.logs())
	}
	// Every secondary got it (the user too: it is replicated data).
	for i := 0; i < 3; i++ {
		d := dial(t, "mongodb://"+s.host(i)+"/?directConnection=true", options.Client().SetAuth(cred))
		deadline := time.Now().Add(20 * time.Second)
		for {
			var got bson.M
			err := d.Database("test", options.Database().SetReadPreference(readpref.SecondaryPreferred())).Collection("k").FindOne(ctx(t), bson.D{{Key: "_id", Value: 1}}).Decode(&got)
			if err == nil && got["v"] == "replicated" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("member %d: %v %v", i, got, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	// No client without the key runs the members' commands: not an
	// unauthenticated one, not root.
	msgs := bson.D{{Key: "_raftMessages", Value: 1}, {Key: "setName", Value: s.name}, {Key: "from", Value: int64(1)}, {Key: "msgs", Value: bson.A{}}}
	join := bson.D{{Key: "_raftJoin", Value: 1}, {Key: "setName", Value: s.name}, {Key: "config", Value: bson.D{}}}
	snap := bson.D{{Key: "_raftSnapshot", Value: int64(1)}, {Key: "setName", Value: s.name}, {Key: "tree", Value: int32(0)}}
	anon := s.direct(1)
	root1 := dial(t, "mongodb://"+s.host(1)+"/?directConnection=true", options.Client().SetAuth(cred))
	for _, cl := range []*mongo.Client{anon, root1} {
		for _, cmd := range []bson.D{msgs, join, snap} {
			err := cl.Database("admin").RunCommand(ctx(t), cmd).Err()
			cmdErr(t, err, 13) // Unauthorized
		}
	}
	// A peer with another key cannot authenticate as __system.
	bad := options.Credential{Username: "__system", Password: "bm90LXRoZS1rZXk=", AuthSource: "local", AuthMechanism: "SCRAM-SHA-256"}
	bc, err := mongo.Connect(options.Client().ApplyURI("mongodb://" + s.host(1) + "/?directConnection=true").SetAuth(bad).SetTimeout(10 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer bc.Disconnect(ctx(t))
	if err := bc.Ping(ctx(t), nil); err == nil || !strings.Contains(err.Error(), "AuthenticationFailed") {
		t.Fatalf("__system with another key: %v, want AuthenticationFailed", err)
	}
	// With the key, __system runs them (the members' own path).
	good := options.Credential{Username: "__system", Password: "c2VjcmV0LWtleS1vZi10aGUtc2V0Zm9yLWNhaXJu", AuthSource: "local", AuthMechanism: "SCRAM-SHA-256"}
	gc := dial(t, "mongodb://"+s.host(1)+"/?directConnection=true", options.Client().SetAuth(good))
	if err := gc.Database("admin").RunCommand(ctx(t), msgs).Err(); err != nil {
		t.Fatalf("_raftMessages as __system: %v", err)
	}
	// The same without a reply (moreToCome, as the members send it).
	checkUnackedRaftMessagesRefused(t, s, cred, good.Password)
}
