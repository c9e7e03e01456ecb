// Package serverstatus keeps the server-wide counters (Stats) and builds
// serverStatus's sections from them and from the other layers' figures
// (the cursors, the operation table, the sessions' transactions, the
// engine), in mongod's field names and BSON types: int32 where mongod
// reports an int, int64 where it reports a long. docs/operations.md says
// where each figure comes from.
package serverstatus

import (
	"os"
	"sync/atomic"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/opctx"
	"github.com/cairndb/cairn/internal/session"
)

// Stats are the server-wide counters serverStatus reports.
type Stats struct {
	ConnsCurrent, ConnsTotal                         atomic.Int64
	Insert, Query, Update, Delete, GetMore, Commands atomic.Int64
	BytesIn, BytesOut, Requests                      atomic.Int64
	// AwaitWakeups counts the wakes of awaitData getMores by a commit to
	// their collection (the tailable cursors' getMore).
	AwaitWakeups atomic.Int64
	// Latency sums (microseconds) and counts by class, as opLatencies.
	ReadMicros, ReadOps, WriteMicros, WriteOps, CmdMicros, CmdOps atomic.Int64
	// Documents returned by queries, matched by updates and deleted
	// (metrics.document; opcounters count statements, these documents).
	DocsReturned, DocsUpdated, DocsDeleted atomic.Int64
	// ConnsRejected counts connections refused at the MaxConns limit.
	ConnsRejected atomic.Int64
	// RegularAsserts counts commands that failed on an internal error (a
	// recovered panic); UserAsserts commands answered with an error and
	// write errors (asserts.regular and asserts.user).
	RegularAsserts, UserAsserts atomic.Int64
	// MaxTimeExpired counts operations ended by their maxTimeMS
	// (metrics.operation.killedDueToMaxTimeMSExpired).
	MaxTimeExpired atomic.Int64
	// WritersQueued are commands waiting for the engine's writer lock,
	// WritersActive those holding it (globalLock).
	WritersQueued, WritersActive atomic.Int64
	// WriterWaits and WriterWaitMicros count writer-lock acquisitions that
	// had to wait and the time spent waiting (locks.Global).
	WriterAcquires, WriterWaits, WriterWaitMicros atomic.Int64
	// TxnConflictWaits counts non-transactional writes that met a key a
	// multi-document transaction owned and waited for it to end.
	TxnConflictWaits atomic.Int64
	// MessageSizeErrorsPreAuth counts connections closed for a message
	// larger than preAuthMaximumMessageSizeBytes before authenticating
	// (metrics.network.totalMessageSizeErrorPreAuth).
	MessageSizeErrorsPreAuth atomic.Int64
	// DisconnectKills counts operations ended because their client
	// disconnected, and DisconnectKillMaxMicros the longest such an
	// operation ran on after the disconnect was noticed.
	DisconnectKills, DisconnectKillMaxMicros atomic.Int64
}

// NoteDisconnectKill records an operation that ended d after its client's
// disconnect was noticed.
func (s *Stats) NoteDisconnectKill(d time.Duration) {
	s.DisconnectKills.Add(1)
	us := d.Microseconds()
	for {
		old := s.DisconnectKillMaxMicros.Load()
		if us <= old || s.DisconnectKillMaxMicros.CompareAndSwap(old, us) {
			return
		}
	}
}

// Sources are what serverStatus reports besides Stats.
type Sources struct {
	Stats *Stats
	// Version is the MongoDB version Cairn is compatible with, and
	// CairnVersion Cairn's own.
	Version, CairnVersion string
	Started               time.Time
	// MaxConns is the connection limit (0: mongod's default, 1,000,000).
	MaxConns int
	// CommitInterval is the journal commit interval.
	CommitInterval time.Duration
	Ops            *opctx.Table
	Cursors        *exec.Cursors
	// Sessions are the logical sessions (nil: no transactions section).
	Sessions *session.Registry
	Engine   *exec.Engine
}

