package command

import (
	"os"
	"sync/atomic"
	"time"
)

// serverStatus answers with mongod's sections, in its field names and
// BSON types (int32 where mongod reports an int, int64 where it reports a
// long), and a "cairn" section with the storage engine's figures.
// docs/operations.md says where each figure comes from.
func serverStatus(c *Ctx) error {
	host, _ := os.Hostname()
	now := time.Now()
	up := now.Sub(c.Env.Started)
	s := &c.Env.Stats
	r := c.Reply
	r.AppendString("host", host)
	r.AppendString("version", CompatibleVersion)
	r.AppendString("cairnVersion", Version)
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
	active := c.Env.Ops.Activity()
	maxConns := int64(c.Env.MaxConns)
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
	appendGlobalLock(c, up, active)
	appendLocks(c)
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
	virtual, resident := processMemory()
	r.StartDocument("mem")
	r.AppendInt32("bits", 64)
	r.AppendInt32("resident", int32(resident>>20))
	r.AppendInt32("virtual", int32(virtual>>20))
	r.AppendBool("supported", virtual > 0)
	r.End()
	appendMetrics(c)
	appendTxnStats(c)
	r.StartDocument("storageEngine")
	r.AppendString("name", "cairn")
	r.AppendBool("supportsCommittedReads", true)
	r.AppendBool("persistent", true)
	r.End()
	c.Env.AppendEngineStats(c.Reply, c.Env.CommitInterval)
	appendColumnCache(c)
	return nil
}

// appendMetrics adds serverStatus's metrics section.
func appendMetrics(c *Ctx) {
	s := &c.Env.Stats
	r := c.Reply
	r.StartDocument("metrics")
	r.StartDocument("cursor")
	cur := c.Env.Cursors.Counts()
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
	r.AppendInt64("scanAndOrder", c.Env.Counters.ScanAndOrder.Load())
	r.AppendInt64("writeConflicts", 0) // one writer at a time: writes never conflict
	r.End()
	r.StartDocument("queryExecutor")
	r.AppendInt64("scanned", c.Env.Counters.KeysExamined.Load())
	r.AppendInt64("scannedObjects", c.Env.Counters.DocsExamined.Load())
	r.End()
	r.End()
}

// processMemory reads the process's virtual size and resident set, in
// bytes, from /proc (zeros where it is missing).
func processMemory() (virtual, resident uint64) {
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
func appendColumnCache(c *Ctx) {
	cc := c.Env.ColumnCache
	st := cc.Stats() // zero when the cache is off
	r := c.Reply
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
func appendTxnStats(c *Ctx) {
	if c.Env.Sessions == nil {
		return
	}
	t := &c.Env.Sessions.TxnStats
	r := c.Reply
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
