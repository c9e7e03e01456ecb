package e2e

import (
	"context"
	"encoding/json"
	"os/exec"
	"testing"
	"time"

	"github.com/cairndb/cairn/internal/testutil/cairndtest"
)

// mongoshScript loads a collection through mongosh's helpers and prints,
// as one line of relaxed Extended JSON, what db.serverStatus(),
// db.currentOp(), db.c.validate() and db.c.stats() answered.
const mongoshScript = `
const s = db.getSiblingDB("sh");
const docs = [];
for (let i = 0; i < 100; i++) docs.push({_id: i, a: i % 7});
s.c.insertMany(docs);
s.c.createIndex({a: 1});
s.c.find({a: 3}).sort({_id: -1}).toArray();
const ss = db.serverStatus();
const co = db.currentOp();
const v = s.c.validate({full: true});
const st = s.c.stats();
print(EJSON.stringify({
  ss: {ok: ss.ok, process: ss.process, version: ss.version, insert: ss.opcounters.insert,
       inserted: ss.metrics.document.inserted, scanned: ss.metrics.queryExecutor.scanned,
       lockW: ss.locks.Global.acquireCount.w, queue: ss.globalLock.currentQueue.total,
       engine: ss.storageEngine.name, commits: ss.cairn.journal.commits},
  co: {ok: co.ok, n: co.inprog.length, self: co.inprog.some(op => op.command && op.command.aggregate === 1)},
  v: {ok: v.ok, valid: v.valid, nrecords: v.nrecords, keys: v.keysPerIndex["a_1"], errors: v.errors.length},
  st: {ok: st.ok, ns: st.ns, count: st.count, nindexes: st.nindexes, indexSize: st.indexSizes["a_1"]}
}));
`

// TestMongosh runs MongoDB's shell, when it is installed, against cairnd:
// db.serverStatus(), db.currentOp(), db.c.validate() and db.c.stats() must
// answer as they do against mongod.
func TestMongosh(t *testing.T) {
	bin, err := exec.LookPath("mongosh")
	if err != nil {
		t.Skip("mongosh is not installed (npm install -g mongosh)")
	}
	srv := cairndtest.Start(t)
	c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(c, bin, "--quiet", "--norc", srv.URI, "--eval", mongoshScript).CombinedOutput()
	if err != nil {
		t.Fatalf("mongosh: %v\n%s", err, out)
	}
	var got struct {
		SS struct {
			OK                               float64
			Process, Version, Engine         string
			Insert, Inserted, Scanned, LockW int64
			Queue                            int32
			Commits                          int64
		}
		CO struct {
			OK   float64
			N    int
			Self bool
		}
		V struct {
			OK             float64
			Valid          bool
			Nrecords, Keys int64
			Errors         int
		}
		ST struct {
			OK              float64
			NS              string
			Count, Nindexes int64
			IndexSize       int64
		}
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("mongosh printed %s: %v", out, err)
	}
	if s := got.SS; s.OK != 1 || s.Process != "cairnd" || s.Version != "7.0.0" || s.Engine != "cairn" || s.Insert != 100 || s.Inserted != 100 ||
		s.Scanned < 14 || s.LockW < 2 || s.Queue != 0 || s.Commits < 2 {
		t.Errorf("db.serverStatus(): %+v", s)
	}
	if o := got.CO; o.OK != 1 || o.N < 1 || !o.Self {
		t.Errorf("db.currentOp(): %+v", o)
	}
	if v := got.V; v.OK != 1 || !v.Valid || v.Nrecords != 100 || v.Keys != 100 || v.Errors != 0 {
		t.Errorf("db.c.validate({full: true}): %+v", v)
	}
	if s := got.ST; s.OK != 1 || s.NS != "sh.c" || s.Count != 100 || s.Nindexes != 2 || s.IndexSize <= 0 {
		t.Errorf("db.c.stats(): %+v", s)
	}
}
