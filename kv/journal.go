package kv

// Journal and group commit.
//
// The journal is one preallocated file (written with zeros and fsync'd once
// when the database is created) that is reused from offset 0 after every
// checkpoint. Because its size never changes and its blocks are already
// allocated, a commit's fdatasync flushes only data: no file-size or
// extent metadata (SERVER-9754).
//
// A record is
//
//	0  crc32c over (salt, bytes [4, 24+len))
//	4  payload length u32
//	8  sequence number u64 (consecutive across the whole life of the DB)
//	16 txid u64
//	24 payload (the transaction's encoded ops, see ops.go)
//
// Each checkpoint picks a new random salt and records it, with the sequence
// number of the next record, in its meta page. Recovery reads records from
// offset 0 while the CRC (salted) is valid and the sequence numbers are
// consecutive, starting at the meta's; the first failure is the torn tail
// (or a stale record of an earlier cycle) and ends the replay.
//
// Group commit: the writer appends its record with pwrite while holding the
// writer lock, publishes the new snapshot, releases the writer lock and then
// waits until the journal is durable up to its record's end (its LSN). The
// first waiter that finds no fdatasync in progress becomes the leader: it
// notes the highest appended LSN, fdatasyncs outside every lock and wakes
// all waiters covered by it. Committers arriving meanwhile queue behind the
// in-flight sync and are covered together by the next one, so N concurrent
// committers share a handful of fsyncs. If fdatasync fails, the error is
// sticky: every waiter not yet covered gets it, and the DB enters the
// failed state (ErrDatabaseFailed) until reopened — the engine never
// pretends a commit whose flush failed happened durably.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/cairndb/cairn/kv/vfs"
)

const (
	journalFileName   = "journal"
	journalHeaderSize = 24
)

var errJournalFull = errors.New("kv: journal full")

type journal struct {
	f        vfs.File
	size     int64 // writer-lock protected; fileSize mirrors it for Stats
	fileSize atomic.Int64

	// Writer-lock protected.
	off     int64  // next write offset in the file
	seq     uint64 // sequence number of the next record
	salt    uint64
	base    int64 // LSN of file offset 0 in the current cycle
	scratch []byte

	mu          sync.Mutex
	cond        sync.Cond
	written     int64 // LSN after the last appended record
	writtenRecs uint64
	durable     int64
	durableRecs uint64
	syncing     bool
	err         error

	syncs    atomic.Uint64
	groupMax atomic.Uint64
	groupHis [8]atomic.Uint64 // sizes 1, 2-3, 4-7, ..., >=128
}

func newJournal(f vfs.File, size int64) *journal {
	j := &journal{f: f, size: size}
	j.fileSize.Store(size)
	j.cond.L = &j.mu
	return j
}

func (j *journal) fits(payload int) bool {
	return j.off+journalHeaderSize+int64(payload) <= j.size
}

func recordCRC(salt uint64, rec []byte) uint32 {
	var s [8]byte
	binary.LittleEndian.PutUint64(s[:], salt)
	c := checksum(s[:])
	return crcUpdate(c, rec[4:])
}

// append writes one record and returns the LSN of its end. Called with the
// writer lock held.
func (j *journal) append(txid uint64, parts ...[]byte) (int64, error) {
	plen := 0
	for _, p := range parts {
		plen += len(p)
	}
	need := journalHeaderSize + plen
	if j.off+int64(need) > j.size {
		return 0, errJournalFull
	}
	if cap(j.scratch) < need {
		j.scratch = make([]byte, need, need+need/2)
	}
	rec := j.scratch[:need]
	binary.LittleEndian.PutUint32(rec[4:], uint32(plen))
	binary.LittleEndian.PutUint64(rec[8:], j.seq)
	binary.LittleEndian.PutUint64(rec[16:], txid)
	off := journalHeaderSize
	for _, p := range parts {
		off += copy(rec[off:], p)
	}
	binary.LittleEndian.PutUint32(rec[0:], recordCRC(j.salt, rec))
	if n, err := j.f.WriteAt(rec, j.off); err != nil {
		return 0, fmt.Errorf("kv: journal write at %d (%d of %d bytes): %w", j.off, n, need, err)
	}
	j.off += int64(need)
	j.seq++
	lsn := j.base + j.off
	j.mu.Lock()
	j.written = lsn
	j.writtenRecs++
	j.mu.Unlock()
	return lsn, nil
}

// waitDurable returns once the journal is durable up to lsn, leading an
// fdatasync if none is in flight.
func (j *journal) waitDurable(lsn int64) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	for j.durable < lsn {
		if j.err != nil {
			return j.err
		}
		if j.syncing {
			j.cond.Wait()
			continue
		}
		j.syncing = true
		target, recs := j.written, j.writtenRecs
		j.mu.Unlock()
		err := j.f.Datasync()
		j.mu.Lock()
		j.syncing = false
		j.syncs.Add(1)
		if err != nil {
			j.err = fmt.Errorf("kv: journal fdatasync: %w", err)
			j.cond.Broadcast()
			return j.err
		}
		if target > j.durable {
			j.noteGroup(recs - j.durableRecs)
			j.durable, j.durableRecs = target, recs
		}
		j.cond.Broadcast()
	}
	return nil
}

func (j *journal) noteGroup(n uint64) {
	if n == 0 {
		return
	}
	b := 0
	for x := n; x > 1 && b < len(j.groupHis)-1; x >>= 1 {
		b++
	}
	j.groupHis[b].Add(1)
	for {
		m := j.groupMax.Load()
		if n <= m || j.groupMax.CompareAndSwap(m, n) {
			break
		}
	}
}

// flush makes everything appended so far durable.
func (j *journal) flush() error {
	j.mu.Lock()
	lsn := j.written
	j.mu.Unlock()
	return j.waitDurable(lsn)
}

func (j *journal) pendingBytes() int64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.written - j.durable
}

// recycle starts a new cycle after a checkpoint made every appended record
// redundant. Called with the writer lock held.
func (j *journal) recycle(salt uint64) {
	j.off = 0
	j.salt = salt
	j.mu.Lock()
	j.base = j.written
	if j.written > j.durable {
		j.noteGroup(j.writtenRecs - j.durableRecs)
	}
	j.durable, j.durableRecs = j.written, j.writtenRecs
	j.cond.Broadcast()
	j.mu.Unlock()
}

// journalRecord is one record found by scanJournal.
type journalRecord struct {
	seq, txid uint64
	payload   []byte
}

// scanJournal returns the valid records of data (the whole journal file)
// for salt, starting at sequence number seq, and the offset after the last.
func scanJournal(data []byte, salt, seq uint64) ([]journalRecord, int64) {
	var recs []journalRecord
	off := 0
	for off+journalHeaderSize <= len(data) {
		h := data[off:]
		l := int(binary.LittleEndian.Uint32(h[4:]))
		if l > len(data)-off-journalHeaderSize {
			break
		}
		rec := h[:journalHeaderSize+l]
		if binary.LittleEndian.Uint64(rec[8:]) != seq || binary.LittleEndian.Uint32(rec[0:]) != recordCRC(salt, rec) {
			break
		}
		recs = append(recs, journalRecord{seq: seq, txid: binary.LittleEndian.Uint64(rec[16:]), payload: rec[journalHeaderSize:]})
		seq++
		off += len(rec)
	}
	return recs, int64(off)
}
