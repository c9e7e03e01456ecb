package kv

// testingKnobs are hooks and switches for kv's own tests, set per DB
// through the unexported Options.testing (so tests running in parallel
// can each use their own), never by users of the package. The zero value
// changes nothing. Open gives every DB its own copy (db.opts.testing is
// never nil), so a test may change the knobs of one open DB without
// affecting another opened with the same Options; a hook set while the DB
// runs must be set while nothing can call it (no checkpoint in flight).
type testingKnobs struct {
	// verifyCheckpoints makes every checkpoint re-read and check the
	// whole data file once it is durable (invariants.go,
	// verifyCheckpoint). Tests of damaged files leave it off.
	verifyCheckpoints bool
	// checkpointUnlocked runs when a background checkpoint has written
	// its pages, without the writer lock, before its fdatasyncs and meta.
	checkpointUnlocked func(db *DB)
	// beforeNodeWrite runs before a checkpoint writes dirty node n.
	beforeNodeWrite func(db *DB, n *node)
	// freedForCommit runs when a checkpoint frees, on a commit's behalf,
	// the extent of a version that the commit replaced while it was being
	// written (markWritten).
	freedForCommit func()
	// beforePublish runs in every publish after the commit decided
	// whether to record its keys for concurrent transactions, before the
	// new snapshot is stored (conflict.go, exactness).
	beforePublish func(db *DB)
	// afterCheckpoint runs at the end of every successful checkpoint.
	afterCheckpoint func(db *DB)
}
