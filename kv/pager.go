package kv

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/cairndb/cairn/kv/vfs"
)

const dataFileName = "data"

// pager reads and writes page extents of the data file.
type pager struct {
	f        vfs.File
	pageSize int
}

// read returns the extent pgid..pgid+npages. A short file is corruption.
func (p *pager) read(pgid uint64, npages uint32) ([]byte, error) {
	if pgid < 2 || npages == 0 || npages > 1<<20 {
		return nil, corruptf(dataFileName, pgid, "invalid extent %d+%d", pgid, npages)
	}
	buf := make([]byte, int(npages)*p.pageSize)
	n, err := p.f.ReadAt(buf, int64(pgid)*int64(p.pageSize))
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, corruptf(dataFileName, pgid, "extent of %d pages beyond end of file (read %d bytes)", npages, n)
		}
		return nil, fmt.Errorf("kv: read page %d: %w", pgid, err)
	}
	return buf, nil
}

// allocator hands out page extents for a checkpoint. free holds reusable
// page numbers sorted descending (so the lowest is popped from the end);
// end is the first page beyond the used part of the file.
type allocator struct {
	free []uint64
	end  uint64
}

func (a *allocator) alloc(n uint32) uint64 {
	if n == 1 && len(a.free) > 0 {
		p := a.free[len(a.free)-1]
		a.free = a.free[:len(a.free)-1]
		return p
	}
	if n > 1 && len(a.free) >= int(n) {
		// Look for n consecutive pages, lowest first.
		run := 1
		for i := len(a.free) - 2; i >= 0; i-- {
			if a.free[i] == a.free[i+1]+1 {
				run++
			} else {
				run = 1
			}
			if run == int(n) {
				p := a.free[i+int(n)-1]
				a.free = slices.Delete(a.free, i, i+int(n))
				return p
			}
		}
	}
	p := a.end
	a.end += uint64(n)
	return p
}

// release makes extents reusable.
func (a *allocator) release(exts []extent) {
	if len(exts) == 0 {
		return
	}
	for _, e := range exts {
		for i := uint64(0); i < uint64(e.npages); i++ {
			a.free = append(a.free, e.pgid+i)
		}
	}
	slices.SortFunc(a.free, func(x, y uint64) int {
		switch {
		case x > y:
			return -1
		case x < y:
			return 1
		}
		return 0
	})
	a.free = slices.Compact(a.free)
}

// trimTail lowers end past free pages at the end of the file.
func (a *allocator) trimTail() {
	for len(a.free) > 0 && a.free[0] == a.end-1 {
		a.free = a.free[1:]
		a.end--
	}
}

// pageWriter batches extent writes of a checkpoint, coalescing extents that
// are adjacent both in the file and in its buffer into one write.
type pageWriter struct {
	p      *pager
	arena  []byte
	used   int
	runs   []writeRun
	err    error
	rehome []rehome // node swaps to perform once the pages are written
	// paced: flush starts no writeback; the ranges written are kept in
	// written for pacedWriteback, which the checkpoint runs after it has
	// released the writer lock.
	paced   bool
	written []writeRun // pgid and length (to) of each range
}

type writeRun struct {
	pgid     uint64
	from, to int // arena range
}

const writerArena = 8 << 20

func newPageWriter(p *pager) *pageWriter {
	return &pageWriter{p: p}
}

// buffer returns a zeroed buffer for an extent of npages at pgid, carved
// from the writer's current slab. Nothing may keep a reference to it after
// the checkpoint (writeNode re-parses nodes from copies).
func (w *pageWriter) buffer(pgid uint64, npages uint32) []byte {
	need := int(npages) * w.p.pageSize
	if w.used+need > len(w.arena) {
		w.flush()
		w.arena = make([]byte, max(need, writerArena))
		w.used = 0
	}
	buf := w.arena[w.used : w.used+need : w.used+need]
	if n := len(w.runs); n > 0 && w.runs[n-1].to == w.used &&
		w.runs[n-1].pgid+uint64((w.runs[n-1].to-w.runs[n-1].from)/w.p.pageSize) == pgid {
		w.runs[n-1].to += need
	} else {
		w.runs = append(w.runs, writeRun{pgid: pgid, from: w.used, to: w.used + need})
	}
	w.used += need
	return buf
}

func (w *pageWriter) flush() {
	for _, r := range w.runs {
		if w.err != nil {
			break
		}
		off := int64(r.pgid) * int64(w.p.pageSize)
		if _, err := w.p.f.WriteAt(w.arena[r.from:r.to], off); err != nil {
			w.err = fmt.Errorf("kv: write pages %d..: %w", r.pgid, err)
			break
		}
		if w.paced {
			w.written = append(w.written, writeRun{pgid: r.pgid, to: r.to - r.from})
			continue
		}
		// Start the writeback now (a hint; errors are reported by the
		// checkpoint's fdatasync).
		if ws, ok := w.p.f.(vfs.WritebackStarter); ok {
			_ = ws.StartWriteback(off, int64(r.to-r.from))
		}
	}
	w.runs = w.runs[:0]
}

