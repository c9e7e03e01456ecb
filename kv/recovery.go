package kv

// Opening and recovery.
//
// Open takes the directory lock, then:
//
//  1. Creates a new database if the data file is empty: two meta slots
//     (checkpoint 1 in slot 1, slot 0 left invalid) and the journal's two
//     files preallocated with zeros, all fsync'd, then the directory.
//  2. Otherwise reads both meta slots and picks the valid one with the
//     highest checkpoint id. A torn meta write leaves the other slot, whose
//     pages and journal cycle are intact (see checkpoint.go).
//  3. Loads the catalog and walks every branch node of every tree to learn
//     which pages are in use; every other page below the meta's file size
//     is free. (Leaves are not read: their extents are named by their
//     parents.)
//  4. Replays the journal: records of the meta's cycle (its salt) with
//     consecutive sequence numbers from the meta's, each re-executed as a
//     write transaction. The first record with a bad CRC, a sequence gap or
//     an unexpected txid ends the replay: that is the torn tail of the
//     crash, and everything after it is discarded.
//  5. If anything was replayed, checkpoints at once, so the state is in the
//     data file and a fresh journal cycle (new salt) starts at offset 0 of
//     the other journal file.
//
// ReadOnly databases replay into memory only and write nothing.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/cairndb/cairn/kv/vfs"
)

// Open opens (creating if needed) the database in directory dir. A second
// Open of the same directory fails with an error naming the holder.
func Open(dir string, opts *Options) (*DB, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if o.CheckpointBytes <= 0 {
		o.CheckpointBytes = o.JournalSize / 2
	}
	db := &DB{dir: dir, opts: o, fs: o.FS, readOnly: o.ReadOnly,
		writer: make(chan struct{}, 1), ckptCh: make(chan struct{}, 1),
		flushCh: make(chan struct{}, 1), done: make(chan struct{})}
	db.cache.budget = o.CacheSize
	if err := db.open(); err != nil {
		db.undoOpen()
		db.closeFiles()
		return nil, fmt.Errorf("kv: open %s: %w", dir, err)
	}
	if !db.readOnly {
		db.wg.Add(2)
		go db.checkpointer()
		go db.flusher()
	}
	return db, nil
}

// undoOpen runs when Open fails: a failed open must not leave the files
// larger than it found them (space.go). A database this open created is
// removed; otherwise the data file is truncated back to its size at the
// start (a checkpoint's reservation or pages written beyond it).
func (db *DB) undoOpen() {
	if db.readOnly || db.pager == nil {
		return
	}
	if db.created {
		db.removeCreated(filepath.Join(db.dir, dataFileName),
			filepath.Join(db.dir, journalFileNames[0]), filepath.Join(db.dir, journalFileNames[1]),
			filepath.Join(db.dir, "LOCK"))
		return
	}
	if size, err := db.pager.f.Size(); err == nil && size > db.openSize {
		if err := db.pager.f.Truncate(db.openSize); err != nil {
			db.opts.Logger.Warn("kv: truncate data file after failed open", "err", err)
		}
	}
}

func (db *DB) closeFiles() {
	if db.journal != nil {
		db.journal.close()
	}
	if db.pager != nil {
		db.pager.f.Close()
	}
	if db.lock != nil {
		db.lock.Close()
	}
}

func (db *DB) open() error {
	fsys := db.fs
	if !db.readOnly {
		if err := fsys.MkdirAll(db.dir, 0o755); err != nil {
			return err
		}
	}
	lock, err := fsys.Lock(filepath.Join(db.dir, "LOCK"))
	if err != nil {
		return err
	}
	db.lock = lock
	flag := os.O_RDWR | os.O_CREATE
	if db.readOnly {
		flag = os.O_RDONLY
	}
	f, err := fsys.OpenFile(filepath.Join(db.dir, dataFileName), flag, 0o644)
	if err != nil {
		return err
	}
	db.pager = &pager{f: f}
	size, err := f.Size()
	if err != nil {
		return err
	}
	db.openSize = size
	if size == 0 {
		if db.readOnly {
			return errors.New("kv: empty database opened read-only")
		}
		db.created = true
		if err := db.create(); err != nil {
			if vfs.IsNoSpace(err) {
				need := 2*db.opts.JournalSize + 2*int64(db.opts.PageSize)
				return fmt.Errorf("create: %w: a new database needs %s (two preallocated journal files of %s and two meta pages; Options.JournalSize, --journalSize); nothing was left behind: %w",
					ErrNoSpace, formatBytes(need), formatBytes(db.opts.JournalSize), err)
			}
			return fmt.Errorf("create: %w", err)
		}
	}
	m, errs := readMetas(f)
	if m == nil {
		return errors.Join(append([]error{corruptf(dataFileName, 0, "no valid meta page")}, errs...)...)
	}
	for _, e := range errs {
		db.opts.Logger.Warn("kv: ignoring meta slot", "err", e)
	}
	db.meta = *m
	db.pageSize = m.pageSize
	db.pageCodec = db.opts.PageCompression.codec()
	db.pager.pageSize = m.pageSize

	trees := map[string]*treeRoot{}
	if m.catalog.pgid != 0 {
		buf, err := db.pager.read(m.catalog.pgid, m.catalog.npages)
		if err != nil {
			return err
		}
		if trees, err = decodeCatalog(buf, m.catalog); err != nil {
			return err
		}
	}
	if err := db.initFreeSpace(trees, size); err != nil {
		return err
	}
	for _, tr := range trees {
		tr.ver = m.txid // no commit of this process changed them yet
	}
	snap := &snapshot{txid: m.txid, trees: trees}
	db.current.Store(snap)
	db.snaps = []*snapshot{snap}
	return db.openJournal()
}

