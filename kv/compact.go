package kv

// Compaction.
//
// Compact returns free space at the end of the data file to the file system
// while readers keep reading (all of it holds the writer lock, so commits
// wait):
//
//  1. Checkpoint, so every node is on disk and old frees are released.
//  2. Repack (repack): an internal write transaction rebuilds every tree
//     bottom-up with pages filled to Options.FillFactor, as BulkLoad does,
//     merging the half-empty pages random inserts and deletes leave, and
//     frees the old nodes; two checkpoints make those pages free.
//  3. Compute the number of live pages L. Every node whose extent ends
//     beyond page 2+L (plus the pages still pinned by readers and the
//     catalog) is copied by a second internal write transaction — path
//     copying its ancestors — and the following checkpoint writes the
//     copies into the lowest free pages (the allocator always hands out
//     the lowest free page first).
//  4. A second checkpoint rotates the meta so that neither meta slot
//     references the old locations; the old extents become reusable if no
//     reader still needs them, are trimmed off the end of the file and the
//     file is truncated.
//  5. Shrink the (now empty) journal's two files to 1 MiB each; the
//     checkpoint after the next journal-filling commit grows the free one
//     back to Options.JournalSize.
//
// Neither internal transaction changes any tree's entries, so
// Tree.Version stays as it was.
//
// Readers that began before compaction keep their snapshot: the extents
// they can reach stay pinned (not reused, not truncated) until they finish;
// a later checkpoint or Compact then shrinks the file further.

import (
	"context"
	"fmt"
)

// Compact moves pages towards the start of the data file and truncates it.
func (db *DB) Compact(ctx context.Context) error {
	if db.readOnly {
		return ErrReadOnly
	}
	if err := db.acquireWriter(ctx); err != nil {
		return err
	}
	defer db.releaseWriter()
	if err := db.failedErr(); err != nil {
		return err
	}
	if err := db.checkpointLocked(); err != nil {
		return err
	}
	if err := db.repack(); err != nil {
		return err
	}
	if err := db.checkpointLocked(); err != nil { // release frees of the first
		return err
	}
	pinned := uint64(0)
	for _, f := range db.freedAt {
		for _, e := range f.pages {
			pinned += uint64(e.npages)
		}
	}
	free := uint64(len(db.alloc.free)) + pinned
	if free > db.alloc.end-2 {
		free = db.alloc.end - 2
	}
	live := db.alloc.end - 2 - free
	boundary := 2 + live + pinned + uint64(db.meta.catalog.npages)
	if db.alloc.end > boundary {
		tx := db.newWriteTx()
		for name := range tx.trees {
			tr, err := tx.writableRoot(name)
			if err != nil {
				return err
			}
			c, err := tx.relocate(tr.root, tr.height, boundary)
			if err != nil {
				return fmt.Errorf("kv: compact tree %q: %w", name, err)
			}
			if c != nil {
				tr.root = refTo(c)
				tx.dirty = true
			}
		}
		if tx.dirty {
			tx.settleRetired()
			db.publish(&snapshot{txid: tx.id, trees: tx.trees}, tx.freed, nil)
			if err := db.checkpointLocked(); err != nil {
				return err
			}
			if err := db.checkpointLocked(); err != nil {
				return err
			}
		}
	}
	// The journal is empty after the checkpoints: give its space back too
	// (both files). It grows back to Options.JournalSize when commits fill
	// it.
	db.ckptMu.Lock()
	defer db.ckptMu.Unlock()
	if db.journal.offset() == 0 {
		for _, current := range []bool{true, false} {
			size := db.journal.otherSize
			if current {
				size = db.journal.size
			}
			if size <= compactedJournalSize || (!current && db.journal.other == nil) {
				continue
			}
			if err := db.resizeJournalFile(current, compactedJournalSize); err != nil {
				db.fail(err)
				return err
			}
		}
		db.journalPressure.Store(false)
	}
	db.st.compactions.Add(1)
	return nil
}

// compactedJournalSize is the journal size Compact leaves behind.
const compactedJournalSize = 1 << 20

// repack rebuilds every tree bottom-up with full pages (Options.FillFactor),
// as BulkLoad does, so that pages left half empty by random inserts and
// deletes are merged; then it checkpoints. The new nodes land wherever free
// space is; the relocation pass that follows moves them down.
func (db *DB) repack() error {
	tx := db.newWriteTx()
	limit := max(int(float64(db.pageSize)*db.opts.FillFactor), pageHeaderSize+1)
	for name := range tx.trees {
		tr, err := tx.writableRoot(name)
		if err != nil {
			return err
		}
		b := bulkBuilder{txid: tx.id, limit: limit}
		c := (&Tree{tx: tx, tr: tr}).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			b.add(k, v)
		}
		if err := c.Err(); err != nil {
			return fmt.Errorf("kv: compact tree %q: %w", name, err)
		}
		if err := tx.freeTree(tr.root, tr.height); err != nil {
			return fmt.Errorf("kv: compact tree %q: %w", name, err)
		}
		root, height := b.finish()
		tr.root, tr.height = refTo(root), height
		tr.mod++
		tr.baseMod = tr.mod // same entries: the version stays (Tree.Version)
		tx.dirty = true
	}
	if !tx.dirty {
		return db.checkpointLocked()
	}
	tx.settleRetired()
	db.publish(&snapshot{txid: tx.id, trees: tx.trees}, tx.freed, nil)
	if err := db.checkpointLocked(); err != nil {
		return err
	}
	return db.checkpointLocked()
}

// relocate copies every node of the subtree at r whose extent reaches past
// boundary, with its ancestors. It returns the new version of r's node, or
// nil if nothing below r moved.
func (tx *Tx) relocate(r *childRef, height int, boundary uint64) (*node, error) {
	pg, np := r.extent()
	high := pg != 0 && pg+uint64(np) > boundary
	if height <= 1 && !high {
		return nil, nil
	}
	n, err := tx.db.load(r)
	if err != nil {
		return nil, err
	}
	var m *node
	if !n.leaf {
		for i, k := range n.kids {
			c, err := tx.relocate(k, height-1, boundary)
			if err != nil {
				return nil, err
			}
			if c != nil {
				if m == nil {
					m = tx.mutable(n)
				}
				m.kids[i] = refTo(c)
			}
		}
	}
	if m == nil && high {
		m = tx.mutable(n)
	}
	return m, nil
}
