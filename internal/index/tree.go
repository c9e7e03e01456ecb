package index

import (
	"bytes"
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
}

// Open opens an index's kv tree.
func Open(tx *kv.Tx, treeName, ns string, spec *Spec) (*Tree, error) {
	t, err := tx.Tree(treeName)
	if err != nil {
		return nil, fmt.Errorf("opening index %s of %s: %w", spec.Name, ns, err)
	}
	return &Tree{Spec: spec, T: t, ns: ns}, nil
}

// entry returns the kv key and value of an entry.
func (x *Tree) entry(values, idKey []byte) (key, val []byte) {
	x.buf = append(x.buf[:0], values...)
	if x.Spec.Unique {
		return x.buf, idKey
	}
	x.buf = append(x.buf, idKey...)
	return x.buf, nil
}

// Insert adds doc's entries. A unique index whose values are taken by
// another document answers DuplicateKey (11000).
func (x *Tree) Insert(doc bson.Doc, idKey []byte) (multikey bool, err error) {
	if !x.Spec.Applies(doc) {
		return false, nil
	}
	keys, multikey, err := x.Spec.Keys(doc)
	if err != nil {
		return false, err
	}
	for _, k := range keys {
		if err := x.put(k, idKey); err != nil {
			return false, err
		}
	}
	return multikey, nil
}

func (x *Tree) put(values, idKey []byte) error {
	key, val := x.entry(values, idKey)
	if x.Spec.Unique {
		old, err := x.T.Get(key)
		if err != nil {
			return fmt.Errorf("index %s: %w", x.Spec.Name, err)
		}
		if old != nil && !bytes.Equal(old, idKey) {
			return x.duplicate(values)
		}
	}
	if err := x.T.Put(key, val); err != nil {
		return fmt.Errorf("index %s: %w", x.Spec.Name, err)
	}
	return nil
}

// Remove deletes doc's entries.
func (x *Tree) Remove(doc bson.Doc, idKey []byte) error {
	if !x.Spec.Applies(doc) {
		return nil
	}
	keys, _, err := x.Spec.Keys(doc)
	if err != nil {
		return nil // a stored document always produced keys; nothing indexed otherwise
	}
	for _, k := range keys {
		key, _ := x.entry(k, idKey)
		if _, err := x.T.Delete(key); err != nil {
			return fmt.Errorf("index %s: %w", x.Spec.Name, err)
		}
	}
	return nil
}

// Update replaces old's entries by updated's, touching only what changed.
func (x *Tree) Update(old, updated bson.Doc, idKey []byte) (multikey bool, err error) {
	var oldKeys, newKeys [][]byte
	if x.Spec.Applies(old) {
		oldKeys, _, _ = x.Spec.Keys(old)
	}
	if x.Spec.Applies(updated) {
		if newKeys, multikey, err = x.Spec.Keys(updated); err != nil {
			return false, err
		}
	}
	// Both lists are sorted: walk them together.
	i, j := 0, 0
	for i < len(oldKeys) || j < len(newKeys) {
		switch {
		case j == len(newKeys) || (i < len(oldKeys) && bytes.Compare(oldKeys[i], newKeys[j]) < 0):
			key, _ := x.entry(oldKeys[i], idKey)
			if _, err := x.T.Delete(key); err != nil {
				return false, fmt.Errorf("index %s: %w", x.Spec.Name, err)
			}
			i++
		case i == len(oldKeys) || bytes.Compare(oldKeys[i], newKeys[j]) > 0:
			if err := x.put(newKeys[j], idKey); err != nil {
				return false, err
			}
			j++
		default:
			i++
			j++
		}
	}
	return multikey, nil
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
