package exec

// Record keys. A collection's documents are stored in its data tree under a
// record key: for an ordinary collection the encoded _id (the data tree is
// then the _id index), for a capped collection an 8-byte big-endian record
// id in insertion order (catalog/capped.go), found by _id through the _id
// index's tree, whose entries' values are record keys like every index's.
// Paths that look a document up by _id (IDHACK, SelectDocs, fetches of cut
// documents) go through LookupID, which costs an ordinary collection the
// same one descent as before; paths that walk an index already read record
// keys from its entries' values.

import (
	"fmt"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/kv"
)

// LookupID finds the document with _id id in coll (data tree data): its
// record key (appended to dst) and its bytes (nil: none).
func LookupID(tx *kv.Tx, coll *catalog.Collection, data *kv.Tree, dst []byte, id bson.Value) (key, doc []byte, err error) {
	key = DocKey(dst, id)
	if !coll.Capped {
		doc, err = data.Get(key)
		return key, doc, err
	}
	if !coll.HasIDIndex() {
		return nil, nil, nil // no _id index: only a scan finds it
	}
	ix, err := tx.Tree(coll.IndexTree("_id_"))
	if err != nil {
		return nil, nil, fmt.Errorf("opening the _id index of %s: %w", coll.Namespace(), err)
	}
	rk, err := ix.Get(key)
	if err != nil || rk == nil {
		return nil, nil, err
	}
	key = append(key[:0], rk...)
	doc, err = data.Get(key)
	return key, doc, err
}

// ScansByID reports whether coll's data tree is in _id order (so that a
// scan of it serves an _id sort or range): every collection but a capped
// one.
func ScansByID(coll *catalog.Collection) bool { return coll == nil || !coll.Capped }
