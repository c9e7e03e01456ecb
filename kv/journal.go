package kv

// Journal and group commit.
//
// The journal is two preallocated files, "journal" and "journal.1"
// (written with zeros and fsync'd once when the database is created), used
// in turn: each checkpoint ends the current file with a switch record and
// moves new commits to offset 0 of the other (switchFiles), which the
// previous checkpoint freed. Because a file's size never changes while
// commits use it and its blocks are already allocated, a commit's
// fdatasync flushes only data: no file-size or extent metadata
// (SERVER-9754). Compact shrinks both files, and a later checkpoint grows
// the free one back (db.resizeJournalFile) outside any commit.
//
// A record is
//
//	0  crc32c over (salt, bytes [4, 24+len))
//	4  payload length u32: bits 0-29 the stored length, bits 30-31 the codec
//	   (0 none, 1 snappy, 2 zstd; compress.go)
//	8  sequence number u64 (consecutive across the whole life of the DB)
//	16 txid u64
//	24 payload (the transaction's encoded ops, see ops.go, compressed)
//
// Each checkpoint picks a new random salt and records it, with the sequence
// number of the next record, in its meta page. Recovery reads records from
// offset 0 while the CRC (salted) is valid and the sequence numbers are
// consecutive, starting at the meta's; the first failure is the torn tail
// (or a stale record of an earlier cycle) and ends the replay.
//
// Appends happen outside the writer lock. Under the lock a committer only
// reserves its record's place in commit order (a sequence number and an
// upper bound of its size), publishes its snapshot and releases the lock.
// Then, in parallel with other committers and with the next transaction,
// it compresses its payload (Options.JournalCompression) and builds the
// record; it waits for its turn (every earlier sequence number written),
// pwrites at the journal's end and goes on. Checkpoints drain the pending
// records before they capture the journal position, and a Sync commit or
// flush first waits for records reserved before it.
//
// Group commit: after writing, a Sync committer waits until the journal is
// durable up to its record's end (its LSN). The first waiter that finds no
// fdatasync in progress becomes the leader: it notes the highest appended
// LSN, fdatasyncs outside every lock and wakes all waiters covered by it.
// Committers arriving meanwhile queue behind the
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
	"time"

	"github.com/klauspost/compress/s2"

	"github.com/cairndb/cairn/kv/vfs"
)

const (
	journalFileName   = "journal"
	journalHeaderSize = 24
	// The top two bits of a record's length field hold its codec
	// (compress.go); payloads are limited to 1 GiB.
	recordLenMask  = 1<<30 - 1
	recordCodecBit = 30
)

type journal struct {
	// f is the file in use (index idx: 0 "journal", 1 "journal.1") and
	// size its size; other is the second file, free since the last
	// checkpoint. They change only in switchFiles and resizes, with the
	// writer lock and ckptMu held (f also under amu and mu).
	f         vfs.File
	size      int64
	idx       int
	other     vfs.File
	otherSize int64
	fileSize  atomic.Int64 // mirrors size for Stats
	codec     int          // codec new records are compressed with

	// Writer-lock protected: reservations, in commit order.
	next uint64 // sequence number of the next reservation
	salt uint64
	// reservedSeq mirrors next for waitWritten, which runs without the
	// writer lock.
	reservedSeq atomic.Uint64

	// amu orders the appends: a record is written only after every record
	// reserved before it (a committer waits for its turn on its channel in
	// turn; acond serves drain and waitWritten).
	amu      sync.Mutex
	acond    sync.Cond
	off      int64  // next write offset in the file
	seq      uint64 // sequence number of the next record to write
	reserved int64  // bytes reserved by records not yet written (upper bound)
	base     int64  // LSN of file offset 0 in the current cycle
	aerr     error  // sticky write error: later records are not written
	// turn holds, by sequence number, the channel of a committer waiting
	// for its record's turn to be written (writeCodec).
	turn map[uint64]chan struct{}

	mu          sync.Mutex
	cond        sync.Cond
	written     int64 // LSN after the last appended record
	writtenRecs uint64
	durable     int64
	durableRecs uint64
	syncing     bool
	err         error
	// writtenMark is the largest mark of the records written; marks
	// (durable.go) hold the largest mark made durable and the channel
	// its next advance closes.
	writtenMark uint64
	marks       durableMarks

	syncs        atomic.Uint64
	syncNanos    atomic.Uint64 // time spent in those fdatasyncs
	bytesWritten atomic.Uint64 // record bytes written (headers included)
	payloadBytes atomic.Uint64 // uncompressed payload bytes of those records
	groupMax     atomic.Uint64
	groupHis     [8]atomic.Uint64 // sizes 1, 2-3, 4-7, ..., >=128
}

