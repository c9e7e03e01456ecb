package index

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/kv"
)

// BuildTarget is one index to build: its spec and its kv tree's name.
type BuildTarget struct {
	Spec     *Spec
	TreeName string
	// Set by BuildAll:
	Multikey bool
	Entries  int64
}

// Build creates one index; see BuildAll.
func Build(ctx context.Context, tx *kv.Tx, data *kv.Tree, treeName, ns string, spec *Spec, fillFactor float64) (multikey bool, n int64, err error) {
	t := []*BuildTarget{{Spec: spec, TreeName: treeName}}
	if err := BuildAll(ctx, tx, data, ns, t, fillFactor); err != nil {
		return false, 0, err
	}
	return t[0].Multikey, t[0].Entries, nil
}

// BuildAll creates the targets' index trees in tx from the documents in
// data, the collection's tree (keyed by encoded _id), the way a foreground
// index build should be done: one scan, shared by all the targets, extracts
// every entry into an arena per index, each index's entries are sorted
// once, uniqueness is checked between neighbours, and the engine loads each
// tree bottom-up from its sorted run — never inserting key by key.
//
// Entries are sorted in memory (about 12 bytes of overhead per entry plus
// the keys); an external merge sort for indexes larger than memory is not
// implemented yet.
func BuildAll(ctx context.Context, tx *kv.Tx, data *kv.Tree, ns string, targets []*BuildTarget, fillFactor float64) error {
	type entry struct{ off, klen, vlen uint32 }
	arenas := make([][]byte, len(targets))
	entries := make([][]entry, len(targets))
	cur := data.Cursor()
	count := 0
	for id, doc := cur.First(); id != nil; id, doc = cur.Next() {
		if count++; count&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		d := bson.Doc(doc)
		for ti, t := range targets {
			spec := t.Spec
			if !spec.Applies(d) {
				continue
			}
			keys, mk, err := spec.Keys(d)
			if err != nil {
				return err
			}
			t.Multikey = t.Multikey || mk
			for _, k := range keys {
				// Non-unique keys end with the _id; every value is the _id.
				off := len(arenas[ti])
				arenas[ti] = append(arenas[ti], k...)
				arenas[ti] = append(arenas[ti], id...)
				klen := len(k)
				if !spec.Unique {
					klen += len(id)
				}
				entries[ti] = append(entries[ti], entry{uint32(off), uint32(klen), uint32(len(id))})
			}
		}
	}
	if err := cur.Err(); err != nil {
		return fmt.Errorf("scanning %s: %w", ns, err)
	}
	for ti, t := range targets {
		spec, arena, es := t.Spec, arenas[ti], entries[ti]
		if len(arena) > 1<<32-1 {
			return fmt.Errorf("index %s: %d bytes of entries is more than an in-memory build supports", spec.Name, len(arena))
		}
		key := func(e entry) []byte { return arena[e.off : e.off+e.klen] }
		slices.SortFunc(es, func(a, b entry) int { return bytes.Compare(key(a), key(b)) })
		if spec.Unique {
			for i := 1; i < len(es); i++ {
				if bytes.Equal(key(es[i-1]), key(es[i])) {
					return DuplicateKeyError(ns, spec, key(es[i]))
				}
			}
		}
		i := 0
		_, err := tx.BulkLoad(t.TreeName, func() ([]byte, []byte, bool, error) {
			if i == len(es) {
				return nil, nil, false, nil
			}
			e := es[i]
			i++
			end := e.off + e.klen
			if spec.Unique {
				end += e.vlen
			}
			return arena[e.off : e.off+e.klen], arena[end-e.vlen : end], true, nil
		}, fillFactor)
		if err != nil {
			return fmt.Errorf("loading index %s of %s: %w", spec.Name, ns, err)
		}
		t.Entries = int64(len(es))
		arenas[ti], entries[ti] = nil, nil // release before the next load
	}
	return nil
}
