package command

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	dbson "go.mongodb.org/mongo-driver/v2/bson"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/index"
	"github.com/cairndb/cairn/kv"
)

// buildEnv is a server environment over an in-memory engine, driven by
// Dispatch as a connection would.
type buildEnv struct {
	t   *testing.T
	env *Env
}

func newBuildEnv(t *testing.T) *buildEnv {
	t.Helper()
	env := memEnv(t)
	env.TempDir = t.TempDir()
	return &buildEnv{t: t, env: env}
}

// run dispatches one command on db "t" (admin for currentOp and
// $currentOp) and returns its reply decoded.
func (e *buildEnv) run(ctx context.Context, body dbson.D) dbson.M {
	db := "t"
	if body[0].Key == "currentOp" || body[0].Key == "aggregate" && body[0].Value == 1 || body[0].Key == "killOp" {
		db = "admin"
	}
	raw, err := dbson.Marshal(append(body, dbson.E{Key: "$db", Value: db}))
	if err != nil {
		e.t.Error(err)
		return nil
	}
	c := &Ctx{Context: ctx, Env: e.env, DB: db, Body: bson.Doc(raw), Reply: &bson.Builder{}}
	dec := dbson.NewDecoder(dbson.NewDocumentReader(bytes.NewReader(Dispatch(c))))
	dec.DefaultDocumentM()
	var m dbson.M
	if err := dec.Decode(&m); err != nil {
		e.t.Error(err)
	}
	return m
}

// must runs body and fails the test unless it succeeded.
func (e *buildEnv) must(body dbson.D) dbson.M {
	e.t.Helper()
	r := e.run(context.Background(), body)
	if r["ok"] != 1.0 {
		e.t.Fatalf("%v: %v", body[0].Key, r)
	}
	return r
}

func code(r dbson.M) int32 {
	c, _ := r["code"].(int32)
	return c
}

// ids runs find with the hint and returns the sorted _ids found.
func (e *buildEnv) ids(filter dbson.D, hint any) []int64 {
	e.t.Helper()
	r := e.must(dbson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: filter}, {Key: "hint", Value: hint}, {Key: "batchSize", Value: 1 << 20}, {Key: "projection", Value: dbson.D{{Key: "_id", Value: 1}}}})
	batch := r["cursor"].(dbson.M)["firstBatch"].(dbson.A)
	out := make([]int64, 0, len(batch))
	for _, d := range batch {
		out = append(out, toInt64(d.(dbson.M)["_id"]))
	}
	slices.Sort(out)
	return out
}

func toInt64(v any) int64 {
	switch n := v.(type) {
	case int32:
		return int64(n)
	case int64:
		return n
	}
	return -1
}

// load inserts n documents: _id i, a random a in [0,100), u = i (unique),
// an array arr of two values, a string s.
func (e *buildEnv) load(n int, rng *rand.Rand) {
	for i := 0; i < n; {
		var docs dbson.A
		for ; i < n && len(docs) < 2000; i++ {
			docs = append(docs, testDoc(int64(i), int64(i), rng))
		}
		e.must(dbson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: docs}})
	}
}

func testDoc(id, u int64, rng *rand.Rand) dbson.D {
	return dbson.D{{Key: "_id", Value: id}, {Key: "a", Value: rng.IntN(100)}, {Key: "u", Value: u},
		{Key: "arr", Value: dbson.A{rng.IntN(50), rng.IntN(50)}}, {Key: "s", Value: fmt.Sprintf("s%03d", rng.IntN(500))}}
}

// setHook installs the index-build hook for the test.
func setHook(t *testing.T, env *Env, h func(index.Phase)) {
	env.State.IndexBuildHook = h
	t.Cleanup(func() { env.State.IndexBuildHook = nil })
}

// treesLeft lists the kv trees of indexes being built or named name.
func (e *buildEnv) treesLeft(name string) []string {
	var left []string
	e.env.KV.View(func(tx *kv.Tx) error {
		return tx.ForEachTree(func(n string) error {
			if strings.HasPrefix(n, "b:") || strings.HasSuffix(n, ":"+name) {
				left = append(left, n)
			}
			return nil
		})
	})
	return left
}

