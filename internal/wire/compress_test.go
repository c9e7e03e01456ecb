package wire

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
)

var allCompressors = []Compressor{CompressorNoop, CompressorSnappy, CompressorZlib, CompressorZstd}

func TestCompressRoundTrip(t *testing.T) {
	body := doc(t, "insert", "coll", "$db", "test")
	docs := [][]byte{doc(t, "_id", int32(1), "s", strings.Repeat("abc", 1000)), doc(t)}
	msgs := map[string][]byte{
		"OP_MSG":            AppendMsg(nil, 41, 40, 0, body),
		"OP_MSG checksum":   AppendMsg(nil, 41, 40, FlagChecksumPresent, body),
		"OP_MSG sequences":  AppendMsgSections(nil, 41, 40, FlagMoreToCome, body, Sequence{"documents", docs}),
		"OP_QUERY":          AppendQuery(nil, 41, 40, &Query{FullCollectionName: "admin.$cmd", NumberToReturn: -1, Query: body}),
		"OP_MSG 1MiB":       AppendMsg(nil, 41, 40, 0, doc(t, "pad", strings.Repeat("0123456789abcdef", 1<<16))),
		"header only msg":   rawMessage(0, OpMsg),
		"OP_REPLY (writer)": AppendReply(nil, 41, 40, 0, 0, 0, body),
	}
	for name, msg := range msgs {
		for _, c := range allCompressors {
			for _, level := range []int{0, 1, 9, 19} {
				compressed, err := Compress([]byte("keep"), msg, c, level)
				if err != nil {
					t.Fatalf("%s %v level %d: %v", name, c, level, err)
				}
				if string(compressed[:4]) != "keep" {
					t.Fatalf("%s %v: Compress overwrote dst's contents", name, c)
				}
				compressed = compressed[4:]
				checkCompressedLayout(t, compressed, msg, c)

				uncompressed, h, gotC, perr := decompress(nil, compressed, MaxMessageSize)
				if perr != nil {
					t.Fatalf("%s %v level %d: decompress: %v", name, c, level, perr)
				}
				if gotC != c || !bytes.Equal(uncompressed, msg) || h != parseHeader(msg) {
					t.Fatalf("%s %v level %d: round trip mismatch (compressor %v, header %+v)", name, c, level, gotC, h)
				}
			}
		}
	}
}

func checkCompressedLayout(t *testing.T, compressed, msg []byte, c Compressor) {
	t.Helper()
	h := parseHeader(compressed)
	orig := parseHeader(msg)
	if int(h.MessageLength) != len(compressed) || h.RequestID != orig.RequestID || h.ResponseTo != orig.ResponseTo || h.OpCode != OpCompressed {
		t.Fatalf("OP_COMPRESSED header %+v for message header %+v", h, orig)
	}
	le := binary.LittleEndian
	if op := OpCode(le.Uint32(compressed[16:])); op != orig.OpCode {
		t.Errorf("originalOpcode %v, want %v", op, orig.OpCode)
	}
	if n := int(le.Uint32(compressed[20:])); n != len(msg)-HeaderSize {
		t.Errorf("uncompressedSize %d, want %d", n, len(msg)-HeaderSize)
	}
	if id := Compressor(compressed[24]); id != c {
		t.Errorf("compressorId %d, want %d", id, c)
	}
}

func TestReadCompressedMessage(t *testing.T) {
	body := doc(t, "find", "c", "$db", "d")
	seq := Sequence{"documents", [][]byte{doc(t, "x", int32(1)), doc(t, "y", int32(2))}}
	plain := AppendMsgSections(nil, 12, 0, FlagChecksumPresent, body, seq)
	for _, c := range allCompressors {
		compressed, err := Compress(nil, plain, c, 0)
		if err != nil {
			t.Fatal(err)
		}
		// Interleave compressed and plain messages on one stream.
		r := NewReader(bytes.NewReader(concat(compressed, plain, compressed)), 0)
		for i, wantCompressed := range []bool{true, false, true} {
			m, err := r.ReadMessage()
			if err != nil {
				t.Fatalf("%v message %d: %v", c, i, err)
			}
			want := Header{MessageLength: int32(len(plain)), RequestID: 12, OpCode: OpMsg}
			if m.Header != want {
				t.Errorf("%v message %d: header %+v, want %+v", c, i, m.Header, want)
			}
			if m.Compressed != wantCompressed || (wantCompressed && m.Compressor != c) || (!wantCompressed && m.Compressor != CompressorNoop) {
				t.Errorf("%v message %d: Compressed=%v Compressor=%v", c, i, m.Compressed, m.Compressor)
			}
			if m.Msg == nil || !bytes.Equal(m.Msg.Body, body) || m.Msg.Flags != FlagChecksumPresent {
				t.Fatalf("%v message %d: bad OP_MSG %+v", c, i, m.Msg)
			}
			checkSequences(t, m.Msg.Sequences, []Sequence{seq})
		}
		query := AppendQuery(nil, 3, 0, &Query{FullCollectionName: "admin.$cmd", Query: body})
		compressed, err = Compress(nil, query, c, 0)
		if err != nil {
			t.Fatal(err)
		}
		m, err := readOne(t, compressed)
		if err != nil || m.Query == nil || m.Query.FullCollectionName != "admin.$cmd" || m.Header.OpCode != OpQuery {
			t.Fatalf("%v OP_QUERY: %+v, %v", c, m, err)
		}
	}
}

