package kv

// Checkpoints.
//
// A checkpoint makes the current snapshot durable in the data file so that
// the journal can be recycled:
//
//  1. Retire reader-less snapshots and compute the oldest snapshot a reader
//     may still use; release to the allocator every extent freed by a
//     transaction included in an earlier checkpoint that no reader can reach.
//  2. Write every dirty node (pgid 0) of every tree, children before
//     parents, into newly allocated extents. Pages referenced by the last
//     durable checkpoint are never overwritten (copy-on-write on disk).
//  3. Write the catalog (tree name -> root extent, count, height).
//  4. fdatasync the data file.
//  5. Write the meta record into slot (N+1)%2 and fdatasync again. The
//     meta names the journal file, salt and sequence number of the records
//     that follow the checkpoint.
//  6. Account the frees, give the journal file left behind its configured
//     size, trim free pages off the end of the data file and truncate it.
//
// Before step 1, with every pending journal record written, the journal
// switches to its other file (journal.go: switch records), so that the
// records committed from then on are not needed by this checkpoint and
// are found by recovery from either meta.
//
// The switch and step 1 hold the writer lock (commits wait; readers do
// not). The background checkpointer then releases it: steps 2-6 — writing
// the pages, which with keys spread over a large tree can mean hundreds of
// megabytes, and the slow fdatasyncs — run while commits go on. That is
// safe because the snapshot being written is immutable: commits never
// modify a published node version, they install new versions behind new
// child references, and the only fields a checkpoint stores into shared
// structures (a version's extent, a child reference's extent and its
// re-homed node) are read by others only in ways that see either the
// dirty or the written state, both with the same content. Extents freed
// by those commits belong to the next checkpoint (the snapshot being
// written may still reference them).
//
// One race needs settling: a commit may replace a version that is dirty
// (no extent yet) while the checkpoint is writing it. The commit cannot
// free an extent it cannot see, and the checkpoint must write the version
// anyway (its snapshot references it), so exactly one of them frees the
// new extent, decided by a compare-and-swap on the version's fate
// (node.fate): the checkpoint stores the extent and then marks the version
// written; the commit, when it publishes, marks it replaced by its txid.
// If the commit comes second it frees the extent as its own; if the
// checkpoint comes second it frees the extent on the commit's behalf
// (markWritten), to be reused once a later checkpoint no longer
// references it.
//
// Checkpoints never overlap (ckptMu). Checkpoints run by a caller that
// holds the writer lock for its own reasons (a commit too big for the
// journal, Compact, Close, recovery) keep it throughout.
//
// A crash before step 5 completes leaves the previous meta, whose pages are
// intact, plus the journal from that meta's position on (through the
// switch record). Any I/O error puts the DB into the failed state.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/cairndb/cairn/kv/internal/invariants"
)

// Checkpoint writes the current state to the data file and recycles the
// journal.
func (db *DB) Checkpoint(ctx context.Context) error {
	if db.readOnly {
		return ErrReadOnly
	}
	if err := db.acquireWriter(ctx); err != nil {
		return err
	}
	return db.checkpoint(true)
}

func randomSalt() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])
}

// checkpointLocked checkpoints the current snapshot. Writer lock held (and
// still held on return).
func (db *DB) checkpointLocked() error { return db.checkpoint(false) }