// create initialises an empty data file and the journal's two files.
func (db *DB) create() error {
	ps := db.opts.PageSize
	m := meta{pageSize: ps, ckptID: 1, journalSeq: 1, journalSalt: randomSalt(), filePages: 2, journalSize: uint64(db.opts.JournalSize)}
	page := make([]byte, 2*ps)
	copy(page[ps:], m.encode())
	if _, err := db.pager.f.WriteAt(page, 0); err != nil {
		return err
	}
	if err := db.pager.f.Sync(); err != nil {
		return err
	}
	for i := range journalFileNames {
		if err := db.createJournal(i, db.opts.JournalSize); err != nil {
			return err
		}
	}
	return db.fs.SyncDir(db.dir)
}

// initFreeSpace marks the pages reachable from the catalog and makes every
// other page below the file size free.
func (db *DB) initFreeSpace(trees map[string]*treeRoot, fileSize int64) error {
	end := db.meta.filePages
	used := make([]bool, end)
	used[0], used[1] = true, true
	mark := func(e extent) error {
		if e.pgid < 2 || e.pgid+uint64(e.npages) > end {
			return corruptf(dataFileName, e.pgid, "extent of %d pages beyond file end %d", e.npages, end)
		}
		for i := uint64(0); i < uint64(e.npages); i++ {
			if used[e.pgid+i] {
				return corruptf(dataFileName, e.pgid+i, "page referenced twice")
			}
			used[e.pgid+i] = true
		}
		return nil
	}
	if c := db.meta.catalog; c.pgid != 0 {
		if err := mark(c); err != nil {
			return err
		}
	}
	var walk func(r *childRef, height int) error
	walk = func(r *childRef, height int) error {
		pg, np := r.extent()
		if err := mark(extent{pg, np}); err != nil {
			return err
		}
		if height <= 1 {
			return nil
		}
		n, err := db.load(r)
		if err != nil {
			return err
		}
		if n.leaf {
			return corruptf(dataFileName, pg, "leaf at height %d", height)
		}
		for _, k := range n.kids {
			if err := walk(k, height-1); err != nil {
				return err
			}
		}
		return nil
	}
	for _, tr := range trees {
		if err := walk(tr.root, tr.height); err != nil {
			return fmt.Errorf("tree %q: %w", tr.name, err)
		}
	}
	db.alloc = allocator{end: end}
	for p := end; p > 2; p-- {
		if !used[p-1] {
			db.alloc.free = append(db.alloc.free, p-1)
		}
	}
	db.alloc.trimTail()
	db.updateSpaceStats()
	return nil
}

// journalFileNames are the journal's two files (journal.go).
var journalFileNames = [2]string{journalFileName, journalFileName + ".1"}

