package kv

// Node cache.
//
// Branch nodes and dirty nodes always stay in memory. Clean leaves — loaded
// from disk or written by a checkpoint — are accounted against
// Options.CacheSize and evicted with the clock algorithm when the total
// exceeds it: a reader that uses a leaf sets its hot bit (only if not
// already set, so hot leaves cost no shared writes), the clock hand clears
// hot bits and evicts leaves whose bit is clear by swinging their parent's
// child pointer back to nil with a CAS. The next reader loads the leaf from
// the data file again (its extent is recorded in the child reference before
// it can ever be evicted). Readers holding the evicted node keep using it;
// its memory is reclaimed by the garbage collector once they are done.

import "sync"

type cacheEntry struct {
	ref  *childRef
	n    *node
	size int64
}

type nodeCache struct {
	mu     sync.Mutex
	budget int64
	used   int64
	ring   []cacheEntry
	hand   int
	evicts uint64
}

// add accounts for leaf n now reachable through r, evicting if needed.
func (c *nodeCache) add(r *childRef, n *node, size int64) {
	if r.pgid == 0 || !n.leaf {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ring = append(c.ring, cacheEntry{r, n, size})
	c.used += size
	if c.used > c.budget {
		c.evict(c.budget - c.budget/8)
	}
}

// evict runs the clock until used <= target or two full turns passed.
func (c *nodeCache) evict(target int64) {
	for steps := 2 * len(c.ring); c.used > target && steps > 0 && len(c.ring) > 0; steps-- {
		if c.hand >= len(c.ring) {
			c.hand = 0
		}
		e := &c.ring[c.hand]
		if e.ref.ptr.Load() != e.n {
			c.drop() // replaced (new version or re-homed): no longer cached here
			continue
		}
		if e.n.hot.Load() {
			e.n.hot.Store(false)
			c.hand++
			continue
		}
		if e.ref.ptr.CompareAndSwap(e.n, nil) {
			c.evicts++
			c.drop()
			continue
		}
		c.hand++
	}
}

// drop removes the entry under the hand.
func (c *nodeCache) drop() { c.dropAt(c.hand) }

// dropAt removes entry i (the last entry takes its place).
func (c *nodeCache) dropAt(i int) {
	last := len(c.ring) - 1
	c.used -= c.ring[i].size
	c.ring[i] = c.ring[last]
	c.ring[last] = cacheEntry{}
	c.ring = c.ring[:last]
}

// forget drops the entries of leaves that are no longer part of the tree:
// those whose extent a committed transaction freed (a write replaced the
// leaf by a new version: the old version's child reference, in a parent
// version that is gone too, still points at it, so the evict check above
// cannot see it) and those whose reference moved on. Without this, every
// version of a rewritten leaf stayed accounted, and pinned in memory with
// the page slab it was decoded from, until the budget forced evictions.
// Readers still using such a leaf keep it alive through their snapshot.
func (c *nodeCache) forget(freed map[uint64]struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := 0; i < len(c.ring); {
		e := &c.ring[i]
		if _, gone := freed[e.n.pgid.Load()]; gone || e.ref.ptr.Load() != e.n {
			c.dropAt(i)
			continue
		}
		i++
	}
	if c.hand >= len(c.ring) {
		c.hand = 0
	}
}

func (c *nodeCache) stats() (used int64, entries int, evicts uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used, len(c.ring), c.evicts
}