func newJournal(f vfs.File, size int64, c Compression) *journal {
	j := &journal{f: f, size: size, idx: 0, codec: c.codec()}
	j.fileSize.Store(size)
	j.cond.L = &j.mu
	j.acond.L = &j.amu
	return j
}

// setSeq sets the sequence number of the next record (open, recovery).
func (j *journal) setSeq(seq uint64) {
	j.seq, j.next = seq, seq
	j.reservedSeq.Store(seq)
}

// fits reports whether a record with a payload of the given size fits
// beside everything written or reserved. Called with the writer lock held.
func (j *journal) fits(payload int) bool {
	j.amu.Lock()
	defer j.amu.Unlock()
	return payload <= recordLenMask && j.off+j.reserved+journalHeaderSize+int64(payload)+switchRecordSize <= j.size
}

// offset returns the write offset in the current cycle.
func (j *journal) offset() int64 {
	j.amu.Lock()
	defer j.amu.Unlock()
	return j.off
}

func recordCRC(salt uint64, rec []byte) uint32 {
	var s [8]byte
	binary.LittleEndian.PutUint64(s[:], salt)
	c := checksum(s[:])
	return crcUpdate(c, rec[4:])
}

// slot is a record's place in the journal, reserved in commit order.
type slot struct {
	seq, txid, salt uint64
	need            int64  // reserved bytes: header + uncompressed payload
	mark            uint64 // the commit's durability mark (durable.go)
}

// reserve takes the next place in the journal for transaction txid's
// record of (at most) payload bytes. Called with the writer lock held,
// after fits.
func (j *journal) reserve(txid uint64, payload int, mark uint64) slot {
	s := slot{seq: j.next, txid: txid, salt: j.salt, need: journalHeaderSize + int64(payload), mark: mark}
	j.next++
	j.reservedSeq.Store(j.next)
	j.amu.Lock()
	j.reserved += s.need
	j.amu.Unlock()
	return s
}

var recordPool = sync.Pool{New: func() any { return new([]byte) }}

// write compresses parts (the record's payload), waits until every record
// reserved before s is written, writes this one and returns the LSN of its
// end. It runs without the writer lock, so concurrent committers compress
// in parallel.
func (j *journal) write(s slot, parts ...[]byte) (int64, error) {
	codec := codecNone
	// The compressed payload is copied into the record (writeCodec): its
	// buffer is recycled, as the record's is.
	cp := compressPool.Get().(*[]byte)
	defer compressPool.Put(cp)
	dst := compressDst(*cp, j.codec, parts)
	if cap(dst) <= opsPoolMax {
		*cp = dst[:0]
	}
	if c, ok := compressParts(j.codec, parts, dst); ok {
		parts, codec = [][]byte{c}, j.codec
	}
	return j.writeCodec(s, codec, parts...)
}

var compressPool = sync.Pool{New: func() any { return new([]byte) }}

