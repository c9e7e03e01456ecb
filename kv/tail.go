package kv

// The right edge of an appended tree.
//
// A write transaction copies every node on the path to the entry it
// changes (copy-on-write), so one put costs a copy of each node on that
// path: its key, child and prefix arrays, about 40 bytes per entry, which
// for a branch of 300–400 children is 12–16 KB allocated, zeroed and
// copied with write barriers. Random puts spread over the tree and pay
// that on whatever path they take; appends (a key after every key of the
// tree: a log keyed by timestamp, such as the oplog, a capped collection's
// record ids, an index on an increasing value) always take the right edge,
// and there the left-full splits (maybeSplit) that pack sequential trees
// leave the last node of each level anywhere between empty and full: an
// appending transaction copied half a page of branch entries per level.
//
// An append therefore keeps the right edge short. After the put, each
// branch on the right edge looks at its last child (private to the
// transaction, since the put just copied it): when that child holds more
// than tailMax entries it sheds its first entries into its left sibling
// (shedInto), as many as fit in the sibling's page, if that moves at least
// tailMax/2 of them; otherwise (the sibling is full) it is cut just before
// its last entries (two children for a branch, one entry for a leaf), so
// that the cut-off part, now the sibling, is the node the next sheds fill.
// The root, which has no sibling, is cut the same way when an append
// leaves it with more than tailMax children, and a new root grows above it
// (tailRoot). Every node on the right edge then holds at most tailMax+1
// entries and an appending transaction copies O(height × tailMax) entries
// instead of O(height × page); a shed copies the sibling once per tailMax/2
// or more appends at that level. The nodes left of the edge still end up
// full (a sibling takes entries until its page is full), so sequential
// trees stay as packed as the left-full splits made them, with at most one
// more level at the top.
//
// Only appends do this: a put that lands anywhere but after the last key
// (found, or i < count in the rightmost leaf, or not on the right edge)
// leaves the tree's shape to maybeSplit alone, so random workloads are
// unchanged. Leaves whose entries are large (more than a page/tailMax
// bytes each) never hold more than tailMax entries and are not affected.

// tailMax is the most entries a node on the right edge keeps after an
// append.
const tailMax = 32

// shedTail keeps the last child of the private branch m, on the right
// edge of a tree that a put just appended to, at most tailMax entries.
func (tx *Tx) shedTail(m *node) error {
	last := len(m.kids) - 1
	c := m.kids[last].ptr.Load()
	if last < 1 || c == nil || c.txid != tx.id || c.count() <= tailMax {
		return nil
	}
	minE := 1
	if !c.leaf {
		minE = 2
	}
	s, err := tx.db.load(m.kids[last-1])
	if err != nil {
		return err
	}
	// How many of c's first entries fit in s's page (a branch's first
	// child moves under m's separator of c).
	ps := tx.pageSize()
	size, j := s.size, 0
	for j < c.count()-minE {
		es := c.entrySize(j)
		if j == 0 && !c.leaf {
			es = branchEntrySize(m.keys[last])
		}
		if size+es > ps {
			break
		}
		size += es
		j++
	}
	if j >= tailMax/2 {
		tx.shedInto(m, last, s, c, j)
		return nil
	}
	// s is (nearly) full: cut c before its last minE entries.
	k := c.count() - minE
	restSize := pageHeaderSize
	for t := k; t < c.count(); t++ {
		restSize += c.entrySize(t)
	}
	rest := c.slice(tx.id, k, c.count(), restSize)
	c.truncate(k, c.size-restSize+pageHeaderSize)
	tx.notePrivate(rest)
	m.insertChild(last+1, separator(c, rest), rest)
	return nil
}

// shedInto moves the first j entries of c, the private last child of the
// private branch m, into s, its left sibling, whose page they fit in.
func (tx *Tx) shedInto(m *node, last int, s, c *node, j int) {
	s2 := tx.mutable(s)
	moved := 0
	for t := range j {
		es := c.entrySize(t)
		moved += es
		if c.leaf {
			s2.keys = append(s2.keys, c.keys[t])
			s2.vals = append(s2.vals, c.vals[t])
		} else {
			k := c.keys[t]
			if t == 0 {
				k = m.keys[last] // c's keys[0] need not hold its separator
			}
			es = branchEntrySize(k)
			s2.keys = append(s2.keys, k)
			s2.kids = append(s2.kids, c.kids[t])
		}
		s2.size += es
	}
	s2.buildPrefixes()
	rest := c.slice(tx.id, j, c.count(), c.size-moved)
	tx.notePrivate(rest)
	sep := separator(s2, rest)
	if s2 != s {
		m.kids[last-1] = refTo(s2)
	}
	m.kids[last] = refTo(rest)
	m.size += branchEntrySize(sep) - branchEntrySize(m.keys[last])
	m.keys[last] = sep
	m.buildPrefixes()
}

// tailRoot cuts r, the private branch root of a tree that a put just
// appended to, before its last two children when it has more than tailMax
// children, so that a new root grows above the two pieces.
func (tx *Tx) tailRoot(r *node) []*node {
	if r.txid != tx.id || r.count() <= tailMax {
		return tx.single(r)
	}
	k := r.count() - 2
	restSize := pageHeaderSize
	for t := k; t < r.count(); t++ {
		restSize += r.entrySize(t)
	}
	rest := r.slice(tx.id, k, r.count(), restSize)
	r.truncate(k, r.size-restSize+pageHeaderSize)
	tx.notePrivate(rest)
	return []*node{r, rest}
}