// TestIndexBuildConcurrentWrites builds several indexes (one of them
// unique, one multikey, one partial) while writers insert, update and
// delete documents during the scan and the load; afterwards validate
// finds collection and indexes consistent, and every query through each
// new index returns exactly what a collection scan returns.
func TestIndexBuildConcurrentWrites(t *testing.T) {
	e := newBuildEnv(t)
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 10000
	e.load(n, rng)

	var writes atomic.Int64
	nextID := atomic.Int64{}
	nextID.Store(n)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 9))
			for {
				select {
				case <-stop:
					return
				default:
				}
				var r dbson.M
				switch rng.IntN(3) {
				case 0:
					id := nextID.Add(1)
					r = e.run(context.Background(), dbson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: dbson.A{testDoc(id, id, rng)}}})
				case 1:
					u := nextID.Add(1) // u stays unique
					r = e.run(context.Background(), dbson.D{{Key: "update", Value: "c"}, {Key: "updates", Value: dbson.A{dbson.D{
						{Key: "q", Value: dbson.D{{Key: "_id", Value: rng.Int64N(nextID.Load())}}},
						{Key: "u", Value: dbson.D{{Key: "$set", Value: dbson.D{{Key: "a", Value: rng.IntN(100)}, {Key: "u", Value: u}, {Key: "arr", Value: dbson.A{rng.IntN(50), 7, rng.IntN(50)}}}}}}}}}})
				default:
					r = e.run(context.Background(), dbson.D{{Key: "delete", Value: "c"}, {Key: "deletes", Value: dbson.A{dbson.D{
						{Key: "q", Value: dbson.D{{Key: "_id", Value: rng.Int64N(nextID.Load())}}}, {Key: "limit", Value: 1}}}}})
				}
				if r["ok"] != 1.0 || r["writeErrors"] != nil {
					t.Errorf("write during the build: %v", r)
					return
				}
				writes.Add(1)
			}
		}()
	}
	defer func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		wg.Wait()
	}()
	// Hold the build at the start of its scan, and before its commit,
	// until the writers have done some work in each window.
	waitWrites := func(k int64) {
		deadline := time.Now().Add(20 * time.Second)
		for target := writes.Load() + k; writes.Load() < target && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
	}
	var phases []index.Phase
	setHook(t, e.env, func(ph index.Phase) {
		phases = append(phases, ph)
		if ph != index.PhaseDrain { // the drain holds the writer
			waitWrites(200)
		}
	})
	e.must(dbson.D{{Key: "createIndexes", Value: "c"}, {Key: "indexes", Value: dbson.A{
		dbson.D{{Key: "key", Value: dbson.D{{Key: "a", Value: 1}}}, {Key: "name", Value: "a_1"}},
		dbson.D{{Key: "key", Value: dbson.D{{Key: "u", Value: 1}}}, {Key: "name", Value: "u_1"}, {Key: "unique", Value: true}},
		dbson.D{{Key: "key", Value: dbson.D{{Key: "arr", Value: 1}}}, {Key: "name", Value: "arr_1"}},
		dbson.D{{Key: "key", Value: dbson.D{{Key: "s", Value: -1}, {Key: "a", Value: 1}}}, {Key: "name", Value: "s_-1_a_1"},
			{Key: "partialFilterExpression", Value: dbson.D{{Key: "a", Value: dbson.D{{Key: "$gte", Value: 50}}}}}},
	}}})
	waitWrites(100) // writes after the build go to the ready indexes
	close(stop)
	wg.Wait()
	if !slices.Equal(phases, []index.Phase{index.PhaseScan, index.PhaseLoad, index.PhaseDrain}) {
		t.Fatalf("build phases %v", phases)
	}
	if writes.Load() < 500 {
		t.Fatalf("only %d writes during the test", writes.Load())
	}

	v := e.must(dbson.D{{Key: "validate", Value: "c"}})
	if v["valid"] != true {
		t.Fatalf("validate after a build with concurrent writes: %v", v)
	}
	if len(e.treesLeft("none")) != 0 {
		t.Fatalf("side trees left: %v", e.treesLeft("none"))
	}
	natural := dbson.D{{Key: "$natural", Value: 1}}
	for _, q := range []struct {
		filter dbson.D
		hint   string
	}{
		{dbson.D{{Key: "a", Value: 7}}, "a_1"},
		{dbson.D{{Key: "a", Value: dbson.D{{Key: "$gte", Value: 90}}}}, "a_1"},
		{dbson.D{{Key: "u", Value: dbson.D{{Key: "$gte", Value: n - 500}}}}, "u_1"},
		{dbson.D{{Key: "arr", Value: 7}}, "arr_1"},
		{dbson.D{{Key: "arr", Value: dbson.D{{Key: "$lt", Value: 3}}}}, "arr_1"},
		{dbson.D{{Key: "s", Value: dbson.D{{Key: "$gte", Value: "s400"}}}, {Key: "a", Value: dbson.D{{Key: "$gte", Value: 60}}}}, "s_-1_a_1"},
	} {
		want := e.ids(q.filter, natural)
		got := e.ids(q.filter, q.hint)
		if len(want) == 0 || !slices.Equal(got, want) {
			t.Errorf("%v through %s: %d documents, collection scan %d", q.filter, q.hint, len(got), len(want))
		}
	}
	// The multikey flag set by the writers' arrays and the scan survives.
	e.env.KV.View(func(tx *kv.Tx) error {
		coll, _ := catalog.Get(tx, "t", "c")
		for _, ix := range coll.Indexes {
			if !ix.Ready || ix.Build != "" || (ix.Name == "arr_1") != ix.Multikey {
				t.Errorf("index %s after the build: %+v", ix.Name, ix)
			}
		}
		return nil
	})
}

