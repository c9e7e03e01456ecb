package wire

import (
	"bytes"
	"slices"
	"testing"
)

func TestLegacyCursorOpsRoundTrip(t *testing.T) {
	in := AppendGetMore(nil, 9, &GetMore{FullCollectionName: "db.c", NumberToReturn: -5, CursorID: 1 << 40})
	in = AppendKillCursors(in, 10, 7, -3, 1<<62)
	r := NewReader(bytes.NewReader(in), 0)
	m, err := r.ReadMessage()
	if err != nil {
		t.Fatal(err)
	}
	if g := m.GetMore; g == nil || m.Header.RequestID != 9 || *g != (GetMore{FullCollectionName: "db.c", NumberToReturn: -5, CursorID: 1 << 40}) {
		t.Fatalf("OP_GET_MORE read as %+v (%+v)", m.GetMore, m.Header)
	}
	m, err = r.ReadMessage()
	if err != nil {
		t.Fatal(err)
	}
	if k := m.KillCursors; k == nil || !slices.Equal(k.CursorIDs, []int64{7, -3, 1 << 62}) {
		t.Fatalf("OP_KILL_CURSORS read as %+v", m.KillCursors)
	}
}
