package oplog

import (
	"encoding/binary"
	"fmt"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/repl"
	"github.com/cairndb/cairn/kv"
)

// Reader reads the oplog in ts order from a snapshot (tests, and the
// replica-set part's optimes, until the capped part's cursors serve
// find on local.oplog.rs).
type Reader struct {
	cur  *kv.Cursor
	k, v []byte
	next bool
}

// Entries returns a reader of the entries of tx's snapshot whose ts is at
// least from (0: all), found by one seek. It is empty when there is no
// oplog.
func Entries(tx *kv.Tx, from repl.Timestamp) (*Reader, error) {
	t, err := tree(tx)
	if err != nil || t == nil {
		return &Reader{}, err
	}
	r := &Reader{cur: t.Cursor()}
	r.k, r.v = r.cur.Seek(key(from))
	return r, nil
}

// Next moves to the next entry; false at the end.
func (r *Reader) Next() bool {
	if r.cur == nil {
		return false
	}
	if r.next {
		r.k, r.v = r.cur.Next()
	}
	r.next = true
	return r.k != nil
}

// TS returns the current entry's ts.
func (r *Reader) TS() repl.Timestamp { return repl.Timestamp(binary.BigEndian.Uint64(r.k)) }

// Entry returns the current entry (valid until the transaction ends).
func (r *Reader) Entry() bson.Doc { return bson.Doc(r.v) }

// Err returns the error that ended the reading, if any.
func (r *Reader) Err() error {
	if r.cur == nil {
		return nil
	}
	return r.cur.Err()
}

// Last returns the last entry's ts and wall (ms) in tx's snapshot; ok is
// false when the oplog is empty or missing.
func Last(tx *kv.Tx) (ts repl.Timestamp, wall int64, ok bool, err error) {
	t, err := tree(tx)
	if err != nil || t == nil {
		return 0, 0, false, err
	}
	k, v := t.Cursor().Last()
	if k == nil {
		return 0, 0, false, nil
	}
	w, _ := bson.Doc(v).Lookup("wall")
	return repl.Timestamp(binary.BigEndian.Uint64(k)), w.DateTime(), true, nil
}

// First returns the first entry's ts and wall (ms) in tx's snapshot.
func First(tx *kv.Tx) (ts repl.Timestamp, wall int64, ok bool, err error) {
	t, err := tree(tx)
	if err != nil || t == nil {
		return 0, 0, false, err
	}
	k, v := t.Cursor().First()
	if k == nil {
		return 0, 0, false, nil
	}
	w, _ := bson.Doc(v).Lookup("wall")
	return repl.Timestamp(binary.BigEndian.Uint64(k)), w.DateTime(), true, nil
}

// tree opens local.oplog.rs's data tree in tx (nil when there is none).
func tree(tx *kv.Tx) (*kv.Tree, error) {
	coll, err := catalog.Get(tx, DB, Coll)
	if err != nil || coll == nil {
		return nil, err
	}
	t, err := tx.Tree(coll.DataTree())
	if err != nil {
		return nil, fmt.Errorf("oplog: %w", err)
	}
	return t, nil
}
