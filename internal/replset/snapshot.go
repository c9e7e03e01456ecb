package replset

// Snapshots and initial sync as the commands see them
// (internal/raftrepl/snapshot.go and snaprecv.go hold the mechanism): the
// chunks of a snapshot this member serves (_raftSnapshot), and
// initialSyncStatus in replSetGetStatus.

import (
	"errors"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/raftrepl"
)

// SnapshotChunk answers one chunk of a snapshot this member serves:
// {_raftSnapshot: <id>, setName, tree: <n>, after: BinData}.
func (m Member) SnapshotChunk(body bson.Doc, r *bson.Builder) error {
	n, err := m.Node(body, "snapshot request")
	if err != nil {
		return err
	}
	idv, _ := body.Lookup(raftrepl.SnapshotCommand)
	id, ok := idv.AsInt64()
	if !ok {
		return mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s' is the wrong type '%s', expected type 'long'", raftrepl.SnapshotCommand, idv.Type)
	}
	tv, _ := body.Lookup("tree")
	tree, ok := tv.AsInt64()
	if !ok || tree < 0 {
		return mongoerr.New(mongoerr.BadValue, "BSON field 'tree' must be a non-negative integer")
	}
	var after []byte
	if av, ok := body.Lookup("after"); ok {
		if av.Type != bson.TypeBinary {
			return mongoerr.New(mongoerr.TypeMismatch, "BSON field 'after' is the wrong type '%s', expected type 'binData'", av.Type)
		}
		if _, b := av.Binary(); len(b) > 0 {
			after = b
		}
	}
	ch, err := n.SnapshotChunk(id, int(tree), after)
	if errors.Is(err, raftrepl.ErrNoSnapshot) {
		return mongoerr.New(mongoerr.NoSuchKey, "%v", err)
	}
	if err != nil {
		return err
	}
	r.StartArray("segments")
	for i, s := range ch.Segments {
		r.StartDocument(bson.Index(i))
		r.AppendString("t", s.Name)
		r.AppendBinary("d", 0, s.Data)
		r.End()
	}
	r.End()
	r.AppendInt64("records", int64(ch.Records))
	r.AppendInt32("tree", int32(ch.Tree))
	r.AppendBinary("after", 0, ch.After)
	r.AppendBool("done", ch.Done)
	return nil
}

// appendInitialSyncStatus appends replSetGetStatus' initialSyncStatus:
// during an initial sync, and after one with {initialSync: 1} (body's), as
// mongod.
func appendInitialSyncStatus(r *bson.Builder, body bson.Doc, n *raftrepl.Node) {
	st, ok := n.InitialSync()
	if !ok {
		return
	}
	if !st.Active {
		if v, _ := body.Lookup("initialSync"); !v.Truthy() {
			return
		}
	}
	r.StartDocument("initialSyncStatus")
	r.AppendInt32("failedInitialSyncAttempts", int32(st.Failed))
	r.AppendInt32("maxFailedInitialSyncAttempts", 10)
	r.AppendDateTime("initialSyncStart", st.Start.UnixMilli())
	if st.Active {
		r.AppendInt64("totalInitialSyncElapsedMillis", st.Elapsed.Milliseconds())
		r.AppendInt64("remainingInitialSyncEstimatedMillis", st.Remaining.Milliseconds())
	} else if k := len(st.Attempts); k > 0 {
		last := st.Attempts[k-1]
		r.AppendDateTime("initialSyncEnd", last.Start.Add(last.Duration).UnixMilli())
		r.AppendInt64("totalInitialSyncElapsedMillis", last.Duration.Milliseconds())
	}
	r.AppendInt64("approxTotalDataSize", st.ApproxTotalBytes)
	r.AppendInt64("approxTotalBytesCopied", st.BytesCopied)
	r.AppendInt64("approxTotalRecords", st.Records)
	r.AppendInt64("recordsCopied", st.RecordsCopied)
	r.AppendString("syncSource", st.Source)
	r.StartArray("initialSyncAttempts")
	for i, a := range st.Attempts {
		r.StartDocument(bson.Index(i))
		r.AppendInt64("durationMillis", a.Duration.Milliseconds())
		r.AppendString("status", a.Status)
		r.AppendString("syncSource", a.Source)
		r.AppendInt64("bytesCopied", a.Bytes)
		r.AppendInt64("recordsCopied", a.Records)
		r.End()
	}
	r.End()
	r.End()
}
