package agg

import (
	"hash/maphash"
	"unsafe"

	"github.com/cairndb/cairn/internal/hugemem"
)

// groupTable finds a $group's groups by their encoded keys: open
// addressing with linear probing over a power-of-two array of slots that
// keep each group's key hash, so that a lookup that misses, and an
// insert, hash the key once, and growing never rehashes a key.
type groupTable struct {
	seed  maphash.Seed
	slots []groupSlot
	n     int
}

type groupSlot struct {
	hash uint64
	g    *group // nil: empty
}

// groupTableMin is the initial number of slots.
const groupTableMin = 64

func newGroupTable(seed maphash.Seed) groupTable {
	return groupTable{seed: seed, slots: make([]groupSlot, groupTableMin)}
}

// hash returns the hash of key (tables with the same seed hash equally).
func (t *groupTable) hash(key []byte) uint64 { return maphash.Bytes(t.seed, key) }

// lookup returns the hash of key and its group, or nil.
func (t *groupTable) lookup(key []byte) (uint64, *group) {
	h := t.hash(key)
	return h, t.find(h, unsafe.String(unsafe.SliceData(key), len(key)))
}

// find returns the group of key (whose hash is h), or nil.
func (t *groupTable) find(h uint64, key string) *group {
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.g == nil {
			return nil
		}
		if s.hash == h && s.g.key == key {
			return s.g
		}
	}
}

// insert adds g, whose key (g.key, hash h) is not in the table yet, and
// records h in g.hash.
func (t *groupTable) insert(h uint64, g *group) {
	if 4*(t.n+1) > 3*len(t.slots) {
		t.grow()
	}
	g.hash = h
	t.place(h, g)
	t.n++
}

// replace puts g where old (a group of the same key, hash h) was.
func (t *groupTable) replace(h uint64, old, g *group) {
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; t.slots[i].g != nil; i = (i + 1) & mask {
		if t.slots[i].g == old {
			t.slots[i].g = g
			g.hash = h
			return
		}
	}
}

// reserve grows the table to hold n groups without growing again.
func (t *groupTable) reserve(n int) {
	for 4*n > 3*len(t.slots) {
		t.grow()
	}
}

func (t *groupTable) place(h uint64, g *group) {
	mask := uint64(len(t.slots) - 1)
	i := h & mask
	for t.slots[i].g != nil {
		i = (i + 1) & mask
	}
	t.slots[i] = groupSlot{hash: h, g: g}
}

// grow doubles the slots, placing the groups by their stored hashes.
func (t *groupTable) grow() {
	old := t.slots
	t.slots = hugemem.Make[groupSlot](2 * len(old))
	for _, s := range old {
		if s.g != nil {
			t.place(s.hash, s.g)
		}
	}
}

// len returns the number of groups.
func (t *groupTable) len() int { return t.n }

// each calls fn with every group and its key hash, in no particular order.
func (t *groupTable) each(fn func(h uint64, g *group)) {
	for _, s := range t.slots {
		if s.g != nil {
			fn(s.hash, s.g)
		}
	}
}
