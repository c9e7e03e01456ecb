package conformance

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cairndb/cairn/internal/testutil/cairndtest"
)

const knownFailuresFile = "testdata/known_failures.txt"

// crudDir is MongoDB's unified CRUD tests, next to the repository (never in it).
func crudDir() string {
	return filepath.Join(cairndtest.RepoRoot(), "..", "shared", "conformance", "crud-unified")
}

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
		files = append(files, f)
	}
	return files
}

// TestCRUDUnified runs MongoDB's unified-format CRUD specification tests
// against one real cairnd through the official Go driver. Tests listed in
// testdata/known_failures.txt may fail without failing the suite; when one
// passes, the suite fails until it is removed from the list.
func TestCRUDUnified(t *testing.T) {
	dir := crudDir()
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("MongoDB's CRUD spec tests are not available at %s (they are read from ../shared, never copied into the repository): %v", dir, err)
	}
	files := loadCorpus(t, dir)
	if len(files) == 0 {
		t.Skipf("no unified test files in %s", dir)
	}
	known, err := LoadKnownFailures(knownFailuresFile)
	if err != nil {
		t.Fatalf("%s: %v", knownFailuresFile, err)
	}
	corpus := map[string]bool{}
	for _, f := range files {
		for _, tc := range f.Tests {
			corpus[f.Name+"/"+tc.Description] = true
		}
	}
	for k := range known {
		if !corpus[k] {
			t.Errorf("%s lists %q, which is not a test in the corpus", knownFailuresFile, k)
		}
	}

	srv := cairndtest.Start(t)
	ctx := context.Background()
	runner, err := NewRunner(ctx, srv.URI)
	if err != nil {
		t.Fatalf("connecting to cairnd: %v\nserver log:\n%s", err, srv.Logs())
	}
	defer runner.Close(ctx)
	if os.Getenv("CAIRN_CONFORMANCE_NO_DRIVER_SKIPS") != "" {
		runner.DriverSkips = nil // run them anyway, to recheck the list
	}
	t.Logf("server reports %s", runner.Server)

	report := NewReport()
	for _, f := range files {
		t.Run(f.Name, func(t *testing.T) {
			for i := range f.Tests {
				tc := &f.Tests[i]
				t.Run(tc.Description, func(t *testing.T) {
					res := runner.Run(ctx, f, tc)
					report.Add(f.Name, tc.Description, res)
					for _, n := range res.Notes {
						t.Log("note: " + n)
					}
					checkOutcome(t, known, f.Name+"/"+tc.Description, res)
				})
			}
			t.Log(report.FileLine(f.Name))
		})
	}

	var buf bytes.Buffer
	report.WriteSummary(&buf)
	fmt.Print(buf.String())
	if p := os.Getenv("CAIRN_CONFORMANCE_REPORT"); p != "" {
		if err := os.WriteFile(p, fullReport(report, files, buf.Bytes()), 0o644); err != nil {
			t.Errorf("writing %s: %v", p, err)
		}
	}
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
func fullReport(r *Report, files []*specFile, summary []byte) []byte {
	var b bytes.Buffer
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
		fmt.Fprintf(&b, "- %s\n    %s\n", k, strings.ReplaceAll(r.Failures[k], "\n", "\n    "))
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
		fmt.Fprintf(&b, "- %s\n    %s\n", k, strings.Join(r.Notes[k], "\n    "))
	}
	return b.Bytes()
}

// TestCorpusLoads parses every file of the corpus without a server and
// checks that the runner knows each operation a runnable test uses.
func TestCorpusLoads(t *testing.T) {
	dir := crudDir()
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("MongoDB's CRUD spec tests are not available at %s: %v", dir, err)
	}
	s := serverInfo{Version: [3]int{7, 0, 0}, Topology: "single"}
	ops := map[string]map[string]opFunc{"collection": collectionOps, "database": databaseOps, "client": clientOps}
	tests := 0
	names := map[string]bool{}
	for _, f := range loadCorpus(t, dir) {
		kinds := map[string]string{}
		for _, e := range f.CreateEntities {
			elems, _ := e.Elements()
			kinds[newArgs(elems[0].Value().Document()).str("id")] = elems[0].Key()
		}
		for _, tc := range f.Tests {
			tests++
			names[f.Name+"/"+tc.Description] = true
			if s.unmetRequirements(f.RunOnRequirements) != "" || s.unmetRequirements(tc.RunOnRequirements) != "" {
				continue
			}
			for _, op := range tc.Operations {
				if op.Object == "testRunner" {
					continue
				}
				if _, ok := ops[kinds[op.Object]][op.Name]; !ok {
					t.Errorf("%s/%s: no runner support for %s on %s", f.Name, tc.Description, op.Name, op.Object)
				}
			}
		}
	}
	for k := range driverSkips {
		if !names[k] {
			t.Errorf("driverSkips lists %q, which is not a test in the corpus", k)
		}
	}
	t.Logf("%d tests", tests)
}
