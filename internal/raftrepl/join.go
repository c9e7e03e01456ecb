package raftrepl

// Initiating a set of several members, and adding members.
//
// The member that receives replSetInitiate starts a Raft group of one
// voter, itself (Start with bootstrap), wins its election at once and
// becomes primary; its oplog is what the set starts from. It then adds the
// other members one at a time (Raft's one-at-a-time membership changes
// need no joint consensus): for each, it sends the internal command
//
//	{_raftJoin: 1, setName, config}
//
// which makes that member store the configuration and start a Raft node
// with an empty log (it waits for the leader), and proposes the member's
// addition (a voter at once, as mongod's initiate makes every member; a
// learner with votes: 0; members added later by a reconfig join as
// learners first, see members.go) with the configuration in
// the change's context; once the change is applied, the next member
// follows. A bootstrapped group compacts its log at once, so the leader
// sends a new member a snapshot of its data (snapshot.go), then the log.

import (
	"context"
	"fmt"
	"time"

	"github.com/cairndb/cairn/internal/repl"
	pb "go.etcd.io/raft/v3/raftpb"
	dbson "go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// JoinCommand is the internal command that makes a member join a set.
const JoinCommand = "_raftJoin"

// joinTimeout bounds how long the primary tries to reach a member it adds.
const joinTimeout = 2 * time.Minute

// AddMembers adds every member of cfg the Raft group does not have yet,
// one at a time (run in the background after an initiate).
func (n *Node) AddMembers(ctx context.Context, cfg *repl.Config) {
	for _, m := range cfg.Members {
		if RaftID(m) == n.id || n.inGroup(RaftID(m)) {
			continue
		}
		if err := n.addMember(ctx, cfg, m); err != nil {
			n.opts.Log.Error("Cannot add a member to the replica set", "c", "REPL", "host", m.Host, "error", err.Error())
			return
		}
		n.opts.Log.Info("Added a member to the replica set", "c", "REPL", "host", m.Host, "votes", m.Votes)
	}
}

func (n *Node) inGroup(id uint64) bool {
	cs := n.node.Status().Config
	_, voter := cs.Voters.IDs()[id]
	_, learner := cs.Learners[id]
	return voter || learner
}

func (n *Node) addMember(ctx context.Context, cfg *repl.Config, m repl.Member) error {
	ctx, cancel := context.WithTimeout(ctx, joinTimeout)
	defer cancel()
	if err := SendJoin(ctx, m.Host, cfg, n.memberAuth()); err != nil {
		return err
	}
	t := pb.ConfChangeAddNode
	if m.Votes == 0 {
		t = pb.ConfChangeAddLearnerNode
	}
	for {
		// The initiated set's members vote at once, as mongod's
		// replSetInitiate makes them: they start empty, and their
		// snapshot is the initiating member's data.
		err := n.confChange(ctx, cfg, t, RaftID(m))
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("adding %s: %w", m.Host, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// SendJoin asks the member at host to join the set cfg, retrying until it
// answers or ctx ends, connecting as auth says.
func SendJoin(ctx context.Context, host string, cfg *repl.Config, auth MemberAuth) error {
	client, err := mongo.Connect(memberClientOptions(host, auth).SetServerSelectionTimeout(time.Second))
	if err != nil {
		return err
	}
	defer func() { _ = client.Disconnect(context.Background()) }()
	cmd := dbson.D{{Key: JoinCommand, Value: 1}, {Key: "setName", Value: cfg.Name}, {Key: "config", Value: dbson.Raw(cfg.Doc())}}
	for {
		err = client.Database("admin").RunCommand(ctx, cmd).Err()
		if err == nil {
			return nil
		}
		var ce mongo.CommandError
		if asCommandError(err, &ce) {
			return fmt.Errorf("%s refused to join: %w", host, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s did not answer: %w", host, err)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func asCommandError(err error, ce *mongo.CommandError) bool {
	e, ok := err.(mongo.CommandError)
	if ok {
		*ce = e
	}
	return ok
}

// Diff returns the members next adds to old and those it removes (by _id).
func Diff(old, next *repl.Config) (added, removed []repl.Member) {
	in := func(c *repl.Config, id int64) bool {
		for _, m := range c.Members {
			if m.ID == id {
				return true
			}
		}
		return false
	}
	for _, m := range next.Members {
		if !in(old, m.ID) {
			added = append(added, m)
		}
	}
	for _, m := range old.Members {
		if !in(next, m.ID) {
			removed = append(removed, m)
		}
	}
	return added, removed
}
