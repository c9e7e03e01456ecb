package wire

import (
	"bytes"
	"encoding/binary"
	"slices"
)

// GetMore is a decoded OP_GET_MORE: the next batch of a cursor opened by
// a legacy OP_QUERY find. Old drivers (mgo, for one) still send it.
type GetMore struct {
	FullCollectionName string
	NumberToReturn     int32
	CursorID           int64
}

// KillCursors is a decoded OP_KILL_CURSORS. It gets no reply.
type KillCursors struct {
	CursorIDs []int64
}

// maxKillCursors bounds the cursor ids of one OP_KILL_CURSORS (mongod's
// limit is what fits in a message; this keeps a bogus count from
// allocating).
const maxKillCursors = 1 << 20

// parseGetMore decodes the OP_GET_MORE in b (a whole message).
func parseGetMore(g *GetMore, b []byte) *ProtocolError {
	data := b[HeaderSize:]
	if len(data) < 4 {
		return newError(CodeFailedToParse, "OP_GET_MORE is too short: %d bytes after the header", len(data))
	}
	data = data[4:] // ZERO, reserved
	end := bytes.IndexByte(data, 0)
	if end < 0 {
		return newError(CodeFailedToParse, "OP_GET_MORE fullCollectionName is not terminated by a zero byte")
	}
	g.FullCollectionName = string(data[:end])
	data = data[end+1:]
	if len(data) != 12 {
		return newError(CodeFailedToParse, "OP_GET_MORE has %d bytes after its namespace, want 12 (numberToReturn, cursorID)", len(data))
	}
	g.NumberToReturn = int32(binary.LittleEndian.Uint32(data))
	g.CursorID = int64(binary.LittleEndian.Uint64(data[4:]))
	return nil
}

// parseKillCursors decodes the OP_KILL_CURSORS in b (a whole message).
func parseKillCursors(k *KillCursors, b []byte) *ProtocolError {
	data := b[HeaderSize:]
	if len(data) < 8 {
		return newError(CodeFailedToParse, "OP_KILL_CURSORS is too short: %d bytes after the header", len(data))
	}
	n := int32(binary.LittleEndian.Uint32(data[4:]))
	data = data[8:]
	if n < 1 || n > maxKillCursors || len(data) != int(n)*8 {
		return newError(CodeFailedToParse, "OP_KILL_CURSORS numberOfCursorIDs %d does not match its %d bytes of ids", n, len(data))
	}
	k.CursorIDs = k.CursorIDs[:0]
	for i := range int(n) {
		k.CursorIDs = append(k.CursorIDs, int64(binary.LittleEndian.Uint64(data[i*8:])))
	}
	return nil
}

// AppendGetMore appends g as an OP_GET_MORE (for clients and tests).
func AppendGetMore(dst []byte, requestID int32, g *GetMore) []byte {
	dst = slices.Grow(dst, HeaderSize+4+len(g.FullCollectionName)+1+12)
	dst, start := appendHeader(dst, requestID, 0, OpGetMore)
	dst = binary.LittleEndian.AppendUint32(dst, 0)
	dst = append(dst, g.FullCollectionName...)
	dst = append(dst, 0)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(g.NumberToReturn))
	dst = binary.LittleEndian.AppendUint64(dst, uint64(g.CursorID))
	return finishMessage(dst, start)
}

// AppendKillCursors appends an OP_KILL_CURSORS for ids (for clients and
// tests).
func AppendKillCursors(dst []byte, requestID int32, ids ...int64) []byte {
	dst = slices.Grow(dst, HeaderSize+8+8*len(ids))
	dst, start := appendHeader(dst, requestID, 0, OpKillCursors)
	dst = binary.LittleEndian.AppendUint32(dst, 0)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(ids)))
	for _, id := range ids {
		dst = binary.LittleEndian.AppendUint64(dst, uint64(id))
	}
	return finishMessage(dst, start)
}