// checkpoint checkpoints the current snapshot. The writer lock is held on
// entry; with unlock, checkpoint releases it once the pages are written
// and before the fdatasyncs (on every path).
func (db *DB) checkpoint(unlock bool) error {
	locked := unlock
	unlockWriter := func() {
		if locked {
			locked = false
			db.releaseWriter()
		}
	}
	defer unlockWriter()
	db.ckptMu.Lock()
	defer db.ckptMu.Unlock()
	if err := db.failedErr(); err != nil {
		return err
	}
	// Records reserved by earlier commits must be in the journal before
	// the switch (journal.go).
	if err := db.journal.drain(); err != nil {
		db.fail(err)
		return err
	}
	start := time.Now()
	snap := db.current.Load()
	newMeta := db.meta
	newMeta.ckptID++
	newMeta.txid = snap.txid

	// 1. Release extents no reader or meta can reach.
	oldest := db.pruneSnapshots()
	keep := db.freedAt[:0]
	var release []extent
	for _, f := range db.freedAt {
		if f.ckpt <= db.meta.ckptID && f.txid <= oldest {
			release = append(release, f.pages...)
		} else {
			keep = append(keep, f)
		}
	}
	db.freedAt = keep
	if invariants.Enabled {
		db.checkRelease(release, oldest)
	}
	db.alloc.release(release)
	// Reserve the disk space of the pages before anything changes
	// (space.go): a checkpoint that does not fit leaves no trace.
	if err := db.reserveCheckpointSpace(snap); err != nil {
		if errors.Is(err, ErrNoSpace) {
			db.setNoSpace(err)
		} else {
			db.fail(err)
		}
		return err
	}
	if _, err := db.journal.switchFiles(randomSalt()); err != nil {
		err = fmt.Errorf("kv: checkpoint: switch journal files: %w", err)
		db.fail(err)
		return err
	}
	newMeta.journalFile = db.journal.idx
	newMeta.journalSalt = db.journal.salt
	newMeta.journalSeq = db.journal.next
	// Commits may go on: they only write the journal (its other file now)
	// and install new node versions; the snapshot written below is
	// immutable.
	unlockWriter()

	// 2. Write dirty nodes.
	w := newPageWriter(db.pager)
	w.paced = unlock
	names := make([]string, 0, len(snap.trees))
	for name := range snap.trees {
		names = append(names, name)
	}
	slices.Sort(names)
	trees := make([]*treeRoot, 0, len(names))
	written := 0
	for _, name := range names {
		tr := snap.trees[name]
		trees = append(trees, tr)
		c, err := db.writeNode(w, tr.root)
		if err != nil {
			db.fail(err)
			return err
		}
		written += c
	}

	// 3. Catalog.
	newMeta.catalog = extent{}
	if len(trees) > 0 {
		buf, e := encodeCatalog(trees, db.pageSize, db.alloc.alloc)
		copy(w.buffer(e.pgid, e.npages), buf)
		newMeta.catalog = e
	}
	w.flush()
	if w.err != nil {
		db.fail(w.err)
		return w.err
	}
	for _, h := range w.rehome {
		h.ref.ptr.Store(h.n)
		db.cache.add(h.ref, h.n, max(int64(h.n.npages.Load())*int64(db.pageSize), int64(h.n.size)))
	}
	w.rehome = nil
	if f := db.opts.testing.checkpointUnlocked; f != nil {
		f(db)
	}
	w.pacedWriteback()

	// 4. Make the pages durable.
	if err := db.pager.f.Datasync(); err != nil {
		err = fmt.Errorf("kv: checkpoint: fdatasync data file: %w", err)
		db.fail(err)
		return err
	}

	// 5. Meta.
	db.alloc.trimTail()
	newMeta.filePages = db.alloc.end
	metaBuf := newMeta.encode()
	if _, err := db.pager.f.WriteAt(metaBuf, int64(newMeta.ckptID%2)*int64(db.pageSize)); err != nil {
		err = fmt.Errorf("kv: checkpoint: write meta: %w", err)
		db.fail(err)
		return err
	}
	if err := db.pager.f.Datasync(); err != nil {
		err = fmt.Errorf("kv: checkpoint: fdatasync meta: %w", err)
		db.fail(err)
		return err
	}

	// 6. The checkpoint is durable: account the frees of the transactions
	// it includes (later ones belong to the next checkpoint).
	db.freeMu.Lock()
	kept := db.pendingFree[:0]
	for _, f := range db.pendingFree {
		if f.txid <= snap.txid {
			db.freedAt = append(db.freedAt, ckptFree{ckpt: newMeta.ckptID, txid: f.txid, pages: f.pages})
		} else {
			kept = append(kept, f)
		}
	}
	clear(db.pendingFree[len(kept):])
	db.pendingFree = kept
	db.freeMu.Unlock()
	if old := db.meta.catalog; old.pgid != 0 {
		db.freedAt = append(db.freedAt, ckptFree{ckpt: newMeta.ckptID, pages: []extent{old}})
	}
	// Extents freed and not yet released hold no leaf of the current tree:
	// the cache forgets the versions it still accounts there.
	freed := make(map[uint64]struct{})
	for _, f := range db.freedAt {
		for _, e := range f.pages {
			freed[e.pgid] = struct{}{}
		}
	}
	db.cache.forget(freed)
	db.meta = newMeta
	// The journal file left behind is free: give it the configured size
	// if the load outgrew a smaller one (Compact shrinks both).
	if db.journalPressure.Load() && db.journal.otherSize < db.opts.JournalSize && db.journal.other != nil {
		if err := db.resizeJournalFile(false, db.opts.JournalSize); err != nil {
			// The checkpoint is durable; the journal stays small (commits
			// that do not fit commit by checkpointing) and the next
			// checkpoint tries again.
			db.opts.Logger.Warn("kv: grow journal file", "err", err)
			if terr := db.journal.other.Truncate(db.journal.otherSize); terr != nil {
				db.fail(fmt.Errorf("%w; truncating it back: %w", err, terr))
				return err
			}
		}
		if db.journal.size >= db.opts.JournalSize {
			db.journalPressure.Store(false)
		}
	}
	if size, err := db.pager.f.Size(); err == nil && size > int64(db.alloc.end)*int64(db.pageSize) {
		if err := db.pager.f.Truncate(int64(db.alloc.end) * int64(db.pageSize)); err != nil {
			db.opts.Logger.Warn("kv: truncate data file", "err", err)
		}
	}
	db.setNoSpace(nil)
	db.st.checkpoints.Add(1)
	db.st.ckptPages.Add(uint64(written))
	db.st.dataSyncs.Add(2)
	db.st.lastCkpt.Store(time.Now().UnixNano())
	db.st.lastCkptDur.Store(int64(time.Since(start)))
	db.st.ckptNanos.Add(uint64(time.Since(start)))
	db.updateSpaceStats()
	if db.opts.testing.verifyCheckpoints {
		db.verifyCheckpoint()
	}
	if invariants.Enabled {
		db.checkAccounting()
	}
	if f := db.opts.testing.afterCheckpoint; f != nil {
		f(db)
	}
	return nil
}

