// Package replset is the replica-set glue between the commands
// (internal/command) and the mechanism below them: the one-member set's
// state (internal/repl) and the Raft replication of a set of several
// members (internal/raftrepl). It keeps the set's configuration in local
// (store.go), starts and stops the member's Raft node and serves the
// requests members send each other (raft.go, snapshot.go), changes the
// membership (membership.go), waits for write and read concerns
// (wait.go), keeps the snapshots that snapshot reads at a past cluster
// time read (snapshots.go), and builds what a member adds to replies:
// $clusterTime, operationTime, writeConcernError, hello's and
// replSetGetStatus' replica-set fields (reply.go, status.go).
//
// It never imports internal/command: a command hands it the parsed
// request's parts, and the few things only the command layer can do (run
// a DDL entry's command, drop what it derived from data a snapshot
// replaced) it reaches through Host.
package replset

import (
	"context"
	"crypto/tls"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/auth"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/raftrepl"
	"github.com/cairndb/cairn/internal/repl"
	"github.com/cairndb/cairn/internal/session"
)

// Host is what the member needs of the command layer.
type Host interface {
	// ApplyEntryCommand runs a DDL entry's command as the member applying
	// it: past the primary check and without waiting for a write concern.
	ApplyEntryCommand(ctx context.Context, db string, o bson.Doc) error
	// RestoredSnapshot drops what the layers above derived from the data
	// a snapshot replaced.
	RestoredSnapshot()
}

// State is the member's mutable state, kept by the server (one per
// server, so that two servers in one process never share it).
type State struct {
	// raft is the member's Raft node in a set of several members;
	// raftMu serializes its start.
	raft   atomic.Pointer[raftrepl.Node]
	raftMu sync.Mutex
	// Snaps are the snapshots kept for snapshot reads at a past cluster
	// time (snapshots.go); SnapWindowSecs is
	// minSnapshotHistoryWindowInSeconds plus one (0: the default).
	Snaps          SnapHistory
	SnapWindowSecs atomic.Int64
}

// Member is the replica-set member as the commands see it: the server's
// parts it uses, and its State. It is a small value the command layer
// builds from its environment for each use.
type Member struct {
	Set    *repl.Set
	Engine *exec.Engine
	Log    *slog.Logger
	// Auth is access control (nil: off); its key authenticates the
	// members to each other.
	Auth *auth.Manager
	// TLS is the TLS configuration of the connections to the other
	// members (nil: plain).
	TLS      *tls.Config
	Sessions *session.Registry
	Host     Host
	*State
}

// Raft is the member's Raft node (nil: not a member of a set of several
// members).
func (s *State) Raft() *raftrepl.Node {
	if s == nil {
		return nil
	}
	return s.raft.Load()
}

// ErrNoRepl is a standalone's answer to the replSet* commands
// (mongod's checkReplEnabledForCommand).
func ErrNoRepl() error {
	return mongoerr.New(mongoerr.NoReplicationEnabled, "not running with --replSet")
}

// MemberAuth is how this member connects to the others: its key and TLS.
func (m Member) MemberAuth() raftrepl.MemberAuth {
	return raftrepl.MemberAuth{Key: m.Auth.MemberKey(), TLS: m.TLS}
}

// NoMemberAuth reports access control on without a key file: the members
// could not authenticate to each other.
func (m Member) NoMemberAuth() bool {
	return m.Auth != nil && m.Auth.Enabled() && !m.Auth.HasKeyFile()
}

// ErrNoMemberAuth: access control is on and members have no key.
func ErrNoMemberAuth() error {
	return mongoerr.New(mongoerr.InvalidReplicaSetConfig, "a replica set of several members with access control on needs --keyFile (security.keyFile): its members authenticate to each other with it")
}

// Node is the node a request from another member of the set (Raft
// messages, a snapshot's chunk) goes to, after the checks all such
// requests pass: members can authenticate, the node runs, and the body's
// setName is this set's; what names the request in the last error.
func (m Member) Node(body bson.Doc, what string) (*raftrepl.Node, error) {
	if m.NoMemberAuth() {
		return nil, ErrNoMemberAuth()
	}
	n := m.Raft()
	if n == nil {
		return nil, mongoerr.New(mongoerr.NotYetInitialized, "no replset config has been received")
	}
	if v, _ := body.Lookup("setName"); v.Type != bson.TypeString || v.StringValue() != m.Set.Name {
		return nil, mongoerr.New(mongoerr.InvalidReplicaSetConfig, "%s for another replica set", what)
	}
	return n, nil
}

// StreamCommitPoint is what change streams deliver up to
// (internal/changestream/commit.go): on a member of a set of several, the
// Raft commit point; on a one-member set, the oplog's durable (journaled)
// point, the majority of one member being the member. A member of a set
// of several whose Raft node has not started yet delivers nothing: what
// its oplog holds may still be rolled back.
func (m Member) StreamCommitPoint() (repl.Timestamp, <-chan struct{}) {
	if n := m.Raft(); n != nil {
		return n.CommitPoint()
	}
	ts, ch := m.Engine.Oplog.Durable()
	if m.Set.IsMulti() {
		return 0, ch
	}
	return ts, ch
}
