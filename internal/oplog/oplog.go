// Package oplog writes local.oplog.rs, the log of every change to
// replicated data, as a mongod replica-set member does.
//
// # Entries
//
// An entry is the BSON document mongod 7.0 writes, field for field and in
// its order: lsid and txnNumber (a retryable write's statement), op ("i"
// insert, "u" update, "d" delete, "c" command, "n" no-op), ns, ui (the
// collection's UUID, binary subtype 4), o (the inserted document; an
// update's {$v: 2, diff: ...} or a replacement's full new document; a
// delete's {_id}; a command's description), o2 (inserts and updates: the
// document key {_id}; some commands: what they undo), stmtId, ts, t (the
// term, int64), v (int64 2), wall (the wall-clock date) and prevOpTime
// {ts, t} (a retryable statement: the previous entry of its lsid and
// txnNumber).
//
// # Same transaction, ts order = commit order
//
// Every entry is written by the writer of the change it records
// (exec.CollWriter for documents, the DDL commands for the catalog), in
// the same kv write transaction: the change and its entry commit together
// or not at all, so after a crash at any point the oplog holds exactly the
// changes that are in the data. The entry's ts is taken (repl.Clock.Next)
// inside that transaction, while it holds kv's single writer: every
// transaction that committed before it took smaller stamps and every later
// one will take larger ones, so the oplog's ts order is commit order, and
// a reader that has seen ts has seen every earlier change. A transaction
// that rolls back burns its stamps; the gaps are harmless.
//
// # Storage
//
// The oplog is the catalog collection local.oplog.rs (Options {capped:
// true, size}), with no _id and no indexes, as mongod's; its data tree is
// keyed by the entry's ts as 8 big-endian bytes (the capped collections'
// record id), so appending is a write at the tree's right edge and a read
// from a timestamp is one seek (Entries). kv keeps the right edge of an
// appended tree short (kv/tail.go), so that the copy-on-write of an
// appending transaction copies a few dozen entries per level rather than
// up to a page of them.
//
// # Truncation and the running size
//
// The log keeps its byte size and entry count in memory, so that nothing
// scans. A transaction's appends are accounted apart (pending) until the
// log learns whether it committed: kv has no commit hook, but the oplog
// tree's Version is the id of the last transaction that changed it, so the
// next appending transaction (or a reader of the figures) finds the
// pending figures committed when the tree's version is the pending
// transaction's id, and discarded otherwise.
//
// Truncation is amortised into the appending transactions: after each
// append that leaves the log over its size, the oldest entries are removed
// (at most truncateBatch per append, so no write pays for a large shrink at
// once; a resized log shrinks at that many entries per write) until it fits,
// but never an entry younger than minRetentionHours. Removing entries at
// the tree's left edge in the writer's own transaction costs a few page
// writes already dirty for the append, needs no second writer (kv has one:
// a background truncater would queue behind or in front of the writers
// anyway), and keeps the log and its size exact across crashes. Readers
// are never blocked: they read their own snapshots.
//
// The figures survive restarts through a small record (tree _oplog, key
// "acct": bytes, count and the last ts they include) written with each
// truncation and every metaEvery appends; at startup the log reads it and
// adds the entries after its ts, so a restart scans at most metaEvery
// entries.
//
// # Recovery of the clock
//
// At startup the last entry's ts is the latest stamp any committed write
// took: the clock observes it (repl.Clock.Observe, equivalent to NewClock's
// after), so that stamps keep increasing across restarts even when the
// wall clock went back.
package oplog

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/repl"
	"github.com/cairndb/cairn/kv"
)

// DB and Coll name the oplog collection.
const (
	DB   = "local"
	Coll = "oplog.rs"
	NS   = DB + "." + Coll
)

const (
	metaTree = "_oplog"
	metaKey  = "acct"
	// truncateBatch bounds the entries one append removes.
	truncateBatch = 16
	// metaEvery is how many appends may go without a persisted record
	// of the figures (the most a restart scans).
	metaEvery = 1024
)