// compressedMessage builds an OP_COMPRESSED message by hand.
func compressedMessage(orig OpCode, size int32, c Compressor, payload []byte) []byte {
	return rawMessage(0, OpCompressed, uint32(orig), size, byte(c), payload)
}

func TestReadCompressedErrors(t *testing.T) {
	inner := AppendMsg(nil, 1, 0, 0, doc(t, "ping", int32(1), "pad", strings.Repeat("z", 200)))
	payload := inner[HeaderSize:]
	n := int32(len(payload))
	snappyData := s2.EncodeSnappy(nil, payload)
	var zb bytes.Buffer
	zw := zlib.NewWriter(&zb)
	zw.Write(payload)
	zw.Close()
	zlibData := zb.Bytes()
	enc, _ := zstd.NewWriter(nil)
	zstdData := enc.EncodeAll(payload, nil)
	corrupt := func(b []byte) []byte {
		b = append([]byte(nil), b...)
		for i := len(b) / 2; i < len(b); i++ {
			b[i] ^= 0x5a
		}
		return b
	}

	tests := []struct {
		name string
		msg  []byte
		code int32
	}{
		{"header too short", rawMessage(0, OpCompressed, uint32(OpMsg), int32(5)), CodeBadValue},
		{"unknown compressor", compressedMessage(OpMsg, n, 9, payload), CodeInternalError},
		{"nested OP_COMPRESSED", compressedMessage(OpCompressed, n, CompressorNoop, payload), CodeBadValue},
		{"negative size", compressedMessage(OpMsg, -1, CompressorNoop, payload), CodeBadValue},
		{"size above max", compressedMessage(OpMsg, MaxMessageSize-HeaderSize+1, CompressorZstd, zstdData), CodeBadValue},
		{"inner opcode unknown", compressedMessage(77, n, CompressorNoop, payload), CodeBadValue},
		{"inner OP_MSG invalid", compressedMessage(OpMsg, 5, CompressorNoop, []byte{0, 0, 0, 0, 9}), CodeUnknownSectionKind},
	}
	for _, c := range allCompressors {
		data := map[Compressor][]byte{CompressorNoop: payload, CompressorSnappy: snappyData, CompressorZlib: zlibData, CompressorZstd: zstdData}[c]
		corruptCode := int32(CodeBadValue)
		if c == CompressorZlib {
			corruptCode = CodeZLibError
		}
		tests = append(tests,
			struct {
				name string
				msg  []byte
				code int32
			}{c.String() + " declares more than it holds", compressedMessage(OpMsg, n+1, c, data), CodeBadValue},
			struct {
				name string
				msg  []byte
				code int32
			}{c.String() + " declares less than it holds", compressedMessage(OpMsg, n-1, c, data), CodeBadValue},
			struct {
				name string
				msg  []byte
				code int32
			}{c.String() + " declares zero", compressedMessage(OpMsg, 0, c, data), CodeBadValue},
		)
		if c != CompressorNoop {
			tests = append(tests, struct {
				name string
				msg  []byte
				code int32
			}{c.String() + " corrupt payload", compressedMessage(OpMsg, n, c, corrupt(data)), corruptCode})
			tests = append(tests, struct {
				name string
				msg  []byte
				code int32
			}{c.String() + " truncated payload", compressedMessage(OpMsg, n, c, data[:len(data)/2]), corruptCode})
		}
	}
	next := AppendMsg(nil, 99, 0, 0, doc(t, "ping", int32(1)))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewReader(bytes.NewReader(concat(tt.msg, next)), 0)
			_, err := r.ReadMessage()
			pe := asProtocolError(t, err)
			// Truncated snappy input is reported by the snappy decoder as
			// corrupt (BadValue); everything else must match exactly.
			if pe.Code != tt.code || pe.Fatal {
				t.Errorf("got code %d (%s) fatal %v, want code %d: %v", pe.Code, pe.CodeName, pe.Fatal, tt.code, err)
			}
			if pe.Header.RequestID != 7 {
				t.Errorf("error header %+v lacks the requestID", pe.Header)
			}
			m, err := r.ReadMessage()
			if err != nil || m.Header.RequestID != 99 {
				t.Fatalf("message after the error: %+v, %v", m, err)
			}
		})
	}
}

