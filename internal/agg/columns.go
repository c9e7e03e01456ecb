package agg

import "github.com/cairndb/cairn/bson"

// ColumnSource is an input of a vectorized run (vector.go): a collection's
// documents cut to a few top-level fields and stored by column, in chunks
// of consecutive documents in scan order. Its chunks are immutable and
// may be read by several goroutines at once.
type ColumnSource interface {
	// ColumnFields returns the fields, in the order of a chunk's columns.
	ColumnFields() []string
	// ColumnChunks returns the number of chunks.
	ColumnChunks() int
	// ColumnChunk returns chunk i (0 <= i < ColumnChunks()).
	ColumnChunk(i int) ColumnChunk
}

// Column is one field's values for the rows of a chunk: row r's value is
// Data[Off[r]:Off[r+1]], a BSON type byte then the value's bytes, or
// nothing when the document lacks the field.
type Column struct {
	Off  []uint32
	Data []byte
}

// Value returns row r's value (Type 0 when the document lacks the field).
// The value aliases the column.
func (c *Column) Value(r int) bson.Value {
	lo, hi := c.Off[r], c.Off[r+1]
	if lo == hi {
		return bson.Value{}
	}
	return bson.Value{Type: bson.Type(c.Data[lo]), Data: c.Data[lo+1 : hi : hi]}
}

// ColumnChunk is a run of Rows consecutive documents, one Column per
// field of the source.
type ColumnChunk struct {
	Rows int
	Cols []Column
	// Doc appends row r's narrow document (the source's fields the
	// document has, in the document's order) to dst.
	Doc func(dst []byte, r int) []byte
}
