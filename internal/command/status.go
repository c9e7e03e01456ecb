package command

import (
	"os"
	"runtime"
	"sync/atomic"
	"time"
)

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
	r.StartDocument("connections")
	r.AppendInt32("current", int32(s.ConnsCurrent.Load()))
	r.AppendInt32("available", int32(1000000-s.ConnsCurrent.Load()))
	r.AppendInt32("totalCreated", int32(s.ConnsTotal.Load()))
	r.End()
	r.StartDocument("network")
	r.AppendInt64("bytesIn", s.BytesIn.Load())
	r.AppendInt64("bytesOut", s.BytesOut.Load())
	r.AppendInt64("numRequests", s.Requests.Load())
	r.End()
	r.StartDocument("asserts")
	for _, k := range []string{"regular", "warning", "msg", "user", "rollovers"} {
		r.AppendInt32(k, 0)
	}
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
	r.StartDocument("locks")
	r.End()
	r.StartDocument("opcounters")
	r.AppendInt64("insert", s.Insert.Load())
	r.AppendInt64("query", s.Query.Load())
	r.AppendInt64("update", s.Update.Load())
	r.AppendInt64("delete", s.Delete.Load())
	r.AppendInt64("getmore", s.GetMore.Load())
	r.AppendInt64("command", s.Commands.Load())
	r.End()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	r.StartDocument("mem")
	r.AppendInt32("bits", 64)
	r.AppendInt64("resident", int64(residentBytes()>>20))
	r.AppendInt64("virtual", int64(ms.Sys>>20))
	r.AppendBool("supported", true)
	r.End()
	r.StartDocument("metrics")
	r.StartDocument("document")
	r.AppendInt64("deleted", s.DocsDeleted.Load())
	r.AppendInt64("inserted", s.Insert.Load())
	r.AppendInt64("returned", s.DocsReturned.Load())
	r.AppendInt64("updated", s.DocsUpdated.Load())
	r.End()
	r.StartDocument("queryExecutor")
	r.AppendInt64("scanned", s.KeysExamined.Load())
	r.AppendInt64("scannedObjects", s.DocsExamined.Load())
	r.End()
	r.StartDocument("cursor")
	r.StartDocument("open")
	r.AppendInt64("total", int64(c.Env.Cursors.Len()))
	r.End()
	r.End()
	r.End()
	r.StartDocument("storageEngine")
	r.AppendString("name", "cairn")
	r.AppendBool("supportsCommittedReads", true)
	r.AppendBool("persistent", true)
	r.End()
	appendEngineStats(c)
	return nil
}

// residentBytes reads the process's resident set size from /proc.
func residentBytes() uint64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
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
	return rss * uint64(os.Getpagesize())
}
