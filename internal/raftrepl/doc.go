// Package raftrepl replicates a replica set of several members on etcd's
// Raft (go.etcd.io/raft/v3): each member runs one Raft node, the Raft
// leader is the PRIMARY, and the replicated log carries the primary's
// oplog entries.
//
// # What is proposed, and when a write is acknowledged
//
// A write on the primary commits to the primary's own kv, together with
// its oplog entry, exactly as on a one-member set (internal/oplog): w: 1
// is acknowledged then. The shipper (apply.go) reads the oplog after the
// last entry it proposed and proposes what it finds, in ts order, as one
// Raft entry per batch. A write is majority-committed once Raft has
// committed the entry carrying its oplog entry and the primary has applied
// it: the commit point (Status.Commit, hello's majorityOpTime) is the last
// ts of the committed entries applied, and w: "majority" waits for it
// (Node.WaitCommitted). w: N waits until N members' logs (Raft's match
// index) hold the entry (Node.WaitReplicated).
//
// # How entries are applied
//
// Every member applies every committed entry in log order, from the Ready
// loop (ready.go): an oplog entry its own oplog does not hold yet is applied
// to its data and written to its oplog as the primary wrote it (ts, t,
// wall), in one kv transaction with the applied index; one it holds is
// skipped, so applying is idempotent (the primary's own entries, entries
// re-delivered after a restart). A secondary never applies an entry Raft
// has not committed, so nothing it applied is ever rolled back. A member
// that wins an election becomes primary (accepts writes) only once it has
// applied its term's first entry, so it holds every committed write. A
// primary that loses its leadership takes back the writes it committed
// locally that Raft did not commit (rollback.go) before it applies any
// entry of the next term, and a member does the same at start; majority
// and linearizable reads wait for the commit point (reads.go).
//
// # Storage
//
// The Raft log, hard state, configuration state and applied index live in
// the member's kv, in the tree _raft (storage.go), written with kv.Sync
// before a Ready's messages are sent. The log keeps a tail behind the
// applied index and is compacted beyond it (compact.go). A member that
// needs entries the leader no longer holds (a new member, a long-absent
// one) receives a Raft snapshot of the leader's data, made from a kv read
// snapshot and pulled in chunks over the members' port (snapshot.go),
// which it installs in one kv transaction before it follows the log
// (snaprecv.go): that is its initial sync. New voters join as learners
// and are promoted once caught up (members.go).
//
// # Transport
//
// Members talk on their ordinary host:port over the MongoDB wire protocol:
// Raft messages travel in the internal command _raftMessages, sent with
// moreToCome (no reply) on one raw connection per peer, with an
// acknowledged heartbeat every second for the peer's health (transport.go,
// peerconn.go); a new member is told to join with _raftJoin (join.go),
// sent with the official Go driver. With --keyFile the members authenticate to each
// other as __system with the key and the internal commands need an action
// only __system holds, so no other client can join or inject entries;
// with --tlsMode preferTLS or requireTLS they connect with TLS, presenting
// --tlsClusterFile's certificate (members.go, MemberAuth). A set of
// several members with access control on and no key refuses to run.
//
// # Elections and membership
//
// Raft's election timeout is the configuration's
// settings.electionTimeoutMillis (default 1 s; Raft randomizes it between
// one and two timeouts), with PreVote and CheckQuorum, so that a leader
// cut off from a majority steps down. replSetStepDown transfers the
// leadership to the most up-to-date voter and freezes the member;
// replSetFreeze drops the member's own vote requests for the period.
// Members are added and removed one at a time (Raft's single-member
// changes); members with votes: 0 are Raft learners.
package raftrepl
