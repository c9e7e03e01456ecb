package kv

import (
	"slices"
	"sync/atomic"
	"time"
)

type stats struct {
	commits          atomic.Uint64
	commitNanos      atomic.Uint64
	checkpoints      atomic.Uint64
	ckptPages        atomic.Uint64
	dataSyncs        atomic.Uint64
	lastCkpt         atomic.Int64
	lastCkptDur      atomic.Int64
	ckptNanos        atomic.Uint64
	compressedLeaves atomic.Uint64
	filePages        atomic.Uint64
	freePages        atomic.Uint64
	pendingPages     atomic.Uint64
	replayed         atomic.Uint64
	compactions      atomic.Uint64
}

// TreeStats describes one tree.
type TreeStats struct {
	Name   string // the tree's name
	Len    int64  // number of keys
	Height int    // levels (1 = a single leaf)
}

// Stats is a point-in-time report of the engine. Counters count since
// Open.
type Stats struct {
	PageSize         int    // page size of the data file
	DataFileBytes    int64  // size of the data file
	JournalFileBytes int64  // size of the journal file in use (there are two, used in turn)
	JournalBytes     int64  // journal bytes used in the current cycle
	FilePages        uint64 // pages in use by the data file (including free ones)
	FreePages        uint64 // pages reusable now
	PendingFreePages uint64 // freed pages still reachable by a reader or meta

	Commits            uint64        // write transactions committed with changes
	JournalFsyncs      uint64        // journal fdatasyncs
	JournalFsyncTime   time.Duration // time spent in them (group commit's leaders)
	JournalWritten     uint64        // journal bytes written (records, compressed, headers included)
	JournalPayload     uint64        // uncompressed payload bytes of those records
	JournalCompression Compression   // how new records are compressed
	DataFsyncs         uint64        // data file fdatasyncs (checkpoints)
	GroupCommitMax     uint64        // largest number of commits made durable by one fsync
	GroupCommitHist    [8]uint64     // fsyncs by group size: 1, 2-3, 4-7, ..., >=128
	AvgCommit          time.Duration // mean commit latency
	Checkpoints        uint64        // checkpoints completed
	CheckpointPages    uint64        // pages written by checkpoints
	CompressedLeaves   uint64        // leaves written compressed by checkpoints
	LastCheckpoint     time.Time     // when the last checkpoint ended (zero if none)
	LastCheckpointTook time.Duration // how long it took
	CheckpointTime     time.Duration // total time spent in checkpoints
	Compactions        uint64        // Compact calls completed
	ReplayedRecords    uint64        // journal records replayed at open
	CacheBudget        int64         // Options.CacheSize
	CacheBytes         int64         // clean leaves resident and accounted
	CacheLeaves        int           // number of such leaves
	CacheEvictions     uint64        // leaves evicted so far
	Failed             error         // non-nil once the DB refuses writes
	NoSpace            error         // non-nil while writes are refused for lack of disk space (ErrNoSpace)
	Trees              []TreeStats   // every tree of the current snapshot, by name
	Concurrent         ConcurrentStats
}

// Stats returns current statistics. It does not block.
func (db *DB) Stats() Stats {
	s := Stats{
		PageSize:           db.pageSize,
		JournalFileBytes:   db.journal.fileSize.Load(),
		FilePages:          db.st.filePages.Load(),
		FreePages:          db.st.freePages.Load(),
		PendingFreePages:   db.st.pendingPages.Load(),
		Commits:            db.st.commits.Load(),
		JournalFsyncs:      db.journal.syncs.Load(),
		JournalFsyncTime:   time.Duration(db.journal.syncNanos.Load()),
		JournalWritten:     db.journal.bytesWritten.Load(),
		JournalPayload:     db.journal.payloadBytes.Load(),
		JournalCompression: db.opts.JournalCompression,
		DataFsyncs:         db.st.dataSyncs.Load(),
		GroupCommitMax:     db.journal.groupMax.Load(),
		Checkpoints:        db.st.checkpoints.Load(),
		CheckpointPages:    db.st.ckptPages.Load(),
		CompressedLeaves:   db.st.compressedLeaves.Load(),
		Compactions:        db.st.compactions.Load(),
		ReplayedRecords:    db.st.replayed.Load(),
		CacheBudget:        db.opts.CacheSize,
		Failed:             db.failedErr(),
		NoSpace:            db.noSpaceErr(),
	}
	s.CacheBytes, s.CacheLeaves, s.CacheEvictions = db.cache.stats()
	s.Concurrent = db.cc.stats()
	if size, err := db.pager.f.Size(); err == nil {
		s.DataFileBytes = size
	}
	db.journal.mu.Lock()
	s.JournalBytes = db.journal.written - db.journal.base
	db.journal.mu.Unlock()
	for i := range s.GroupCommitHist {
		s.GroupCommitHist[i] = db.journal.groupHis[i].Load()
	}
	if s.Commits > 0 {
		s.AvgCommit = time.Duration(db.st.commitNanos.Load() / s.Commits)
	}
	if t := db.st.lastCkpt.Load(); t != 0 {
		s.LastCheckpoint = time.Unix(0, t)
		s.LastCheckpointTook = time.Duration(db.st.lastCkptDur.Load())
		s.CheckpointTime = time.Duration(db.st.ckptNanos.Load())
	}
	snap := db.current.Load()
	for name, tr := range snap.trees {
		s.Trees = append(s.Trees, TreeStats{Name: name, Len: tr.count, Height: tr.height})
	}
	slices.SortFunc(s.Trees, func(a, b TreeStats) int {
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	return s
}
