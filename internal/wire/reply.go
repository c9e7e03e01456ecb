package wire

import (
	"encoding/binary"
	"slices"
)

// OP_REPLY responseFlags bits.
const (
	ReplyFlagCursorNotFound   int32 = 1 << 0
	ReplyFlagQueryFailure     int32 = 1 << 1
	ReplyFlagShardConfigStale int32 = 1 << 2
	ReplyFlagAwaitCapable     int32 = 1 << 3
)

// replyFixedSize is the size of an OP_REPLY without its documents.
const replyFixedSize = HeaderSize + 4 + 8 + 4 + 4

// AppendReply appends an OP_REPLY carrying docs to dst and returns the
// extended slice. It does not allocate when dst has enough spare capacity.
// OP_REPLY answers OP_QUERY: a server sends it only for the handshake.
func AppendReply(dst []byte, requestID, responseTo int32, responseFlags int32, cursorID int64, startingFrom int32, docs ...[]byte) []byte {
	n := replyFixedSize
	for _, d := range docs {
		n += len(d)
	}
	dst = slices.Grow(dst, n)
	dst, start := appendHeader(dst, requestID, responseTo, OpReply)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(responseFlags))
	dst = binary.LittleEndian.AppendUint64(dst, uint64(cursorID))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(startingFrom))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(docs)))
	for _, d := range docs {
		dst = append(dst, d...)
	}
	return finishMessage(dst, start)
}
