package wire

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"slices"
	"testing"
)

func TestReadOpMsg(t *testing.T) {
	body := doc(t, "insert", "coll", "$db", "test")
	d1 := doc(t, "_id", int32(1))
	d2 := doc(t, "_id", int32(2), "x", "hello")
	d3 := doc(t)
	u1 := doc(t, "q", doc(t), "u", doc(t, "$set", doc(t, "a", int32(1))))

	tests := []struct {
		name      string
		msg       []byte
		wantFlags uint32
		wantSeqs  []Sequence
	}{
		{
			name: "body only",
			msg:  rawMessage(0, OpMsg, uint32(0), byte(0), body),
		},
		{
			name:      "moreToCome and exhaustAllowed",
			msg:       rawMessage(0, OpMsg, FlagMoreToCome|FlagExhaustAllowed, byte(0), body),
			wantFlags: FlagMoreToCome | FlagExhaustAllowed,
		},
		{
			name:      "unknown optional flag bit",
			msg:       rawMessage(0, OpMsg, uint32(1<<20), byte(0), body),
			wantFlags: 1 << 20,
		},
		{
			name:      "checksum present and valid",
			msg:       withChecksum(rawMessage(0, OpMsg, uint32(0), byte(0), body)),
			wantFlags: FlagChecksumPresent,
		},
		{
			name:     "one sequence with several documents",
			msg:      rawMessage(0, OpMsg, uint32(0), byte(0), body, byte(1), seqSection("documents", d1, d2, d3)),
			wantSeqs: []Sequence{{"documents", [][]byte{d1, d2, d3}}},
		},
		{
			name:     "sequence before body",
			msg:      rawMessage(0, OpMsg, uint32(0), byte(1), seqSection("documents", d1, d2), byte(0), body),
			wantSeqs: []Sequence{{"documents", [][]byte{d1, d2}}},
		},
		{
			name: "two sequences and checksum",
			msg: withChecksum(rawMessage(0, OpMsg, uint32(0), byte(0), body,
				byte(1), seqSection("updates", u1, u1), byte(1), seqSection("my.custom", d3))),
			wantFlags: FlagChecksumPresent,
			wantSeqs:  []Sequence{{"updates", [][]byte{u1, u1}}, {"my.custom", [][]byte{d3}}},
		},
		{
			name:     "empty sequence",
			msg:      rawMessage(0, OpMsg, uint32(0), byte(0), body, byte(1), seqSection("deletes")),
			wantSeqs: []Sequence{{"deletes", nil}},
		},
		{
			name:     "empty identifier",
			msg:      rawMessage(0, OpMsg, uint32(0), byte(0), body, byte(1), seqSection("", d1)),
			wantSeqs: []Sequence{{"", [][]byte{d1}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := readOne(t, tt.msg)
			if err != nil {
				t.Fatalf("ReadMessage: %v", err)
			}
			if m.Msg == nil || m.Query != nil {
				t.Fatalf("want only Msg set, got Msg=%v Query=%v", m.Msg, m.Query)
			}
			wantHeader := Header{MessageLength: int32(len(tt.msg)), RequestID: 7, OpCode: OpMsg}
			if m.Header != wantHeader {
				t.Errorf("Header = %+v, want %+v", m.Header, wantHeader)
			}
			if m.Compressor != CompressorNoop || m.Compressed {
				t.Errorf("Compressor = %v, Compressed = %v; want noop, false", m.Compressor, m.Compressed)
			}
			if m.Msg.Flags != tt.wantFlags {
				t.Errorf("Flags = %#x, want %#x", m.Msg.Flags, tt.wantFlags)
			}
			if !bytes.Equal(m.Msg.Body, body) {
				t.Errorf("Body = %x, want %x", m.Msg.Body, body)
			}
			checkSequences(t, m.Msg.Sequences, tt.wantSeqs)
		})
	}
}

func checkSequences(t *testing.T, got, want []Sequence) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d sequences, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Identifier != want[i].Identifier {
			t.Errorf("sequence %d identifier = %q, want %q", i, got[i].Identifier, want[i].Identifier)
		}
		if !slices.EqualFunc(got[i].Docs, want[i].Docs, bytes.Equal) {
			t.Errorf("sequence %q docs = %x, want %x", want[i].Identifier, got[i].Docs, want[i].Docs)
		}
	}
}