// TestDecompressBomb checks that a small payload expanding far beyond its
// declared size is cut off at the declared size.
func TestDecompressBomb(t *testing.T) {
	huge := make([]byte, 32<<20)
	var zb bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&zb, zlib.BestCompression)
	zw.Write(huge)
	zw.Close()
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBestCompression))
	for c, data := range map[Compressor][]byte{
		CompressorSnappy: s2.EncodeSnappy(nil, huge),
		CompressorZlib:   zb.Bytes(),
		CompressorZstd:   enc.EncodeAll(huge, nil),
	} {
		msg := compressedMessage(OpMsg, 1000, c, data)
		r := NewReader(bytes.NewReader(msg), 0)
		_, err := r.ReadMessage()
		if pe := asProtocolError(t, err); pe.Fatal || pe.Code != CodeBadValue {
			t.Errorf("%v: got %v, want a non-fatal BadValue", c, err)
		}
		if cap(r.dbuf) > 64<<10 {
			t.Errorf("%v: decompression buffer grew to %d bytes for a 1000-byte declaration", c, cap(r.dbuf))
		}
	}
}

func TestCompressErrors(t *testing.T) {
	valid := AppendMsg(nil, 1, 0, 0, doc(t, "ok", 1.0))
	badLen := append([]byte(nil), valid...)
	binary.LittleEndian.PutUint32(badLen, uint32(len(valid)+1))
	already, err := Compress(nil, valid, CompressorSnappy, 0)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		msg  []byte
		c    Compressor
	}{
		{"shorter than a header", valid[:10], CompressorZlib},
		{"length mismatch", badLen, CompressorZlib},
		{"already compressed", already, CompressorZstd},
		{"unknown compressor", valid, 7},
	}
	for _, tt := range tests {
		dst := []byte("x")
		out, err := Compress(dst, tt.msg, tt.c, 0)
		if err == nil {
			t.Errorf("%s: Compress succeeded", tt.name)
		}
		if string(out) != "x" {
			t.Errorf("%s: Compress modified dst on error: %q", tt.name, out)
		}
	}
}

func TestCompressNoAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are unreliable under the race detector")
	}
	msg := AppendMsg(nil, 1, 0, 0, doc(t, "pad", strings.Repeat("abc", 2000)))
	buf := make([]byte, 0, 4*len(msg))
	for _, c := range allCompressors {
		var err error
		buf, err = Compress(buf[:0], msg, c, 0) // warm up pools
		if err != nil {
			t.Fatal(err)
		}
		allocs := testing.AllocsPerRun(100, func() {
			buf, _ = Compress(buf[:0], msg, c, 0)
		})
		if allocs != 0 {
			t.Errorf("Compress with %v allocates %v times per call", c, allocs)
		}
	}
}

// TestDecompressImplausibleSize checks that a small payload declaring a huge
// uncompressed size is rejected before the output buffer is allocated.
func TestDecompressImplausibleSize(t *testing.T) {
	payload := AppendMsg(nil, 1, 0, 0, doc(t, "ping", int32(1)))[HeaderSize:]
	var zb bytes.Buffer
	zw := zlib.NewWriter(&zb)
	zw.Write(payload)
	zw.Close()
	enc, _ := zstd.NewWriter(nil)
	const declared = 40_000_000
	for c, data := range map[Compressor][]byte{
		CompressorSnappy: s2.EncodeSnappy(nil, payload),
		CompressorZlib:   zb.Bytes(),
		CompressorZstd:   enc.EncodeAll(payload, nil),
	} {
		r := NewReader(bytes.NewReader(compressedMessage(OpMsg, declared, c, data)), 0)
		_, err := r.ReadMessage()
		if pe := asProtocolError(t, err); pe.Fatal || pe.Code != CodeBadValue {
			t.Errorf("%v: got %v, want a non-fatal BadValue", c, err)
		}
		if cap(r.dbuf) >= declared {
			t.Errorf("%v: allocated %d bytes for an implausible declaration", c, cap(r.dbuf))
		}
	}
}
