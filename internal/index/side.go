package index

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/cairndb/cairn/kv"
)

// Side writes: while an index is being built (see internal/command's
// indexbuild.go for the whole mechanism), writers do not touch its tree;
// each change they make to its entries is recorded in the index's side
// tree instead, in the writer's own transaction. A record's key is the
// entry's values followed by the encoded _id (for every index, unique or
// not), its value an operation byte followed by the encoded _id. Records
// are keyed by the entry they change, so a later change to the same entry
// replaces the earlier one: the side tree holds, for every entry touched
// since the build began, whether it must end up present or absent. That
// makes draining order-free and idempotent — which it must be, since the
// build's snapshot may already reflect some of the recorded writes.

const (
	sideRemove byte = 0
	sideAdd    byte = 1
)

// OpenBuilding opens an index that is being built: its changes are
// recorded in the side tree sideTree, and unique constraints are not
// checked (a duplicate is the build's failure, found when it drains the
// side writes, not the writer's — as in MongoDB).
func OpenBuilding(tx *kv.Tx, sideTree, ns string, spec *Spec) (*Tree, error) {
	t, err := tx.Tree(sideTree)
	if err != nil {
		return nil, fmt.Errorf("opening the side writes of index %s of %s: %w", spec.Name, ns, err)
	}
	return &Tree{Spec: spec, ns: ns, side: t}, nil
}

// record writes a prepared change to the side tree.
func (ch *Change) record() error {
	x := ch.x
	put := func(k []byte, op byte) error {
		x.buf = append(append(x.buf[:0], k...), ch.idKey...)
		x.sval = append(append(x.sval[:0], op), ch.idKey...)
		if err := x.side.Put(x.buf, x.sval); err != nil {
			return fmt.Errorf("index %s side writes: %w", x.Spec.Name, err)
		}
		return nil
	}
	for _, k := range ch.del {
		if err := put(k, sideRemove); err != nil {
			return err
		}
	}
	for _, k := range ch.add {
		if err := put(k, sideAdd); err != nil {
			return err
		}
	}
	return nil
}

// Violations are a unique index's entries that collide with another
// document's entry of the same key during a build (MongoDB's constraint
// violations): the index tree holds one entry per key, the others wait
// here. A violation may go away before the build ends (a document
// deleted or changed); the build fails only if one remains once every
// side write is drained.
type Violations struct {
	ids map[string][][]byte
	n   int
}

// Add records that the document with encoded _id id also has key.
func (v *Violations) Add(key, id []byte) {
	if v.ids == nil {
		v.ids = map[string][][]byte{}
	}
	k := string(key)
	for _, have := range v.ids[k] {
		if bytes.Equal(have, id) {
			return
		}
	}
	v.ids[k] = append(v.ids[k], bytes.Clone(id))
	v.n++
}

// Len is the number of violations.
func (v *Violations) Len() int { return v.n }

// remove drops (key, id), reporting whether it was there.
func (v *Violations) remove(key, id []byte) bool {
	ids := v.ids[string(key)]
	for i, have := range ids {
		if bytes.Equal(have, id) {
			v.take(key, i)
			return true
		}
	}
	return false
}

// pop removes and returns one id recorded for key, or nil.
func (v *Violations) pop(key []byte) []byte {
	if len(v.ids[string(key)]) == 0 {
		return nil
	}
	return v.take(key, 0)
}

func (v *Violations) take(key []byte, i int) []byte {
	k := string(key)
	id := v.ids[k][i]
	v.ids[k] = slices.Delete(v.ids[k], i, i+1)
	if len(v.ids[k]) == 0 {
		delete(v.ids, k)
	}
	v.n--
	return id
}

// first returns the smallest key with a violation.
func (v *Violations) first() []byte {
	var min string
	found := false
	for k := range v.ids {
		if !found || k < min {
			min, found = k, true
		}
	}
	return []byte(min)
}

// Drain applies the side writes in side to x, an index loaded from a
// snapshot taken after they began to be recorded, in the same write
// transaction: removals first, then additions (each entry has one final
// state, so the order between entries does not matter). For a unique
// index, an entry whose key another document holds goes to viol (which
// also holds the load's duplicates); a removal frees a key for a waiting
// violation. Afterwards any violation left is MongoDB's duplicate key
// error. Progress counts the records.
func (x *Tree) Drain(side *kv.Tree, viol *Violations, p *Progress) error {
	p.Start(PhaseDrain, 2*side.Len())
	for _, op := range []byte{sideRemove, sideAdd} {
		cur := side.Cursor()
		var n int64
		for k, v := cur.First(); k != nil; k, v = cur.Next() {
			if n++; n&1023 == 0 {
				p.Add(1024)
			}
			if len(v) == 0 || v[0] != op {
				continue
			}
			id := v[1:]
			values := k[:len(k)-len(id)]
			var err error
			if op == sideRemove {
				err = x.drainRemove(values, id, viol)
			} else {
				err = x.drainAdd(values, id, viol)
			}
			if err != nil {
				return fmt.Errorf("index %s: draining side writes: %w", x.Spec.Name, err)
			}
		}
		if err := cur.Err(); err != nil {
			return fmt.Errorf("index %s: reading side writes: %w", x.Spec.Name, err)
		}
		p.Add(n & 1023)
	}
	if viol.Len() > 0 {
		return DuplicateKeyError(x.ns, x.Spec, viol.first())
	}
	return nil
}

func (x *Tree) drainRemove(values, id []byte, viol *Violations) error {
	key, _ := x.entry(values, id)
	if !x.Spec.Unique {
		_, err := x.T.Delete(key)
		return err
	}
	owner, err := x.T.Get(key)
	if err != nil {
		return err
	}
	if !bytes.Equal(owner, id) {
		viol.remove(values, id)
		return nil
	}
	if next := viol.pop(values); next != nil {
		return x.T.Put(key, next)
	}
	_, err = x.T.Delete(key)
	return err
}

func (x *Tree) drainAdd(values, id []byte, viol *Violations) error {
	key, val := x.entry(values, id)
	if !x.Spec.Unique {
		return x.T.Put(key, val)
	}
	owner, err := x.T.Get(key)
	if err != nil {
		return err
	}
	switch {
	case owner == nil:
		return x.T.Put(key, val)
	case !bytes.Equal(owner, id):
		viol.Add(values, id)
	}
	return nil
}
