package wire

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
)

func TestReadMessageErrors(t *testing.T) {
	body := doc(t, "ping", int32(1))
	d := doc(t, "a", int32(1))
	badTerm := append(append([]byte(nil), d[:len(d)-1]...), 1)

	tests := []struct {
		name     string
		msg      []byte
		code     int32
		fatal    bool
		contains string
	}{
		// Framing: fatal.
		{name: "truncated length prefix", msg: []byte{0x20, 0}, code: CodeProtocolError, fatal: true},
		{name: "length below header size", msg: rawMessage(15, OpMsg), code: CodeProtocolError, fatal: true, contains: "msgLen 15 is invalid"},
		{name: "zero length", msg: []byte{0, 0, 0, 0}, code: CodeProtocolError, fatal: true},
		{name: "negative length", msg: rawMessage(-5, OpMsg), code: CodeProtocolError, fatal: true},
		{name: "length above max", msg: rawMessage(MaxMessageSize+1, OpMsg), code: CodeProtocolError, fatal: true, contains: "Max: 48000000"},
		{name: "truncated header", msg: rawMessage(40, OpMsg)[:10], code: CodeProtocolError, fatal: true},
		{name: "truncated body", msg: rawMessage(100, OpMsg, uint32(0), byte(0), body), code: CodeProtocolError, fatal: true},

		// Opcodes.
		{name: "unknown opcode", msg: rawMessage(0, 1234, body), code: CodeBadValue, contains: "unknown opcode 1234"},
		{name: "legacy OP_INSERT", msg: rawMessage(0, OpInsert, uint32(0), "db.c\x00", body), code: CodeBadValue, contains: "OP_INSERT"},
		{name: "legacy OP_DELETE", msg: rawMessage(0, OpDelete, uint32(0), "db.c\x00", uint32(0), body), code: CodeBadValue, contains: "OP_DELETE"},
		{name: "OP_GET_MORE truncated", msg: rawMessage(0, OpGetMore, uint32(0), "db.c\x00", uint32(0)), code: CodeFailedToParse, contains: "want 12"},
		{name: "OP_GET_MORE without namespace end", msg: rawMessage(0, OpGetMore, uint32(0), "db.c"), code: CodeFailedToParse},
		{name: "OP_KILL_CURSORS count mismatch", msg: rawMessage(0, OpKillCursors, uint32(0), uint32(2), uint32(1), uint32(0)), code: CodeFailedToParse, contains: "numberOfCursorIDs 2"},
		{name: "OP_KILL_CURSORS with no ids", msg: rawMessage(0, OpKillCursors, uint32(0), uint32(0)), code: CodeFailedToParse},
		{name: "OP_REPLY from client", msg: AppendReply(nil, 1, 0, 0, 0, 0, body), code: CodeBadValue, contains: "OP_REPLY"},

		// OP_MSG.
		{name: "OP_MSG without flags", msg: rawMessage(0, OpMsg, byte(0), byte(0)), code: CodeFailedToParse},
		{name: "OP_MSG header only", msg: rawMessage(0, OpMsg), code: CodeFailedToParse},
		{name: "illegal required flag", msg: rawMessage(0, OpMsg, uint32(1<<2), byte(0), body), code: CodeIllegalOpMsgFlag, contains: "illegal flags value: Ob00000000000000000000000000000100"},
		{name: "checksum flag without room", msg: rawMessage(0, OpMsg, FlagChecksumPresent, byte(0), byte(0)), code: CodeFailedToParse},
		{name: "checksum mismatch", msg: func() []byte {
			m := withChecksum(rawMessage(0, OpMsg, uint32(0), byte(0), body))
			m[len(m)-1] ^= 0xff
			return m
		}(), code: CodeChecksumMismatch, contains: "checksum does not match"},
		{name: "checksum mismatch from corrupted body", msg: func() []byte {
			m := withChecksum(rawMessage(0, OpMsg, uint32(0), byte(0), body))
			m[HeaderSize+4+1+8] ^= 0x01
			return m
		}(), code: CodeChecksumMismatch},
		{name: "checksum flag but no checksum", msg: rawMessage(0, OpMsg, FlagChecksumPresent, byte(0), body), code: CodeChecksumMismatch},
		{name: "unknown section kind", msg: rawMessage(0, OpMsg, uint32(0), byte(0), body, byte(2), body), code: CodeUnknownSectionKind, contains: "Unknown section kind 2"},
		{name: "multiple bodies", msg: rawMessage(0, OpMsg, uint32(0), byte(0), body, byte(0), body), code: CodeMultipleBodySections},
		{name: "no body", msg: rawMessage(0, OpMsg, uint32(0)), code: CodeMissingBody},
		{name: "only a sequence", msg: rawMessage(0, OpMsg, uint32(0), byte(1), seqSection("documents", d)), code: CodeMissingBody},
		{name: "body truncated below 5 bytes", msg: rawMessage(0, OpMsg, uint32(0), byte(0), body[:3]), code: CodeInvalidBSON},
		{name: "body length beyond section", msg: rawMessage(0, OpMsg, uint32(0), byte(0), body[:len(body)-1]), code: CodeInvalidBSON, contains: "document length"},
		{name: "body length too small", msg: rawMessage(0, OpMsg, uint32(0), byte(0), int32(4), byte(0)), code: CodeInvalidBSON},
		{name: "body length negative", msg: rawMessage(0, OpMsg, uint32(0), byte(0), int32(-1), byte(0)), code: CodeInvalidBSON},
		{name: "body not zero terminated", msg: rawMessage(0, OpMsg, uint32(0), byte(0), badTerm), code: CodeInvalidBSON, contains: "not terminated"},
		{name: "trailing bytes after body", msg: rawMessage(0, OpMsg, uint32(0), byte(0), body, byte(0x0a)), code: CodeUnknownSectionKind},
		{name: "sequence size truncated", msg: rawMessage(0, OpMsg, uint32(0), byte(0), body, byte(1), byte(9), byte(0)), code: CodeFailedToParse},
		{name: "sequence size below 4", msg: rawMessage(0, OpMsg, uint32(0), byte(0), body, byte(1), int32(3), "x\x00"), code: CodeFailedToParse},
		{name: "sequence size beyond message", msg: rawMessage(0, OpMsg, uint32(0), byte(0), body, byte(1), seqSection("documents", d)[:10]), code: CodeFailedToParse},
		{name: "sequence identifier unterminated", msg: rawMessage(0, OpMsg, uint32(0), byte(0), body, byte(1), int32(9), "docs\x01"), code: CodeFailedToParse, contains: "identifier"},
		{name: "sequence doc length beyond section", msg: func() []byte {
			s := seqSection("documents", d, d)
			s[0]-- // the section ends one byte before the last document does
			return rawMessage(0, OpMsg, uint32(0), byte(0), body, byte(1), s, byte(0))
		}(), code: CodeInvalidBSON, contains: `"documents"`},
		{name: "sequence doc with trailing garbage", msg: rawMessage(0, OpMsg, uint32(0), byte(0), body, byte(1), seqSection("documents", d, []byte{1, 2})), code: CodeInvalidBSON},
		{name: "sequence doc not terminated", msg: rawMessage(0, OpMsg, uint32(0), byte(0), body, byte(1), seqSection("documents", d, badTerm)), code: CodeInvalidBSON},
		{name: "duplicate sequence", msg: rawMessage(0, OpMsg, uint32(0), byte(0), body, byte(1), seqSection("documents", d), byte(1), seqSection("documents", d)), code: CodeDuplicateDocSequence, contains: "Duplicate document sequence: documents"},
		{name: "too many sequences", msg: rawMessage(0, OpMsg, uint32(0), byte(0), body, byte(1), seqSection("a"), byte(1), seqSection("b"), byte(1), seqSection("c")), code: CodeTooManyDocumentSequences},

		// OP_QUERY.
		{name: "OP_QUERY without flags", msg: rawMessage(0, OpQuery, byte(0)), code: CodeFailedToParse},
		{name: "OP_QUERY unterminated namespace", msg: rawMessage(0, OpQuery, int32(0), "admin.$cmd"), code: CodeFailedToParse, contains: "fullCollectionName"},
		{name: "OP_QUERY truncated skip and return", msg: rawMessage(0, OpQuery, int32(0), "admin.$cmd\x00", int32(0)), code: CodeFailedToParse},
		{name: "OP_QUERY missing query", msg: rawMessage(0, OpQuery, int32(0), "admin.$cmd\x00", int32(0), int32(-1)), code: CodeInvalidBSON},
		{name: "OP_QUERY bad query length", msg: rawMessage(0, OpQuery, int32(0), "admin.$cmd\x00", int32(0), int32(-1), body[:len(body)-1]), code: CodeInvalidBSON, contains: "OP_QUERY query"},
		{name: "OP_QUERY bad selector", msg: rawMessage(0, OpQuery, int32(0), "admin.$cmd\x00", int32(0), int32(-1), body, badTerm), code: CodeInvalidBSON, contains: "returnFieldsSelector"},
		{name: "OP_QUERY trailing bytes", msg: rawMessage(0, OpQuery, int32(0), "admin.$cmd\x00", int32(0), int32(-1), body, d, byte(0)), code: CodeFailedToParse, contains: "unexpected bytes"},
	}
	next := AppendMsg(nil, 99, 0, 0, body)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			input := tt.msg
			if !tt.fatal {
				input = concat(tt.msg, next)
			}
			r := NewReader(bytes.NewReader(input), 0)
			m, err := r.ReadMessage()
			if err == nil {
				t.Fatalf("ReadMessage succeeded: %+v", m)
			}
			pe := asProtocolError(t, err)
			if pe.Code != tt.code || pe.Fatal != tt.fatal {
				t.Errorf("got code %d (%s) fatal %v, want code %d fatal %v: %v", pe.Code, pe.CodeName, pe.Fatal, tt.code, tt.fatal, err)
			}
			if pe.CodeName == "" || pe.Msg == "" {
				t.Errorf("error lacks a code name or message: %+v", pe)
			}
			if !strings.Contains(pe.Msg, tt.contains) {
				t.Errorf("message %q does not contain %q", pe.Msg, tt.contains)
			}
			if tt.fatal {
				if _, err2 := r.ReadMessage(); err2 != err {
					t.Errorf("after a fatal error ReadMessage returned %v, want the same error", err2)
				}
				return
			}
			if pe.Header.RequestID != 7 && pe.Header.RequestID != 1 {
				t.Errorf("error header %+v does not identify the request", pe.Header)
			}
			m, err = r.ReadMessage()
			if err != nil {
				t.Fatalf("reading the message after a non-fatal error: %v", err)
			}
			if m.Header.RequestID != 99 || !bytes.Equal(m.Msg.Body, body) {
				t.Errorf("next message decoded wrongly: %+v", m.Header)
			}
			if _, err := r.ReadMessage(); err != io.EOF {
				t.Errorf("at end of stream got %v, want io.EOF", err)
			}
		})
	}
}

