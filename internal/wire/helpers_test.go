package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// doc marshals key/value pairs into a BSON document.
func doc(t testing.TB, kv ...any) []byte {
	t.Helper()
	d := bson.D{}
	for i := 0; i < len(kv); i += 2 {
		d = append(d, bson.E{Key: kv[i].(string), Value: kv[i+1]})
	}
	b, err := bson.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// rawMessage builds a message from a header and a body given as byte slices
// and integers (int32 little-endian) or single bytes; the length is filled in
// unless length is non-zero.
func rawMessage(length int32, op OpCode, parts ...any) []byte {
	b := make([]byte, HeaderSize)
	binary.LittleEndian.PutUint32(b[4:], 7) // requestID
	binary.LittleEndian.PutUint32(b[12:], uint32(op))
	for _, p := range parts {
		switch v := p.(type) {
		case []byte:
			b = append(b, v...)
		case string:
			b = append(b, v...)
		case int32:
			b = binary.LittleEndian.AppendUint32(b, uint32(v))
		case uint32:
			b = binary.LittleEndian.AppendUint32(b, v)
		case byte:
			b = append(b, v)
		default:
			panic("rawMessage: unsupported part type")
		}
	}
	if length == 0 {
		length = int32(len(b))
	}
	binary.LittleEndian.PutUint32(b, uint32(length))
	return b
}

// withChecksum sets FlagChecksumPresent on an OP_MSG and appends its CRC.
func withChecksum(msg []byte) []byte {
	out := append([]byte(nil), msg...)
	binary.LittleEndian.PutUint32(out[HeaderSize:], binary.LittleEndian.Uint32(out[HeaderSize:])|FlagChecksumPresent)
	out = binary.LittleEndian.AppendUint32(out, 0)
	binary.LittleEndian.PutUint32(out, uint32(len(out)))
	binary.LittleEndian.PutUint32(out[len(out)-4:], crc32.Checksum(out[:len(out)-4], castagnoli))
	return out
}

// seqSection builds a kind-1 section body (size, identifier, documents).
func seqSection(id string, docs ...[]byte) []byte {
	n := 4 + len(id) + 1
	for _, d := range docs {
		n += len(d)
	}
	b := binary.LittleEndian.AppendUint32(nil, uint32(n))
	b = append(b, id...)
	b = append(b, 0)
	for _, d := range docs {
		b = append(b, d...)
	}
	return b
}

func concat(msgs ...[]byte) []byte {
	return bytes.Join(msgs, nil)
}

// readAll reads one message from b.
func readOne(t testing.TB, b []byte) (*Message, error) {
	t.Helper()
	return NewReader(bytes.NewReader(b), 0).ReadMessage()
}

// asProtocolError extracts a *ProtocolError from err or fails the test.
func asProtocolError(t testing.TB, err error) *ProtocolError {
	t.Helper()
	var pe *ProtocolError
	if !errors.As(err, &pe) {
		t.Fatalf("error %v (%T) is not a *ProtocolError", err, err)
	}
	return pe
}

// loopReader returns its data over and over without allocating.
type loopReader struct {
	data []byte
	off  int
}

func (l *loopReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], l.data[l.off:])
		n += c
		l.off = (l.off + c) % len(l.data)
	}
	return n, nil
}

// errReader returns data and then err.
type errReader struct {
	data []byte
	err  error
}

func (e *errReader) Read(p []byte) (int, error) {
	if len(e.data) == 0 {
		return 0, e.err
	}
	n := copy(p, e.data)
	e.data = e.data[n:]
	return n, nil
}

var _ io.Reader = (*loopReader)(nil)
