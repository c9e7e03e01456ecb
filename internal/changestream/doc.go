// Package changestream serves change streams: aggregate's $changeStream
// on a collection, a database ({aggregate: 1}) or the deployment
// (allChangesForCluster on admin), as mongod 7.0 does, from the oplog
// (internal/oplog) of the replica-set mode.
//
// # Events from entries
//
// A stream is an exec.Source (Stream) that the command layer keeps as a
// tailable, awaitData cursor. Its position is a resume token (token.go):
// every event whose token is not after the position has been returned or
// filtered out. Each batch opens a new kv read snapshot, seeks the oplog
// tree (keyed by ts) to the position's ts — one seek, no scan of what is
// behind it — and derives the events of the entries from there
// (event.go): an insert, update ($v: 2 diff: update, with the
// updateDescription of the diff), replacement or delete of a document of
// the stream's scope is one event; a command entry is a drop, rename,
// dropDatabase (and with showExpandedEvents create, createIndexes — also a
// two-phase build's commitIndexBuild —, dropIndexes, modify); an applyOps
// entry (a committed multi-document transaction, written at its commit)
// is one event per operation, in operation order, with the entry's lsid
// and txnNumber and the operation's index as the token's txnOpIndex, so
// that no event of a transaction exists before its commit. A drop or
// rename of a watched collection, and a watched database's dropDatabase,
// is followed by an invalidate, after which the stream is exhausted.
// Events before the position are derived again but not returned: when a
// batch fills mid-entry, the next batch resumes inside the entry.
//
// The later stages of the pipeline ($match, $project, $addFields, $set,
// $unset, $replaceRoot, $replaceWith, $redact) run over each event; an
// event whose _id they changed fails the stream with
// ChangeStreamFatalError, as mongod. The scope (namespace) and a leading
// $match's equality on operationType and documentKey._id are pushed
// down: entries that cannot match are rejected on their raw fields
// before any event document is built.
//
// # Tokens and the post-batch token
//
// A token is mongod's {_data: hex} of ResumeTokenData's fields (cluster
// time, version, token type, txnOpIndex, fromInvalidate, UUID, event
// identifier), each in an order-preserving key encoding, so tokens
// compare as the events do. After a batch that read the oplog to its end,
// the position is a high-water mark just past the last entry read (ts+1:
// every event at or before ts has been seen), so the postBatchResumeToken
// of every batch, empty ones included, advances with the oplog even when
// nothing matches. resumeAfter and startAfter start at a token (startAfter
// also after an invalidate), startAtOperationTime at a high-water mark; a
// start older than the oplog's first entry fails with
// ChangeStreamHistoryLost.
//
// # Waiting
//
// A stream returns only majority-committed events (commit.go): it reads
// the oplog up to the commit point it loaded before its snapshot — on a
// one-member set the journaled point, on a set of several Raft's commit
// point — and a getMore that finds nothing waits for that point to
// advance. Its channel is shared by every stream of the server: a getMore
// loads it (one atomic load, no registration) before it reads and waits
// on it after, and one journal flush or Raft commit wakes every waiting
// stream once for all the writes it covers; no stream polls. A woken
// stream reads only the entries after its position, all of them up to
// the commit point and the batch's bounds (batchSize, 16 MiB).
//
// # Sharing
//
// The Hub (hub.go) also keeps the most recent oplog entries decoded once
// and, for streams whose events depend on the entry alone (fullDocument
// default, fullDocumentBeforeChange off), each event document built once
// with its token: such a stream's batch appends ready bytes. Each batch
// still seeks the oplog in its own snapshot and takes an entry from the
// hub only when the hub holds that ts with the same bytes, so sharing
// changes no result. Streams whose scope, options, collation, let
// variables and later stages agree share those stages' outputs too
// (shape.go): each shared event's output is computed once per shape.
//
// # Lingering
//
// A getMore whose read brought a group of events (DefaultLingerEvents:
// writers faster than the flushes, or than the stream's round trips)
// waits and reads once more before it answers (Stream.Linger,
// exec.Lingerer), so that one round trip carries several flushes' events:
// after a wake-up for DefaultLinger at least, and either kind while the
// batch's first event is younger than DefaultLingerAge by its entry's
// wall time; an event older than that is answered at once, and a lone
// event too.
//
// # Images
//
// fullDocument: updateLookup reads the document's current version in the
// batch's snapshot; whenAvailable and required derive an update's
// post-image from its pre-image and diff. fullDocumentBeforeChange reads
// the pre-image that the oplog keeps for collections with
// changeStreamPreAndPostImages enabled (oplog/preimage.go).
package changestream
