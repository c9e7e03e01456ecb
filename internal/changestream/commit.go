package changestream

// The commit point: what a stream may return.
//
// mongod's change streams read majority-committed data: an event is
// returned only once its write can no longer be rolled back, which on a
// one-member set means journaled. An oplog entry is visible in kv's
// snapshots as soon as its commit is published, before its journal
// fdatasync, and on a primary of several members before Raft commits it.
// So a stream reads the oplog of its snapshot only up to the commit point
// W it loaded before opening that snapshot, and its position (the
// post-batch token's high-water mark) never passes W+1: an entry after W
// is read by a later batch, once W has reached it.
//
// W is the server's (HubOptions.CommitPoint): on a one-member set the
// oplog's durable point (oplog.Log.Durable: kv marks each commit with the
// ts of its last entry and reports the largest mark its journal flushes
// made durable), on a member of several the Raft commit point
// (raftrepl.Node.CommitPoint: every entry at or before it is committed by
// a majority and applied here). Either comes with a channel that its next
// advance closes, so that a waiting getMore wakes once per journal flush
// or Raft commit rather than once per published commit; and since a
// flush or a commit covers every write it groups, the watchers of a busy
// collection are woken once per group, each finding every event of the
// group in one batch.
//
// Ordering: the caller loads the channel (Stream.Changed), then Fill
// loads W, then opens its snapshot. W only ever covers published commits
// (a journal flush follows the publication of what it flushes; Raft's
// commit point moves after the entries are applied), so every entry at
// or before W is in the snapshot; an advance after the channel was loaded
// closes it, so no advance slips between a batch and its wait.

import "github.com/cairndb/cairn/internal/repl"

// CommitPoint returns the ts up to which events may be returned (every
// oplog entry at or before it is majority-committed) and a channel closed
// when it may have advanced. The channel is loaded before the point.
type CommitPoint func() (repl.Timestamp, <-chan struct{})