// compressDst returns buf, or a larger buffer when buf cannot hold the
// snappy encoding of parts (s2.EncodeSnappy allocates one otherwise).
func compressDst(buf []byte, codec int, parts [][]byte) []byte {
	if codec != codecSnappy {
		return buf
	}
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	if m := s2.MaxEncodedLen(n); m > cap(buf) && m > 0 {
		return make([]byte, 0, m)
	}
	return buf
}

// writeRaw writes a record whose payload is stored as is.
func (j *journal) writeRaw(s slot, parts ...[]byte) (int64, error) {
	return j.writeCodec(s, codecNone, parts...)
}

func (j *journal) writeCodec(s slot, codec int, parts ...[]byte) (int64, error) {
	plen := 0
	for _, p := range parts {
		plen += len(p)
	}
	bp := recordPool.Get().(*[]byte)
	defer recordPool.Put(bp)
	need := journalHeaderSize + plen
	if cap(*bp) < need {
		*bp = make([]byte, need)
	}
	rec := (*bp)[:need]
	binary.LittleEndian.PutUint32(rec[4:], uint32(plen)|uint32(codec)<<recordCodecBit)
	binary.LittleEndian.PutUint64(rec[8:], s.seq)
	binary.LittleEndian.PutUint64(rec[16:], s.txid)
	off := journalHeaderSize
	for _, p := range parts {
		off += copy(rec[off:], p)
	}
	binary.LittleEndian.PutUint32(rec[0:], recordCRC(s.salt, rec))

	j.amu.Lock()
	for j.seq != s.seq {
		// Wait for this record's turn on a channel of its own, so that an
		// append wakes only the next record's committer. (A broadcast to
		// every committer queued behind it made each append cost as much
		// as the queue was long: with 1,000 connections writing, commits
		// spent most of their time waking each other.)
		ch := make(chan struct{})
		if j.turn == nil {
			j.turn = map[uint64]chan struct{}{}
		}
		j.turn[s.seq] = ch
		j.amu.Unlock()
		<-ch
		j.amu.Lock()
	}
	defer func() {
		if ch, ok := j.turn[j.seq]; ok {
			delete(j.turn, j.seq)
			close(ch)
		}
		j.acond.Broadcast() // drain and waitWritten
		j.amu.Unlock()
	}()
	j.seq++
	j.reserved -= s.need
	if j.aerr != nil {
		return 0, j.aerr
	}
	if n, err := j.f.WriteAt(rec, j.off); err != nil {
		j.aerr = fmt.Errorf("kv: journal write at %d (%d of %d bytes): %w", j.off, n, need, err)
		return 0, j.aerr
	}
	j.off += int64(need)
	j.bytesWritten.Add(uint64(need))
	j.payloadBytes.Add(uint64(s.need - journalHeaderSize))
	lsn := j.base + j.off
	j.mu.Lock()
	j.written = lsn
	j.writtenRecs++
	j.writtenMark = max(j.writtenMark, s.mark)
	j.mu.Unlock()
	return lsn, nil
}

// drain waits until every reserved record is written and returns the
// sticky write error, if any. Called with the writer lock held (so no new
// reservation can appear), before a checkpoint or a resize.
func (j *journal) drain() error {
	j.amu.Lock()
	defer j.amu.Unlock()
	for j.seq != j.next {
		j.acond.Wait()
	}
	return j.aerr
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
		// Records reserved but still being compressed or written by other
		// committers join this flush: waiting for them costs microseconds,
		// a flush of their own would cost a whole fdatasync.
		j.mu.Unlock()
		_ = j.waitWritten() // a write error surfaces at its own committer
		j.mu.Lock()
		target, recs, mark, f := j.written, j.writtenRecs, j.writtenMark, j.f
		j.mu.Unlock()
		t0 := time.Now()
		err := f.Datasync()
		j.syncNanos.Add(uint64(time.Since(t0)))
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
		j.marks.advance(mark)
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
	if err := j.waitWritten(); err != nil {
		return err
	}
	j.mu.Lock()
	lsn := j.written
	j.mu.Unlock()
	return j.waitDurable(lsn)
}

