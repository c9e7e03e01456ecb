package kv

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
)

// journalOps accumulates the logical operations of a write transaction; the
// encoded form is the payload of its journal record. Replaying the ops in
// order on the previous state reproduces the transaction exactly.
//
// Encoding: a sequence of ops, each an op byte followed by fields:
//
//	opUse      name          (selects the tree of the following ops)
//	opCreate   name
//	opDrop     name
//	opPut      key, value
//	opDel      key
//	opDelRange flags, start, end (flags bit0: start is nil, bit1: end is nil)
//
// where name/key/value/start/end are uvarint length + bytes.
type journalOps struct {
	buf   []byte   // current chunk
	full  [][]byte // earlier chunks (large transactions), in order
	fullN int      // bytes in full
	cur   string   // tree selected by the last opUse
	limit int      // stop logging beyond this many bytes
	off   bool     // exceeded limit: the commit must go through a checkpoint
	// pooled holds the buffer taken from opsPool (take), given back
	// when the transaction ends (release).
	pooled *[]byte
}

// opsPool recycles the first chunk of the logs of ordinary write
// transactions: once a commit has written its journal record (or the
// transaction rolled back) nothing refers to its log any more (the tree
// holds the arena's copies of keys and values, the commit log for
// concurrent transactions copies what it keeps), so the next transaction
// appends into the same memory instead of growing a new buffer from
// nothing, which cost every commit about twice its payload in allocations
// (BenchmarkAppendCommit, TestOpsBufferReused).
var opsPool = sync.Pool{New: func() any { return new([]byte) }}

// opsPoolMax is the largest buffer given back to opsPool (and to
// compressPool): one chunk, so that batches of a few hundred KiB (1,000
// puts of 200 bytes) reuse their log and compression buffers instead of
// growing new ones, twice their size in allocations, every transaction.
const opsPoolMax = opsChunk

// take starts the log in a buffer from opsPool.
func (o *journalOps) take() {
	o.pooled = opsPool.Get().(*[]byte)
	o.buf = (*o.pooled)[:0]
}

// release gives the log's first chunk back to opsPool; the log is empty
// afterwards. Call it only once nothing refers to the log's bytes.
func (o *journalOps) release() {
	if o.pooled == nil {
		return
	}
	if len(o.full) == 0 && cap(o.buf) <= opsPoolMax {
		*o.pooled = o.buf[:0]
		opsPool.Put(o.pooled)
	}
	o.pooled, o.buf, o.full, o.fullN = nil, nil, nil, 0
}

const (
	opUse      = 1
	opCreate   = 2
	opDrop     = 3
	opPut      = 4
	opDel      = 5
	opDelRange = 6
)

func (o *journalOps) reset(limit int) {
	o.buf, o.cur, o.limit, o.off = o.buf[:0], "", limit, false
	o.full, o.fullN = nil, 0
}

const opsChunk = 1 << 20

// grow makes room for n more bytes. Beyond 1 MiB the log continues in a new
// chunk instead of growing (and copying) one huge slice.
func (o *journalOps) grow(n int) {
	if len(o.buf)+n > cap(o.buf) && cap(o.buf) >= opsChunk {
		o.full = append(o.full, o.buf)
		o.fullN += len(o.buf)
		o.buf = make([]byte, 0, max(opsChunk, n))
	}
}

// size returns the encoded size of the log.
func (o *journalOps) size() int { return o.fullN + len(o.buf) }

// parts returns the encoded log as consecutive chunks.
func (o *journalOps) parts() [][]byte { return append(o.full[:len(o.full):len(o.full)], o.buf) }

func (o *journalOps) bytesField(b []byte) {
	o.buf = binary.AppendUvarint(o.buf, uint64(len(b)))
	o.buf = append(o.buf, b...)
}

func (o *journalOps) room() bool {
	if o.off {
		return false
	}
	if o.size() > o.limit {
		o.off = true
		o.buf, o.full, o.fullN = nil, nil, 0
		return false
	}
	return true
}

func (o *journalOps) use(name string) {
	if o.cur != name {
		o.grow(len(name) + 16)
		o.buf = append(o.buf, opUse)
		o.bytesField([]byte(name))
		o.cur = name
	}
}

func (o *journalOps) create(name string) {
	if o.room() {
		o.grow(len(name) + 16)
		o.buf = append(o.buf, opCreate)
		o.bytesField([]byte(name))
		o.cur = ""
	}
}

func (o *journalOps) drop(name string) {
	if o.room() {
		o.grow(len(name) + 16)
		o.buf = append(o.buf, opDrop)
		o.bytesField([]byte(name))
		o.cur = ""
	}
}

