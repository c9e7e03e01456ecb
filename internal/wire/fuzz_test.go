package wire

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"testing"
)

// fuzzMaxSize bounds messages (and decompressed messages) in the fuzzer so
// that memory use per input stays small.
const fuzzMaxSize = 1 << 20

// FuzzReadMessage feeds arbitrary byte streams to a Reader. It must never
// panic, must keep its buffers within fuzzMaxSize-derived bounds, and every
// successfully decoded OP_MSG or OP_QUERY must survive re-encoding.
func FuzzReadMessage(f *testing.F) {
	body := doc(f, "insert", "coll", "$db", "test")
	docs := [][]byte{doc(f, "_id", int32(1)), doc(f, "_id", int32(2), "s", "two")}
	msg := AppendMsg(nil, 1, 0, 0, body)
	seeds := [][]byte{
		msg,
		AppendMsg(nil, 2, 0, FlagChecksumPresent|FlagExhaustAllowed, body),
		AppendMsgSections(nil, 3, 0, FlagMoreToCome, body, Sequence{"documents", docs}, Sequence{"x", nil}),
		AppendQuery(nil, 4, 0, &Query{FullCollectionName: "admin.$cmd", NumberToReturn: -1, Query: body}),
		AppendQuery(nil, 5, 0, &Query{FullCollectionName: "db.c", Query: body, ReturnFieldsSelector: doc(f, "a", int32(1))}),
		AppendReply(nil, 6, 0, 0, 0, 0, body),
		rawMessage(0, OpMsg, uint32(0), byte(2), body),
		rawMessage(0, OpInsert, uint32(0), "db.c\x00", body),
		concat(msg, msg, msg),
	}
	for _, c := range allCompressors {
		compressed, err := Compress(nil, AppendMsgSections(nil, 7, 0, 0, body, Sequence{"documents", docs}), c, 0)
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, compressed, concat(compressed, msg))
	}
	for _, s := range seeds {
		f.Add(s)
	}

	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReader(bytes.NewReader(data), fuzzMaxSize)
		for i := 0; ; i++ {
			m, err := r.ReadMessage()
			if cap(r.buf) > 2*fuzzMaxSize || cap(r.dbuf) > 2*fuzzMaxSize {
				t.Fatalf("buffers grew to %d and %d bytes", cap(r.buf), cap(r.dbuf))
			}
			if err == io.EOF {
				return
			}
			if err != nil {
				var pe *ProtocolError
				if !errors.As(err, &pe) {
					t.Fatalf("error %v is not a *ProtocolError", err)
				}
				if pe.Fatal {
					return
				}
				continue
			}
			checkRoundTrip(t, m)
		}
	})
}

// checkRoundTrip re-encodes a decoded message and decodes it again.
func checkRoundTrip(t *testing.T, m *Message) {
	set := 0
	for _, ok := range []bool{m.Msg != nil, m.Query != nil, m.GetMore != nil, m.KillCursors != nil} {
		if ok {
			set++
		}
	}
	if set != 1 {
		t.Fatalf("exactly one of Msg, Query, GetMore and KillCursors must be set: %+v", m)
	}
	var again []byte
	switch {
	case m.Msg != nil:
		again = AppendMsgSections(nil, m.Header.RequestID, m.Header.ResponseTo, m.Msg.Flags, m.Msg.Body, m.Msg.Sequences...)
	case m.Query != nil:
		again = AppendQuery(nil, m.Header.RequestID, m.Header.ResponseTo, m.Query)
	case m.GetMore != nil:
		again = AppendGetMore(nil, m.Header.RequestID, m.GetMore)
	default:
		again = AppendKillCursors(nil, m.Header.RequestID, m.KillCursors.CursorIDs...)
	}
	m2, err := readOne(t, again)
	if err != nil {
		t.Fatalf("re-encoded message does not decode: %v", err)
	}
	if m2.Header.RequestID != m.Header.RequestID || m2.Header.OpCode != m.Header.OpCode {
		t.Fatalf("header changed: %+v -> %+v", m.Header, m2.Header)
	}
	if m.Msg != nil {
		if m2.Msg.Flags != m.Msg.Flags || !bytes.Equal(m2.Msg.Body, m.Msg.Body) || len(m2.Msg.Sequences) != len(m.Msg.Sequences) {
			t.Fatalf("OP_MSG changed on round trip")
		}
		for i, s := range m.Msg.Sequences {
			s2 := m2.Msg.Sequences[i]
			if s2.Identifier != s.Identifier || len(s2.Docs) != len(s.Docs) {
				t.Fatalf("sequence %d changed on round trip", i)
			}
		}
	} else if m.Query != nil && (!bytes.Equal(m2.Query.Query, m.Query.Query) || m2.Query.FullCollectionName != m.Query.FullCollectionName) {
		t.Fatalf("OP_QUERY changed on round trip")
	} else if m.GetMore != nil && *m2.GetMore != *m.GetMore {
		t.Fatalf("OP_GET_MORE changed on round trip: %+v -> %+v", m.GetMore, m2.GetMore)
	} else if m.KillCursors != nil && !slices.Equal(m2.KillCursors.CursorIDs, m.KillCursors.CursorIDs) {
		t.Fatalf("OP_KILL_CURSORS changed on round trip")
	}
}
