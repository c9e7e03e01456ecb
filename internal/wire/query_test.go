package wire

import (
	"bytes"
	"encoding/binary"
	"testing"
)

func TestReadOpQuery(t *testing.T) {
	hello := doc(t, "isMaster", int32(1), "client", doc(t, "driver", doc(t, "name", "test")))
	proj := doc(t, "a", int32(1))
	tests := []struct {
		name string
		q    Query
	}{
		{"handshake", Query{Flags: QueryFlagSecondaryOK, FullCollectionName: "admin.$cmd", NumberToReturn: -1, Query: hello}},
		{"with selector", Query{FullCollectionName: "db.coll", NumberToSkip: 3, NumberToReturn: 10, Query: doc(t), ReturnFieldsSelector: proj}},
		{"empty namespace", Query{Query: doc(t)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg := AppendQuery(nil, 9, 0, &tt.q)
			m, err := readOne(t, msg)
			if err != nil {
				t.Fatal(err)
			}
			if m.Query == nil || m.Msg != nil {
				t.Fatalf("want only Query set, got Msg=%v Query=%v", m.Msg, m.Query)
			}
			want := Header{MessageLength: int32(len(msg)), RequestID: 9, OpCode: OpQuery}
			if m.Header != want {
				t.Errorf("Header = %+v, want %+v", m.Header, want)
			}
			q := m.Query
			if q.Flags != tt.q.Flags || q.FullCollectionName != tt.q.FullCollectionName ||
				q.NumberToSkip != tt.q.NumberToSkip || q.NumberToReturn != tt.q.NumberToReturn ||
				!bytes.Equal(q.Query, tt.q.Query) || !bytes.Equal(q.ReturnFieldsSelector, tt.q.ReturnFieldsSelector) {
				t.Errorf("Query = %+v, want %+v", *q, tt.q)
			}
			if tt.q.ReturnFieldsSelector == nil && q.ReturnFieldsSelector != nil {
				t.Error("ReturnFieldsSelector should be nil when absent")
			}
		})
	}
}

func TestAppendReply(t *testing.T) {
	d1 := doc(t, "ismaster", true, "ok", 1.0)
	d2 := doc(t)
	got := AppendReply(nil, 100, 9, ReplyFlagAwaitCapable, 0x0102030405060708, 4, d1, d2)
	le := binary.LittleEndian
	if int(le.Uint32(got)) != len(got) || len(got) != replyFixedSize+len(d1)+len(d2) {
		t.Fatalf("length field %d, len %d", le.Uint32(got), len(got))
	}
	h := parseHeader(got)
	if h.RequestID != 100 || h.ResponseTo != 9 || h.OpCode != OpReply {
		t.Errorf("header %+v", h)
	}
	if f := int32(le.Uint32(got[16:])); f != ReplyFlagAwaitCapable {
		t.Errorf("responseFlags %d", f)
	}
	if c := int64(le.Uint64(got[20:])); c != 0x0102030405060708 {
		t.Errorf("cursorID %#x", c)
	}
	if s := int32(le.Uint32(got[28:])); s != 4 {
		t.Errorf("startingFrom %d", s)
	}
	if n := int32(le.Uint32(got[32:])); n != 2 {
		t.Errorf("numberReturned %d", n)
	}
	if !bytes.Equal(got[36:], append(append([]byte(nil), d1...), d2...)) {
		t.Error("documents mismatch")
	}
	empty := AppendReply(nil, 1, 2, 0, 0, 0)
	if len(empty) != replyFixedSize || le.Uint32(empty[32:]) != 0 {
		t.Errorf("empty reply: %x", empty)
	}
}
