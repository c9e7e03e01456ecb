package command

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	dbson "go.mongodb.org/mongo-driver/v2/bson"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/opctx"
	"github.com/cairndb/cairn/internal/oplog"
	"github.com/cairndb/cairn/internal/repl"
	"github.com/cairndb/cairn/kv"
)

// The oplog's cost on the write path: the same commands through Dispatch
// on an engine over real files (journal, fsync), standalone (no oplog)
// and in replica-set mode (an entry per write), the two modes alternating
// round by round (-count repeats a sub-benchmark back to back, so the
// rounds are sub-benchmarks: each round runs both modes):
//
//	go test ./internal/command -run '^$' -bench BenchmarkOplog -benchtime 1s

func diskEnv(b *testing.B, replica bool) *Env {
	b.Helper()
	db, err := kv.Open(b.TempDir(), &kv.Options{Durability: kv.Lazy, CommitInterval: 100 * time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	env := &Env{Engine: exec.Engine{KV: db}, Cursors: exec.NewCursors(0), Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Started: time.Now()}
	env.SlowMS.Store(opctx.DefaultSlowMS) // as cairnd: not every operation logged
	if replica {
		env.Repl = repl.NewSet("rs0", nil)
		if env.Oplog, err = oplog.Open(db, env.Repl.Clock, oplog.Config{MaxBytes: 990 << 20}, nil); err != nil {
			b.Fatal(err)
		}
		// A member writes only once initiated (as cairnd's default
		// one-member set is at first start).
		env.Repl.SetMe("h:1")
		if err := env.AttachRepl(false); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(env.Repl.Stop)
		if r := run(b, env, "admin", dbson.D{{Key: "replSetInitiate", Value: dbson.D{}}}); !ok(r) {
			b.Fatal(r.String())
		}
	}
	return env
}

// record is a YCSB record: _id and ten 100-byte fields.
func record(id int, r *rand.Rand) dbson.D {
	d := dbson.D{{Key: "_id", Value: fmt.Sprintf("user%d", id)}}
	for f := range 10 {
		d = append(d, dbson.E{Key: fmt.Sprintf("field%d", f), Value: strings.Repeat(string(rune('a'+r.IntN(26))), 100)})
	}
	return d
}

func benchDispatch(b *testing.B, env *Env, body dbson.D) {
	raw, err := dbson.Marshal(append(body, dbson.E{Key: "$db", Value: "ycsb"}))
	if err != nil {
		b.Fatal(err)
	}
	c := &Ctx{Context: context.Background(), Env: env, DB: "ycsb", Body: bson.Doc(raw), Reply: &bson.Builder{}}
	r := Dispatch(c)
	if _, failed := r.Lookup("writeErrors"); !ok(r) || failed {
		b.Fatal(r.String())
	}
}

// parallel runs b.N operations over clients goroutines on env and reports
// ops/s (the clients' rate) and the CPU time per operation, a checkpoint
// after the last operation included: every page the run dirtied is
// written once within the measured CPU time, in both modes. (Without it a
// run's CPU held whatever background checkpoints its journal volume
// happened to trigger: a replica-set run, which journals about twice the
// bytes, paid one or two during the run while a standalone run of the
// same length often paid none, its page writes falling after the
// measurement.)
func parallel(b *testing.B, env *Env, clients int, op func(r *rand.Rand, i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start, cpu := time.Now(), processCPU()
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(c), 1))
			for {
				i := int(next.Add(1)) - 1
				if i >= b.N {
					return
				}
				op(r, i)
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "ops/s")
	if err := env.Engine.KV.Checkpoint(context.Background()); err != nil {
		b.Fatal(err)
	}
	// CPU time (user and system, every goroutine: the engine's background
	// work and the final checkpoint included) per operation: less
	// sensitive than ops/s to other processes on a shared machine.
	b.ReportMetric(float64(processCPU()-cpu)/1e3/float64(b.N), "cpu-µs/op")
}

// processCPU returns the CPU time the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rounds is how many times each case runs both modes, alternating.
const rounds = 5

var modes = []struct {
	name    string
	replica bool
}{{"standalone", false}, {"replset", true}}

// allRounds lists the modes rounds times, alternating.
func allRounds() []struct {
	name    string
	replica bool
} {
	var out []struct {
		name    string
		replica bool
	}
	for range rounds {
		out = append(out, modes...)
	}
	return out
}

func BenchmarkOplogInsert(b *testing.B) {
	for _, j := range []bool{false, true} {
		for _, clients := range []int{1, 8} {
			for round, m := range allRounds() {
				b.Run(fmt.Sprintf("j=%v/clients=%d/round=%d/%s", j, clients, round/2, m.name), func(b *testing.B) {
					env := diskEnv(b, m.replica)
					wc := dbson.D{{Key: "w", Value: 1}, {Key: "j", Value: j}}
					parallel(b, env, clients, func(r *rand.Rand, i int) {
						benchDispatch(b, env, dbson.D{{Key: "insert", Value: "usertable"}, {Key: "documents", Value: dbson.A{record(i, r)}}, {Key: "writeConcern", Value: wc}})
					})
				})
			}
		}
	}
}

// BenchmarkOplogYCSBA is YCSB workload A's mix over 10,000 records: half
// reads of a record by _id, half updates of one field, uniform keys, 8
// clients, j: false.
// w1 is the write concern {w: 1, j: false}, given explicitly: a
// replica set's implicit default is {w: "majority"}, which waits for the
// journal, a standalone's {w: 1}.
var w1 = dbson.E{Key: "writeConcern", Value: dbson.D{{Key: "w", Value: 1}, {Key: "j", Value: false}}}

func BenchmarkOplogYCSBA(b *testing.B) {
	const records = 10000
	for round, m := range allRounds() {
		b.Run(fmt.Sprintf("round=%d/%s", round/2, m.name), func(b *testing.B) {
			env := diskEnv(b, m.replica)
			r := rand.New(rand.NewPCG(1, 2))
			for i := 0; i < records; i += 500 {
				var docs dbson.A
				for k := i; k < i+500; k++ {
					docs = append(docs, record(k, r))
				}
				benchDispatch(b, env, dbson.D{{Key: "insert", Value: "usertable"}, {Key: "documents", Value: docs}})
			}
			parallel(b, env, 8, func(r *rand.Rand, i int) {
				id := fmt.Sprintf("user%d", r.IntN(records))
				if r.IntN(2) == 0 {
					benchDispatch(b, env, dbson.D{{Key: "find", Value: "usertable"}, {Key: "filter", Value: dbson.D{{Key: "_id", Value: id}}}, {Key: "limit", Value: 1}, {Key: "singleBatch", Value: true}})
					return
				}
				field := fmt.Sprintf("field%d", r.IntN(10))
				benchDispatch(b, env, dbson.D{{Key: "update", Value: "usertable"}, {Key: "updates", Value: dbson.A{dbson.D{{Key: "q", Value: dbson.D{{Key: "_id", Value: id}}},
					{Key: "u", Value: dbson.D{{Key: "$set", Value: dbson.D{{Key: field, Value: strings.Repeat("z", 100)}}}}}}}}, w1})
			})
		})
	}
}
