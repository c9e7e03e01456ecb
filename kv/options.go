package kv

import (
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/cairndb/cairn/kv/vfs"
)

// Durability says when a commit is durable.
type Durability int

const (
	// Sync commits are durable before Commit returns; concurrent
	// committers share one fdatasync (group commit).
	Sync Durability = iota
	// Lazy commits return at once and become durable within
	// Options.CommitInterval, or at the next Sync commit, whichever comes
	// first.
	Lazy
	// NoSync commits are never fdatasync'd except by a checkpoint, Sync or
	// Close (scratch data).
	NoSync
)

// String returns "sync", "lazy" or "nosync".
func (d Durability) String() string {
	switch d {
	case Sync:
		return "sync"
	case Lazy:
		return "lazy"
	case NoSync:
		return "nosync"
	}
	return fmt.Sprintf("Durability(%d)", int(d))
}

// Options configure a DB. A nil *Options means all defaults.
type Options struct {
	// FS is the file system; default vfs.OS{}.
	FS vfs.FS
	// PageSize is the page size of a new database, a power of two between
	// 4096 and 65536; default 8192. An existing database keeps its own.
	PageSize int
	// Durability is the default durability of Commit and Update; default
	// Sync.
	Durability Durability
	// CommitInterval bounds how long a Lazy commit stays non-durable;
	// default 100ms, clamped to 1ms..500ms.
	CommitInterval time.Duration
	// JournalSize is the size of the preallocated, recycled journal of a
	// new database; default 64 MiB, minimum 64 KiB.
	JournalSize int64
	// JournalCompression compresses journal records, in the committing
	// goroutines (in parallel), before they are written; default Snappy.
	// It can change between opens: every record says how it is stored.
	JournalCompression Compression
	// PageCompression compresses, at checkpoints, leaves larger than a page
	// (those holding large values) when that saves at least one page;
	// default Snappy. Every extent says how it is stored.
	PageCompression Compression
	// CheckpointInterval is the time between background checkpoints;
	// 0 means the default 60s, a negative value disables timed checkpoints
	// (manual and journal-size-triggered checkpoints still happen).
	CheckpointInterval time.Duration
	// CheckpointBytes is the amount of journal that triggers a background
	// checkpoint; default half the journal size.
	CheckpointBytes int64
	// FillFactor is the default page fill factor of BulkLoad; default 1.0,
	// clamped to 0.5..1.0.
	FillFactor float64
	// CacheSize is the budget, in bytes, of clean leaves kept in memory;
	// default 1 GiB. Beyond it leaves not used recently are evicted
	// (clock algorithm, cache.go) and read again from the data file when
	// needed. Branches and leaves changed since the last checkpoint are
	// always resident and not counted (docs/architecture.md, known
	// limitations).
	CacheSize int64
	// ConcurrentTxMemory bounds the private memory of one concurrent
	// transaction (DB.BeginConcurrent: its node copies, key and value
	// copies and operation log); a write beyond it fails with an error
	// wrapping ErrTxTooLarge. 0 means the default, a quarter of CacheSize
	// but at least 64 MiB; a negative value means no limit.
	ConcurrentTxMemory int64
	// Logger receives diagnostics; default a logger that discards.
	Logger *slog.Logger
	// ReadOnly opens the database for reading only: the journal is
	// replayed in memory and nothing is written.
	ReadOnly bool

	// testing holds hooks for kv's own tests (testing.go).
	testing *testingKnobs
}

const (
	defaultPageSize       = 8192
	defaultJournalSize    = 64 << 20
	minJournalSize        = 64 << 10
	defaultCommitInterval = 100 * time.Millisecond
	defaultCkptInterval   = 60 * time.Second
	defaultCacheSize      = 1 << 30
)

func (o *Options) withDefaults() (Options, error) {
	var r Options
	if o != nil {
		r = *o
	}
	if r.FS == nil {
		r.FS = vfs.OS{}
	}
	if r.PageSize == 0 {
		r.PageSize = defaultPageSize
	}
	if r.PageSize < 4096 || r.PageSize > 65536 || r.PageSize&(r.PageSize-1) != 0 {
		return r, fmt.Errorf("kv: invalid page size %d: want a power of two in 4096..65536", r.PageSize)
	}
	if r.Durability < Sync || r.Durability > NoSync {
		return r, fmt.Errorf("kv: invalid durability %d", r.Durability)
	}
	if r.CommitInterval == 0 {
		r.CommitInterval = defaultCommitInterval
	}
	r.CommitInterval = min(max(r.CommitInterval, time.Millisecond), 500*time.Millisecond)
	if r.JournalSize == 0 {
		r.JournalSize = defaultJournalSize
	}
	r.JournalSize = max(r.JournalSize, minJournalSize)
	if r.PageCompression < DefaultCompression || r.PageCompression > Zstd {
		return r, fmt.Errorf("kv: invalid page compression %d", r.PageCompression)
	}
	if r.JournalCompression < DefaultCompression || r.JournalCompression > Zstd {
		return r, fmt.Errorf("kv: invalid journal compression %d", r.JournalCompression)
	}
	if r.CheckpointInterval == 0 {
		r.CheckpointInterval = defaultCkptInterval
	}
	if r.FillFactor == 0 {
		r.FillFactor = 1.0
	}
	r.FillFactor = min(max(r.FillFactor, 0.5), 1.0)
	if r.CacheSize == 0 {
		r.CacheSize = defaultCacheSize
	}
	if r.ConcurrentTxMemory == 0 {
		r.ConcurrentTxMemory = max(r.CacheSize/4, 64<<20)
	}
	if r.Logger == nil {
		r.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	knobs := testingKnobs{}
	if r.testing != nil {
		knobs = *r.testing
	}
	r.testing = &knobs
	return r, nil
}