// waitWritten waits until every record reserved so far is written. It may
// run without the writer lock: it waits for the records reserved when it
// was called.
func (j *journal) waitWritten() error {
	j.amu.Lock()
	defer j.amu.Unlock()
	target := j.reservedSeq.Load()
	for j.seq < target && j.aerr == nil {
		j.acond.Wait()
	}
	return j.aerr
}

// Switching files. A checkpoint must not make commits wait while it
// fdatasyncs the data file, yet the journal records committed meanwhile
// must survive a crash that comes before the checkpoint's meta is durable.
// So at its start (writer lock held, pending records drained) a checkpoint
// ends the current file with a switch record naming the other file and
// the salt of the records that will follow there, fdatasyncs it, and new
// commits continue at offset 0 of the other file. The new meta names the
// other file; an older meta still leads recovery through the switch
// record. The file left behind is free once the new meta is durable, and
// is reused by the checkpoint after next.

// switchRecordSize is the size of a switch record: header, salt of the
// next file's records, index of the next file.
const switchRecordSize = journalHeaderSize + 9

// switchFiles moves the journal to the other file with a new salt, if the
// current file holds records of this cycle, and returns whether it did.
// Called with the writer lock and ckptMu held, after drain.
func (j *journal) switchFiles(salt uint64) (bool, error) {
	if j.off == 0 {
		return false, nil
	}
	if j.other == nil {
		return false, errors.New("kv: journal: no second file to switch to")
	}
	var p [9]byte
	binary.LittleEndian.PutUint64(p[:], salt)
	p[8] = byte(j.idx ^ 1)
	s := slot{seq: j.next, txid: 0, salt: j.salt, need: switchRecordSize}
	j.next++
	j.reservedSeq.Store(j.next)
	j.amu.Lock()
	j.reserved += s.need
	j.amu.Unlock()
	if _, err := j.writeRaw(s, p[:]); err != nil {
		return false, err
	}
	if err := j.flush(); err != nil {
		return false, err
	}
	j.amu.Lock()
	j.mu.Lock()
	j.f, j.other = j.other, j.f
	j.size, j.otherSize = j.otherSize, j.size
	j.idx ^= 1
	j.fileSize.Store(j.size)
	j.off = 0
	j.salt = salt
	j.base = j.written
	j.durable, j.durableRecs = j.written, j.writtenRecs
	j.marks.advance(j.writtenMark)
	j.cond.Broadcast()
	j.mu.Unlock()
	j.amu.Unlock()
	return true, nil
}

// journalRecord is one record found by scanJournal.
type journalRecord struct {
	seq, txid uint64
	codec     int
	payload   []byte // as stored (compressed if codec != codecNone)
}

// scanJournal returns the valid records of data (the whole journal file)
// for salt, starting at sequence number seq, and the offset after the last.
func scanJournal(data []byte, salt, seq uint64) ([]journalRecord, int64) {
	var recs []journalRecord
	off := 0
	for off+journalHeaderSize <= len(data) {
		h := data[off:]
		lf := binary.LittleEndian.Uint32(h[4:])
		l := int(lf & recordLenMask)
		if l > len(data)-off-journalHeaderSize {
			break
		}
		rec := h[:journalHeaderSize+l]
		if binary.LittleEndian.Uint64(rec[8:]) != seq || binary.LittleEndian.Uint32(rec[0:]) != recordCRC(salt, rec) {
			break
		}
		recs = append(recs, journalRecord{seq: seq, txid: binary.LittleEndian.Uint64(rec[16:]), codec: int(lf >> recordCodecBit), payload: rec[journalHeaderSize:]})
		seq++
		off += len(rec)
	}
	return recs, int64(off)
}

// close closes both files.
func (j *journal) close() error {
	err := j.f.Close()
	if j.other != nil {
		if cerr := j.other.Close(); err == nil {
			err = cerr
		}
	}
	return err
}
