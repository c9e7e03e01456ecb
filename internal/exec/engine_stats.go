package exec

import (
	"time"

	"github.com/cairndb/cairn/bson"
)

// AppendEngineStats adds the "cairn" section of serverStatus to r: the
// storage engine's figures (files, pages, journal, group commit,
// checkpoints); commitInterval is the journal's configured interval.
func (e *Engine) AppendEngineStats(r *bson.Builder, commitInterval time.Duration) {
	st := e.KV.Stats()
	r.StartDocument("cairn")
	r.StartDocument("files")
	r.AppendInt64("dataFileBytes", st.DataFileBytes)
	r.AppendInt64("journalFileBytes", st.JournalFileBytes)
	r.AppendInt32("pageSize", int32(st.PageSize))
	r.AppendInt64("pages", int64(st.FilePages))
	r.AppendInt64("freePages", int64(st.FreePages))
	r.AppendInt64("pendingFreePages", int64(st.PendingFreePages))
	r.End()
	r.StartDocument("journal")
	r.AppendInt64("commits", int64(st.Commits))
	r.AppendInt64("fsyncs", int64(st.JournalFsyncs))
	r.AppendInt64("fsyncMicros", st.JournalFsyncTime.Microseconds())
	r.AppendInt64("bytesInCycle", st.JournalBytes)
	r.AppendInt64("bytesWritten", int64(st.JournalWritten))
	r.AppendInt64("payloadBytes", int64(st.JournalPayload))
	r.AppendString("compressor", st.JournalCompression.String())
	r.AppendInt64("maxGroupSize", int64(st.GroupCommitMax))
	r.StartArray("groupSizeHistogram")
	for i, n := range st.GroupCommitHist {
		r.AppendInt64(bson.Index(i), int64(n))
	}
	r.End()
	r.AppendInt64("avgCommitMicros", st.AvgCommit.Microseconds())
	r.AppendInt64("commitIntervalMillis", commitInterval.Milliseconds())
	r.End()
	r.StartDocument("checkpoints")
	r.AppendInt64("count", int64(st.Checkpoints))
	r.AppendInt64("pagesWritten", int64(st.CheckpointPages))
	r.AppendInt64("compressedLeaves", int64(st.CompressedLeaves))
	r.AppendInt64("dataFsyncs", int64(st.DataFsyncs))
	if !st.LastCheckpoint.IsZero() {
		r.AppendDateTime("last", st.LastCheckpoint.UnixMilli())
	}
	r.AppendInt64("lastDurationMillis", st.LastCheckpointTook.Milliseconds())
	r.AppendInt64("totalMillis", st.CheckpointTime.Milliseconds())
	r.End()
	r.AppendInt64("compactions", int64(st.Compactions))
	r.AppendInt64("replayedRecords", int64(st.ReplayedRecords))
	r.AppendInt64("cacheBudgetBytes", st.CacheBudget)
	r.AppendBool("failed", st.Failed != nil)
	r.End()
}
