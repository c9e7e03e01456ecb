package raftrepl

// Adding a voter: first as a Raft learner, promoted once it caught up.
//
// A new member starts with no data: it receives a snapshot, installs it,
// then the log (its initial sync). Were it a voter from the start, the
// group's majority would count a member that cannot acknowledge anything
// yet: a one-member set growing to two would stop committing writes until
// the sync ends. So addVoter adds it as a learner (it receives the log and
// votes in nothing) and returns, and a background promotion makes it a
// voter once raft shows it replicating within promoteLag entries of the
// leader's commit index (promoteLearners, after each Ready, so that any
// later leader finishes it), as mongod 4.4+ adds a member as "newlyAdded"
// (non-voting) until its initial sync is done.

import (
	"context"
	"crypto/tls"
	"errors"
	"time"

	"github.com/cairndb/cairn/internal/repl"
	pb "go.etcd.io/raft/v3/raftpb"
	"go.etcd.io/raft/v3/tracker"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// promoteLag is how far behind the commit index a learner may be when it
// is promoted.
const promoteLag = 64

// MemberAuth is how a member connects to the others, as mongod's internal
// connections: with a key (--keyFile), it authenticates as the __system
// user of local with SCRAM-SHA-256; with a TLS configuration (--tlsMode
// preferTLS or requireTLS), it speaks TLS, presenting the cluster
// certificate and verifying the peer's.
type MemberAuth struct {
	Key string
	TLS *tls.Config
}

func (n *Node) memberAuth() MemberAuth {
	return MemberAuth{Key: n.opts.MemberKey, TLS: n.opts.MemberTLS}
}

// memberClientOptions are the options of a client to another member.
func memberClientOptions(host string, auth MemberAuth) *options.ClientOptions {
	o := options.Client().ApplyURI("mongodb://" + host + "/?directConnection=true").
		SetConnectTimeout(time.Second).SetServerSelectionTimeout(5 * time.Second).
		SetAppName("cairnd raft")
	if auth.Key != "" {
		o.SetAuth(options.Credential{AuthMechanism: "SCRAM-SHA-256", AuthSource: "local", Username: "__system", Password: auth.Key})
	}
	if auth.TLS != nil {
		o.SetTLSConfig(auth.TLS.Clone())
	}
	return o
}

func (n *Node) isVoter(id uint64) bool {
	_, ok := n.node.Status().Config.Voters.IDs()[id]
	return ok
}

// addVoter adds the voter id with configuration next as a learner; the
// leader promotes it once it caught up (promoteLearners).
func (n *Node) addVoter(ctx context.Context, next *repl.Config, id uint64) error {
	if n.isVoter(id) {
		return n.confChange(ctx, next, pb.ConfChangeAddNode, id)
	}
	return n.confChange(ctx, next, pb.ConfChangeAddLearnerNode, id)
}

// WaitVoter waits until the member with Raft id id is a voter (promoted
// after its initial sync), or ctx ends.
func (n *Node) WaitVoter(ctx context.Context, id uint64) error {
	for !n.isVoter(id) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-n.stopc:
			return ErrStopped
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

// promoteLearners, run after each Ready, promotes on the leader every
// learner the configuration gives a vote once it caught up (any leader
// does it: a promotion survives a change of leader).
func (n *Node) promoteLearners() {
	n.mu.Lock()
	primary, cfg := n.primary, n.cfg
	n.mu.Unlock()
	n.snap.mu.Lock()
	due := primary && !n.snap.promoting && time.Since(n.snap.promoteCheck) > 100*time.Millisecond
	if due {
		n.snap.promoteCheck = time.Now()
	}
	n.snap.mu.Unlock()
	if !due {
		return
	}
	rs := n.node.Status()
	for _, m := range cfg.Members {
		id := RaftID(m)
		if _, learner := rs.Config.Learners[id]; !learner || m.Votes == 0 {
			continue
		}
		pr, ok := rs.Progress[id]
		if !ok || pr.State != tracker.StateReplicate || pr.Match+promoteLag < rs.HardState.GetCommit() {
			continue
		}
		n.snap.mu.Lock()
		n.snap.promoting = true
		n.snap.mu.Unlock()
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			err := n.promoteOnce(ctx, id)
			cancel()
			n.snap.mu.Lock()
			n.snap.promoting = false
			n.snap.mu.Unlock()
			if err == nil {
				n.opts.Log.Info("A new member caught up: it votes now", "c", "REPL", "host", m.Host)
			}
		}()
		return
	}
}

func (n *Node) promoteOnce(ctx context.Context, id uint64) error {
	t := pb.ConfChangeAddNode
	cc := &pb.ConfChange{Type: &t, NodeId: &id, Context: n.Config().Doc()}
	if err := n.node.ProposeConfChange(ctx, cc); err != nil {
		return err
	}
	if err := n.WaitVoter(ctx, id); err != nil {
		return errors.New("raftrepl: the promotion was not applied in time")
	}
	return nil
}