// pacedChunk is how much checkpoint data pacedWriteback lets the device
// queue hold at a time.
const pacedChunk = 1 << 20

// pacedWriteback writes the ranges flush wrote back to the device a chunk
// at a time, each waited for before the next starts, so that a journal
// fdatasync issued meanwhile waits behind at most one chunk instead of the
// whole checkpoint. Errors are left to the checkpoint's fdatasync.
func (w *pageWriter) pacedWriteback() {
	ws, ok := w.p.f.(vfs.WritebackStarter)
	if !ok {
		return
	}
	for _, r := range w.written {
		off := int64(r.pgid) * int64(w.p.pageSize)
		for n := int64(r.to); n > 0; {
			c := min(n, pacedChunk)
			_ = ws.WaitWriteback(off, c)
			off, n = off+c, n-c
		}
	}
	w.written = nil
}

// ---- meta pages ----
//
// Pages 0 and 1 hold the two alternating meta records; checkpoint N writes
// slot N%2. A meta record (first 128 bytes of its page):
//
//	0  crc32c of [4, 128)
//	4  page type (1)
//	8  magic "CAIRNKV1"
//	16 format version u32
//	20 page size u32
//	24 checkpoint id u64
//	32 txid of the last transaction included u64
//	40 sequence number of the first journal record after it u64
//	48 journal salt of the cycle after it u64
//	56 catalog extent pgid u64 (0 = no trees)
//	64 catalog extent npages u32
//	72 file size in pages u64
//	80 journal size u64
//	88 journal file of the cycle after it u32 (0 "journal", 1 "journal.1")

const (
	metaSize      = 128
	metaMagic     = "CAIRNKV1"
	formatVersion = 1
)

type meta struct {
	pageSize    int
	ckptID      uint64
	txid        uint64
	journalSeq  uint64
	journalSalt uint64
	catalog     extent
	filePages   uint64
	journalSize uint64
	journalFile int
}

func (m *meta) encode() []byte {
	b := make([]byte, metaSize)
	b[4] = pageTypeMeta
	copy(b[8:], metaMagic)
	binary.LittleEndian.PutUint32(b[16:], formatVersion)
	binary.LittleEndian.PutUint32(b[20:], uint32(m.pageSize))
	binary.LittleEndian.PutUint64(b[24:], m.ckptID)
	binary.LittleEndian.PutUint64(b[32:], m.txid)
	binary.LittleEndian.PutUint64(b[40:], m.journalSeq)
	binary.LittleEndian.PutUint64(b[48:], m.journalSalt)
	binary.LittleEndian.PutUint64(b[56:], m.catalog.pgid)
	binary.LittleEndian.PutUint32(b[64:], m.catalog.npages)
	binary.LittleEndian.PutUint64(b[72:], m.filePages)
	binary.LittleEndian.PutUint64(b[80:], m.journalSize)
	binary.LittleEndian.PutUint32(b[88:], uint32(m.journalFile))
	binary.LittleEndian.PutUint32(b[0:], checksum(b[4:]))
	return b
}

func decodeMeta(b []byte, slot uint64) (*meta, error) {
	if len(b) < metaSize {
		return nil, corruptf(dataFileName, slot, "meta page truncated")
	}
	b = b[:metaSize]
	if string(b[8:16]) != metaMagic {
		return nil, corruptf(dataFileName, slot, "meta page has no magic")
	}
	if checksum(b[4:]) != binary.LittleEndian.Uint32(b[0:]) {
		return nil, corruptf(dataFileName, slot, "meta page checksum mismatch")
	}
	if v := binary.LittleEndian.Uint32(b[16:]); v != formatVersion {
		return nil, corruptf(dataFileName, slot, "unsupported format version %d", v)
	}
	m := &meta{
		pageSize:    int(binary.LittleEndian.Uint32(b[20:])),
		ckptID:      binary.LittleEndian.Uint64(b[24:]),
		txid:        binary.LittleEndian.Uint64(b[32:]),
		journalSeq:  binary.LittleEndian.Uint64(b[40:]),
		journalSalt: binary.LittleEndian.Uint64(b[48:]),
		catalog:     extent{binary.LittleEndian.Uint64(b[56:]), binary.LittleEndian.Uint32(b[64:])},
		filePages:   binary.LittleEndian.Uint64(b[72:]),
		journalSize: binary.LittleEndian.Uint64(b[80:]),
		journalFile: int(binary.LittleEndian.Uint32(b[88:])),
	}
	if m.journalFile > 1 {
		return nil, corruptf(dataFileName, slot, "bad journal file index %d", m.journalFile)
	}
	if m.pageSize < 4096 || m.pageSize > 65536 || m.pageSize&(m.pageSize-1) != 0 {
		return nil, corruptf(dataFileName, slot, "bad page size %d", m.pageSize)
	}
	if m.ckptID%2 != slot {
		return nil, corruptf(dataFileName, slot, "checkpoint %d in wrong meta slot", m.ckptID)
	}
	if m.filePages < 2 || (m.catalog.pgid != 0 && (m.catalog.pgid < 2 || m.catalog.npages == 0 || m.catalog.pgid+uint64(m.catalog.npages) > m.filePages)) {
		return nil, corruptf(dataFileName, slot, "meta has bad extents (catalog %d+%d, file pages %d)", m.catalog.pgid, m.catalog.npages, m.filePages)
	}
	return m, nil
}

