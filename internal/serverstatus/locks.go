package serverstatus

import (
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/opctx"
)

// serverStatus's globalLock and locks sections. Cairn's engine has one
// lock, the writer lock a write transaction holds from its first write to
// its commit; reads run on snapshots and take no lock. So:
//
//   - globalLock.currentQueue.writers counts commands waiting for the
//     writer lock and activeClients.writers those holding it (0 or 1);
//     readers never queue, and activeClients.readers counts the read
//     commands running (find, getMore, aggregate, count, distinct).
//   - locks.Global reports the writer lock as mongod reports an
//     intent-exclusive ("w") lock: acquisitions, acquisitions that waited
//     behind another writer, and the microseconds spent waiting.

// appendGlobalLock adds the globalLock section: totalTime (microseconds
// since start), the writer-lock queue and the active clients.
func appendGlobalLock(r *bson.Builder, s *Stats, up time.Duration, a opctx.Activity) {
	queued := s.WritersQueued.Load()
	holding := s.WritersActive.Load()
	r.StartDocument("globalLock")
	r.AppendInt64("totalTime", up.Microseconds())
	r.StartDocument("currentQueue")
	r.AppendInt32("total", int32(queued))
	r.AppendInt32("readers", 0)
	r.AppendInt32("writers", int32(queued))
	r.End()
	r.StartDocument("activeClients")
	r.AppendInt32("total", int32(int64(a.Readers)+holding))
	r.AppendInt32("readers", int32(a.Readers))
	r.AppendInt32("writers", int32(holding))
	r.End()
	r.End()
}

// appendLocks adds the locks section: the writer lock as the Global lock's
// "w" mode.
func appendLocks(r *bson.Builder, s *Stats) {
	r.StartDocument("locks")
	r.StartDocument("Global")
	for _, f := range []struct {
		name string
		n    int64
	}{{"acquireCount", s.WriterAcquires.Load()}, {"acquireWaitCount", s.WriterWaits.Load()}, {"timeAcquiringMicros", s.WriterWaitMicros.Load()}} {
		r.StartDocument(f.name)
		r.AppendInt64("w", f.n)
		r.End()
	}
	r.End()
	r.End()
}