// Append appends serverStatus's sections to r, with a "cairn" section of
// the storage engine's figures and a columnCache section.
func Append(r *bson.Builder, src *Sources) {
	host, _ := os.Hostname()
	now := time.Now()
	up := now.Sub(src.Started)
	s := src.Stats
	r.AppendString("host", host)
	r.AppendString("version", src.Version)
	r.AppendString("cairnVersion", src.CairnVersion)
	r.AppendString("process", "cairnd")
	r.AppendInt64("pid", int64(os.Getpid()))
	r.AppendDouble("uptime", float64(int64(up.Seconds())))
	r.AppendInt64("uptimeMillis", up.Milliseconds())
	r.AppendInt64("uptimeEstimate", int64(up.Seconds()))
	r.AppendDateTime("localTime", now.UnixMilli())
	r.StartDocument("asserts")
	for _, a := range []struct {
		name string
		n    int64
	}{{"regular", s.RegularAsserts.Load()}, {"warning", 0}, {"msg", 0}, {"user", s.UserAsserts.Load()}, {"tripwire", 0}, {"rollovers", 0}} {
		r.AppendInt32(a.name, int32(a.n))
	}
	r.End()
	active := src.Ops.Activity()
	maxConns := int64(src.MaxConns)
	if maxConns <= 0 {
		maxConns = 1000000
	}
	r.StartDocument("connections")
	r.AppendInt32("current", int32(s.ConnsCurrent.Load()))
	r.AppendInt32("available", int32(max(maxConns-s.ConnsCurrent.Load(), 0)))
	r.AppendInt32("totalCreated", int32(s.ConnsTotal.Load()))
	r.AppendInt32("rejected", int32(s.ConnsRejected.Load()))
	r.AppendInt32("active", int32(active.Conns))
	r.End()
	appendGlobalLock(r, s, up, active)
	appendLocks(r, s)
	r.StartDocument("network")
	r.AppendInt64("bytesIn", s.BytesIn.Load())
	r.AppendInt64("bytesOut", s.BytesOut.Load())
	r.AppendInt64("numRequests", s.Requests.Load())
	r.End()
	r.StartDocument("opLatencies")
	for _, l := range []struct {
		name        string
		micros, ops *atomic.Int64
	}{{"reads", &s.ReadMicros, &s.ReadOps}, {"writes", &s.WriteMicros, &s.WriteOps}, {"commands", &s.CmdMicros, &s.CmdOps}} {
		r.StartDocument(l.name)
		r.AppendInt64("latency", l.micros.Load())
		r.AppendInt64("ops", l.ops.Load())
		r.End()
	}
	r.End()
	r.StartDocument("opcounters")
	r.AppendInt64("insert", s.Insert.Load())
	r.AppendInt64("query", s.Query.Load())
	r.AppendInt64("update", s.Update.Load())
	r.AppendInt64("delete", s.Delete.Load())
	r.AppendInt64("getmore", s.GetMore.Load())
	r.AppendInt64("command", s.Commands.Load())
	r.End()
	virtual, resident := ProcessMemory()
	r.StartDocument("mem")
	r.AppendInt32("bits", 64)
	r.AppendInt32("resident", int32(resident>>20))
	r.AppendInt32("virtual", int32(virtual>>20))
	r.AppendBool("supported", virtual > 0)
	r.End()
	appendMetrics(r, src)
	appendTxnStats(r, src.Sessions)
	r.StartDocument("storageEngine")
	r.AppendString("name", "cairn")
	r.AppendBool("supportsCommittedReads", true)
	r.AppendBool("persistent", true)
	r.End()
	src.Engine.AppendEngineStats(r, src.CommitInterval)
	appendColumnCache(r, src.Engine)
}

