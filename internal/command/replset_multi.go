package command

// The internal commands members of a replica set send each other
// (_raftMessages, _raftJoin, _raftSnapshot). internal/replset holds the
// mechanism; the member the server's state makes up and applying a DDL
// entry by running its command are internal/dispatch/replset.go's.

import (
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/raftrepl"
)

// raftMessages steps a peer's Raft messages into this member's node.
func raftMessages(c *Ctx) error {
	n, err := c.Env.Member().Node(c.Body, "message")
	if err != nil {
		return err
	}
	msgs, _, err := raftrepl.DecodeMessages(c.Body)
	if err != nil {
		return mongoerr.New(mongoerr.FailedToParse, "%v", err)
	}
	return n.Receive(c, msgs)
}

// raftJoin makes this member join the set whose primary sent it.
func raftJoin(c *Ctx) error { return c.Env.Member().Join(c.Body) }

// raftSnapshot answers one chunk of a snapshot this member serves.
func raftSnapshot(c *Ctx) error { return c.Env.Member().SnapshotChunk(c.Body, c.Reply) }