// readMetas returns the newest valid meta of the data file, and the errors
// of the invalid slots.
func readMetas(f vfs.File) (*meta, []error) {
	var errs []error
	var best *meta
	b := make([]byte, metaSize)
	if _, err := f.ReadAt(b, 0); err != nil {
		errs = append(errs, fmt.Errorf("kv: read meta 0: %w", err))
	} else if m, err := decodeMeta(b, 0); err != nil {
		// A new database writes only slot 1; slot 0 stays zero until
		// the first checkpoint, which is no corruption to report.
		if !allZero(b) {
			errs = append(errs, err)
		}
	} else {
		best = m
	}
	sizes := []int{4096, 8192, 16384, 32768, 65536}
	if best != nil {
		sizes = []int{best.pageSize}
	}
	var m1 *meta
	var err1 error
	for _, ps := range sizes {
		if _, err := f.ReadAt(b, int64(ps)); err != nil {
			err1 = fmt.Errorf("kv: read meta 1: %w", err)
			continue
		}
		m, err := decodeMeta(b, 1)
		if err == nil && m.pageSize == ps {
			m1, err1 = m, nil
			break
		}
		if err == nil {
			err = corruptf(dataFileName, 1, "meta page size %d does not match its offset", m.pageSize)
		}
		err1 = err
	}
	if err1 != nil {
		errs = append(errs, err1)
	}
	if m1 != nil && (best == nil || m1.ckptID > best.ckptID) {
		best = m1
	}
	return best, errs
}

// ---- catalog ----
//
// The catalog extent (page type 4) lists every tree: uvarint name length,
// name, root pgid u64, root npages u32, uvarint count, uvarint height.

func encodeCatalog(trees []*treeRoot, pageSize int, pgidFor func(uint32) uint64) ([]byte, extent) {
	var p []byte
	for _, tr := range trees {
		p = binary.AppendUvarint(p, uint64(len(tr.name)))
		p = append(p, tr.name...)
		rp, rn := tr.root.extent()
		p = binary.LittleEndian.AppendUint64(p, rp)
		p = binary.LittleEndian.AppendUint32(p, rn)
		p = binary.AppendUvarint(p, uint64(tr.count))
		p = binary.AppendUvarint(p, uint64(tr.height))
	}
	used := pageHeaderSize + len(p)
	np := pagesFor(used, pageSize)
	pg := pgidFor(np)
	buf := make([]byte, int(np)*pageSize)
	copy(buf[pageHeaderSize:], p)
	sealPage(buf, pageTypeCatalog, pg, np, len(trees), used)
	return buf, extent{pg, np}
}

func decodeCatalog(buf []byte, e extent) (map[string]*treeRoot, error) {
	typ, count, p, err := verifyPage(buf, e.pgid, e.npages, dataFileName)
	if err != nil {
		return nil, err
	}
	if typ != pageTypeCatalog {
		return nil, corruptf(dataFileName, e.pgid, "catalog extent has page type %d", typ)
	}
	bad := func(what string) error { return corruptf(dataFileName, e.pgid, "catalog: %s", what) }
	trees := make(map[string]*treeRoot, count)
	for i := 0; i < count; i++ {
		l, n := binary.Uvarint(p)
		if n <= 0 || l > uint64(len(p)-n) {
			return nil, bad("bad name")
		}
		name := string(p[n : n+int(l)])
		p = p[n+int(l):]
		if len(p) < 12 {
			return nil, bad("truncated root")
		}
		r := &childRef{pgid: binary.LittleEndian.Uint64(p), npages: binary.LittleEndian.Uint32(p[8:])}
		p = p[12:]
		cnt, n := binary.Uvarint(p)
		if n <= 0 {
			return nil, bad("bad count")
		}
		p = p[n:]
		h, n := binary.Uvarint(p)
		if n <= 0 || h < 1 || h > 64 {
			return nil, bad("bad height")
		}
		p = p[n:]
		if r.pgid < 2 || r.npages == 0 {
			return nil, bad(fmt.Sprintf("tree %q has bad root extent", name))
		}
		if _, dup := trees[name]; dup {
			return nil, bad(fmt.Sprintf("duplicate tree %q", name))
		}
		trees[name] = &treeRoot{name: name, root: r, count: int64(cnt), height: int(h)}
	}
	if len(p) != 0 {
		return nil, bad("trailing bytes")
	}
	return trees, nil
}

// allZero reports whether b holds only zero bytes.
func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