func (o *journalOps) put(name string, k, v []byte) {
	if o.room() {
		o.use(name)
		o.grow(len(k) + len(v) + 24)
		o.buf = append(o.buf, opPut)
		o.bytesField(k)
		o.bytesField(v)
	}
}

// putRef logs a put like put and returns the logged copies of k and v, or
// nils when the log is off. The copies stay valid and unchanged as long as
// the log's chunks are not reused: only for the logs of concurrent
// transactions, which are never pooled (their puts keep these copies
// instead of copies of their own: later.go).
func (o *journalOps) putRef(name string, k, v []byte) ([]byte, []byte) {
	if !o.room() {
		return nil, nil
	}
	o.use(name)
	o.grow(len(k) + len(v) + 24)
	o.buf = append(o.buf, opPut)
	o.bytesField(k)
	kEnd := len(o.buf)
	o.bytesField(v)
	end := len(o.buf)
	return o.buf[kEnd-len(k) : kEnd : kEnd], o.buf[end-len(v) : end : end]
}

func (o *journalOps) del(name string, k []byte) {
	if o.room() {
		o.use(name)
		o.grow(len(k) + 16)
		o.buf = append(o.buf, opDel)
		o.bytesField(k)
	}
}

func (o *journalOps) delRange(name string, start, end []byte) {
	if o.room() {
		o.use(name)
		var flags byte
		if start == nil {
			flags |= 1
		}
		if end == nil {
			flags |= 2
		}
		o.grow(len(start) + len(end) + 32)
		o.buf = append(o.buf, opDelRange, flags)
		o.bytesField(start)
		o.bytesField(end)
	}
}

var errBadOps = errors.New("malformed journal record payload")

// walkOps calls fn with every operation of an encoded op list given in
// consecutive chunks (journalOps.parts), with the tree it applies to:
// opUse, opCreate and opDrop name the tree; opPut passes key and value,
// opDel the key, opDelRange start and end (nil when unbounded). An op lies
// within one chunk; the tree selected by opUse carries over.
func walkOps(parts [][]byte, fn func(op byte, tree string, k, v []byte) error) error {
	var cur string
	haveCur := false
	for _, p := range parts {
		field := func() ([]byte, error) {
			l, n := binary.Uvarint(p)
			if n <= 0 || l > uint64(len(p)-n) {
				return nil, errBadOps
			}
			b := p[n : n+int(l)]
			p = p[n+int(l):]
			return b, nil
		}
		for len(p) > 0 {
			op := p[0]
			p = p[1:]
			var err error
			switch op {
			case opUse, opCreate, opDrop:
				var name []byte
				if name, err = field(); err != nil {
					return err
				}
				if op == opUse {
					cur, haveCur = string(name), true
				}
				err = fn(op, string(name), nil, nil)
			case opPut, opDel:
				if !haveCur {
					return errBadOps
				}
				var k, v []byte
				if k, err = field(); err != nil {
					return err
				}
				if op == opPut {
					if v, err = field(); err != nil {
						return err
					}
				}
				err = fn(op, cur, k, v)
			case opDelRange:
				if !haveCur || len(p) < 1 {
					return errBadOps
				}
				flags := p[0]
				p = p[1:]
				var s, e []byte
				if s, err = field(); err != nil {
					return err
				}
				if e, err = field(); err != nil {
					return err
				}
				if flags&1 != 0 {
					s = nil
				}
				if flags&2 != 0 {
					e = nil
				}
				err = fn(op, cur, s, e)
			default:
				return errBadOps
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// replayOps applies an encoded op list to write transaction tx.
func replayOps(tx *Tx, p []byte) error { return replayParts(tx, [][]byte{p}, false) }

// replayParts applies an encoded op list, in consecutive chunks, to write
// transaction tx. With own, the puts keep the keys and values where they
// lie in parts instead of copying them into tx's arena: only for chunks
// that nothing will change or reuse (a concurrent transaction's log, which
// is never pooled, replayed by its commit).
func replayParts(tx *Tx, parts [][]byte, own bool) error {
	var cur *Tree
	return walkOps(parts, func(op byte, name string, k, v []byte) error {
		var err error
		switch op {
		case opUse:
			cur, err = tx.Tree(name)
		case opCreate:
			_, err = tx.CreateTree(name)
		case opDrop:
			err = tx.DropTree(name)
		case opPut:
			err = cur.put(k, v, !own)
		case opDel:
			_, err = cur.Delete(k)
		case opDelRange:
			_, err = cur.DeleteRange(k, v)
		}
		if err != nil {
			return fmt.Errorf("replay: %w", err)
		}
		return nil
	})
}
