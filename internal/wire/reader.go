package wire

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
)

// Message is one decoded request. Exactly one of Msg and Query is set.
type Message struct {
	// Header is the header of the message; for an OP_COMPRESSED message it
	// is the reconstructed header of the inner message, so OpCode is the
	// inner opcode and MessageLength the uncompressed length.
	Header Header
	// Compressor is the compressor the message arrived with, or
	// CompressorNoop if it was not compressed (a noop-compressed message
	// also reports CompressorNoop).
	Compressor Compressor
	// Compressed reports whether the message arrived as OP_COMPRESSED.
	Compressed  bool
	Msg         *Msg         // set for OP_MSG
	Query       *Query       // set for OP_QUERY
	GetMore     *GetMore     // set for OP_GET_MORE
	KillCursors *KillCursors // set for OP_KILL_CURSORS
}

const (
	// ReadBufferSize is the size of the Reader's bufio buffer, and the first
	// step in which a message body is admitted (the server charges nothing
	// for it).
	ReadBufferSize = 16 << 10
	// minBufferSize is the smallest message buffer a Reader allocates.
	minBufferSize = 4 << 10
	// maxRetainedBufferSize is the largest buffer a Reader keeps between
	// messages; larger ones, needed for the occasional big message, are
	// released so that idle connections do not pin memory.
	maxRetainedBufferSize = 1 << 20
)

// Reader reads messages from a stream, reusing its buffers. It is not safe
// for concurrent use.
type Reader struct {
	r       *bufio.Reader
	maxSize int
	buf     []byte // the message as read
	dbuf    []byte // the decompressed inner message
	msg     Message
	opMsg   Msg
	query   Query
	getMore GetMore
	kill    KillCursors
	broken  error // set after a fatal error
	// Admit, if set, is called with n more bytes before the Reader reads
	// or inflates them into memory for the current message: as the body
	// arrives, in steps that double what has been received (the first
	// step is ReadBufferSize), so that what a message has been admitted
	// is at most about twice what its sender actually sent, whatever its
	// length prefix announces; and with the inflated size of an
	// OP_COMPRESSED message before it is inflated. An error ends the
	// stream (ReadMessage returns it from then on). The server uses it to
	// bound the memory of requests in flight.
	Admit func(n int) error
}

// SetMaxMessageSize changes the largest message (header included, and the
// inflated size of OP_COMPRESSED messages) that the next ReadMessage
// accepts; n <= 0 means MaxMessageSize. The server lowers it for
// connections that have not authenticated.
func (r *Reader) SetMaxMessageSize(n int) {
	if n <= 0 {
		n = MaxMessageSize
	}
	r.maxSize = n
}

// MaxMessageSize reports the largest message the Reader accepts.
func (r *Reader) MaxMessageSize() int { return r.maxSize }

// NewReader returns a Reader that reads from r and rejects messages longer
// than maxMessageSize bytes (header included); a maxMessageSize <= 0 means
// MaxMessageSize. The limit also applies to the uncompressed size of
// OP_COMPRESSED messages.
func NewReader(r io.Reader, maxMessageSize int) *Reader {
	if maxMessageSize <= 0 {
		maxMessageSize = MaxMessageSize
	}
	return &Reader{r: bufio.NewReaderSize(r, ReadBufferSize), maxSize: maxMessageSize}
}

