package conformance

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/cairndb/cairn/internal/testutil/cairndtest"
)

const knownFailuresFile = "testdata/known_failures.txt"

// suites are the unified-format folders of ../shared/conformance, in the
// order they run.
var suites = []string{
	"crud-unified",
	"collection-management-unified",
	"index-management-unified",
	"run-command-unified",
	"gridfs-unified",
	"versioned-api-unified",
	"command-logging-and-monitoring-monitoring-unified",
	"read-write-concern-operation-unified",
	"sessions-unified",
	"causal-consistency-unified",
	"retryable-writes-unified",
	"retryable-reads-unified",
	"transactions-unified",
	"transactions-convenient-api-unified",
	"change-streams-unified",
}

// conformanceDir is MongoDB's test data, next to the repository (never in it).
func conformanceDir() string {
	return filepath.Join(cairndtest.RepoRoot(), "..", "shared", "conformance")
}

func suiteDir(suite string) string { return filepath.Join(conformanceDir(), suite) }

// crudDir is kept for the tests that use one CRUD file.
func crudDir() string { return suiteDir("crud-unified") }

func loadCorpus(t *testing.T, dir string) []*specFile {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(paths)
	files := make([]*specFile, 0, len(paths))
	for _, p := range paths {
		f, err := loadSpecFile(p, strings.TrimSuffix(filepath.Base(p), ".json"))
		if err != nil {
			t.Fatal(err)
		}
		f.Suite = filepath.Base(dir)
		files = append(files, f)
	}
	return files
}

// TestCRUDUnified runs MongoDB's unified-format CRUD specification tests
// against one real cairnd through the official Go driver.
func TestCRUDUnified(t *testing.T) { runSuites(t, suites[:1]) }

// TestUnifiedSuites runs every other suite of ../shared/conformance, one
// subtest per suite, against one cairnd.
func TestUnifiedSuites(t *testing.T) { runSuites(t, suites[1:]) }

// Server modes: cairnd's default (the one-member replica set rs0,
// initiated at its first start) with test commands (fail points);
// CAIRN_CONFORMANCE_MODE=standalone runs a standalone server instead.
var (
	replsetModes    = [][]string{{cairndtest.DefaultMode, "--setParameter", "enableTestCommands=1"}}
	standaloneModes = [][]string{{"--standalone", "--setParameter", "enableTestCommands=1"}}
	modeMu          sync.Mutex
	modeIdx         = -1 // the first mode cairnd accepted
)

func startServer(t *testing.T) (*cairndtest.Server, string) {
	t.Helper()
	modes := replsetModes
	switch m := os.Getenv("CAIRN_CONFORMANCE_MODE"); m {
	case "", "replset":
	case "standalone":
		modes = standaloneModes
	default:
		t.Fatalf("CAIRN_CONFORMANCE_MODE=%q: want replset or standalone", m)
	}
	modeMu.Lock()
	defer modeMu.Unlock()
	first := 0
	if modeIdx >= 0 {
		first = modeIdx
	}
	var errs []string
	for i := first; i < len(modes); i++ {
		srv, err := cairndtest.StartDir(t.TempDir(), modes[i]...)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%v: %v", modes[i], firstLine(err.Error(), 3)))
			continue
		}
		modeIdx = i
		t.Cleanup(func() {
			if err := srv.Stop(); err != nil {
				t.Errorf("stopping cairnd: %v\nlog:\n%s", err, srv.Logs())
			}
		})
		for _, e := range errs {
			t.Logf("cairnd refused %s", e)
		}
		mode := strings.Join(modes[i], " ")
		if mode == "" {
			mode = "(no flags)"
		}
		return srv, mode
	}
	t.Fatalf("cairnd would not start:\n%s", strings.Join(errs, "\n"))
	return nil, ""
}

func firstLine(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, " / ")
}

