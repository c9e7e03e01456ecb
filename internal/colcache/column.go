package colcache

import (
	"bytes"

	"github.com/cairndb/cairn/bson"
)

// chunkRows is the number of documents in one chunk of a column; chunks
// are built in parallel and served whole.
const chunkRows = 1 << 14

// chunk holds one field's values for chunkRows consecutive documents
// (fewer in the last chunk): row i's value is data[off[i]:off[i+1]], a BSON
// type byte followed by the value bytes, or nothing when the document lacks
// the field.
//
// The chunk also records where the field stands among each document's
// elements (its ordinal), so that narrow documents keep the documents'
// field order: one ordinal for the whole chunk when every document that
// has the field has it at the same place (a fixed schema), else one per
// document in pos.
type chunk struct {
	off  []uint32
	data []byte
	cpos int      // the ordinal of every present value, when pos is nil
	pos  []uint16 // per document: the ordinal (meaningless where missing)
}

// ordinal returns the place of row i's value among its document's
// elements.
func (c *chunk) ordinal(i int) int {
	if c.pos == nil {
		return c.cpos
	}
	return int(c.pos[i])
}

func (c *chunk) bytes() int64 {
	return int64(len(c.data)) + 4*int64(len(c.off)) + 2*int64(len(c.pos)) + 80
}

// column is one field of every document of a tree version.
type column struct {
	field   string
	chunks  []*chunk
	size    int64
	lastUse uint64 // Cache.tick at the last use (guarded by Cache.mu)
}

// chunkBuilder builds one chunk of several columns from a run of
// documents.
type chunkBuilder struct {
	fields []string
	lens   uint64 // bit n set: some field has n bytes (n < 64)
}

func newChunkBuilder(fields []string) *chunkBuilder {
	b := &chunkBuilder{fields: fields}
	for _, f := range fields {
		if len(f) < 64 {
			b.lens |= 1 << len(f)
		}
	}
	return b
}

// build returns one chunk per field for docs. It reports false when a
// document is malformed or a chunk would pass 4 GiB (the caller then
// leaves the fields uncached).
func (b *chunkBuilder) build(docs [][]byte) ([]*chunk, bool) {
	out := make([]*chunk, len(b.fields))
	varies := make([]bool, len(b.fields))
	for i := range out {
		out[i] = &chunk{off: make([]uint32, 1, len(docs)+1), pos: make([]uint16, len(docs)), cpos: -1}
	}
	found := make([]bool, len(b.fields))
	for row, d := range docs {
		clear(found)
		if !b.walk(d, row, out, found) {
			return nil, false
		}
		for i, c := range out {
			if len(c.data) > 1<<32-1 {
				return nil, false
			}
			c.off = append(c.off, uint32(len(c.data)))
			if found[i] {
				if p := int(c.pos[row]); c.cpos < 0 {
					c.cpos = p
				} else if p != c.cpos {
					varies[i] = true
				}
			}
		}
	}
	for i, c := range out {
		c.data = bytes.Clone(c.data) // trim the append slack
		if !varies[i] {
			c.pos = nil
		}
	}
	return out, true
}

// walk appends d's values of the wanted fields to their chunks and notes
// their ordinals for row (the first occurrence of a key counts, as
// bson.Doc.Lookup finds it).
func (b *chunkBuilder) walk(d []byte, row int, out []*chunk, found []bool) bool {
	n := len(d)
	if n < 5 {
		return false
	}
	left := len(b.fields)
	for pos, ord := 4, 0; pos < n-1 && left > 0; ord++ {
		if ord > 1<<16-1 {
			return false // too many elements to record the field order
		}
		t := bson.Type(d[pos])
		if t == 0 {
			break
		}
		ks := pos + 1
		ke := bytes.IndexByte(d[ks:], 0)
		if ke < 0 {
			return false
		}
		ke += ks
		vs := ke + 1
		sz := bson.ValueSize(t, d[vs:])
		if sz < 0 || vs+sz > n {
			return false
		}
		if kl := ke - ks; kl >= 64 || b.lens&(1<<kl) != 0 {
			key := d[ks:ke]
			for i, f := range b.fields {
				if !found[i] && f == string(key) {
					found[i] = true
					left--
					out[i].pos[row] = uint16(ord)
					out[i].data = append(append(out[i].data, byte(t)), d[vs:vs+sz]...)
					break
				}
			}
		}
		pos = vs + sz
	}
	return true
}