// appendMetrics adds serverStatus's metrics section.
func appendMetrics(r *bson.Builder, src *Sources) {
	s := src.Stats
	r.StartDocument("metrics")
	r.StartDocument("cursor")
	cur := src.Cursors.Counts()
	r.AppendInt64("timedOut", cur.TimedOut)
	r.AppendInt64("totalOpened", cur.TotalOpened)
	r.StartDocument("open")
	r.AppendInt64("noTimeout", int64(cur.NoTimeout))
	r.AppendInt64("total", int64(cur.Open))
	r.End()
	r.End()
	r.StartDocument("document")
	r.AppendInt64("deleted", s.DocsDeleted.Load())
	r.AppendInt64("inserted", s.Insert.Load())
	r.AppendInt64("returned", s.DocsReturned.Load())
	r.AppendInt64("updated", s.DocsUpdated.Load())
	r.End()
	r.StartDocument("network")
	r.AppendInt64("totalMessageSizeErrorPreAuth", s.MessageSizeErrorsPreAuth.Load())
	r.End()
	r.StartDocument("operation")
	r.AppendInt64("killedDueToClientDisconnect", s.DisconnectKills.Load())
	r.AppendInt64("killedDueToMaxTimeMSExpired", s.MaxTimeExpired.Load())
	// Beyond mongod: the longest an operation ran on after its client's
	// disconnect was noticed.
	r.AppendInt64("disconnectKillMaxMicros", s.DisconnectKillMaxMicros.Load())
	r.AppendInt64("scanAndOrder", src.Engine.Counters.ScanAndOrder.Load())
	r.AppendInt64("writeConflicts", 0) // one writer at a time: writes never conflict
	r.End()
	r.StartDocument("queryExecutor")
	r.AppendInt64("scanned", src.Engine.Counters.KeysExamined.Load())
	r.AppendInt64("scannedObjects", src.Engine.Counters.DocsExamined.Load())
	r.End()
	r.End()
}

// ProcessMemory reads the process's virtual size and resident set, in
// bytes, from /proc (zeros where it is missing).
func ProcessMemory() (virtual, resident uint64) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, 0
	}
	var size, rss uint64
	for i, f := 0, 0; i < len(b) && f < 2; i++ {
		ch := b[i]
		switch {
		case ch == ' ':
			f++
		case f == 0:
			size = size*10 + uint64(ch-'0')
		case f == 1:
			rss = rss*10 + uint64(ch-'0')
		}
	}
	page := uint64(os.Getpagesize())
	return size * page, rss * page
}

// appendColumnCache adds serverStatus's columnCache section (a Cairn
// extension): the column cache's budget, contents and counters.
func appendColumnCache(r *bson.Builder, e *exec.Engine) {
	cc := e.ColumnCache
	st := cc.Stats() // zero when the cache is off
	r.StartDocument("columnCache")
	r.AppendBool("enabled", cc.Enabled())
	r.AppendInt64("budgetBytes", st.Budget)
	r.AppendInt64("bytes", st.Bytes)
	r.AppendInt64("fields", st.Fields)
	r.AppendInt64("hits", st.Hits)
	r.AppendInt64("misses", st.Misses)
	r.AppendInt64("builds", st.Builds)
	r.AppendInt64("fieldsBuilt", st.Built)
	r.AppendInt64("buildsFromColumnStore", st.FromSource)
	r.AppendInt64("evictions", st.Evictions)
	r.AppendInt64("invalidations", st.Dropped)
	r.End()
}

// appendTxnStats adds serverStatus's transactions section, with mongod
// 7.0's fields (Cairn has no prepared transactions: their figures are 0).
func appendTxnStats(r *bson.Builder, sessions *session.Registry) {
	if sessions == nil {
		return
	}
	t := &sessions.TxnStats
	open, active := t.CurrentOpen.Load(), t.CurrentActive.Load()
	r.StartDocument("transactions")
	r.AppendInt64("retriedCommandsCount", t.RetriedCommands.Load())
	r.AppendInt64("retriedStatementsCount", t.RetriedStatements.Load())
	r.AppendInt64("transactionsCollectionWriteCount", t.TransactionsCollectionWrites.Load())
	r.AppendInt64("currentActive", active)
	r.AppendInt64("currentInactive", max(open-active, 0))
	r.AppendInt64("currentOpen", open)
	r.AppendInt64("totalAborted", t.TotalAborted.Load())
	r.AppendInt64("totalCommitted", t.TotalCommitted.Load())
	r.AppendInt64("totalStarted", t.TotalStarted.Load())
	r.AppendInt64("totalPrepared", 0)
	r.AppendInt64("totalPreparedThenCommitted", 0)
	r.AppendInt64("totalPreparedThenAborted", 0)
	r.AppendInt64("currentPrepared", 0)
	r.End()
}
