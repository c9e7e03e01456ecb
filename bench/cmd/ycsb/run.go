package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Database and collection of YCSB's MongoDB binding.
const (
	dbName   = "ycsb"
	collName = "usertable"
)

// runConfig is one run: a workload (or the load phase) at a concurrency.
type runConfig struct {
	uri       string
	w         workload
	threads   int
	records   int64 // records present when the run starts
	opCount   int64
	maxTime   time.Duration
	serverPID int
	seed      uint64
	load      bool // insert records [records, records+opCount)
}

// RunResult is one run's outcome.
type RunResult struct {
	Workload    string             `json:"workload"`
	Threads     int                `json:"threads"`
	Records     int64              `json:"records"`
	Operations  int64              `json:"operations"`
	Seconds     float64            `json:"seconds"`
	Throughput  float64            `json:"ops_per_sec"`
	Ops         map[string]OpStats `json:"ops"`
	Sched       *SchedFigures      `json:"sched,omitempty"`
	ClientCPUus float64            `json:"client_cpu_us_per_op"`
	// Inserted is how many records the run's inserts added.
	Inserted int64 `json:"inserted,omitempty"`
}

// worker is one client goroutine: its own mongo.Client with a pool of one
// connection, so that every goroutine owns a socket, as YCSB's threads
// each hold their own.
type worker struct {
	client *mongo.Client
	coll   *mongo.Collection
	admin  *mongo.Database
	rng    *rand.Rand
	keys   keyChooser
	ins    *ackCounter
	hist   *opHists
	value  []byte
	scan   *uniform
}

func dial(ctx context.Context, uri string) (*mongo.Client, error) {
	c, err := mongo.Connect(options.Client().ApplyURI(uri).SetMaxPoolSize(1).SetMinPoolSize(1))
	if err != nil {
		return nil, err
	}
	// Open the connection before the clock starts.
	if err := c.Ping(ctx, nil); err != nil {
		_ = c.Disconnect(ctx)
		return nil, fmt.Errorf("ping: %w", err)
	}
	return c, nil
}

func run(ctx context.Context, rc runConfig) (*RunResult, error) {
	workers := make([]*worker, rc.threads)
	ins := newAckCounter(rc.records)
	var dialErr error
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := dial(ctx, rc.uri)
			if err != nil {
				mu.Lock()
				dialErr = err
				mu.Unlock()
				return
			}
			rng := rand.New(rand.NewPCG(rc.seed, uint64(i)))
			w := &worker{client: c, coll: c.Database(dbName).Collection(collName), admin: c.Database("admin"),
				rng: rng, ins: ins, hist: newOpHists(), value: make([]byte, fieldLength)}
			if !rc.load && rc.w.name != "ping" {
				w.keys, err = newKeyChooser(rc.w, rc.records, rc.opCount, ins, rng)
				if err != nil {
					mu.Lock()
					dialErr = err
					mu.Unlock()
				}
				w.scan = &uniform{lo: 1, hi: max(rc.w.maxScanLen, 1), rng: rng}
			}
			workers[i] = w
		}()
	}
	wg.Wait()
	defer func() {
		for _, w := range workers {
			if w != nil {
				_ = w.client.Disconnect(context.Background())
			}
		}
	}()
	if dialErr != nil {
		return nil, dialErr
	}

	label := fmt.Sprintf("%s %d clients", rc.w.name, rc.threads)
	if rc.load {
		label = fmt.Sprintf("load %d clients", rc.threads)
	}
	var done, ticket atomic.Int64
	stop := make(chan struct{})
	go progress(label, &done, rc.opCount, stop)
	deadline := time.Now().Add(rc.maxTime)
	before, schedOK := readSched(rc.serverPID)
	cpu0 := processCPU()
	start := time.Now()
	var firstErr atomic.Pointer[error]
	for _, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ch := newChooser(rc.w.proportions)
			for {
				t := ticket.Add(1)
				if t > rc.opCount || t%64 == 0 && time.Now().After(deadline) {
					return
				}
				var err error
				if rc.load {
					err = w.insert(ctx, rc.records+t-1)
				} else {
					err = w.do(ctx, ch.next(w.rng))
				}
				if err != nil {
					firstErr.CompareAndSwap(nil, &err)
				}
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu1 := processCPU()
	after, _ := readSched(rc.serverPID)
	close(stop)
	if p := firstErr.Load(); p != nil {
		fmt.Printf("# %s: first error: %v\n", label, *p)
	}

	all := newOpHists()
	for _, w := range workers {
		all.merge(w.hist)
	}
	n := done.Load()
	res := &RunResult{Workload: rc.w.name, Threads: rc.threads, Records: rc.records, Operations: n,
		Seconds: elapsed.Seconds(), Throughput: float64(n) / elapsed.Seconds(), Ops: all.summary(),
		ClientCPUus: float64(cpu1-cpu0) / 1e3 / float64(max(n, 1))}
	if rc.load {
		res.Workload = "load"
		res.Inserted = n
	} else {
		res.Inserted = ins.nextInsert() - rc.records
	}
	if schedOK {
		res.Sched = figures(before, after, n)
	}
	return res, nil
}