// TestIndexBuildUniqueConcurrentDuplicates: a duplicate written while a
// unique index is built is accepted (the write does not fail) and fails
// the build with 11000, leaving nothing behind; a duplicate that is gone
// again before the build commits — written during the build, or present
// in its snapshot and deleted during it — does not fail it.
func TestIndexBuildUniqueConcurrentDuplicates(t *testing.T) {
	unique := dbson.D{{Key: "createIndexes", Value: "c"}, {Key: "indexes", Value: dbson.A{
		dbson.D{{Key: "key", Value: dbson.D{{Key: "u", Value: 1}}}, {Key: "name", Value: "u_1"}, {Key: "unique", Value: true}}}}}
	cases := []struct {
		name string
		// before runs before the build, during at the given phase.
		before, during func(e *buildEnv)
		phase          index.Phase
		fails          bool
	}{
		{name: "inserted during the scan", phase: index.PhaseScan, fails: true, during: func(e *buildEnv) {
			e.must(dbson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: dbson.A{dbson.D{{Key: "_id", Value: -1}, {Key: "u", Value: 5}}}}})
		}},
		{name: "updated into a duplicate before the load", phase: index.PhaseLoad, fails: true, during: func(e *buildEnv) {
			e.must(dbson.D{{Key: "update", Value: "c"}, {Key: "updates", Value: dbson.A{dbson.D{{Key: "q", Value: dbson.D{{Key: "_id", Value: 10}}}, {Key: "u", Value: dbson.D{{Key: "$set", Value: dbson.D{{Key: "u", Value: 11}}}}}}}}})
		}},
		{name: "inserted and deleted during the scan", phase: index.PhaseScan, during: func(e *buildEnv) {
			e.must(dbson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: dbson.A{dbson.D{{Key: "_id", Value: -1}, {Key: "u", Value: 5}}}}})
			e.must(dbson.D{{Key: "delete", Value: "c"}, {Key: "deletes", Value: dbson.A{dbson.D{{Key: "q", Value: dbson.D{{Key: "_id", Value: -1}}}, {Key: "limit", Value: 1}}}}})
		}},
		{name: "in the snapshot, deleted during the scan", phase: index.PhaseScan, before: func(e *buildEnv) {
			e.must(dbson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: dbson.A{dbson.D{{Key: "_id", Value: -1}, {Key: "u", Value: 5}}}}})
		}, during: func(e *buildEnv) {
			e.must(dbson.D{{Key: "delete", Value: "c"}, {Key: "deletes", Value: dbson.A{dbson.D{{Key: "q", Value: dbson.D{{Key: "_id", Value: 5}}}, {Key: "limit", Value: 1}}}}})
		}},
		{name: "in the snapshot, changed during the scan", phase: index.PhaseScan, before: func(e *buildEnv) {
			e.must(dbson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: dbson.A{dbson.D{{Key: "_id", Value: -1}, {Key: "u", Value: 5}}}}})
		}, during: func(e *buildEnv) {
			e.must(dbson.D{{Key: "update", Value: "c"}, {Key: "updates", Value: dbson.A{dbson.D{{Key: "q", Value: dbson.D{{Key: "_id", Value: -1}}}, {Key: "u", Value: dbson.D{{Key: "$set", Value: dbson.D{{Key: "u", Value: -5}}}}}}}}})
		}},
		{name: "in the snapshot, kept", phase: index.PhaseScan, fails: true, before: func(e *buildEnv) {
			e.must(dbson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: dbson.A{dbson.D{{Key: "_id", Value: -1}, {Key: "u", Value: 5}}}}})
		}, during: func(e *buildEnv) {
			e.must(dbson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: dbson.A{dbson.D{{Key: "_id", Value: -2}, {Key: "u", Value: -2}}}}})
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newBuildEnv(t)
			e.load(1000, rand.New(rand.NewPCG(5, 6)))
			if tc.before != nil {
				tc.before(e)
			}
			setHook(t, e.env, func(ph index.Phase) {
				if ph == tc.phase {
					tc.during(e)
				}
			})
			r := e.run(context.Background(), unique)
			if !tc.fails {
				if r["ok"] != 1.0 {
					t.Fatalf("build failed: %v", r)
				}
				if v := e.must(dbson.D{{Key: "validate", Value: "c"}}); v["valid"] != true {
					t.Fatalf("validate: %v", v)
				}
				if got, want := e.ids(dbson.D{{Key: "u", Value: dbson.D{{Key: "$lte", Value: 20}}}}, "u_1"), e.ids(dbson.D{{Key: "u", Value: dbson.D{{Key: "$lte", Value: 20}}}}, dbson.D{{Key: "$natural", Value: 1}}); !slices.Equal(got, want) {
					t.Fatalf("through u_1 %v, collection scan %v", got, want)
				}
				return
			}
			if code(r) != 11000 || !strings.Contains(fmt.Sprint(r["errmsg"]), "E11000 duplicate key error collection: t.c index: u_1 dup key: { u: ") {
				t.Fatalf("build with a duplicate: %v", r)
			}
			list := e.must(dbson.D{{Key: "listIndexes", Value: "c"}})
			if n := len(list["cursor"].(dbson.M)["firstBatch"].(dbson.A)); n != 1 {
				t.Fatalf("%d indexes after a failed build", n)
			}
			if left := e.treesLeft("u_1"); len(left) != 0 {
				t.Fatalf("trees left by a failed build: %v", left)
			}
			// The collection is writable and indexable again.
			e.must(dbson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: dbson.A{dbson.D{{Key: "_id", Value: -3}, {Key: "u", Value: 5}}}}})
			if v := e.must(dbson.D{{Key: "validate", Value: "c"}}); v["valid"] != true {
				t.Fatalf("validate: %v", v)
			}
		})
	}
}