// ReadMessage reads and decodes the next message. The returned Message and
// all slices it refers to are owned by the Reader and remain valid only until
// the next call to ReadMessage.
//
// It returns io.EOF if the stream ends cleanly between messages, a
// *ProtocolError for malformed input (see ProtocolError for Fatal), and
// other errors from the underlying reader wrapped with context. After a
// fatal error, or a read error in the middle of a message, every later call
// returns the same error; a read error before the first byte of a message
// (such as an expired read deadline) leaves the Reader usable.
func (r *Reader) ReadMessage() (*Message, error) {
	if r.broken != nil {
		return nil, r.broken
	}
	b, err := r.readFrame()
	if err != nil {
		return nil, err
	}

	h := parseHeader(b)
	m := &r.msg
	*m = Message{Header: h}
	if h.OpCode == OpCompressed {
		if r.Admit != nil && len(b) >= HeaderSize+8 {
			if size := int64(int32(binary.LittleEndian.Uint32(b[HeaderSize+4:]))); size > 0 && size+HeaderSize <= int64(r.maxSize) {
				if err := r.Admit(int(size) + HeaderSize); err != nil {
					return nil, r.fail(err)
				}
			}
		}
		var perr *ProtocolError
		r.dbuf, h, m.Compressor, perr = decompress(r.dbuf, b, r.maxSize)
		if perr != nil {
			return nil, perr
		}
		m.Header, m.Compressed, b = h, true, r.dbuf
	}

	var perr *ProtocolError
	switch h.OpCode {
	case OpMsg:
		perr = parseMsg(&r.opMsg, b)
		if perr == nil {
			m.Msg = &r.opMsg
		} else if len(b) >= HeaderSize+4 {
			perr.Flags = binary.LittleEndian.Uint32(b[HeaderSize:])
		}
	case OpQuery:
		perr = parseQuery(&r.query, b)
		if perr == nil {
			m.Query = &r.query
		}
	case OpGetMore:
		perr = parseGetMore(&r.getMore, b)
		if perr == nil {
			m.GetMore = &r.getMore
		}
	case OpKillCursors:
		perr = parseKillCursors(&r.kill, b)
		if perr == nil {
			m.KillCursors = &r.kill
		}
	case OpReply, OpUpdate, OpInsert, OpDelete:
		perr = newError(CodeBadValue, "unsupported legacy opcode %d (%v): only OP_MSG, OP_QUERY, OP_GET_MORE, OP_KILL_CURSORS and OP_COMPRESSED are accepted", int32(h.OpCode), h.OpCode)
	default:
		perr = newError(CodeBadValue, "unknown opcode %d", int32(h.OpCode))
	}
	if perr != nil {
		perr.Header, perr.Compressor = h, m.Compressor
		return nil, perr
	}
	return m, nil
}

// readFrame reads one whole message, header included, into r.buf. Errors
// that leave the stream out of sync are recorded in r.broken.
func (r *Reader) readFrame() ([]byte, error) {
	if cap(r.buf) > maxRetainedBufferSize || cap(r.dbuf) > maxRetainedBufferSize {
		r.releaseBuffers()
	}
	if cap(r.buf) < minBufferSize {
		r.buf = make([]byte, 0, minBufferSize)
	}

	b := r.buf[:4]
	if n, err := io.ReadFull(r.r, b); err != nil {
		switch {
		case err == io.EOF:
			return nil, io.EOF
		case n == 0:
			// Nothing was consumed (e.g. a read deadline expired between
			// messages), so the stream is still in sync.
			return nil, fmt.Errorf("wire: reading message length: %w", err)
		case err == io.ErrUnexpectedEOF:
			return nil, r.fail(fatalError(err, "connection closed after %d of the 4 bytes of a message length", n))
		default:
			return nil, r.fail(fmt.Errorf("wire: reading message length (%d of 4 bytes): %w", n, err))
		}
	}
	length := int64(int32(binary.LittleEndian.Uint32(b)))
	if length < HeaderSize || length > int64(r.maxSize) {
		perr := fatalError(nil, "recv(): message msgLen %d is invalid. Min %d Max: %d", length, HeaderSize, r.maxSize)
		perr.TooLarge = length > int64(r.maxSize)
		return nil, r.fail(perr)
	}
	n := int(length)
	admitted := 0
	for have := len(b); have < n; {
		// Admit, and grow the buffer, in steps that double what was
		// received rather than trusting the length prefix, so that a peer
		// cannot make us allocate, or hold in the server's budget, maxSize
		// bytes by sending only a header.
		step := min(n, max(ReadBufferSize, 2*have))
		if r.Admit != nil && step > admitted {
			if err := r.Admit(step - admitted); err != nil {
				return nil, r.fail(err)
			}
			admitted = step
		}
		if have == cap(b) {
			nb := make([]byte, have, min(n, 2*cap(b)))
			copy(nb, b)
			b = nb
			r.buf = nb
		}
		m, err := io.ReadFull(r.r, b[have:min(step, cap(b))])
		have += m
		b = b[:have]
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, r.fail(fatalError(io.ErrUnexpectedEOF, "connection closed after %d of the %d bytes of a message", have, n))
		}
		if err != nil {
			return nil, r.fail(fmt.Errorf("wire: reading message (%d of %d bytes): %w", have, n, err))
		}
	}
	return b, nil
}

// fail records err as the permanent state of the Reader and returns it.
func (r *Reader) fail(err error) error {
	r.broken = err
	return err
}

// releaseBuffers drops the message buffers and everything pointing into
// them.
func (r *Reader) releaseBuffers() {
	r.buf, r.dbuf = nil, nil
	r.opMsg = Msg{}
	r.query = Query{}
}