// runSuites runs the named suites against one cairnd. Tests listed in
// testdata/known_failures.txt may fail without failing the Go test; a
// listed test that passes fails it until its line is removed.
func runSuites(t *testing.T, names []string) {
	if _, err := os.Stat(conformanceDir()); err != nil {
		t.Skipf("MongoDB's spec tests are not available at %s (they are read from ../shared, never copied into the repository): %v", conformanceDir(), err)
	}
	known, err := LoadKnownFailures(knownFailuresFile)
	if err != nil {
		t.Fatalf("%s: %v", knownFailuresFile, err)
	}
	corpus := map[string][]*specFile{}
	inCorpus := map[string]bool{}
	for _, s := range names {
		if _, err := os.Stat(suiteDir(s)); err != nil {
			continue
		}
		corpus[s] = loadCorpus(t, suiteDir(s))
		for _, f := range corpus[s] {
			for _, tc := range f.Tests {
				inCorpus[s+"/"+f.Name+"/"+tc.Description] = true
			}
		}
	}
	for k := range known {
		suite, _, _ := strings.Cut(k, "/")
		if _, ok := corpus[suite]; ok && !inCorpus[k] {
			t.Errorf("%s lists %q, which is not a test in the corpus", knownFailuresFile, k)
		}
	}

	// Tests that make the driver mark the server unknown (state-change
	// errors from fail points) wait out its 500 ms minimum heartbeat, so the
	// files of a suite run concurrently on several servers.
	n := serverCount(t)
	runners := make([]*Runner, n)
	ctx := context.Background()
	for i := range runners {
		srv, mode := startServer(t)
		r, err := NewRunner(ctx, srv.URI)
		if err != nil {
			t.Fatalf("connecting to cairnd: %v\nserver log:\n%s", err, srv.Logs())
		}
		defer r.Close(ctx)
		if os.Getenv("CAIRN_CONFORMANCE_NO_DRIVER_SKIPS") != "" {
			r.DriverSkips = nil // run them anyway, to recheck the list
		}
		runners[i] = r
		if i > 0 {
			continue
		}
		t.Logf("%d × cairnd %s; server reports %s; clients connect to %s", n, mode, r.Server, r.URI)
		for _, why := range []string{r.Server.FailPoints, r.Server.Transactions, r.Server.ChangeStreams} {
			if why != "" {
				t.Logf("server lacks %s", why)
			}
		}
	}

	for _, s := range names {
		files, ok := corpus[s]
		if !ok {
			t.Run(s, func(t *testing.T) { t.Skipf("%s is absent", suiteDir(s)) })
			continue
		}
		t.Run(s, func(t *testing.T) { runSuite(t, runners, known, s, files) })
	}
}

// serverCount is CAIRN_CONFORMANCE_SERVERS, 4 by default.
func serverCount(t *testing.T) int {
	v := os.Getenv("CAIRN_CONFORMANCE_SERVERS")
	if v == "" {
		return 4
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("CAIRN_CONFORMANCE_SERVERS=%q: want a number of servers of at least 1", v)
	}
	return n
}

// runSuite runs a suite's files, each on one of the runners (one file at a
// time per runner: fail points are server-wide).
func runSuite(t *testing.T, runners []*Runner, known KnownFailures, suite string, files []*specFile) {
	ctx := context.Background()
	report := NewReport()
	work := make(chan *specFile)
	var wg sync.WaitGroup
	for _, runner := range runners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for f := range work {
				runFile(ctx, t, runner, known, report, suite, f)
			}
		}()
	}
	for _, f := range files {
		work <- f
	}
	close(work)
	wg.Wait()
	var buf bytes.Buffer
	report.WriteSummary(&buf, suite)
	fmt.Print(buf.String())
	if p := os.Getenv("CAIRN_CONFORMANCE_REPORT"); p != "" {
		if err := appendReport(p, fullReport(report, suite, files, buf.Bytes())); err != nil {
			t.Errorf("writing %s: %v", p, err)
		}
	}
	if p := os.Getenv("CAIRN_CONFORMANCE_WRITE_KNOWN"); p != "" {
		if err := appendReport(p, knownFailureLines(report, suite)); err != nil {
			t.Errorf("writing %s: %v", p, err)
		}
	}
}

func runFile(ctx context.Context, t *testing.T, runner *Runner, known KnownFailures, report *Report, suite string, f *specFile) {
	t.Run(f.Name, func(t *testing.T) {
		for i := range f.Tests {
			tc := &f.Tests[i]
			t.Run(tc.Description, func(t *testing.T) {
				key := suite + "/" + f.Name + "/" + tc.Description
				res := runner.Run(ctx, f, tc)
				_, isKnown := known[key]
				report.Add(f.Name, tc.Description, res, isKnown)
				for _, n := range res.Notes {
					t.Log("note: " + n)
				}
				checkOutcome(t, known, key, res)
			})
		}
		t.Log(report.FileLine(f.Name))
	})
}

// appendReport appends to a report file, truncating it at the first write
// of the process.
var (
	reportMu      sync.Mutex
	reportStarted = map[string]bool{}
)