// TestIndexBuildCurrentOp: currentOp and $currentOp show a build in
// progress as mongod does (op "command", the createIndexes command, msg
// and progress); killOp aborts it and dropIndexes aborts it, each leaving
// nothing behind; a second createIndexes of the same index waits for the
// build.
func TestIndexBuildCurrentOp(t *testing.T) {
	e := newBuildEnv(t)
	const n = 4000
	e.load(n, rand.New(rand.NewPCG(7, 8)))
	create := dbson.D{{Key: "createIndexes", Value: "c"}, {Key: "indexes", Value: dbson.A{
		dbson.D{{Key: "key", Value: dbson.D{{Key: "a", Value: 1}}}, {Key: "name", Value: "a_1"}}}}}
	held := make(chan index.Phase)
	release := make(chan struct{})
	setHook(t, e.env, func(ph index.Phase) {
		held <- ph
		<-release
	})
	// finish releases the build at every phase until it answers.
	finish := func(done chan dbson.M) dbson.M {
		for {
			select {
			case r := <-done:
				return r
			case <-held:
				release <- struct{}{}
			}
		}
	}
	start := func() chan dbson.M {
		done := make(chan dbson.M, 1)
		go func() { done <- e.run(context.Background(), create) }()
		return done
	}
	buildOp := func() dbson.M {
		t.Helper()
		r := e.must(dbson.D{{Key: "currentOp", Value: 1}, {Key: "command.createIndexes", Value: "c"}, {Key: "msg", Value: dbson.D{{Key: "$exists", Value: true}}}})
		ops := r["inprog"].(dbson.A)
		if len(ops) != 1 {
			t.Fatalf("currentOp lists %d builds: %v", len(ops), r)
		}
		return ops[0].(dbson.M)
	}

	// Held at the start of the scan.
	done := start()
	if ph := <-held; ph != index.PhaseScan {
		t.Fatalf("first phase %v", ph)
	}
	op := buildOp()
	wantMsg := fmt.Sprintf("Index Build: scanning collection Index Build: scanning collection: 0/%d 0%%", n)
	if op["op"] != "command" || op["ns"] != "t.c" || op["msg"] != wantMsg {
		t.Fatalf("build in currentOp: %v", op)
	}
	if p := op["progress"].(dbson.M); p["done"] != int64(0) || p["total"] != int64(n) {
		t.Fatalf("progress %v", p)
	}
	// $currentOp (what db.currentOp() runs) shows it too.
	agg := e.must(dbson.D{{Key: "aggregate", Value: 1}, {Key: "pipeline", Value: dbson.A{dbson.D{{Key: "$currentOp", Value: dbson.D{}}},
		dbson.D{{Key: "$match", Value: dbson.D{{Key: "msg", Value: dbson.D{{Key: "$exists", Value: true}}}}}}}}, {Key: "cursor", Value: dbson.D{}}})
	aggOps := agg["cursor"].(dbson.M)["firstBatch"].(dbson.A)
	if len(aggOps) != 1 || aggOps[0].(dbson.M)["msg"] != wantMsg {
		t.Fatalf("$currentOp: %v", agg)
	}
	// Reads go on; a write goes to the side tree; listIndexes does not
	// list the index yet; a hint on it is refused.
	e.must(dbson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: dbson.A{testDoc(n, n, rand.New(rand.NewPCG(1, 1)))}}})
	if got := len(e.ids(dbson.D{}, dbson.D{{Key: "$natural", Value: 1}})); got != n+1 {
		t.Fatalf("read during the build found %d documents", got)
	}
	if list := e.must(dbson.D{{Key: "listIndexes", Value: "c"}}); len(list["cursor"].(dbson.M)["firstBatch"].(dbson.A)) != 1 {
		t.Fatalf("listIndexes lists a building index: %v", list)
	}
	if r := e.run(context.Background(), dbson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: dbson.D{{Key: "a", Value: 1}}}, {Key: "hint", Value: "a_1"}}); code(r) != 2 {
		t.Fatalf("hint on a building index: %v", r)
	}
	// A second request for the same index waits for the build.
	second := make(chan dbson.M, 1)
	go func() { second <- e.run(context.Background(), create) }()
	select {
	case r := <-second:
		t.Fatalf("second createIndexes answered during the build: %v", r)
	case <-time.After(50 * time.Millisecond):
	}
	release <- struct{}{}
	if ph := <-held; ph != index.PhaseLoad {
		t.Fatalf("second phase %v", ph)
	}
	op = buildOp()
	if msg := op["msg"].(string); !strings.HasPrefix(msg, "Index Build: inserting keys from external sorter into index Index Build: inserting keys from external sorter into index: 0/") {
		t.Fatalf("load phase msg %q", msg)
	}
	release <- struct{}{}
	if ph := <-held; ph != index.PhaseDrain {
		t.Fatalf("third phase %v", ph)
	}
	release <- struct{}{}
	if r := <-done; r["ok"] != 1.0 || r["numIndexesAfter"] != int32(2) {
		t.Fatalf("build: %v", r)
	}
	if r := <-second; r["ok"] != 1.0 || r["note"] != "all indexes already exist" {
		t.Fatalf("second createIndexes: %v", r)
	}
	if v := e.must(dbson.D{{Key: "validate", Value: "c"}}); v["valid"] != true || v["keysPerIndex"].(dbson.M)["a_1"] != int64(n+1) {
		t.Fatalf("validate: %v", v)
	}
	e.must(dbson.D{{Key: "dropIndexes", Value: "c"}, {Key: "index", Value: "a_1"}})

	// killOp aborts the build.
	done = start()
	<-held
	id := buildOp()["opid"]
	e.must(dbson.D{{Key: "killOp", Value: 1}, {Key: "op", Value: id}})
	release <- struct{}{}
	if r := finish(done); code(r) != 11601 {
		t.Fatalf("killed build: %v", r)
	}
	if left := e.treesLeft("a_1"); len(left) != 0 {
		t.Fatalf("trees left by a killed build: %v", left)
	}

	// dropIndexes aborts the build.
	done = start()
	<-held
	e.must(dbson.D{{Key: "dropIndexes", Value: "c"}, {Key: "index", Value: "a_1"}})
	release <- struct{}{}
	if r := finish(done); code(r) != 276 {
		t.Fatalf("build whose index was dropped: %v", r)
	}
	if left := e.treesLeft("a_1"); len(left) != 0 {
		t.Fatalf("trees left by an aborted build: %v", left)
	}
	if v := e.must(dbson.D{{Key: "validate", Value: "c"}}); v["valid"] != true {
		t.Fatalf("validate: %v", v)
	}
}

