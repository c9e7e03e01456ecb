package index

import (
	"bytes"
	"slices"

	"github.com/cairndb/cairn/kv"
)

// SortKeysInMemory extracts every entry spec makes from the documents of
// data (key followed by record id, as a build stores them) and sorts them
// in memory, with no memory budget, spilling or bulk load. It is the floor
// that builds are measured against (indexbench, BenchmarkBuildFloor). It
// returns the number of entries.
func SortKeysInMemory(spec *Spec, data *kv.Tree) (int, error) {
	var keys [][]byte
	cur := data.Cursor()
	for id, v := cur.First(); id != nil; id, v = cur.Next() {
		if !spec.Applies(v) {
			continue
		}
		ks, _, err := spec.Keys(v)
		if err != nil {
			return 0, err
		}
		for _, key := range ks {
			e := make([]byte, 0, len(key)+len(id))
			keys = append(keys, append(append(e, key...), id...))
		}
	}
	slices.SortFunc(keys, bytes.Compare)
	return len(keys), nil
}
