package replset

import (
	"bytes"
	"testing"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/repl"
)

// TestAppendClusterTime checks the $clusterTime copied from its template
// against the same document built field by field.
func TestAppendClusterTime(t *testing.T) {
	for _, ts := range []repl.Timestamp{repl.MakeTimestamp(0, 0), repl.MakeTimestamp(1, 2), repl.MakeTimestamp(1764633600, 77), repl.MakeTimestamp(^uint32(0), ^uint32(0))} {
		var got, want bson.Builder
		got.AppendInt32("ok", 1)
		appendClusterTime(&got, ts)
		want.AppendInt32("ok", 1)
		want.StartDocument("$clusterTime")
		want.AppendTimestamp("clusterTime", ts.T(), ts.I())
		want.StartDocument("signature")
		want.AppendBinary("hash", 0, make([]byte, 20))
		want.AppendInt64("keyId", 0)
		want.End()
		want.End()
		if g, w := got.Finish(), want.Finish(); !bytes.Equal(g, w) {
			t.Errorf("ts %v: got %v, want %v", ts, g, w)
		}
	}
}