// TestAbortUnfinishedBuilds: a build registered but never finished (the
// server stopped) is removed at startup with its trees.
func TestAbortUnfinishedBuilds(t *testing.T) {
	e := newBuildEnv(t)
	e.load(100, rand.New(rand.NewPCG(1, 1)))
	raw, _ := dbson.Marshal(dbson.D{{Key: "key", Value: dbson.D{{Key: "a", Value: 1}}}, {Key: "name", Value: "a_1"}})
	spec, err := index.Parse(bson.Doc(raw))
	if err != nil {
		t.Fatal(err)
	}
	err = e.env.KV.Update(context.Background(), func(tx *kv.Tx) error {
		coll, err := catalog.Get(tx, "t", "c")
		if err != nil {
			return err
		}
		next := *coll
		b := &exec.IndexBuild{ID: "x", Targets: []*index.BuildTarget{{Spec: spec}}}
		if err := b.Register(tx, &next); err != nil {
			return err
		}
		return catalog.Put(tx, &next)
	})
	if err != nil {
		t.Fatal(err)
	}
	// Writes meanwhile go to the side tree.
	e.must(dbson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: dbson.A{dbson.D{{Key: "_id", Value: -1}, {Key: "a", Value: 1}}}}})
	if left := e.treesLeft("a_1"); len(left) != 2 {
		t.Fatalf("registered build's trees: %v", left)
	}
	if n, err := exec.AbortUnfinishedBuilds(context.Background(), e.env.KV); n != 1 || err != nil {
		t.Fatalf("AbortUnfinishedBuilds = %d, %v", n, err)
	}
	if left := e.treesLeft("a_1"); len(left) != 0 {
		t.Fatalf("trees left: %v", left)
	}
	e.must(dbson.D{{Key: "createIndexes", Value: "c"}, {Key: "indexes", Value: dbson.A{dbson.Raw(raw)}}})
	if v := e.must(dbson.D{{Key: "validate", Value: "c"}}); v["valid"] != true {
		t.Fatalf("validate: %v", v)
	}
}
