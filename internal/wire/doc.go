// Package wire implements the framing layer of the MongoDB wire protocol:
// reading requests (OP_MSG, OP_QUERY and OP_COMPRESSED wrapping either) from
// a byte stream and writing replies (OP_MSG, OP_REPLY and OP_COMPRESSED).
//
// All integers on the wire are little-endian. Every message starts with a
// 16-byte header (messageLength, requestID, responseTo, opCode) and
// messageLength counts the whole message, header included.
//
// The package deals only with framing: BSON documents are carried as raw
// byte slices whose length prefix has been checked against the enclosing
// section, but whose contents are not validated here.
//
// Reading is designed for a long-lived connection: a Reader reuses its
// buffers, so decoding a small OP_MSG allocates nothing in steady state, and
// the slices in a returned Message stay valid only until the next call to
// ReadMessage. Malformed input is reported as a *ProtocolError whose Fatal
// field tells the caller whether the stream is still usable.
package wire
