package colcache

import (
	"encoding/binary"

	"github.com/cairndb/cairn/bson"
)

// Scan serves a Set's documents in tree order as narrow documents: each
// holds only the Set's fields the document has, in the document's order.
// The documents of a batch are assembled into a buffer that belongs to
// the slice NextBatch returns, and are valid until that slice is passed
// back to NextBatch (or the Scan is dropped): a consumer that keeps a
// document longer must copy it. A Scan is used by one goroutine.
type Scan struct {
	set    *Set
	keys   [][]byte // per field: the element's key with its NUL
	row    int
	bufs   map[*bson.Doc][]byte // assembly buffer of each slice handed out
	limit  int                  // rows served: set.rows
	chunks []*chunk             // scratch: the current chunk of each field
	ends   []int                // scratch: where each document ends in the buffer
	order  []int                // scratch: the fields in document order
	bufCap int                  // the largest buffer yet
	eqs    []rowFilter          // rows kept: those that may pass every one
}

// Scan returns a scan of the set's documents from the first.
func (s *Set) Scan() *Scan {
	sc := &Scan{set: s, limit: s.rows, bufs: map[*bson.Doc][]byte{}}
	for _, f := range s.fields {
		sc.keys = append(sc.keys, append([]byte(f), 0))
	}
	return sc
}

// NarrowFields returns the fields of the documents the scan serves (agg's
// NarrowSource).
func (sc *Scan) NarrowFields() []string { return sc.set.fields }

// NextBatch appends up to max documents to dst[:0] (never crossing a
// chunk); an empty result ends the scan. It implements agg's
// BatchSource.
func (sc *Scan) NextBatch(dst []bson.Doc, max int) ([]bson.Doc, error) {
	dst = dst[:0]
	if sc.row >= sc.limit || max <= 0 {
		return dst, nil
	}
	var buf []byte
	if cap(dst) > 0 {
		k := &dst[:1][0]
		buf = sc.bufs[k][:0]
		delete(sc.bufs, k)
	}
	if cap(buf) == 0 {
		buf = make([]byte, 0, sc.bufCap) // the size of the last batch's buffer
	}
	if cap(dst) < max {
		dst = make([]bson.Doc, 0, min(max, chunkRows))
	}
	var chunks []*chunk
	var start, n int
	for {
		ci := sc.row / chunkRows
		start = sc.row % chunkRows
		n = min(max, sc.limit-sc.row, chunkRows-start)
		chunks = sc.chunks[:0]
		for _, col := range sc.set.cols {
			chunks = append(chunks, col.chunks[ci])
		}
		sc.chunks = chunks
		if len(sc.eqs) == 0 {
			break
		}
		// With filters, n counts rows examined: up to max kept ones.
		end := min(sc.limit-sc.row, chunkRows-start) + start
		kept := 0
		i := start
		for ; i < end && kept < max; i++ {
			if sc.keep(chunks, i) {
				kept++
			}
		}
		if n = i - start; kept > 0 || sc.row+n >= sc.limit {
			break
		}
		sc.row += n // nothing kept in the rest of this chunk
	}
	ends := sc.ends[:0]
	// The fields go in the documents' order: once for the batch when every
	// field has one place in the chunk, else per document.
	order, fixed := fieldOrder(sc.order, chunks)
	for i := start; i < start+n; i++ {
		if len(sc.eqs) > 0 && !sc.keep(chunks, i) {
			continue
		}
		if !fixed {
			sortByOrdinal(order, chunks, i)
		}
		buf = appendRow(buf, order, chunks, sc.keys, i)
		ends = append(ends, len(buf))
	}
	// buf may have moved while growing: cut the documents at the end.
	at := 0
	for _, e := range ends {
		dst = append(dst, bson.Doc(buf[at:e:e]))
		at = e
	}
	sc.row += n
	sc.chunks, sc.ends, sc.order = chunks, ends, order
	if cap(buf) > sc.bufCap {
		sc.bufCap = cap(buf)
	}
	if len(dst) > 0 {
		sc.bufs[&dst[:1][0]] = buf
	}
	return dst, nil
}

// fieldOrder lists the field indexes of chunks in order (reusing its
// storage) and reports whether every field has one place in the chunk's
// documents (fixed); the list is then already in the documents' order,
// else the caller sorts it per row (sortByOrdinal).
func fieldOrder(order []int, chunks []*chunk) ([]int, bool) {
	order, fixed := order[:0], true
	for f, ch := range chunks {
		order = append(order, f)
		fixed = fixed && ch.pos == nil
	}
	if fixed {
		sortByOrdinal(order, chunks, 0)
	}
	return order, fixed
}

// appendRow appends row i's document to buf: the values of the fields in
// order (the documents' order), each under its key (keys[f], with its
// NUL), a field the row lacks left out.
func appendRow(buf []byte, order []int, chunks []*chunk, keys [][]byte, i int) []byte {
	at := len(buf)
	buf = append(buf, 0, 0, 0, 0)
	for _, f := range order {
		ch := chunks[f]
		lo, hi := ch.off[i], ch.off[i+1]
		if lo == hi {
			continue
		}
		buf = append(buf, ch.data[lo])
		buf = append(buf, keys[f]...)
		buf = append(buf, ch.data[lo+1:hi]...)
	}
	buf = append(buf, 0)
	binary.LittleEndian.PutUint32(buf[at:], uint32(len(buf)-at))
	return buf
}

// sortByOrdinal orders the field indexes by the place of their values in
// row i's document (an insertion sort: a scan reads a handful of fields).
func sortByOrdinal(order []int, chunks []*chunk, i int) {
	for a := 1; a < len(order); a++ {
		f := order[a]
		p := chunks[f].ordinal(i)
		b := a
		for ; b > 0 && chunks[order[b-1]].ordinal(i) > p; b-- {
			order[b] = order[b-1]
		}
		order[b] = f
	}
}
