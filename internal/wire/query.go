package wire

import (
	"bytes"
	"encoding/binary"
	"slices"
)

// OP_QUERY flag bits.
const (
	QueryFlagTailableCursor  int32 = 1 << 1
	QueryFlagSecondaryOK     int32 = 1 << 2
	QueryFlagOplogReplay     int32 = 1 << 3
	QueryFlagNoCursorTimeout int32 = 1 << 4
	QueryFlagAwaitData       int32 = 1 << 5
	QueryFlagExhaust         int32 = 1 << 6
	QueryFlagPartial         int32 = 1 << 7
)

// Query is a decoded OP_QUERY. Modern clients send it only for the initial
// handshake (hello/isMaster against "admin.$cmd").
type Query struct {
	Flags                int32
	FullCollectionName   string // "db.collection", e.g. "admin.$cmd"
	NumberToSkip         int32
	NumberToReturn       int32
	Query                []byte // BSON document
	ReturnFieldsSelector []byte // optional BSON document; nil if absent
}

// parseQuery decodes the OP_QUERY in b (a whole message, header included)
// into q.
func parseQuery(q *Query, b []byte) *ProtocolError {
	data := b[HeaderSize:]
	if len(data) < 4 {
		return newError(CodeFailedToParse, "OP_QUERY is too short to hold its flags: %d bytes after the header", len(data))
	}
	q.Flags = int32(binary.LittleEndian.Uint32(data))
	data = data[4:]
	end := bytes.IndexByte(data, 0)
	if end < 0 {
		return newError(CodeFailedToParse, "OP_QUERY fullCollectionName is not terminated by a zero byte")
	}
	q.FullCollectionName = internNamespace(data[:end])
	data = data[end+1:]
	if len(data) < 8 {
		return newError(CodeFailedToParse, "OP_QUERY is truncated: %d bytes left for numberToSkip and numberToReturn", len(data))
	}
	q.NumberToSkip = int32(binary.LittleEndian.Uint32(data))
	q.NumberToReturn = int32(binary.LittleEndian.Uint32(data[4:]))
	data = data[8:]
	doc, rest, err := readDocument(data, "OP_QUERY query")
	if err != nil {
		return err
	}
	q.Query = doc
	q.ReturnFieldsSelector = nil
	if len(rest) > 0 {
		doc, rest, err = readDocument(rest, "OP_QUERY returnFieldsSelector")
		if err != nil {
			return err
		}
		q.ReturnFieldsSelector = doc
		if len(rest) > 0 {
			return newError(CodeFailedToParse, "OP_QUERY has %d unexpected bytes after returnFieldsSelector", len(rest))
		}
	}
	return nil
}

// internNamespace converts a namespace to a string without allocating for
// the namespace of the handshake.
func internNamespace(b []byte) string {
	if string(b) == "admin.$cmd" {
		return "admin.$cmd"
	}
	return string(b)
}

// AppendQuery appends q as an OP_QUERY to dst and returns the extended
// slice. Servers never send OP_QUERY; this exists for clients and tests.
func AppendQuery(dst []byte, requestID, responseTo int32, q *Query) []byte {
	dst = slices.Grow(dst, HeaderSize+4+len(q.FullCollectionName)+1+8+len(q.Query)+len(q.ReturnFieldsSelector))
	dst, start := appendHeader(dst, requestID, responseTo, OpQuery)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(q.Flags))
	dst = append(dst, q.FullCollectionName...)
	dst = append(dst, 0)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(q.NumberToSkip))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(q.NumberToReturn))
	dst = append(dst, q.Query...)
	dst = append(dst, q.ReturnFieldsSelector...)
	return finishMessage(dst, start)
}
