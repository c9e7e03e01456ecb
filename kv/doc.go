// Package kv is an embedded, transactional, ordered key/value store: named
// B+trees of byte-string keys and values in one directory, with ACID
// transactions, one committer at a time, concurrent write transactions
// with snapshot isolation and any number of concurrent snapshot readers. It is Cairn's storage engine, but it knows nothing of
// documents and can be used on its own, as bbolt or LMDB are. It imports
// only the standard library, its file-system seam kv/vfs and
// github.com/klauspost/compress.
//
// # Guarantees
//
// Atomicity: a write transaction's changes become visible, and survive a
// crash, all together or not at all.
//
// Isolation: write transactions are serial (one at a time: BeginWrite
// waits for the writer lock), so they are serializable; a write
// transaction sees the latest committed state and its own changes. A read
// transaction sees the snapshot that was current when it began, unchanged
// for as long as it lives (MVCC by copy-on-write nodes); readers never
// block the writer or each other and are never blocked by it. To act on
// what you read, read it in the write transaction.
//
// Concurrent write transactions (DB.BeginConcurrent) run under snapshot
// isolation without holding the writer lock until Commit: one reads the
// snapshot current when it began plus its own writes; its writes are
// invisible to others until it commits, and then all visible at once. Write
// conflicts are detected eagerly, first writer wins (as in MongoDB's
// WiredTiger): a Put or Delete of a key that another live concurrent
// transaction has written, or that a transaction committed after this
// one's snapshot has written, fails at once with an error wrapping
// ErrWriteConflict (a *WriteConflictError) and changes nothing; the key
// stays its first writer's until that one commits, rolls back or is
// aborted. Creating or dropping a tree claims the whole tree. Commit takes
// the writer lock, re-checks its keys and replays its operations onto the
// latest state: no update is lost. Write skew is permitted (two
// transactions that each read what the other writes may both commit), as
// snapshot isolation permits it. Ordinary write transactions see the same
// ownership: their write of a key (or tree) a live concurrent transaction
// owns fails with ErrWriteConflict; roll back, WriteConflictError.Wait for
// the owner to end, and retry. The one conflict not detected at the write
// is with an ordinary transaction that was already running when the first
// concurrent transaction began: the concurrent one is then refused at
// Commit. Tx.Abort ends a concurrent transaction from any goroutine (its
// next operation fails with ErrTxAborted; Rollback still unpins its
// snapshot), as does the end of the context given to BeginConcurrent and
// Close. A concurrent transaction's private memory is bounded by
// Options.ConcurrentTxMemory (ErrTxTooLarge); BulkLoad and Clone are not
// available in one. While any concurrent transaction is live, every commit
// records the keys it wrote until no live snapshot is older (memory in
// proportion to the writes committed meanwhile); with none live ordinary
// writers pay one atomic load per write.
//
// Consistency: a commit is visible to new readers as soon as it is
// published, which is before it is durable: a reader may see a commit that a
// crash then loses (only one whose Commit had not yet returned, for the
// default Sync durability). Commits become durable in commit order, and
// recovery restores a prefix of them: after a crash the database holds
// exactly the transactions of some prefix of the commit order, each whole,
// including every transaction whose commit was acknowledged as durable.
// A reader that must see only durable commits marks them (Tx.SetMark) and
// reads how far they are durable (DB.DurableMark, DB.DurableChanged:
// durable.go).
//
// Durability (Durability, chosen per commit with Tx.CommitWith or for the
// database with Options.Durability):
//
//   - Sync (the default): Commit returns once the commit's journal record
//     is on stable storage (fdatasync). A crash loses nothing it
//     acknowledged. Concurrent Sync committers share each fdatasync (group
//     commit), so many writers cost a few fsyncs, not one each.
//   - Lazy: Commit returns once the record is written to the journal file
//     (in the OS page cache); a background flusher makes it durable within
//     Options.CommitInterval (default 100 ms), and any later Sync commit or
//     DB.Sync covers it sooner. A crash of the process alone loses nothing;
//     a power failure or kernel crash loses at most the last CommitInterval
//     of Lazy commits.
//   - NoSync: as Lazy, but nothing flushes it on a timer: it is durable
//     after the next checkpoint, DB.Sync, Sync commit, flush of a Lazy
//     commit or Close. For scratch data.
//
// If a write or fdatasync of the commit path fails, the error is sticky:
// the commits it may have lost return an error wrapping ErrDatabaseFailed
// and the cause, and every later write is refused with ErrDatabaseFailed
// until the database is reopened, which recovers what is really on disk.
// Reads keep working. Running out of disk space is different: the write
// that needed the space is refused (an error wrapping ErrNoSpace, a
// *NoSpaceError saying how much is missing), nothing acknowledged is lost,
// and writes resume by themselves once space is available.
//
// # Files, journal, checkpoints and recovery
//
// A database is a directory: a LOCK file (a second Open, by this or any
// process, fails with an error wrapping vfs.ErrLocked that names the
// holder), a data file of checksummed pages, and two preallocated journal
// files (Options.JournalSize each, default 64 MiB) used in turn. Every
// commit appends one record (its logical operations, compressed with
// Options.JournalCompression) to the journal; because the journal files are
// preallocated and never change size while commits use them, a commit's
// fdatasync writes data only, no file metadata.
//
// A checkpoint writes the trees' changed pages copy-on-write into the data
// file (no page the last checkpoint references is overwritten), then a new
// meta page, and moves commits on to the other journal file. Checkpoints
// run in the background every Options.CheckpointInterval (default 60 s) and
// whenever the journal holds more than Options.CheckpointBytes (default half
// of it); DB.Checkpoint runs one at once, Close runs a last one. A
// checkpoint holds the writer lock only while it switches journal files:
// commits go on while it writes pages. A transaction too large for the journal (over a
// quarter of it), and every transaction that bulk loaded, commits by
// checkpointing instead: its pages are written once, to the data file.
//
// Open recovers after a crash: it takes the newest valid meta page (a torn
// meta write leaves the other), rebuilds the free-page map from the trees,
// replays the journal records that follow that checkpoint up to the first
// torn or stale one, and, if it replayed any, checkpoints. Every page, meta record and journal
// record is checksummed (CRC-32C); damage is reported as a
// *CorruptionError, never a panic or a wrong answer.
//
// # Opening
//
// Open(dir, opts) opens the database in dir, creating it if the directory
// holds none; a nil *Options means every default. The Options fields and
// their defaults: FS (the OS), PageSize of a new database (8 KiB; 4–64
// KiB, a power of two), Durability (Sync), CommitInterval (100 ms),
// JournalSize (64 MiB), JournalCompression and PageCompression (Snappy),
// CheckpointInterval (60 s; negative: no timed checkpoints),
// CheckpointBytes (half the journal), FillFactor of BulkLoad and Compact
// (1.0), CacheSize, the memory budget of clean leaves (1 GiB; leaves not
// used recently are evicted and read again when needed), Logger (discard),
// ReadOnly (replay in memory, write nothing). Close checkpoints and
// releases the directory.
//
// # Reading
//
// DB.View(fn) runs fn in a read transaction and ends it; DB.BeginRead
// starts one that the caller ends with Rollback (or Commit). A read
// transaction pins its snapshot: the pages it can reach are not reused
// until it ends, so end long reads when done. A read Tx may be used by
// several goroutines at once. Tx.Tree(name) opens a tree (an error
// wrapping ErrTreeNotFound if there is none); Tree.Get returns a key's
// value, nil if the key is absent and a non-nil empty slice if its value is
// empty. The slices that Get and cursors return alias
// the engine's memory: they are valid until the transaction ends and must
// not be modified (copy them to keep them). Tree.Len is O(1).
//
// # Writing
//
// DB.Update(ctx, fn) runs fn in the write transaction and commits it with
// Options.Durability if fn returns nil, or rolls it back if fn fails or
// panics. DB.BeginWrite(ctx) starts one (waiting for the writer lock, or
// until ctx is done) that the caller ends with Commit, CommitWith(d) or
// Rollback (always safe to call, also after Commit: use defer tx.Rollback()).
// A write Tx belongs to one goroutine at a time. Tx.CreateTree,
// CreateTreeIfNotExists, DropTree and ForEachTree manage trees; Tree.Put,
// Delete and DeleteRange(start, end) change entries; the engine copies the
// keys and values it is given. Tree.Discard removes a key without
// reporting whether it was there: a transaction's discards are applied
// together, in key order, when the tree is next used (or at commit), which
// makes removing many keys much cheaper than Delete.
//
// # Iterating
//
// Tree.Cursor returns a Cursor over the tree, in either direction: First,
// Last, Next, Prev, Seek(key) (the first key >= key) and SeekLE(key) (the
// last key <= key) each return the key and value they land on, or a nil
// key when there is none; Cursor.Err then says whether a read failed. A
// range [start, end) is a Seek(start) followed by Next while the key is
// below end (see ExampleCursor). A cursor of a write transaction stays valid
// across that transaction's changes to the tree: it continues from its
// current key.
//
// # Bulk loading
//
// Tx.BulkLoad(name, next, fillFactor) creates a tree from entries in
// strictly ascending key order (ErrUnsorted otherwise), building it bottom
// up with full pages; the commit writes the pages straight to the data
// file. Puts into a tree that was empty when the transaction began are
// deferred the same way: the transaction sorts them once and builds the
// tree bottom up, so filling a new tree with unsorted puts in one
// transaction is nearly as fast as BulkLoad.
//
// # Maintenance
//
// DB.Compact(ctx) repacks every tree with full pages, moves pages towards
// the start of the data file, truncates it and shrinks the journal files
// (they grow back when commits need them); readers keep reading, writers
// wait. DB.Check(ctx) verifies every page of the last checkpoint of an open
// database (checkpoint first to include the latest commits), and
// Check(dir, opts) does the same offline; both return nil or an error
// joining *CorruptionError values. DB.Sync(ctx) makes every commit so far
// durable. DB.Stats reports file sizes, free pages, commits, fsyncs and
// group commit sizes, checkpoints, the cache and every tree's length and
// height, without blocking.
//
// # Limits
//
// Keys are 1 byte to MaxKeySize (64 MiB) long (ErrEmptyKey,
// ErrKeyTooLarge), values 0 bytes to MaxValueSize (64 MiB)
// (ErrValueTooLarge); a node too big for a page takes a multi-page extent,
// so large values need no overflow chains. Tree names are 1 to 4,096 bytes.
// A transaction's size is bounded by memory: its changed pages stay in
// memory until it commits. One process opens a directory at a time, and
// one write transaction (or the commit of a concurrent one) runs at a
// time.
//
// See docs/architecture.md, section "Storage engine (kv)", for the design:
// the page and journal formats, group commit, checkpoints, free-space
// reuse, recovery and the node cache.
package kv
