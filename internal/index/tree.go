package index

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/kv"
)

// Tree is one index's entries in a write (or read) transaction.
type Tree struct {
	Spec *Spec
	T    *kv.Tree
	ns   string
	buf  []byte
	// side is set for an index being built (OpenBuilding): changes are
	// recorded there, T is nil.
	side *kv.Tree
	sval []byte
	// ctx, if set, interrupts Prepare (SetContext).
	ctx context.Context
}

// SetContext makes Prepare answer Interrupted (or MaxTimeMSExpired) once
// ctx ends, also while it generates the keys of one huge document. Apply
// is never interrupted: it is quick next to Prepare, and a change half
// applied would leave the index out of step with the document.
func (x *Tree) SetContext(ctx context.Context) { x.ctx = ctx }

// Open opens an index's kv tree.
func Open(tx *kv.Tx, treeName, ns string, spec *Spec) (*Tree, error) {
	t, err := tx.Tree(treeName)
	if err != nil {
		return nil, fmt.Errorf("opening index %s of %s: %w", spec.Name, ns, err)
	}
	return &Tree{Spec: spec, T: t, ns: ns}, nil
}

// entry returns the kv key and value of an entry (Spec.entryOf). The
// value is the document's encoded _id, so a scan reads it without
// decoding the key — except in a column store, whose values are cells.
func (x *Tree) entry(values, idKey []byte) (key, val []byte) {
	key, val = x.Spec.entryOf(x.buf, values, idKey)
	x.buf = key
	return key, val
}

// Change is the set of entries one document write removes from and adds
// to an index, computed and checked before anything is written, so that a
// write that fails (a duplicate key, parallel arrays) leaves every index
// untouched.
type Change struct {
	x        *Tree
	idKey    []byte
	del, add [][]byte
	Multikey bool
}

// Prepare computes the change from old to updated (either may be nil: an
// insert or a delete) and checks unique constraints.
func (x *Tree) Prepare(old, updated bson.Doc, idKey []byte) (*Change, error) {
	ch := &Change{x: x, idKey: idKey}
	var oldKeys, newKeys [][]byte
	if old != nil && x.Spec.Applies(old) {
		var err error
		// A stored document always produced keys: only an interruption
		// fails here.
		if oldKeys, _, err = x.keys(old); err != nil && x.ctx != nil && x.ctx.Err() != nil {
			return nil, err
		}
	}
	if updated != nil && x.Spec.Applies(updated) {
		var err error
		if newKeys, ch.Multikey, err = x.keys(updated); err != nil {
			return nil, err
		}
	}
	// Both lists are sorted: walk them together.
	i, j := 0, 0
	for i < len(oldKeys) || j < len(newKeys) {
		switch {
		case j == len(newKeys) || (i < len(oldKeys) && bytes.Compare(oldKeys[i], newKeys[j]) < 0):
			ch.del = append(ch.del, oldKeys[i])
			i++
		case i == len(oldKeys) || bytes.Compare(oldKeys[i], newKeys[j]) > 0:
			ch.add = append(ch.add, newKeys[j])
			j++
		default:
			i++
			j++
		}
	}
	if x.Spec.PrepareUnique && !x.Spec.Unique && x.side == nil {
		// prepareUnique: a new key no other document has yet (collMod
		// converts the index to unique next; exec's collmod_index.go).
		for _, k := range ch.add {
			if err := x.checkPreparedUnique(k, idKey); err != nil {
				return nil, err
			}
		}
	}
	if x.Spec.Unique && x.side == nil {
		for _, k := range ch.add {
			key, _ := x.entry(k, idKey)
			owner, err := x.T.Get(key)
			if err != nil {
				return nil, fmt.Errorf("index %s: %w", x.Spec.Name, err)
			}
			if owner != nil && !bytes.Equal(owner, idKey) {
				return nil, x.duplicate(k)
			}
		}
	}
	return ch, nil
}

// checkPreparedUnique refuses key values k for the document idKey when
// another document's entry holds them: a non-unique entry is the values
// followed by the document key, so the entries with these values are those
// starting with k whose rest is the document key they store.
func (x *Tree) checkPreparedUnique(k, idKey []byte) error {
	cur := x.T.Cursor()
	for key, val := cur.Seek(k); key != nil && bytes.HasPrefix(key, k); key, val = cur.Next() {
		if len(key) != len(k)+len(val) || !bytes.Equal(key[len(k):], val) {
			continue // longer values that start with k
		}
		if !bytes.Equal(val, idKey) {
			return x.duplicate(k)
		}
	}
	if err := cur.Err(); err != nil {
		return fmt.Errorf("index %s: %w", x.Spec.Name, err)
	}
	return nil
}

// keys generates doc's keys, watching x.ctx when set.
func (x *Tree) keys(doc bson.Doc) ([][]byte, bool, error) {
	if x.ctx != nil {
		return x.Spec.KeysContext(x.ctx, doc)
	}
	return x.Spec.Keys(doc)
}

// Counts returns the number of index entries the change adds and removes
// (mongod's keysInserted and keysDeleted).
func (ch *Change) Counts() (added, removed int) { return len(ch.add), len(ch.del) }

// Apply writes a prepared change.
func (ch *Change) Apply() error {
	x := ch.x
	if x.side != nil {
		return ch.record()
	}
	for _, k := range ch.del {
		key, _ := x.entry(k, ch.idKey)
		if _, err := x.T.Delete(key); err != nil {
			return fmt.Errorf("index %s: %w", x.Spec.Name, err)
		}
	}
	for _, k := range ch.add {
		key, val := x.entry(k, ch.idKey)
		if err := x.T.Put(key, val); err != nil {
			return fmt.Errorf("index %s: %w", x.Spec.Name, err)
		}
	}
	return nil
}

// Insert adds doc's entries (Prepare and Apply).
func (x *Tree) Insert(doc bson.Doc, idKey []byte) (multikey bool, err error) {
	ch, err := x.Prepare(nil, doc, idKey)
	if err != nil {
		return false, err
	}
	return ch.Multikey, ch.Apply()
}

// duplicate builds MongoDB's E11000 error for this index.
func (x *Tree) duplicate(values []byte) error {
	return DuplicateKeyError(x.ns, x.Spec, values)
}

// DuplicateKeyError is MongoDB's E11000 error with keyPattern and keyValue
// decoded from the entry's values.
func DuplicateKeyError(ns string, spec *Spec, values []byte) error {
	var kv bson.Builder
	var msg strings.Builder
	rest := values
	for i, f := range spec.Fields {
		v, r, err := bson.DecodeKey(rest)
		if err != nil {
			v = bson.Value{Type: bson.TypeNull}
		}
		rest = r
		kv.AppendValue(f.Path, v)
		if i > 0 {
			msg.WriteString(", ")
		}
		msg.WriteString(f.Path + ": " + v.String())
	}
	keyValue := kv.Finish()
	var b bson.Builder
	b.AppendDocument("keyPattern", spec.Key)
	b.AppendDocument("keyValue", keyValue)
	return &mongoerr.Error{Code: mongoerr.DuplicateKey,
		Message: fmt.Sprintf("E11000 duplicate key error collection: %s index: %s dup key: { %s }", ns, spec.Name, msg.String()),
		Extra:   b.Finish()}
}