func TestReadMessageTruncatedIsUnexpectedEOF(t *testing.T) {
	msg := AppendMsg(nil, 1, 0, 0, doc(t, "ping", int32(1)))
	for cut := 1; cut < len(msg); cut++ {
		_, err := readOne(t, msg[:cut])
		pe := asProtocolError(t, err)
		if !pe.Fatal || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("cut at %d: got %v (fatal %v), want fatal io.ErrUnexpectedEOF", cut, err, pe.Fatal)
		}
	}
}

func TestReadMessageEOF(t *testing.T) {
	r := NewReader(bytes.NewReader(nil), 0)
	for range 2 {
		if _, err := r.ReadMessage(); err != io.EOF {
			t.Fatalf("got %v, want io.EOF", err)
		}
	}
}

func TestReadMessageStream(t *testing.T) {
	var stream []byte
	for i := range 50 {
		stream = AppendMsg(stream, int32(i), 0, 0, doc(t, "i", int32(i), "pad", strings.Repeat("x", i*300)))
	}
	r := NewReader(bytes.NewReader(stream), 0)
	for i := range 50 {
		m, err := r.ReadMessage()
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if m.Header.RequestID != int32(i) {
			t.Fatalf("message %d has requestID %d", i, m.Header.RequestID)
		}
	}
	if _, err := r.ReadMessage(); err != io.EOF {
		t.Fatalf("got %v, want io.EOF", err)
	}
}