// Log is a node's oplog. Its methods that take a write transaction must be
// called inside that transaction (kv's single writer orders them).
type Log struct {
	db    *kv.DB
	clock *repl.Clock
	tree  string
	// opened is the ts of the last entry when the log was opened (all of
	// it durable): the floor of Durable.
	opened repl.Timestamp
	uuid   [16]byte
	now    func() time.Time

	maxBytes     atomic.Int64
	minRetention atomic.Int64 // nanoseconds; 0: none

	// Term, if set, returns the election term entries carry (their t;
	// repl.Set.WriteTerm); 1 when nil.
	Term func() int64

	mu sync.Mutex
	// last is the ts of the entry appended last (under mu).
	last repl.Timestamp
	// b and buf build the entries, keyBuf holds their keys (under mu;
	// kv's Put copies both).
	b      bson.Builder
	buf    []byte
	keyBuf [8]byte
	// ns caches the namespace string of the collection written last
	// (namespace, entry.go).
	ns atomic.Pointer[nsName]
	// acct is the figures of the tree at version acct.ver (committed).
	acct figures
	// pend is the figures as the transaction pendTx leaves them.
	pend      figures
	pendTx    uint64
	pendValid bool
	// recounts counts the times the figures had to be recounted from
	// the tree (an unexpected version: none in normal operation).
	recounts atomic.Int64
	// truncated counts the entries removed to keep the size.
	truncated atomic.Int64
	// txns buffers the operations of multi-document transactions until
	// they commit (txn.go).
	txns txnBuffers
	// pre is the pre-images' state (preimage.go).
	pre preImages
	// replaying is the entry a DDL command applied on a member that is
	// not primary stands for (replay.go; under mu).
	replaying *replay
	// undo: appends write undo records (undo.go); fenced: appends are
	// refused; quiet: appends write nothing (fenced and quiet under mu).
	undo   atomic.Bool
	fenced bool
	quiet  bool
}

type figures struct {
	ver          uint64
	bytes, count int64
	sinceMeta    int
}

// Config sizes the log.
type Config struct {
	// MaxBytes is the oplog's size (--oplogSize); 0: Default's.
	MaxBytes int64
	// MinRetention keeps entries younger than this even when the log is
	// over its size (--oplogMinRetentionHours); 0: none.
	MinRetention time.Duration
	// Now is the wall clock for wall and retention (time.Now when nil).
	Now func() time.Time
}