// do runs one transaction of the workload, as CoreWorkload.doTransaction.
func (w *worker) do(ctx context.Context, op int) error {
	switch op {
	case opRead:
		return w.read(ctx, keyName(w.nextKey()))
	case opUpdate:
		return w.update(ctx, keyName(w.nextKey()))
	case opInsert:
		n := w.ins.nextInsert()
		defer w.ins.acknowledge(n)
		return w.insert(ctx, n)
	case opScan:
		return w.scanOp(ctx, keyName(w.nextKey()), w.scan.next())
	case opRMW:
		key := keyName(w.nextKey())
		t0 := time.Now()
		if err := w.read(ctx, key); err != nil {
			return err
		}
		err := w.update(ctx, key)
		w.hist.record(opRMW, time.Since(t0))
		return err
	case opPing:
		t0 := time.Now()
		err := w.admin.RunCommand(ctx, bson.D{{Key: "ping", Value: 1}}).Err()
		return w.done(opPing, t0, err)
	}
	return fmt.Errorf("unknown operation %d", op)
}

// nextKey is CoreWorkload.nextKeynum: keys beyond the last acknowledged
// insert are drawn again.
func (w *worker) nextKey() int64 {
	last := w.ins.last()
	for {
		if k := w.keys.next(); k <= last {
			return k
		}
	}
}

func (w *worker) done(op int, t0 time.Time, err error) error {
	if err != nil {
		w.hist.errors[op]++
		return err
	}
	w.hist.record(op, time.Since(t0))
	return nil
}

// read is the binding's read: find {_id: key}, first document, all fields.
func (w *worker) read(ctx context.Context, key string) error {
	t0 := time.Now()
	_, err := w.coll.FindOne(ctx, bson.D{{Key: "_id", Value: key}}).Raw()
	if errors.Is(err, mongo.ErrNoDocuments) {
		w.hist.notFound[opRead]++
		err = nil
	}
	return w.done(opRead, t0, err)
}

// update is the binding's update: $set of one random field.
func (w *worker) update(ctx context.Context, key string) error {
	randomValue(w.value, w.rng)
	field := fieldNames[w.rng.IntN(fieldCount)]
	t0 := time.Now()
	res, err := w.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: key}},
		bson.D{{Key: "$set", Value: bson.D{{Key: field, Value: bson.Binary{Data: w.value}}}}})
	if err == nil && res.MatchedCount == 0 {
		w.hist.notFound[opUpdate]++
	}
	return w.done(opUpdate, t0, err)
}

// insert is the binding's insert (batchsize 1): insertOne of {_id: key,
// field0..field9} with binary values (the load phase too, reported as
// INSERT as YCSB does).
func (w *worker) insert(ctx context.Context, n int64) error {
	doc := make(bson.D, 0, fieldCount+1)
	doc = append(doc, bson.E{Key: "_id", Value: keyName(n)})
	for i := 0; i < fieldCount; i++ {
		v := make([]byte, fieldLength)
		randomValue(v, w.rng)
		doc = append(doc, bson.E{Key: fieldNames[i], Value: bson.Binary{Data: v}})
	}
	t0 := time.Now()
	_, err := w.coll.InsertOne(ctx, doc)
	return w.done(opInsert, t0, err)
}

// scanOp is the binding's scan: find {_id: {$gte: key}} sort {_id: 1}
// limit n, every document read.
func (w *worker) scanOp(ctx context.Context, key string, n int64) error {
	t0 := time.Now()
	cur, err := w.coll.Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: key}}}},
		options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetLimit(n))
	if err != nil {
		return w.done(opScan, t0, err)
	}
	got := 0
	for cur.Next(ctx) {
		got++
	}
	err = cur.Err()
	_ = cur.Close(ctx)
	if err == nil && got == 0 {
		w.hist.notFound[opScan]++
	}
	return w.done(opScan, t0, err)
}