func TestReadMessageCustomMaxSize(t *testing.T) {
	msg := AppendMsg(nil, 1, 0, 0, doc(t, "pad", strings.Repeat("x", 1000)))
	_, err := NewReader(bytes.NewReader(msg), 512).ReadMessage()
	if pe := asProtocolError(t, err); !pe.Fatal || !strings.Contains(pe.Msg, "Max: 512") {
		t.Errorf("got %v, want a fatal size error", err)
	}
	if _, err := NewReader(bytes.NewReader(msg), len(msg)).ReadMessage(); err != nil {
		t.Errorf("message of exactly the maximum size: %v", err)
	}
}

func TestReadMessageReadErrors(t *testing.T) {
	msg := AppendMsg(nil, 1, 0, 0, doc(t, "ping", int32(1)))

	// An error before any byte of a message leaves the reader usable.
	src := &errReader{err: os.ErrDeadlineExceeded}
	r := NewReader(src, 0)
	if _, err := r.ReadMessage(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("got %v, want a deadline error", err)
	}
	src.data, src.err = msg, io.EOF
	if _, err := r.ReadMessage(); err != nil {
		t.Fatalf("after a boundary timeout: %v", err)
	}

	// An error in the middle of a message is sticky.
	src = &errReader{data: msg[:20], err: os.ErrDeadlineExceeded}
	r = NewReader(src, 0)
	_, err := r.ReadMessage()
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("got %v, want a deadline error", err)
	}
	src.data, src.err = msg[20:], io.EOF
	if _, err2 := r.ReadMessage(); err2 != err {
		t.Fatalf("after a mid-message error got %v, want the same error", err2)
	}
}