// Open opens the oplog of db for a member whose clock is clock, creating
// local.oplog.rs when it does not exist (with cfg.MaxBytes, Default's size
// when 0; an existing oplog keeps its size, as mongod ignores --oplogSize
// then), reads its figures, and advances the clock past its last entry.
func Open(db *kv.DB, clock *repl.Clock, cfg Config, defaultSize func() int64) (*Log, error) {
	l := &Log{db: db, clock: clock, now: cfg.Now}
	if l.now == nil {
		l.now = time.Now
	}
	l.minRetention.Store(int64(cfg.MinRetention))
	err := db.Update(context.Background(), func(tx *kv.Tx) error {
		coll, err := catalog.Get(tx, DB, Coll)
		if err != nil {
			return err
		}
		if coll == nil {
			size := cfg.MaxBytes
			if size == 0 {
				size = defaultSize()
			}
			if coll, err = create(tx, size); err != nil {
				return err
			}
		}
		l.tree, l.uuid = coll.DataTree(), coll.UUID
		size, ok := SizeOf(coll)
		if !ok {
			return fmt.Errorf("oplog: %s has no size in its options %s", NS, coll.Options.String())
		}
		l.maxBytes.Store(size)
		if _, err := tx.CreateTreeIfNotExists(metaTree); err != nil {
			return fmt.Errorf("oplog: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// The figures, read after the creation committed so that the tree
	// has a version.
	err = db.View(func(tx *kv.Tx) error {
		t, err := tx.Tree(l.tree)
		if err != nil {
			return fmt.Errorf("oplog: %w", err)
		}
		f, err := recount(tx, t)
		if err != nil {
			return err
		}
		l.acct = f
		if k, _ := t.Cursor().Last(); k != nil {
			l.opened = repl.Timestamp(binary.BigEndian.Uint64(k))
			clock.Observe(l.opened)
		}
		if p, err := tx.Tree(preTree); err == nil && p.Len() > 0 {
			l.pre.any.Store(true)
		}
		opts, err := l.LoadChangeStreamOptions(tx)
		if err != nil {
			return err
		}
		l.SetPreImageExpiry(ExpiryOf(opts))
		return nil
	})
	if err != nil {
		return nil, err
	}
	return l, nil
}

// create makes local.oplog.rs: a capped collection with no _id index.
func create(tx *kv.Tx, size int64) (*catalog.Collection, error) {
	var opts bson.Builder
	opts.AppendBool("capped", true)
	opts.AppendInt64("size", size)
	coll, err := catalog.Create(tx, DB, Coll, opts.Finish())
	if err != nil {
		return nil, fmt.Errorf("oplog: creating %s: %w", NS, err)
	}
	coll.Indexes = nil
	if err := catalog.Put(tx, coll); err != nil {
		return nil, err
	}
	return coll, nil
}

// SizeOf returns a capped collection's size option.
func SizeOf(coll *catalog.Collection) (int64, bool) {
	v, ok := coll.Options.Lookup("size")
	if !ok {
		return 0, false
	}
	n, ok := v.AsInt64()
	return n, ok
}

// recount returns the tree's figures from the persisted record and the
// entries after it (every entry when there is no record).
func recount(tx *kv.Tx, t *kv.Tree) (figures, error) {
	f := figures{ver: t.Version()}
	var from []byte
	if m, err := tx.Tree(metaTree); err == nil {
		v, err := m.Get([]byte(metaKey))
		if err != nil {
			return f, fmt.Errorf("oplog: reading its figures: %w", err)
		}
		if len(v) == 24 {
			f.bytes = int64(binary.BigEndian.Uint64(v))
			f.count = int64(binary.BigEndian.Uint64(v[8:]))
			from = binary.BigEndian.AppendUint64(nil, binary.BigEndian.Uint64(v[16:])+1)
		}
	}
	cur := t.Cursor()
	k, v := cur.First()
	if from != nil {
		k, v = cur.Seek(from)
	}
	for ; k != nil; k, v = cur.Next() {
		f.bytes += int64(len(v))
		f.count++
	}
	if err := cur.Err(); err != nil {
		return f, fmt.Errorf("oplog: counting: %w", err)
	}
	return f, nil
}

// Size returns the oplog's configured size in bytes.
func (l *Log) Size() int64 { return l.maxBytes.Load() }

// MinRetention returns the minimum retention (0: none).
func (l *Log) MinRetention() time.Duration { return time.Duration(l.minRetention.Load()) }

// UUID returns local.oplog.rs's collection UUID.
func (l *Log) UUID() [16]byte { return l.uuid }

// Clock returns the clock that stamps the entries.
func (l *Log) Clock() *repl.Clock { return l.clock }

// Figures returns the bytes and entries of the oplog as tx sees it.
func (l *Log) Figures(tx *kv.Tx) (bytes, count int64, err error) {
	t, err := tx.Tree(l.tree)
	if err != nil {
		return 0, 0, fmt.Errorf("oplog: %w", err)
	}
	v := t.Version()
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.pendValid && (v == l.pendTx || v == 0 && tx.Writable() && tx.ID() == l.pendTx):
		return l.pend.bytes, l.pend.count, nil
	case v == l.acct.ver:
		return l.acct.bytes, l.acct.count, nil
	}
	f, err := recount(tx, t)
	return f.bytes, f.count, err
}

// Truncated returns the number of entries removed to keep the size.
func (l *Log) Truncated() int64 { return l.truncated.Load() }

// Recounts returns the number of times the figures were recounted from
// the tree.
func (l *Log) Recounts() int64 { return l.recounts.Load() }

// SaveSize records size as the oplog's size option in the catalog, in tx
// (replSetResizeOplog); SetLimits applies it once tx has committed.
func (l *Log) SaveSize(tx *kv.Tx, size int64) error {
	coll, err := catalog.Get(tx, DB, Coll)
	if err != nil {
		return err
	}
	if coll == nil {
		return fmt.Errorf("oplog: %s is missing", NS)
	}
	var b bson.Builder
	it := coll.Options.Iter()
	for it.Next() {
		if it.Element().Key != "size" {
			b.AppendElement(it.Element())
		}
	}
	b.AppendInt64("size", size)
	next := *coll
	next.Options = b.Finish()
	return catalog.Put(tx, &next)
}

// SetLimits changes the size (when size > 0) and the minimum retention
// (when minRetention is not nil) that the next appends truncate to.
func (l *Log) SetLimits(size int64, minRetention *time.Duration) {
	if size > 0 {
		l.maxBytes.Store(size)
	}
	if minRetention != nil {
		l.minRetention.Store(int64(*minRetention))
	}
}

// key is an entry's key: its ts, big-endian.
func key(ts repl.Timestamp) []byte {
	return binary.BigEndian.AppendUint64(make([]byte, 0, 8), uint64(ts))
}

// begin returns the oplog tree of tx with the pending figures set up for
// tx: on the transaction's first append, the previous pending figures are
// adopted when their transaction committed and dropped otherwise.
func (l *Log) begin(tx *kv.Tx) (*kv.Tree, error) {
	t, err := tx.Tree(l.tree)
	if err != nil {
		return nil, fmt.Errorf("oplog: %w", err)
	}
	v := t.Version()
	if v == 0 && l.pendValid && l.pendTx == tx.ID() {
		return t, nil // a later append of the same transaction
	}
	// The first append of tx: tx has not changed the tree, so v is the
	// last committed change's id.
	switch {
	case l.pendValid && v == l.pendTx:
		l.acct = l.pend
		l.acct.ver = v
	case v != l.acct.ver:
		f, err := recount(tx, t)
		if err != nil {
			return nil, err
		}
		l.recounts.Add(1)
		l.acct = f
	}
	l.pend = l.acct
	l.pendTx = tx.ID()
	l.pendValid = true
	return t, nil
}

// put appends the entry doc under ts and keeps the size, in tx (l.mu
// held).
func (l *Log) put(tx *kv.Tx, t *kv.Tree, ts repl.Timestamp, doc bson.Doc) error {
	binary.BigEndian.PutUint64(l.keyBuf[:], uint64(ts))
	if err := t.Put(l.keyBuf[:], doc); err != nil {
		return fmt.Errorf("oplog: appending: %w", err)
	}
	tx.SetMark(uint64(ts)) // Durable: ts order is commit order
	l.pend.bytes += int64(len(doc))
	l.pend.count++
	l.pend.sinceMeta++
	truncated := false
	if l.pend.bytes > l.maxBytes.Load() {
		var err error
		if truncated, err = l.truncate(t); err != nil {
			return err
		}
	}
	if truncated || l.pend.sinceMeta >= metaEvery {
		if err := l.saveFigures(tx, ts); err != nil {
			return err
		}
	}
	if truncated || l.pre.expireAfter.Load() > 0 {
		return l.expirePreImages(tx, t)
	}
	return nil
}

// truncate removes up to truncateBatch of the oldest entries while the log
// is over its size, keeping those younger than the minimum retention.
func (l *Log) truncate(t *kv.Tree) (bool, error) {
	keep := repl.Timestamp(0)
	if r := l.MinRetention(); r > 0 {
		secs := l.now().Add(-r).Unix()
		if secs <= 0 {
			return false, nil // everything is younger
		}
		keep = repl.MakeTimestamp(uint32(min(secs, int64(^uint32(0)))), 0)
	}
	max := l.maxBytes.Load()
	removed := 0
	cur := t.Cursor()
	for removed < truncateBatch && l.pend.bytes > max && l.pend.count > 1 {
		k, v := cur.First()
		if k == nil {
			break
		}
		if keep != 0 && repl.Timestamp(binary.BigEndian.Uint64(k)) >= keep {
			break
		}
		n := int64(len(v))
		k = append([]byte(nil), k...)
		if _, err := t.Delete(k); err != nil {
			return removed > 0, fmt.Errorf("oplog: truncating: %w", err)
		}
		l.pend.bytes -= n
		l.pend.count--
		removed++
	}
	if err := cur.Err(); err != nil {
		return removed > 0, fmt.Errorf("oplog: truncating: %w", err)
	}
	l.truncated.Add(int64(removed))
	return removed > 0, nil
}

// saveFigures records the pending figures, which include every entry up
// to ts.
func (l *Log) saveFigures(tx *kv.Tx, ts repl.Timestamp) error {
	m, err := tx.Tree(metaTree)
	if err != nil {
		return fmt.Errorf("oplog: %w", err)
	}
	var v [24]byte
	binary.BigEndian.PutUint64(v[:], uint64(l.pend.bytes))
	binary.BigEndian.PutUint64(v[8:], uint64(l.pend.count))
	binary.BigEndian.PutUint64(v[16:], uint64(ts))
	if err := m.Put([]byte(metaKey), v[:]); err != nil {
		return fmt.Errorf("oplog: saving its figures: %w", err)
	}
	l.pend.sinceMeta = 0
	return nil
}

// term returns the election term of the entry being written.
func (l *Log) term() int64 {
	if l.Term == nil {
		return 1
	}
	return l.Term()
}

// TreeName returns the name of the kv tree that holds the entries (keyed
// by ts, 8 bytes big-endian): readers seek it and watch it.
func (l *Log) TreeName() string { return l.tree }

// Durable returns the ts up to which every entry is durable (journaled),
// and a channel closed when that point next advances: every append marks
// its kv commit with its ts (kv.Tx.SetMark), and kv reports the largest
// mark its journal flushes have made durable; the entries found at Open
// are durable. On a one-member replica set this is the majority commit
// point, which change streams deliver up to.
func (l *Log) Durable() (repl.Timestamp, <-chan struct{}) {
	ch := l.db.DurableChanged() // before the mark: an advance after closes it
	return max(repl.Timestamp(l.db.DurableMark()), l.opened), ch
}
