package colcache

import "github.com/cairndb/cairn/internal/agg"

// The set's columns are also read chunk by chunk, without documents, by
// agg's vectorized runs (agg.ColumnSource): a chunk's columns are handed
// out as they are held, and documents are assembled only for the rows a
// run needs whole.

// ColumnFields implements agg.ColumnSource.
func (s *Set) ColumnFields() []string { return s.fields }

// ColumnChunks implements agg.ColumnSource.
func (s *Set) ColumnChunks() int { return (s.rows + chunkRows - 1) / chunkRows }

// ColumnChunk implements agg.ColumnSource. The chunk's Doc is for one
// goroutine at a time (each caller gets its own).
func (s *Set) ColumnChunk(ci int) agg.ColumnChunk {
	chunks := make([]*chunk, len(s.cols))
	cols := make([]agg.Column, len(s.cols))
	for f, col := range s.cols {
		ch := col.chunks[ci]
		chunks[f] = ch
		cols[f] = agg.Column{Off: ch.off, Data: ch.data}
	}
	keys := make([][]byte, len(s.fields))
	for f, name := range s.fields {
		keys[f] = append([]byte(name), 0)
	}
	// The fields go in the documents' order: once for the chunk when
	// every field has one place in it, else per document.
	order, fixed := fieldOrder(make([]int, 0, len(chunks)), chunks)
	return agg.ColumnChunk{
		Rows: min(chunkRows, s.rows-ci*chunkRows),
		Cols: cols,
		Doc: func(buf []byte, i int) []byte {
			if !fixed {
				for f := range order {
					order[f] = f
				}
				sortByOrdinal(order, chunks, i)
			}
			return appendRow(buf, order, chunks, keys, i)
		},
	}
}
