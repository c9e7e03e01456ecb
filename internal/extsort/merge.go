package extsort

import (
	"bytes"
	"encoding/binary"
)

// Source is one sorted stream of records a Merger merges.
type Source interface {
	// Head is the current record (ok false at the end); the slices are
	// valid until Advance unless the source says otherwise.
	Head() (key, val []byte, ok bool)
	// Advance moves to the next record.
	Advance() error
}

// Merger is a k-way merge of sorted sources: a binary heap of their
// current records. With the byte order (cmp nil) each head carries its
// key's first 8 bytes as an integer, so most comparisons touch neither
// the keys' memory nor bytes.Compare. Equal keys come in source order
// (the merge is stable when the sources are given in input order).
type Merger struct {
	cmp     func(a, b []byte) int
	srcs    []Source
	h       []head
	pending bool // h[0]'s record was returned: advance it first
	ctx     Checker
	n       int
}

type head struct {
	pfx      uint64
	key, val []byte
	src      int
}

// Checker reports cancellation: a context.Context, or anything whose Err
// says the work must stop.
type Checker interface{ Err() error }

// NewMerger merges srcs, each positioned on its first record, by cmp
// (nil: bytes.Compare). ctx (may be nil) is checked every 1024 records.
func NewMerger(srcs []Source, cmp func(a, b []byte) int, ctx Checker) *Merger {
	m := &Merger{cmp: cmp, srcs: srcs, ctx: ctx, h: make([]head, 0, len(srcs))}
	for i, s := range srcs {
		if k, v, ok := s.Head(); ok {
			m.h = append(m.h, head{pfx: prefix(k), key: k, val: v, src: i})
		}
	}
	for i := len(m.h)/2 - 1; i >= 0; i-- {
		m.down(i)
	}
	return m
}

// Next returns the next record in order (ok false at the end). The
// record is valid until the next call, or longer when its source's
// records are.
func (m *Merger) Next() (key, val []byte, ok bool, err error) {
	if m.pending {
		m.pending = false
		top := &m.h[0]
		if err := m.srcs[top.src].Advance(); err != nil {
			return nil, nil, false, err
		}
		if k, v, ok := m.srcs[top.src].Head(); ok {
			top.key, top.val, top.pfx = k, v, prefix(k)
		} else {
			last := len(m.h) - 1
			m.h[0] = m.h[last]
			m.h = m.h[:last]
		}
		m.down(0)
	}
	if len(m.h) == 0 {
		return nil, nil, false, nil
	}
	if m.n++; m.n&1023 == 0 && m.ctx != nil {
		if err := m.ctx.Err(); err != nil {
			return nil, nil, false, err
		}
	}
	m.pending = true
	return m.h[0].key, m.h[0].val, true, nil
}

func (m *Merger) less(a, b *head) bool {
	var c int
	if m.cmp == nil {
		if a.pfx != b.pfx {
			return a.pfx < b.pfx
		}
		c = bytes.Compare(a.key, b.key)
	} else {
		c = m.cmp(a.key, b.key)
	}
	if c != 0 {
		return c < 0
	}
	return a.src < b.src
}

func (m *Merger) down(i int) {
	h := m.h
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		j := l
		if r := l + 1; r < len(h) && m.less(&h[r], &h[l]) {
			j = r
		}
		if !m.less(&h[j], &h[i]) {
			return
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
}

// prefix is k's first 8 bytes, big endian (zero-padded).
func prefix(k []byte) uint64 {
	if len(k) >= 8 {
		return binary.BigEndian.Uint64(k)
	}
	var b [8]byte
	copy(b[:], k)
	return binary.BigEndian.Uint64(b[:])
}

// SliceSource streams records held in memory, in order.
type SliceSource struct {
	Items []Item
	i     int
}

// Head is the current record.
func (s *SliceSource) Head() ([]byte, []byte, bool) {
	if s.i >= len(s.Items) {
		return nil, nil, false
	}
	return s.Items[s.i].Key, s.Items[s.i].Val, true
}

// Advance moves on, dropping the record passed.
func (s *SliceSource) Advance() error {
	if s.i < len(s.Items) {
		s.Items[s.i] = Item{}
		s.i++
	}
	return nil
}
