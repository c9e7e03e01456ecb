package command

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	dbson "go.mongodb.org/mongo-driver/v2/bson"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/session"
)

const txnBenchDocs = 10000

// run dispatches body in database db and returns the reply.
func run(b *testing.B, env *Env, db string, body dbson.D) bson.Doc {
	raw, err := dbson.Marshal(append(body, dbson.E{Key: "$db", Value: db}))
	if err != nil {
		b.Error(err)
		return nil
	}
	c := &Ctx{Context: context.Background(), Env: env, DB: db, Body: bson.Doc(raw), Reply: &bson.Builder{}}
	return Dispatch(c)
}

// BenchmarkTxnUpdates: n single-document updates ($inc of one field by
// _id over 10,000 documents) as one multi-document transaction
// (startTransaction, n updates, commitTransaction; a WriteConflict or
// other failure aborts it and counts as an abort) beside the same n
// updates without a transaction, at 1 and 8 clients, keys uniform or
// hot (Zipf s=1.1: a few keys take most updates), in replica-set mode,
// w:1 j:false, at 1, 8 and 40 clients. One op is one transaction (or its
// n plain updates): ops/s counts committed ones, p99-ms is their 99th
// percentile latency (max-ms the longest), abort-% the share of
// transactions aborted,
// cpu-µs/op the process's CPU time per op, and stalled-s the whole
// seconds of the run in which nothing committed (0 unless the run
// deadlocked or stalled; the run's seconds are counted from its start,
// its last partial second excluded). Every write states {w: 1, j: false} (the plain updates and
// commitTransaction; a transaction's statements take none): the replica
// set's implicit default, {w: "majority"}, would wait for the journal.
func BenchmarkTxnUpdates(b *testing.B) {
	for _, n := range []int{1, 4, 16} {
		for _, clients := range []int{1, 8, 40} {
			for _, dist := range []string{"uniform", "hot"} {
				for _, mode := range []string{"plain", "txn"} {
					b.Run(fmt.Sprintf("stmts=%d/clients=%d/%s/%s", n, clients, dist, mode), func(b *testing.B) {
						benchTxnUpdates(b, n, clients, dist == "hot", mode == "txn")
					})
				}
			}
		}
	}
}

func benchTxnUpdates(b *testing.B, n, clients int, hot, txn bool) {
	env := diskEnv(b, true)
	env.Sessions = session.New(session.Options{})
	for i := 0; i < txnBenchDocs; i += 1000 {
		var docs dbson.A
		for k := i; k < i+1000; k++ {
			docs = append(docs, dbson.D{{Key: "_id", Value: k}, {Key: "n", Value: int64(0)}})
		}
		benchDispatch(b, env, dbson.D{{Key: "insert", Value: "t"}, {Key: "documents", Value: docs}})
	}
	update := func(id int) dbson.D {
		return dbson.D{{Key: "update", Value: "t"}, {Key: "updates", Value: dbson.A{dbson.D{{Key: "q", Value: dbson.D{{Key: "_id", Value: id}}},
			{Key: "u", Value: dbson.D{{Key: "$inc", Value: dbson.D{{Key: "n", Value: 1}}}}}}}}}
	}
	var next, committed, aborted atomic.Int64
	lat := make([][]time.Duration, clients)
	// perSecond counts the commits of each second of the run (an hour at
	// most; later seconds are not checked).
	var perSecond [3600]atomic.Int64
	commit := func(t0 time.Time, start time.Time, c int) {
		committed.Add(1)
		now := time.Now()
		lat[c] = append(lat[c], now.Sub(t0))
		if s := int(now.Sub(start) / time.Second); s < len(perSecond) {
			perSecond[s].Add(1)
		}
	}
	var wg sync.WaitGroup
	b.ResetTimer()
	start, cpu := time.Now(), processCPU()
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(c), 7))
			zipf := rand.NewZipf(r, 1.1, 1, txnBenchDocs-1)
			key := func() int {
				if hot {
					return int(zipf.Uint64())
				}
				return r.IntN(txnBenchDocs)
			}
			var id [16]byte
			id[0], id[15] = byte(c), 1
			lsid := dbson.D{{Key: "id", Value: dbson.Binary{Subtype: 4, Data: id[:]}}}
			var txnNumber int64
			for next.Add(1) <= int64(b.N) {
				t0 := time.Now()
				if !txn {
					for range n {
						benchDispatch(b, env, append(update(key()), w1))
					}
					commit(t0, start, c)
					continue
				}
				txnNumber++
				sess := dbson.D{{Key: "lsid", Value: lsid}, {Key: "txnNumber", Value: txnNumber}, {Key: "autocommit", Value: false}}
				good := true
				for s := range n {
					cmd := append(update(key()), sess...) // no writeConcern inside a transaction
					if s == 0 {
						cmd = append(cmd, dbson.E{Key: "startTransaction", Value: true})
					}
					if r := run(b, env, "ycsb", cmd); !ok(r) {
						good = false
						break
					}
				}
				if good {
					good = ok(run(b, env, "admin", append(dbson.D{{Key: "commitTransaction", Value: 1}, w1}, sess...)))
				}
				if !good {
					aborted.Add(1)
					continue
				}
				commit(t0, start, c)
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	stalled := 0
	for s := range min(int(el/time.Second), len(perSecond)) {
		if perSecond[s].Load() == 0 {
			stalled++
		}
	}
	b.ReportMetric(float64(stalled), "stalled-s")
	all := slices.Concat(lat...)
	slices.Sort(all)
	b.ReportMetric(float64(committed.Load())/el.Seconds(), "ops/s")
	// CPU time (every goroutine, the engine's background work included)
	// per op: steadier than ops/s on a shared machine.
	b.ReportMetric(float64(processCPU()-cpu)/1e3/float64(b.N), "cpu-µs/op")
	if len(all) > 0 {
		b.ReportMetric(float64(all[len(all)*99/100].Microseconds())/1000, "p99-ms")
		b.ReportMetric(float64(all[len(all)-1].Microseconds())/1000, "max-ms")
	}
	b.ReportMetric(100*float64(aborted.Load())/float64(max(committed.Load()+aborted.Load(), 1)), "abort-%")
}
