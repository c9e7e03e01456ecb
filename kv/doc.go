// Package kv is Cairn's embedded transactional key/value storage engine.
//
// kv owns every byte Cairn keeps on disk below the document layer: a
// directory holding one data file of checksummed B+tree pages, a
// preallocated, recycled journal, and a lock file. It knows keys and values
// only as byte strings; it knows nothing about documents.
//
// The engine offers named trees (keyspaces) inside transactions, with one
// writer at a time and any number of concurrent readers. Readers see an
// immutable snapshot (MVCC by copy-on-write nodes) and never block or get
// blocked by the writer. Commits are made durable through a group-committed
// journal; checkpoints write the trees copy-on-write into the data file and
// let the journal be recycled; opening after a crash replays the journal and
// discards a torn tail. See docs/architecture.md, section "Storage engine
// (kv)", for the full design.
package kv