// createJournal creates (or replaces) journal file i, preallocated with
// zeros and fsync'd, so that later commits only overwrite allocated blocks.
func (db *DB) createJournal(i int, size int64) error {
	jf, err := db.fs.OpenFile(filepath.Join(db.dir, journalFileNames[i]), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	defer jf.Close()
	zeros := make([]byte, 1<<20)
	for off := int64(0); off < size; off += int64(len(zeros)) {
		n := min(int64(len(zeros)), size-off)
		if _, err := jf.WriteAt(zeros[:n], off); err != nil {
			return fmt.Errorf("preallocate journal: %w", err)
		}
	}
	return jf.Sync()
}

// openJournalFile opens journal file i, recreating it when it is missing
// or too small (not in read-only mode: then a missing file is nil).
func (db *DB) openJournalFile(i int) (vfs.File, int64, error) {
	name := filepath.Join(db.dir, journalFileNames[i])
	flag := os.O_RDWR
	if db.readOnly {
		flag = os.O_RDONLY
	}
	jf, err := db.fs.OpenFile(name, flag, 0o644)
	if errors.Is(err, fs.ErrNotExist) && db.readOnly {
		return nil, 0, nil
	}
	var size int64
	if err == nil {
		if size, err = jf.Size(); err != nil {
			jf.Close()
			return nil, 0, err
		}
		if size >= minJournalSize || db.readOnly {
			return jf, size, nil
		}
		jf.Close()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, 0, err
	}
	if i == 0 || err == nil {
		db.opts.Logger.Warn("kv: journal missing or truncated; recreating", "file", name)
	}
	if err := db.createJournal(i, db.opts.JournalSize); err != nil {
		// Leave no partial journal behind (the next open recreates it).
		db.removeCreated(name)
		if vfs.IsNoSpace(err) {
			return nil, 0, fmt.Errorf("recreate journal file %s: %w: it needs %s: %w", name, ErrNoSpace, formatBytes(db.opts.JournalSize), err)
		}
		return nil, 0, err
	}
	if err := db.fs.SyncDir(db.dir); err != nil {
		return nil, 0, err
	}
	if jf, err = db.fs.OpenFile(name, flag, 0o644); err != nil {
		return nil, 0, err
	}
	size, err = jf.Size()
	return jf, size, err
}

func readAll(f vfs.File, size int64) ([]byte, error) {
	data := make([]byte, size)
	if n, err := f.ReadAt(data, 0); err != nil && !(errors.Is(err, io.EOF) && int64(n) == size) {
		return nil, fmt.Errorf("read journal: %w", err)
	}
	return data, nil
}

// openJournal opens both journal files and replays the records after the
// meta's checkpoint: from the meta's file, following switch records into
// the other file.
func (db *DB) openJournal() error {
	var files [2]vfs.File
	var sizes [2]int64
	for i := range files {
		f, size, err := db.openJournalFile(i)
		if err != nil {
			for _, f := range files {
				if f != nil {
					f.Close()
				}
			}
			return err
		}
		files[i], sizes[i] = f, size
	}
	cur := db.meta.journalFile
	if files[cur] == nil {
		return fmt.Errorf("kv: journal file %s missing", journalFileNames[cur])
	}
	db.journal = newJournal(files[cur], sizes[cur], db.opts.JournalCompression)
	j := db.journal
	j.idx, j.other, j.otherSize = cur, files[cur^1], sizes[cur^1]
	j.fileSize.Store(sizes[cur])
	j.salt = db.meta.journalSalt
	j.setSeq(db.meta.journalSeq)
	replayed := 0
	for {
		data, err := readAll(j.f, j.size)
		if err != nil {
			return err
		}
		recs, end := scanJournal(data, j.salt, j.seq)
		good := int64(0)
		var next *journalRecord
		for _, r := range recs {
			if r.txid == 0 { // switch record: the journal goes on in the other file
				if len(r.payload) != 9 || int(r.payload[8]) != j.idx^1 || j.other == nil {
					return fmt.Errorf("kv: journal record %d: bad switch record", r.seq)
				}
				next = &r
				break
			}
			cur := db.current.Load()
			if r.txid != cur.txid+1 {
				db.opts.Logger.Warn("kv: journal record with unexpected txid ends replay", "seq", r.seq, "txid", r.txid, "want", cur.txid+1)
				end = good
				break
			}
			payload, err := decompressPayload(r.codec, r.payload)
			if err != nil {
				return fmt.Errorf("replay journal record %d (tx %d): %w", r.seq, r.txid, err)
			}
			tx := db.newWriteTx()
			if err := replayOps(tx, payload); err != nil {
				return fmt.Errorf("replay journal record %d (tx %d): %w", r.seq, r.txid, err)
			}
			tx.settleAll()
			tx.settleRetired()
			db.publish(&snapshot{txid: tx.id, trees: tx.trees}, tx.freed, tx)
			j.setSeq(r.seq + 1)
			good += int64(journalHeaderSize + len(r.payload))
			replayed++
		}
		if next == nil {
			j.off = end
			break
		}
		// Continue in the other file, as the writer did.
		j.f, j.other = j.other, j.f
		j.size, j.otherSize = j.otherSize, j.size
		j.idx ^= 1
		j.fileSize.Store(j.size)
		j.salt = binary.LittleEndian.Uint64(next.payload)
		j.setSeq(next.seq + 1)
	}
	db.opts.Logger.Info("kv: opened", "dir", db.dir, "checkpoint", db.meta.ckptID, "replayed", replayed)
	db.st.replayed.Store(uint64(replayed))
	if (replayed > 0 || j.idx != db.meta.journalFile) && !db.readOnly {
		err := db.checkpointLocked()
		if errors.Is(err, ErrNoSpace) && j.idx == db.meta.journalFile {
			// The replayed commits stay in the journal and in memory;
			// writes are refused until a checkpoint fits (space.go).
			db.opts.Logger.Warn("kv: opened without the recovery checkpoint for lack of disk space", "dir", db.dir, "err", err)
			return nil
		}
		return err
	}
	return nil
}

var _ vfs.FS = vfs.OS{}