func TestMsgSequenceLookup(t *testing.T) {
	m := &Msg{Sequences: []Sequence{{Identifier: "documents"}, {Identifier: "nsInfo"}}}
	if s, ok := m.Sequence("nsInfo"); !ok || s != &m.Sequences[1] {
		t.Errorf("Sequence(nsInfo) = %v, %v", s, ok)
	}
	if _, ok := m.Sequence("updates"); ok {
		t.Error("Sequence(updates) found a missing sequence")
	}
}

func TestAppendMsgLayout(t *testing.T) {
	body := doc(t, "ok", 1.0)
	got := AppendMsg([]byte("prefix"), 11, 22, FlagMoreToCome, body)
	want := append([]byte("prefix"), rawMessage(0, OpMsg, FlagMoreToCome, byte(0), body)...)
	binary.LittleEndian.PutUint32(want[6+4:], 11)
	binary.LittleEndian.PutUint32(want[6+8:], 22)
	if !bytes.Equal(got, want) {
		t.Errorf("AppendMsg =\n%x\nwant\n%x", got, want)
	}
}

func TestAppendMsgChecksum(t *testing.T) {
	body := doc(t, "ok", 1.0)
	msg := AppendMsg(nil, 1, 2, FlagChecksumPresent, body)
	if len(msg) != HeaderSize+4+1+len(body)+4 {
		t.Fatalf("length %d", len(msg))
	}
	n := len(msg) - 4
	if got, want := binary.LittleEndian.Uint32(msg[n:]), crc32.Checksum(msg[:n], castagnoli); got != want {
		t.Errorf("checksum %#x, want %#x", got, want)
	}
	m, err := readOne(t, msg)
	if err != nil {
		t.Fatal(err)
	}
	if m.Msg.Flags != FlagChecksumPresent || !bytes.Equal(m.Msg.Body, body) {
		t.Errorf("round trip: flags %#x body %x", m.Msg.Flags, m.Msg.Body)
	}
	// Appending after existing content must checksum only the new message.
	msg2 := AppendMsg([]byte("xyz"), 1, 2, FlagChecksumPresent, body)
	if !bytes.Equal(msg2[3:], msg) {
		t.Error("AppendMsg with a non-empty dst produced a different message")
	}
}

func TestAppendMsgSectionsRoundTrip(t *testing.T) {
	body := doc(t, "insert", "c", "$db", "d")
	seqs := []Sequence{
		{"documents", [][]byte{doc(t, "a", int32(1)), doc(t, "b", "two"), doc(t)}},
		{"other", nil},
	}
	for _, flags := range []uint32{0, FlagChecksumPresent, FlagMoreToCome | FlagExhaustAllowed} {
		msg := AppendMsgSections(nil, 5, 6, flags, body, seqs...)
		m, err := readOne(t, msg)
		if err != nil {
			t.Fatalf("flags %#x: %v", flags, err)
		}
		if m.Header.RequestID != 5 || m.Header.ResponseTo != 6 || m.Msg.Flags != flags {
			t.Errorf("flags %#x: header %+v flags %#x", flags, m.Header, m.Msg.Flags)
		}
		if !bytes.Equal(m.Msg.Body, body) {
			t.Errorf("flags %#x: body mismatch", flags)
		}
		checkSequences(t, m.Msg.Sequences, seqs)
	}
}

func TestAppendMsgNoAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are unreliable under the race detector")
	}
	body := doc(t, "ok", 1.0, "n", int32(3))
	buf := make([]byte, 0, 256)
	for _, flags := range []uint32{0, FlagChecksumPresent} {
		allocs := testing.AllocsPerRun(100, func() {
			buf = AppendMsg(buf[:0], 1, 2, flags, body)
		})
		if allocs != 0 {
			t.Errorf("AppendMsg(flags %#x) allocates %v times per call", flags, allocs)
		}
	}
	allocs := testing.AllocsPerRun(100, func() {
		buf = AppendReply(buf[:0], 1, 2, 0, 0, 0, body)
	})
	if allocs != 0 {
		t.Errorf("AppendReply allocates %v times per call", allocs)
	}
}