// writeNode writes the node behind r and its dirty descendants and returns
// the pages written. The pages are encoded into the page writer's slabs;
// after encoding, the node is re-parsed from an exact copy of its payload
// and swapped in behind r (an atomic pointer store; the content is
// identical, so readers holding either version are unaffected). From then
// on the node's keys and values live contiguously in one buffer of its own
// instead of in scattered per-entry allocations, and a leaf is packed
// (node.go: offsets into that buffer, no per-entry slices), which makes
// reads cache- and TLB-friendly and leaves the GC three pointers per leaf,
// and the slab is garbage once the checkpoint is done.
type rehome struct {
	ref *childRef
	n   *node
}

func (db *DB) writeNode(w *pageWriter, r *childRef) (int, error) {
	n := r.ptr.Load()
	if n == nil || n.pgid.Load() != 0 {
		return 0, nil
	}
	written := 0
	if !n.leaf {
		for _, k := range n.kids {
			c, err := db.writeNode(w, k)
			if err != nil {
				return 0, err
			}
			written += c
		}
	}
	if f := db.opts.testing.beforeNodeWrite; f != nil {
		f(db, n)
	}
	var nn *node
	var np uint32
	var pg uint64
	if img, c := db.compressLeaf(n); c != nil {
		// Stored compressed; the node is re-homed on its uncompressed image.
		np = pagesFor(pageHeaderSize+len(c), db.pageSize)
		pg = db.alloc.alloc(np)
		buf := w.buffer(pg, np)
		copy(buf[pageHeaderSize:], c)
		sealPageCodec(buf, pageTypeLeaf, db.pageCodec, pg, np, n.count(), pageHeaderSize+len(c))
		n.npages.Store(np)
		n.pgid.Store(pg)
		db.markWritten(n, pg, np)
		var err error
		if nn, err = parseNode(pageTypeLeaf, n.count(), img[pageHeaderSize:n.size], pg, np, dataFileName); err != nil {
			return 0, fmt.Errorf("kv: checkpoint: re-reading node just encoded: %w", err)
		}
		db.st.compressedLeaves.Add(1)
	} else {
		np = pagesFor(n.size, db.pageSize)
		pg = db.alloc.alloc(np)
		buf := w.buffer(pg, np)
		n.encode(buf, pg, np)
		n.npages.Store(np)
		n.pgid.Store(pg)
		db.markWritten(n, pg, np)
		// The new version is parsed from its own copy of the payload, not
		// from the writer's slab: a long-lived leaf would otherwise keep
		// the whole slab (8 MiB, however little this checkpoint wrote)
		// allocated, one more per checkpoint.
		typ := byte(pageTypeBranch)
		if n.leaf {
			typ = pageTypeLeaf
		}
		if n.packed {
			// A packed leaf (built so by BulkLoad) is already in the
			// form re-homing would give it, over its own page image: it
			// stays, now with its extent.
			nn = n
		} else {
			var err error
			if nn, err = parseNode(typ, n.count(), bytes.Clone(buf[pageHeaderSize:n.size]), pg, np, dataFileName); err != nil {
				return 0, fmt.Errorf("kv: checkpoint: re-reading node just encoded: %w", err)
			}
		}
	}
	if !n.leaf {
		// Keep the children in memory: share the old version's child
		// references (themselves re-homed or clean).
		nn.kids = n.kids
	}
	// Record the extent in the reference before the node can be evicted
	// (readers read these fields only after seeing a nil pointer).
	r.pgid, r.npages = pg, np
	// The swap must wait until the page is in the file: nn's children are
	// named by page number only, and a concurrent reader following them
	// must not read pages still sitting in the writer's buffer.
	w.rehome = append(w.rehome, rehome{r, nn})
	return written + int(np), nil
}

