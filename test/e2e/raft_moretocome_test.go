package e2e

// The members send each other _raftMessages as OP_MSG with moreToCome (no
// reply) on raw connections: such a message from a connection that is not
// authenticated as __system must be refused exactly as the acknowledged
// command is, although its sender sees no error.

import (
	"testing"
	"time"

	pb "go.etcd.io/raft/v3/raftpb"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"google.golang.org/protobuf/proto"

	"github.com/cairndb/cairn/internal/wire"
)

// checkUnackedRaftMessagesRefused sends a secondary of s (a set with
// --keyFile key) moreToCome _raftMessages carrying a heartbeat of a much
// higher term (+1000), unauthenticated and as root (cred), then the same
// with a lower one (+100) as __system, and waits for the member's Raft
// term to reach the latter: the Raft node steps messages in order, so had
// a refused one been stepped, the term would be past +1000 by then. It
// leaves the set electing a new primary.
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
			Repl struct {
				Raft struct {
					Term int64 `bson:"term"`
				} `bson:"raft"`
			} `bson:"repl"`
		}
		if err := root.Database("admin").RunCommand(ctx(t), bson.D{{Key: "serverStatus", Value: 1}}).Decode(&st); err != nil {
			t.Fatalf("serverStatus: %v", err)
		}
		return st.Repl.Raft.Term
	}
	before := term()
	if before <= 0 {
		t.Fatalf("Raft term %d", before)
	}
	command := func(term int64) []byte {
		hb, err := proto.Marshal(&pb.Message{Type: pb.MessageType_MsgHeartbeat.Enum(),
			To: proto.Uint64(uint64(j + 1)), From: proto.Uint64(uint64(p + 1)), Term: proto.Uint64(uint64(term))})
		if err != nil {
			t.Fatal(err)
		}
		cmd, err := bson.Marshal(bson.D{{Key: "_raftMessages", Value: 1}, {Key: "setName", Value: s.name},
			{Key: "from", Value: int64(p + 1)}, {Key: "msgs", Value: bson.A{bson.Binary{Data: hb}}}, {Key: "$db", Value: "admin"}})
		if err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	// send writes cmd with moreToCome, then a ping on the same connection:
	// its reply comes after the server ran the message (in order).
	send := func(c *loadConn, cmd []byte) {
		t.Helper()
		c.id++
		if _, err := c.nc.Write(wire.AppendMsg(nil, c.id, 0, wire.FlagMoreToCome, cmd)); err != nil {
			t.Fatal(err)
		}
		if _, err := c.run(bson.D{{Key: "ping", Value: 1}, {Key: "$db", Value: "admin"}}); err != nil {
			t.Fatalf("ping after the unacknowledged _raftMessages: %v", err)
		}
	}
	refused := before + 1000
	send(dialLoad(t, s.members[j]), command(refused))
	asRoot := dialLoad(t, s.members[j])
	if _, err := scramAuth(t, asRoot, "admin", cred.Username, cred.Password); err != nil {
		t.Fatal(err)
	}
	send(asRoot, command(refused))
	system := dialLoad(t, s.members[j])
	if _, err := scramAuth(t, system, "local", "__system", key); err != nil {
		t.Fatal(err)
	}
	accepted := before + 100
	send(system, command(accepted))
	deadline := time.Now().Add(10 * time.Second)
	got := term()
	for got < accepted && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		got = term()
	}
	if got < accepted {
		t.Fatalf("__system's moreToCome _raftMessages: term %d, want at least %d", got, accepted)
	}
	if got >= refused {
		t.Fatalf("an unauthenticated or root moreToCome _raftMessages was stepped: term %d → %d", before, got)
	}
}
