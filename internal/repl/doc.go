// Package repl owns Cairn's replica-set identity: the logical clock that
// orders every write (oplog timestamps, $clusterTime, operationTime), the
// identity of a retryable write's statement that the writer records in the
// oplog, and (replset.go) the one-node replica set's configuration and
// state.
package repl