func appendReport(path string, data []byte) error {
	reportMu.Lock()
	defer reportMu.Unlock()
	flags := os.O_WRONLY | os.O_CREATE | os.O_APPEND
	if !reportStarted[path] {
		flags |= os.O_TRUNC
		reportStarted[path] = true
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// checkOutcome turns one spec test's result into the Go test's verdict.
func checkOutcome(t *testing.T, known KnownFailures, key string, res Result) {
	t.Helper()
	reason, isKnown := known[key]
	switch res.Status {
	case Skipped:
		t.Skip(res.Reason)
	case Failed:
		if isKnown {
			t.Logf("known failure (%s):\n%s", reason, res.Reason)
			return
		}
		t.Error(res.Reason)
	case Passed:
		if isKnown {
			t.Errorf("passes now: remove %q from %s", key, knownFailuresFile)
		}
	}
}

// fullReport is the per-file lines, the summary and the failures.
func fullReport(r *Report, suite string, files []*specFile, summary []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "== %s\n", suite)
	for _, f := range files {
		fmt.Fprintln(&b, r.FileLine(f.Name))
	}
	b.Write(summary)
	keys := make([]string, 0, len(r.Failures))
	for k := range r.Failures {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if len(keys) > 0 {
		fmt.Fprintf(&b, "failures:\n")
	}
	for _, k := range keys {
		fmt.Fprintf(&b, "- %s/%s\n    %s\n", suite, k, strings.ReplaceAll(r.Failures[k], "\n", "\n    "))
	}
	keys = keys[:0]
	for k := range r.Notes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if len(keys) > 0 {
		fmt.Fprintf(&b, "notes:\n")
	}
	for _, k := range keys {
		fmt.Fprintf(&b, "- %s/%s\n    %s\n", suite, k, strings.Join(r.Notes[k], "\n    "))
	}
	return b.Bytes()
}

// knownFailureLines renders every failure as a known_failures.txt line,
// the failure's first line as its reason (to be edited into a real one).
func knownFailureLines(r *Report, suite string) []byte {
	keys := make([]string, 0, len(r.Failures))
	for k := range r.Failures {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b bytes.Buffer
	for _, k := range keys {
		msg := firstLine(r.Failures[k], 1)
		if len(msg) > 160 {
			msg = msg[:160] + "..."
		}
		fmt.Fprintf(&b, "%s/%s # %s\n", suite, k, msg)
	}
	return b.Bytes()
}

// TestCorpusLoads parses every file of every suite without a server and
// checks that the runner knows each operation a test uses.
func TestCorpusLoads(t *testing.T) {
	if _, err := os.Stat(conformanceDir()); err != nil {
		t.Skipf("MongoDB's spec tests are not available at %s: %v", conformanceDir(), err)
	}
	ops := map[string]map[string]opFunc{"collection": collectionOps, "database": databaseOps, "client": clientOps,
		"session": sessionOps, "bucket": bucketOps, "testRunner": testRunnerOps}
	tests := 0
	names := map[string]bool{}
	files := map[string]bool{}
	unsupported := map[string]int{}
	for _, s := range suites {
		if _, err := os.Stat(suiteDir(s)); err != nil {
			continue
		}
		for _, f := range loadCorpus(t, suiteDir(s)) {
			files[s+"/"+f.Name] = true
			kinds := map[string]string{"testRunner": "testRunner"}
			for _, e := range f.CreateEntities {
				elems, _ := e.Elements()
				kinds[newArgs(elems[0].Value().Document()).str("id")] = elems[0].Key()
			}
			for _, tc := range f.Tests {
				tests++
				names[s+"/"+f.Name+"/"+tc.Description] = true
				var walk func([]operation)
				walk = func(list []operation) {
					for _, op := range list {
						table, ok := ops[kinds[op.Object]]
						if !ok {
							continue // an entity saved by an earlier operation
						}
						if _, ok := table[op.Name]; !ok {
							unsupported[kinds[op.Object]+"."+op.Name]++
						}
						if op.Name == "withTransaction" {
							var cb struct {
								Callback []operation `bson:"callback"`
							}
							if err := bson.Unmarshal(op.Arguments, &cb); err != nil {
								t.Errorf("%s/%s: %v", f.Name, tc.Description, err)
							}
							walk(cb.Callback)
						}
					}
				}
				walk(tc.Operations)
			}
		}
	}
	// Operations the runner deliberately skips, with the reason in lookupOp's
	// skip message; anything else is a gap to fill.
	allowed := map[string]bool{"testRunner.loop": true, "collection.mapReduce": true}
	for k, n := range unsupported {
		if !allowed[k] {
			t.Errorf("no runner support for %s (%d uses)", k, n)
		}
	}
	for k := range driverFileSkips {
		if !files[k] {
			t.Errorf("driverFileSkips lists %q, which is not a file in the corpus", k)
		}
	}
	for k := range driverSkips {
		if !names[k] {
			t.Errorf("driverSkips lists %q, which is not a test in the corpus", k)
		}
	}
	for k := range memberSkips {
		if !names[k] {
			t.Errorf("memberSkips lists %q, which is not a test in the corpus", k)
		}
	}
	t.Logf("%d tests", tests)
}
