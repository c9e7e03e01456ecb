package kv

// Running out of disk space.
//
// The journal's files are preallocated, so commits never need new disk
// space; only a checkpoint does, when it writes the dirty pages into free
// pages or at the end of the data file. Before this file existed, a
// checkpoint found ENOSPC in the middle of writing pages, put the DB into
// the failed state (every write refused until reopen), and the reopen's
// own recovery checkpoint failed the same way, leaving the data file
// larger each time.
//
// Now a checkpoint reserves its space before it changes anything:
//
//   - With the writer lock held and before the journal switches files, it
//     simulates its allocation: it walks the dirty nodes of the snapshot
//     in the order writeNode writes them, allocating each one's
//     uncompressed extent (an upper bound of what it will write) from a
//     copy of the allocator, then the catalog, plus a margin (1/64 of the
//     pages of leaves that may be stored compressed, at least 16 pages:
//     a compressed leaf takes fewer pages, which can change which free
//     runs later extents fit into). The simulated end of the file is
//     reserved with fallocate (vfs.Allocator; zeros elsewhere).
//   - If the file system cannot give it, the file is truncated back to its
//     size before the attempt and the checkpoint returns an error wrapping
//     ErrNoSpace that says how much more space it needs. Nothing else
//     happened: no page was written, the journal did not switch (switching
//     and then abandoning the checkpoint would let the next switch recycle
//     the file the durable meta still needs), and the DB is not failed.
//   - The DB then holds the no-space state: every commit goes through the
//     commit-by-checkpoint path, whose reservation runs before the commit
//     is published (before settleRetired, which would hand extents of
//     live versions to a checkpoint), so a commit that cannot be
//     checkpointed is refused with ErrNoSpace and leaves no trace. The
//     first commit (or background checkpoint) that finds the space
//     checkpoints, clears the state, and writes go on without a restart.
//   - Open replays the journal and checkpoints; when that checkpoint
//     cannot reserve its space and the replay did not cross a journal
//     switch, Open succeeds anyway, in the no-space state: the replayed
//     commits are in memory and in the journal, exactly as before the
//     restart. (After a crossed switch the checkpoint is required, for the
//     reason above; Open then fails, saying how much space it needs, and a
//     failed Open truncates the data file back to its size at the start.)
//
// Acknowledged commits are therefore always in the journal or the data
// file, and a restart needs no space beyond what the files already hold
// (unless the crash came in the middle of a checkpoint that had reserved
// its space: the reservation is then part of the data file's size).
//
// An ENOSPC that still happens while a checkpoint writes pages (the
// reservation is an estimate only where compression reorders allocations)
// fails the DB as any other write error does.

import (
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/cairndb/cairn/kv/vfs"
)

// spaceNeed is the result of a checkpoint's simulated allocation.
type spaceNeed struct {
	end   uint64 // file end in pages after the checkpoint's writes
	pages uint64 // pages the checkpoint will write (upper bound)
}

// planCheckpointSpace simulates the page allocation of a checkpoint of
// snap. Called with ckptMu held (the allocator is the checkpoint's).
func (db *DB) planCheckpointSpace(snap *snapshot) spaceNeed {
	a := allocator{free: slices.Clone(db.alloc.free), end: db.alloc.end}
	var need spaceNeed
	compressible := uint64(0)
	var walk func(r *childRef)
	walk = func(r *childRef) {
		n := r.ptr.Load()
		if n == nil || n.pgid.Load() != 0 {
			return
		}
		if !n.leaf {
			for _, k := range n.kids {
				walk(k)
			}
		}
		np := pagesFor(n.size, db.pageSize)
		if n.leaf && db.pageCodec != codecNone && n.size > db.pageSize {
			compressible += uint64(np)
		}
		a.alloc(np)
		need.pages += uint64(np)
	}
	names := make([]string, 0, len(snap.trees))
	for name := range snap.trees {
		names = append(names, name)
	}
	slices.Sort(names)
	catalog := pageHeaderSize
	for _, name := range names {
		walk(snap.trees[name].root)
		catalog += len(name) + 10 + 12 + 10 + 10
	}
	if len(names) > 0 {
		np := pagesFor(catalog, db.pageSize)
		a.alloc(np)
		need.pages += uint64(np)
	}
	// Margin: 1/64 of the compressible leaves' pages, at least 16 pages
	// when there are any.
	if compressible > 0 {
		need.end += max(compressible/64, 16)
	}
	need.end += a.end
	return need
}

