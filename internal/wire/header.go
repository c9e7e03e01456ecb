package wire

import (
	"encoding/binary"
	"strconv"
)

// OpCode identifies the type of a wire protocol message.
type OpCode int32

// Wire protocol opcodes. Only OpMsg, OpQuery (for the connection handshake)
// and OpCompressed are accepted by Reader; the others are listed so that they
// can be named in errors and logs.
const (
	OpReply       OpCode = 1
	OpUpdate      OpCode = 2001
	OpInsert      OpCode = 2002
	OpQuery       OpCode = 2004
	OpGetMore     OpCode = 2005
	OpDelete      OpCode = 2006
	OpKillCursors OpCode = 2007
	OpCompressed  OpCode = 2012
	OpMsg         OpCode = 2013
)

// String returns the protocol name of the opcode, such as "OP_MSG".
func (op OpCode) String() string {
	switch op {
	case OpReply:
		return "OP_REPLY"
	case OpUpdate:
		return "OP_UPDATE"
	case OpInsert:
		return "OP_INSERT"
	case OpQuery:
		return "OP_QUERY"
	case OpGetMore:
		return "OP_GET_MORE"
	case OpDelete:
		return "OP_DELETE"
	case OpKillCursors:
		return "OP_KILL_CURSORS"
	case OpCompressed:
		return "OP_COMPRESSED"
	case OpMsg:
		return "OP_MSG"
	default:
		return "opcode(" + strconv.Itoa(int(op)) + ")"
	}
}

const (
	// MaxMessageSize is the largest message, header included, that MongoDB
	// accepts or sends (maxMessageSizeBytes in the hello reply).
	MaxMessageSize = 48000000

	// HeaderSize is the size of the standard message header.
	HeaderSize = 16
)

// Header is the standard message header that starts every message.
type Header struct {
	MessageLength int32 // total message size in bytes, header included
	RequestID     int32 // identifier chosen by the sender
	ResponseTo    int32 // RequestID of the request this message answers
	OpCode        OpCode
}

// parseHeader decodes a header from the first HeaderSize bytes of b.
func parseHeader(b []byte) Header {
	_ = b[HeaderSize-1]
	return Header{
		MessageLength: int32(binary.LittleEndian.Uint32(b[0:])),
		RequestID:     int32(binary.LittleEndian.Uint32(b[4:])),
		ResponseTo:    int32(binary.LittleEndian.Uint32(b[8:])),
		OpCode:        OpCode(binary.LittleEndian.Uint32(b[12:])),
	}
}

// appendHeader appends a header with a zero length and returns the extended
// slice together with the offset at which the message starts; finishMessage
// fills the length in once the message is complete.
func appendHeader(dst []byte, requestID, responseTo int32, op OpCode) ([]byte, int) {
	start := len(dst)
	dst = binary.LittleEndian.AppendUint32(dst, 0)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(requestID))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(responseTo))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(op))
	return dst, start
}

// finishMessage writes the length of the message that starts at offset start
// of dst into its header.
func finishMessage(dst []byte, start int) []byte {
	binary.LittleEndian.PutUint32(dst[start:], uint32(len(dst)-start))
	return dst
}
