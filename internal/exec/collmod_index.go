package exec

// collMod's index changes: {name | keyPattern, hidden, expireAfterSeconds,
// prepareUnique, unique}, as mongod 7.0 applies them.
//
// Converting an index to unique is done in two steps, as in mongod:
// prepareUnique: true makes every write refuse a new duplicate key
// (DuplicateKey, 11000) while the index stays non-unique and keeps the
// duplicates it has; unique: true then checks that no two documents share
// a key — listing every group that does in the error's violations,
// CannotConvertIndexToUnique (359) — and rewrites the entries in the
// unique layout (a unique index's kv key is the key values alone, a
// non-unique one's the values followed by the document's key: tree.go in
// internal/index), in the collMod's transaction.

import (
	"bytes"
	"fmt"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/index"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// ModifyIndex applies collMod's index document to coll (a copy the caller
// writes back) in the write transaction tx.
func ModifyIndex(tx *Tx, coll *catalog.Collection, spec bson.Doc) error {
	pos := -1
	var set []bson.Element
	makeUnique := false
	it := spec.Iter()
	for it.Next() {
		e := it.Element()
		switch e.Key {
		case "name", "keyPattern":
			for i, ix := range coll.Indexes {
				if e.Key == "name" && e.Value.Type == bson.TypeString && ix.Name == e.Value.StringValue() {
					pos = i
				}
				if key, ok := ix.Spec.Lookup("key"); e.Key == "keyPattern" && ok && bson.Equal(key, e.Value) {
					pos = i
				}
			}
		case "hidden", "expireAfterSeconds", "prepareUnique":
			set = append(set, e)
		case "unique":
			if e.Value.Type != bson.TypeBoolean {
				return mongoerr.New(mongoerr.TypeMismatch, "BSON field 'collMod.index.unique' is the wrong type '%s', expected type 'bool'", e.Value.Type)
			}
			if !e.Value.Boolean() {
				return mongoerr.New(mongoerr.BadValue, "'Unique: false' option is not supported")
			}
			makeUnique = true
		default:
			return mongoerr.New(mongoerr.InvalidOptions, "collMod index option '%s' is not supported by Cairn", e.Key)
		}
	}
	if pos < 0 {
		return mongoerr.New(mongoerr.IndexNotFound, "cannot find index %s for ns %s", spec.String(), coll.Namespace())
	}
	ix := coll.Indexes[pos]
	if ix.IsID() {
		return mongoerr.New(mongoerr.BadValue, "cannot modify the _id index")
	}
	old, err := index.ParseCached(ix.Spec)
	if err != nil {
		return err
	}
	convert := makeUnique && !old.Unique
	if convert {
		prepared := old.PrepareUnique
		for _, e := range set {
			if e.Key == "prepareUnique" {
				prepared = e.Value.Truthy()
			}
		}
		if !prepared {
			return mongoerr.New(mongoerr.InvalidOptions, "Cannot make index unique with 'prepareUnique=false'. Run collMod to set it first.")
		}
		if !ix.Ready {
			return mongoerr.New(mongoerr.BackgroundOperationInProgressForNamespace, "cannot convert index %s to unique while it is being built", ix.Name)
		}
	}
	var b bson.Builder
	sit := ix.Spec.Iter()
	for sit.Next() {
		k := sit.Element().Key
		keep := !(convert && k == "prepareUnique")
		for _, e := range set {
			keep = keep && e.Key != k
		}
		if keep {
			b.AppendElement(sit.Element())
		}
	}
	for _, e := range set {
		switch {
		case e.Key == "hidden" || e.Key == "prepareUnique":
			if e.Value.Truthy() && !(convert && e.Key == "prepareUnique") {
				b.AppendBool(e.Key, true)
			}
		default:
			b.AppendElement(e)
		}
	}
	if convert {
		b.AppendBool("unique", true)
	}
	raw := b.Finish()
	parsed, err := index.Parse(raw)
	if err != nil {
		return err
	}
	if convert {
		if err := convertToUnique(tx, coll, ix.Name, parsed); err != nil {
			return err
		}
	}
	coll.Indexes = append([]catalog.Index(nil), coll.Indexes...)
	coll.Indexes[pos].Spec = raw
	return nil
}

// convertToUnique checks index name of coll for duplicate keys and
// rewrites its entries in the unique layout.
func convertToUnique(tx *Tx, coll *catalog.Collection, name string, spec *index.Spec) error {
	t, err := tx.Tree(coll.IndexTree(name))
	if err != nil {
		return fmt.Errorf("opening index %s of %s: %w", name, coll.Namespace(), err)
	}
	type entry struct{ key, values, idKey []byte }
	var entries []entry
	cur := t.Cursor()
	for k, v := cur.First(); k != nil; k, v = cur.Next() {
		if len(v) > len(k) {
			return fmt.Errorf("index %s of %s: entry shorter than its document key", name, coll.Namespace())
		}
		k = append([]byte(nil), k...)
		entries = append(entries, entry{key: k, values: k[:len(k)-len(v)], idKey: append([]byte(nil), v...)})
	}
	if err := cur.Err(); err != nil {
		return err
	}
	// Entries sort by their values first: equal values are neighbours.
	var violations [][][]byte
	for i := 0; i < len(entries); {
		j := i + 1
		for j < len(entries) && bytes.Equal(entries[j].values, entries[i].values) {
			j++
		}
		if j-i > 1 {
			var group [][]byte
			for _, e := range entries[i:j] {
				group = append(group, e.idKey)
			}
			violations = append(violations, group)
		}
		i = j
	}
	if len(violations) > 0 {
		return violationsError(tx, coll, violations)
	}
	for _, e := range entries {
		if _, err := t.Delete(e.key); err != nil {
			return fmt.Errorf("index %s of %s: %w", name, coll.Namespace(), err)
		}
	}
	for _, e := range entries {
		if err := t.Put(e.values, e.idKey); err != nil {
			return fmt.Errorf("index %s of %s: %w", name, coll.Namespace(), err)
		}
	}
	return nil
}

// violationsError is mongod's CannotConvertIndexToUnique with
// violations: [{ids: [_id, ...]}, ...], each group the documents sharing
// one key.
func violationsError(tx *Tx, coll *catalog.Collection, groups [][][]byte) error {
	data, err := DataTree(tx, coll)
	if err != nil {
		return err
	}
	var b bson.Builder
	b.StartArray("violations")
	for i, g := range groups {
		b.StartDocument(bson.Index(i))
		b.StartArray("ids")
		for j, idKey := range g {
			doc, err := data.Get(idKey)
			if err != nil {
				return err
			}
			if id, ok := bson.Doc(doc).Lookup("_id"); ok {
				b.AppendValue(bson.Index(j), id)
			}
		}
		b.End()
		b.End()
	}
	b.End()
	return &mongoerr.Error{Code: mongoerr.CannotConvertIndexToUnique,
		Message: "Cannot convert the index to unique. Please resolve conflicting documents before running collMod again.",
		Extra:   b.Finish()}
}
