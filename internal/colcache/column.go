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
type chunk struct {
	off  []uint32
	data []byte
}

// value returns row i's type and value bytes; ok is false when the
// document lacks the field.
func (c *chunk) value(i int) (bson.Type, []byte, bool) {
	v := c.data[c.off[i]:c.off[i+1]]
	if len(v) == 0 {
		return 0, nil, false
	}
	return bson.Type(v[0]), v[1:], true
}

func (c *chunk) bytes() int64 { return int64(len(c.data)) + 4*int64(len(c.off)) + 48 }

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
	for i := range out {
		out[i] = &chunk{off: make([]uint32, 1, len(docs)+1)}
	}
	found := make([]bool, len(b.fields))
	for _, d := range docs {
		clear(found)
		if !b.walk(d, out, found) {
			return nil, false
		}
		for _, c := range out {
			if len(c.data) > 1<<32-1 {
				return nil, false
			}
			c.off = append(c.off, uint32(len(c.data)))
		}
	}
	for _, c := range out {
		c.data = bytes.Clone(c.data) // trim the append slack
	}
	return out, true
}

// walk appends d's values of the wanted fields to their chunks (the first
// occurrence of a key counts, as bson.Doc.Lookup finds it).
func (b *chunkBuilder) walk(d []byte, out []*chunk, found []bool) bool {
	n := len(d)
	if n < 5 {
		return false
	}
	left := len(b.fields)
	for pos := 4; pos < n-1 && left > 0; {
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
					out[i].data = append(append(out[i].data, byte(t)), d[vs:vs+sz]...)
					break
				}
			}
		}
		pos = vs + sz
	}
	return true
}
