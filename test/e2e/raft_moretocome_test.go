package e2e

// The members send each other _raftMessages as OP_MSG with moreToCome (no
// reply) on raw connections: such a message from a connection that is not
// authenticated as __system must be refused exactly as the acknowledged
// command is, although its sender sees no error.

import (
	"testing"

	pb "go.etcd.io/raft/v3/raftpb"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"google.golang.org/protobuf/proto"

	"github.com/cairndb/cairn/internal/wire"
)

// checkUnackedRaftMessagesRefused sends a secondary of s (a set with
// --keyFile key) a moreToCome _raftMessages carrying a heartbeat of a
// much higher term, first unauthenticated, then as root (cred), and checks
// its term did not move; then as __system, and checks it did (so that the
// check could fail). It leaves the set electing a new primary.
func checkUnackedRaftMessagesRefused(t *testing.T, s *raftSet, cred options.Credential, key string) {
	t.Helper()
	p := s.primary()
	if p < 0 {
		t.Fatalf("no primary\n%s", s.logs())
	}
	j := (p + 1) % len(s.members)
	root := dial(t, "mongodb://"+s.host(j)+"/?directConnection=true", options.Client().SetAuth(cred))
	term := func() int64 {
		var st struct {
			Term int64 `bson:"term"`
		}
		if err := root.Database("admin").RunCommand(ctx(t), bson.D{{Key: "replSetGetStatus", Value: 1}}).Decode(&st); err != nil {
			t.Fatalf("replSetGetStatus: %v", err)
		}
		return st.Term
	}
	before := term()
	high := uint64(before) + 100
	hb, err := proto.Marshal(&pb.Message{Type: pb.MessageType_MsgHeartbeat.Enum(),
		To: proto.Uint64(uint64(j + 1)), From: proto.Uint64(uint64(p + 1)), Term: proto.Uint64(high)})
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := bson.Marshal(bson.D{{Key: "_raftMessages", Value: 1}, {Key: "setName", Value: s.name},
		{Key: "from", Value: int64(p + 1)}, {Key: "msgs", Value: bson.A{bson.Binary{Data: hb}}}, {Key: "$db", Value: "admin"}})
	if err != nil {
		t.Fatal(err)
	}
	// send writes cmd with moreToCome, then a ping on the same connection:
	// its reply comes after the server ran the message (in order).
	send := func(c *loadConn) {
		t.Helper()
		c.id++
		if _, err := c.nc.Write(wire.AppendMsg(nil, c.id, 0, wire.FlagMoreToCome, cmd)); err != nil {
			t.Fatal(err)
		}
		if _, err := c.run(bson.D{{Key: "ping", Value: 1}, {Key: "$db", Value: "admin"}}); err != nil {
			t.Fatalf("ping after the unacknowledged _raftMessages: %v", err)
		}
	}
	anon := dialLoad(t, s.members[j])
	send(anon)
	if got := term(); got >= int64(high) {
		t.Fatalf("an unauthenticated moreToCome _raftMessages moved the term %d → %d", before, got)
	}
	asRoot := dialLoad(t, s.members[j])
	if _, err := scramAuth(t, asRoot, "admin", cred.Username, cred.Password); err != nil {
		t.Fatal(err)
	}
	send(asRoot)
	if got := term(); got >= int64(high) {
		t.Fatalf("root's moreToCome _raftMessages moved the term %d → %d", before, got)
	}
	system := dialLoad(t, s.members[j])
	if _, err := scramAuth(t, system, "local", "__system", key); err != nil {
		t.Fatal(err)
	}
	send(system)
	if got := term(); got < int64(high) {
		t.Fatalf("__system's moreToCome _raftMessages: term %d, want at least %d", got, high)
	}
}
