// Package colcache keeps, in memory, columns of a collection's documents
// for analytical scans: for a data tree (kv) and a top-level field name, the
// BSON value (type byte and value bytes) the field has in every document,
// in the tree's key (_id) order. A scan that reads a few of a hundred
// fields then walks a few small values per document instead of the whole
// document.
//
// Columns are derived data, built by one scan of the tree the first time a
// query needs them (all of a query's missing fields in the same scan) and
// held within a memory budget, the least recently used field evicted
// first. A column built from a snapshot is valid for exactly the readers
// whose snapshot holds the same version of the same tree (kv's
// Tree.Version: the txid of the last committed change to it), so a reader
// never sees columns of another state than its own.
//
// One Cache serves the trees of one kv.DB: tree names identify trees.
package colcache