// markWritten marks n, whose extent (pg, np) the checkpoint has just
// stored, as written. If a commit replaced n while it was still dirty
// (n.fate holds that commit's txid), that commit could not free the
// extent, so it is freed here as the commit's: reused once a checkpoint
// that includes the commit is durable and no reader can reach n.
func (db *DB) markWritten(n *node, pg uint64, np uint32) {
	if n.fate.CompareAndSwap(fateLive, fateWritten) {
		return
	}
	db.freeMu.Lock()
	db.pendingFree = append(db.pendingFree, txFree{txid: n.fate.Load(), pages: []extent{{pg, np}}})
	db.freeMu.Unlock()
	if f := db.opts.testing.freedForCommit; f != nil {
		f()
	}
}

// compressLeaf returns the uncompressed image of leaf n and its compressed
// payload when n spans more than one page and compression makes its extent
// at least one page shorter; otherwise (nil, nil).
func (db *DB) compressLeaf(n *node) (img, compressed []byte) {
	if !n.leaf || db.pageCodec == codecNone || n.size <= db.pageSize {
		return nil, nil
	}
	img = make([]byte, n.size)
	n.encode(img, 0, 0)
	c, ok := compressParts(db.pageCodec, [][]byte{img[pageHeaderSize:n.size]}, nil)
	if !ok || pagesFor(pageHeaderSize+len(c), db.pageSize) >= pagesFor(n.size, db.pageSize) {
		return nil, nil
	}
	return img, c
}

func (db *DB) updateSpaceStats() {
	db.freeMu.Lock()
	defer db.freeMu.Unlock()
	var pending uint64
	for _, f := range db.freedAt {
		for _, e := range f.pages {
			pending += uint64(e.npages)
		}
	}
	for _, f := range db.pendingFree {
		for _, e := range f.pages {
			pending += uint64(e.npages)
		}
	}
	db.st.filePages.Store(db.alloc.end)
	db.st.freePages.Store(uint64(len(db.alloc.free)))
	db.st.pendingPages.Store(pending)
}

// resizeJournalFile changes the size of one of the journal's files, the
// current one (only when empty: right after a checkpoint that did not need
// to switch, with the writer lock held) or the other one (free after a
// checkpoint). Growing writes zeros over the new part and fsyncs, so that
// later commits still only overwrite allocated blocks (fdatasync without
// metadata). Called with ckptMu held.
func (db *DB) resizeJournalFile(current bool, size int64) error {
	j := db.journal
	f, old := j.other, j.otherSize
	if current {
		f, old = j.f, j.size
	}
	if size > old {
		zeros := make([]byte, 1<<20)
		for off := old; off < size; off += int64(len(zeros)) {
			n := min(int64(len(zeros)), size-off)
			if _, err := f.WriteAt(zeros[:n], off); err != nil {
				return fmt.Errorf("kv: grow journal: %w", err)
			}
		}
	} else if err := f.Truncate(size); err != nil {
		return fmt.Errorf("kv: shrink journal: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("kv: resize journal: fsync: %w", err)
	}
	if current {
		j.size = size
		j.fileSize.Store(size)
	} else {
		j.otherSize = size
	}
	return nil
}
