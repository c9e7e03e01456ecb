package index

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/kv"
)

// Build creates index tree treeName in tx from the documents in data, the
// collection's tree (keyed by encoded _id), the way a foreground index
// build should be done: one scan extracts every entry into an arena, the
// entries are sorted once, uniqueness is checked between neighbours, and the
// engine loads the tree bottom-up from the sorted run — never inserting key
// by key. It returns whether the index is multikey and how many entries it
// has.
//
// Entries are sorted in memory (about 40 bytes of overhead per entry plus
// the keys); an external merge sort for indexes larger than memory is not
// implemented yet.
func Build(ctx context.Context, tx *kv.Tx, data *kv.Tree, treeName, ns string, spec *Spec, fillFactor float64) (multikey bool, n int64, err error) {
	type entry struct{ off, klen, vlen uint32 }
	var arena []byte
	var entries []entry
	cur := data.Cursor()
	count := 0
	for id, doc := cur.First(); id != nil; id, doc = cur.Next() {
		if count++; count&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return false, 0, err
			}
		}
		d := bson.Doc(doc)
		if !spec.Applies(d) {
			continue
		}
		keys, mk, err := spec.Keys(d)
		if err != nil {
			return false, 0, err
		}
		multikey = multikey || mk
		for _, k := range keys {
			// Non-unique keys end with the _id; every value is the _id.
			off := len(arena)
			arena = append(arena, k...)
			arena = append(arena, id...)
			klen := len(k)
			if !spec.Unique {
				klen += len(id)
			}
			entries = append(entries, entry{uint32(off), uint32(klen), uint32(len(id))})
		}
	}
	if err := cur.Err(); err != nil {
		return false, 0, fmt.Errorf("scanning %s: %w", ns, err)
	}
	if len(arena) > 1<<32-1 {
		return false, 0, fmt.Errorf("index %s: %d bytes of entries is more than an in-memory build supports", spec.Name, len(arena))
	}
	key := func(e entry) []byte { return arena[e.off : e.off+e.klen] }
	slices.SortFunc(entries, func(a, b entry) int { return bytes.Compare(key(a), key(b)) })
	for i := 1; i < len(entries); i++ {
		if bytes.Equal(key(entries[i-1]), key(entries[i])) {
			if spec.Unique {
				return false, 0, DuplicateKeyError(ns, spec, key(entries[i]))
			}
		}
	}
	i := 0
	_, err = tx.BulkLoad(treeName, func() ([]byte, []byte, bool, error) {
		if i == len(entries) {
			return nil, nil, false, nil
		}
		e := entries[i]
		i++
		end := e.off + e.klen
		if spec.Unique {
			end += e.vlen
		}
		return arena[e.off : e.off+e.klen], arena[end-e.vlen : end], true, nil
	}, fillFactor)
	if err != nil {
		return false, 0, fmt.Errorf("loading index %s of %s: %w", spec.Name, ns, err)
	}
	return multikey, int64(len(entries)), nil
}