func TestReaderGrowsWithReceivedData(t *testing.T) {
	// A header announcing a 40 MB message followed by a few bytes must not
	// make the reader allocate 40 MB.
	msg := rawMessage(40_000_000, OpMsg, uint32(0), byte(0), doc(t, "x", int32(1)))
	r := NewReader(bytes.NewReader(msg), 0)
	if _, err := r.ReadMessage(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("got %v, want io.ErrUnexpectedEOF", err)
	}
	if c := cap(r.buf); c > 2*minBufferSize {
		t.Errorf("buffer grew to %d bytes for a %d-byte stream", c, len(msg))
	}
}

func TestReaderReleasesLargeBuffers(t *testing.T) {
	big := AppendMsgSections(nil, 1, 0, 0, doc(t, "insert", "c"),
		Sequence{"documents", [][]byte{doc(t, "pad", strings.Repeat("x", 3<<20))}})
	small := AppendMsg(nil, 2, 0, 0, doc(t, "ping", int32(1)))
	r := NewReader(bytes.NewReader(concat(big, small)), 0)
	if _, err := r.ReadMessage(); err != nil {
		t.Fatal(err)
	}
	if cap(r.buf) < len(big) {
		t.Fatalf("buffer of %d bytes cannot hold a %d-byte message", cap(r.buf), len(big))
	}
	m, err := r.ReadMessage()
	if err != nil {
		t.Fatal(err)
	}
	if cap(r.buf) > maxRetainedBufferSize {
		t.Errorf("reader kept a %d-byte buffer after a small message", cap(r.buf))
	}
	if len(m.Msg.Sequences) != 0 {
		t.Errorf("stale sequences: %d", len(m.Msg.Sequences))
	}
}

func TestReadMessageNoAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are unreliable under the race detector")
	}
	body := doc(t, "find", "coll", "filter", doc(t, "a", int32(1)), "$db", "test")
	docs := [][]byte{doc(t, "_id", int32(1)), doc(t, "_id", int32(2))}
	cases := map[string][]byte{
		"body":      AppendMsg(nil, 1, 0, 0, body),
		"checksum":  AppendMsg(nil, 1, 0, FlagChecksumPresent, body),
		"sequences": AppendMsgSections(nil, 1, 0, 0, body, Sequence{"documents", docs}, Sequence{"updates", docs}),
		"query":     AppendQuery(nil, 1, 0, &Query{FullCollectionName: "admin.$cmd", NumberToReturn: -1, Query: body}),
	}
	for _, c := range []Compressor{CompressorNoop, CompressorSnappy, CompressorZlib, CompressorZstd} {
		compressed, err := Compress(nil, cases["body"], c, 0)
		if err != nil {
			t.Fatal(err)
		}
		cases["compressed "+c.String()] = compressed
	}
	for name, msg := range cases {
		t.Run(name, func(t *testing.T) {
			r := NewReader(&loopReader{data: msg}, 0)
			if _, err := r.ReadMessage(); err != nil { // warm up buffers and pools
				t.Fatal(err)
			}
			var err error
			allocs := testing.AllocsPerRun(200, func() {
				_, err = r.ReadMessage()
			})
			if err != nil {
				t.Fatal(err)
			}
			if allocs != 0 {
				t.Errorf("ReadMessage allocates %v times per message", allocs)
			}
		})
	}
}

// TestReaderAdmitsReceivedBytes: the Admit hook is asked for what has
// arrived (in steps at most twice that, the first ReadBufferSize), not
// for what the length prefix announces; a whole message is admitted
// exactly.
func TestReaderAdmitsReceivedBytes(t *testing.T) {
	whole := AppendMsg(nil, 1, 0, 0, doc(t, "pad", strings.Repeat("x", 100<<10)))
	cases := []struct {
		name      string
		stream    []byte
		wantTotal int // exact total admitted; 0: check the bound only
	}{
		{"header only, 47 MB announced", rawMessage(47_000_000, OpMsg, uint32(0))[:HeaderSize], 0},
		{"40 MB announced, a few bytes sent", rawMessage(40_000_000, OpMsg, uint32(0), byte(0), doc(t, "x", int32(1))), 0},
		{"100 KiB of a 47 MB message", append(rawMessage(47_000_000, OpMsg, uint32(0), byte(0)), make([]byte, 100<<10)...), 0},
		{"a whole 100 KiB message", whole, len(whole)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			total := 0
			r := NewReader(bytes.NewReader(tc.stream), 0)
			r.Admit = func(n int) error { total += n; return nil }
			r.ReadMessage()
			if tc.wantTotal != 0 {
				if total != tc.wantTotal {
					t.Fatalf("admitted %d bytes, want %d", total, tc.wantTotal)
				}
				return
			}
			if bound := max(ReadBufferSize, 2*len(tc.stream)); total > bound {
				t.Fatalf("admitted %d bytes for a %d-byte stream, want at most %d", total, len(tc.stream), bound)
			}
		})
	}
}
