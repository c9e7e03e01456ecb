package kv

import "bytes"

// Cursor iterates over a tree in either direction. A nil key means the
// cursor is exhausted (or failed: see Err). If the tree is modified through
// the same write transaction while a cursor is open, the cursor stays valid:
// it re-seeks from its current key on the next move.
type Cursor struct {
	t     *Tree
	stack []frame
	buf   [8]frame
	mod   uint64
	key   []byte // current key (nil when unpositioned)
	err   error
	// between is set when revalidation found the current key deleted: the
	// stack then points at its successor.
	between bool
}

type frame struct {
	n *node
	i int
}

// Err returns the I/O or corruption error met by the cursor, if any.
func (c *Cursor) Err() error { return c.err }

func (c *Cursor) fail(err error) ([]byte, []byte) {
	if c.err == nil {
		c.err = err
	}
	c.key = nil
	c.stack = c.stack[:0]
	return nil, nil
}

func (c *Cursor) start() bool {
	if err := c.t.ready(); err != nil {
		c.fail(err)
		return false
	}
	c.stack = c.stack[:0]
	c.mod = c.t.tr.mod
	return true
}

func (c *Cursor) load(r *childRef) *node {
	n := r.ptr.Load()
	if n == nil {
		var err error
		if n, err = c.t.tx.db.load(r); err != nil {
			c.fail(err)
			return nil
		}
	}
	return n
}

// descend pushes the path from n to a leaf, taking the first (or last) child.
func (c *Cursor) descend(n *node, last bool) bool {
	for {
		i := 0
		if last {
			i = n.count() - 1
		}
		c.stack = append(c.stack, frame{n, i})
		if n.leaf {
			n.touch()
			return true
		}
		if i < 0 || len(c.stack) >= c.t.tr.height {
			c.fail(errDepth(n, c.t.tr))
			return false
		}
		if n = c.load(n.kids[i]); n == nil {
			return false
		}
	}
}

func (c *Cursor) current() ([]byte, []byte) {
	f := &c.stack[len(c.stack)-1]
	k, v := f.n.kv(f.i)
	c.key = k
	return k, v
}

// First moves to the first key.
func (c *Cursor) First() ([]byte, []byte) {
	if !c.start() {
		return nil, nil
	}
	root := c.load(c.t.tr.root)
	if root == nil || !c.descend(root, false) {
		return nil, nil
	}
	return c.settleForward()
}

// Last moves to the last key.
func (c *Cursor) Last() ([]byte, []byte) {
	if !c.start() {
		return nil, nil
	}
	root := c.load(c.t.tr.root)
	if root == nil || !c.descend(root, true) {
		return nil, nil
	}
	return c.settleBackward()
}

// seek positions the stack at the first entry >= key (possibly past the end
// of a leaf).
func (c *Cursor) seek(key []byte) bool {
	if !c.start() {
		return false
	}
	n := c.load(c.t.tr.root)
	kp := prefix64(key)
	s := fullSpan
	for n != nil {
		if n.leaf {
			n.touch()
			i, _ := n.findP(key, kp, s)
			c.stack = append(c.stack, frame{n, i})
			return true
		}
		i := n.childP(key, kp, s)
		s = n.childSpan(i, s)
		c.stack = append(c.stack, frame{n, i})
		if len(c.stack) >= c.t.tr.height {
			c.fail(errDepth(n, c.t.tr))
			return false
		}
		n = c.load(n.kids[i])
	}
	return false
}

// Seek moves to the first key >= key.
func (c *Cursor) Seek(key []byte) ([]byte, []byte) {
	if !c.seek(key) {
		return nil, nil
	}
	return c.settleForward()
}

// SeekLE moves to the last key <= key.
func (c *Cursor) SeekLE(key []byte) ([]byte, []byte) {
	if !c.seek(key) {
		return nil, nil
	}
	f := &c.stack[len(c.stack)-1]
	if f.i < f.n.count() && bytes.Equal(f.n.key(f.i), key) {
		return c.current()
	}
	f.i--
	return c.settleBackward()
}

// settleForward moves forward from the top frame until it names an entry.
func (c *Cursor) settleForward() ([]byte, []byte) {
	for {
		f := &c.stack[len(c.stack)-1]
		if f.i < f.n.count() {
			return c.current()
		}
		// Pop exhausted levels and step to the next child.
		for {
			c.stack = c.stack[:len(c.stack)-1]
			if len(c.stack) == 0 {
				c.key = nil
				return nil, nil
			}
			p := &c.stack[len(c.stack)-1]
			p.i++
			if p.i < len(p.n.kids) {
				n := c.load(p.n.kids[p.i])
				if n == nil || !c.descend(n, false) {
					return nil, nil
				}
				break
			}
		}
	}
}

// settleBackward moves backward from the top frame until it names an entry.
func (c *Cursor) settleBackward() ([]byte, []byte) {
	for {
		f := &c.stack[len(c.stack)-1]
		if f.i >= 0 && f.i < f.n.count() {
			return c.current()
		}
		for {
			c.stack = c.stack[:len(c.stack)-1]
			if len(c.stack) == 0 {
				c.key = nil
				return nil, nil
			}
			p := &c.stack[len(c.stack)-1]
			p.i--
			if p.i >= 0 {
				n := c.load(p.n.kids[p.i])
				if n == nil || !c.descend(n, true) {
					return nil, nil
				}
				break
			}
		}
	}
}

// revalidate re-seeks after a modification of the tree through the same
// transaction. It reports whether the cursor is positioned.
func (c *Cursor) revalidate() bool {
	if c.key == nil || len(c.stack) == 0 {
		return false
	}
	if c.mod == c.t.tr.mod {
		return true
	}
	key := c.key
	if !c.seek(key) {
		return false
	}
	// The stack now points at the first entry >= key; Next/Prev adjust.
	f := &c.stack[len(c.stack)-1]
	if f.i < f.n.count() && bytes.Equal(f.n.key(f.i), key) {
		return true
	}
	// key itself is gone: mark the position as "between" entries.
	c.key = key
	c.between = true
	return true
}

// step returns the leaf frame of a cursor positioned on an entry of a tree
// not modified since it moved there, or nil: a move within that leaf then
// needs no revalidation and no walk of the stack.
func (c *Cursor) step() *frame {
	if len(c.stack) == 0 || c.key == nil || c.between || c.mod != c.t.tr.mod {
		return nil
	}
	return &c.stack[len(c.stack)-1]
}

// Next moves to the next key.
func (c *Cursor) Next() ([]byte, []byte) {
	if f := c.step(); f != nil && f.i+1 < f.n.count() {
		f.i++ // fast path: the next entry of the same leaf
		return c.current()
	}
	if !c.revalidate() {
		return nil, nil
	}
	if c.between {
		c.between = false
		return c.settleForward()
	}
	c.stack[len(c.stack)-1].i++
	return c.settleForward()
}

// Prev moves to the previous key.
func (c *Cursor) Prev() ([]byte, []byte) {
	if f := c.step(); f != nil && f.i > 0 && f.i <= f.n.count() {
		f.i--
		return c.current()
	}
	if !c.revalidate() {
		return nil, nil
	}
	c.between = false
	c.stack[len(c.stack)-1].i--
	return c.settleBackward()
}