// reserveCheckpointSpace makes sure the data file can hold a checkpoint of
// snap: it grows the file to the planned end with an allocation. On
// ENOSPC it truncates the file back and returns an error wrapping
// ErrNoSpace; the caller has changed nothing yet. Called with ckptMu held.
func (db *DB) reserveCheckpointSpace(snap *snapshot) error {
	need := db.planCheckpointSpace(snap)
	f := db.pager.f
	size, err := f.Size()
	if err != nil {
		return fmt.Errorf("kv: checkpoint: size of data file: %w", err)
	}
	want := int64(need.end) * int64(db.pageSize)
	if want <= size {
		return nil
	}
	if a, ok := f.(vfs.Allocator); ok {
		err = a.Allocate(size, want-size)
	} else {
		err = writeZeros(f, size, want)
	}
	if err == nil {
		return nil
	}
	if terr := f.Truncate(size); terr != nil {
		db.opts.Logger.Warn("kv: truncate data file after failed reservation", "err", terr)
	}
	if !vfs.IsNoSpace(err) {
		return fmt.Errorf("kv: checkpoint: reserve %d bytes in the data file: %w", want-size, err)
	}
	return &NoSpaceError{Need: want - size, Pages: need.pages, File: dataFileName, Err: err}
}

// NoSpaceError is the error of a checkpoint (and so of a commit or an open
// that needs one) refused because the file system has no room for it. It
// wraps ErrNoSpace and the file system's error.
type NoSpaceError struct {
	Need  int64  // bytes the file must grow by
	Pages uint64 // pages the checkpoint writes (upper bound)
	File  string // the file that could not grow
	Err   error  // the file system's error (ENOSPC)
}

// Error says which file needs how much more space.
func (e *NoSpaceError) Error() string {
	return fmt.Sprintf("%v: the %s file needs %s more disk space (%d pages to write); writes are refused until it is available: %v",
		ErrNoSpace, e.File, formatBytes(e.Need), e.Pages, e.Err)
}

// Unwrap returns ErrNoSpace and the file system's error, for errors.Is.
func (e *NoSpaceError) Unwrap() []error { return []error{ErrNoSpace, e.Err} }

// formatBytes prints n in the largest binary unit that keeps it >= 1.
func formatBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// writeZeros writes zeros over [from, to) of f.
func writeZeros(f vfs.File, from, to int64) error {
	zeros := make([]byte, min(to-from, 1<<20))
	for off := from; off < to; off += int64(len(zeros)) {
		n := min(int64(len(zeros)), to-off)
		if _, err := f.WriteAt(zeros[:n], off); err != nil {
			return err
		}
	}
	return nil
}

// noSpaceErr returns the error of the last checkpoint refused for lack of
// space, while the DB is in the no-space state.
func (db *DB) noSpaceErr() error {
	if p := db.noSpace.Load(); p != nil {
		return *p
	}
	return nil
}

// setNoSpace records the outcome of a checkpoint's reservation: err (an
// ErrNoSpace) enters the no-space state, nil leaves it.
func (db *DB) setNoSpace(err error) {
	if err == nil {
		if db.noSpace.Swap(nil) != nil {
			db.opts.Logger.Warn("kv: disk space available again; writes resume", "dir", db.dir)
		}
		return
	}
	if db.noSpace.Swap(&err) == nil {
		db.opts.Logger.Error("kv: out of disk space; refusing writes until a checkpoint fits", "dir", db.dir, "err", err)
	}
}

// removeCreated removes the files of a database whose creation failed, so
// that a failed first start leaves nothing behind.
func (db *DB) removeCreated(names ...string) {
	for _, n := range names {
		if err := db.fs.Remove(n); err != nil && !errors.Is(err, os.ErrNotExist) {
			db.opts.Logger.Warn("kv: remove after failed create", "file", n, "err", err)
		}
	}
}
