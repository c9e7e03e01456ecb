package lint

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

const module = "github.com/cairndb/cairn"

// repoRoot is the module's root (this file is internal/lint/lint_test.go).
func repoRoot(t *testing.T) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller information")
	}
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// imports maps every package of the module (bench/ is a module of its
// own) to its non-test imports.
func imports(t *testing.T) map[string][]string {
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...")
	cmd.Dir = repoRoot(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	graph := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		graph[rel(f[0])] = nil
		for _, imp := range f[1:] {
			graph[rel(f[0])] = append(graph[rel(f[0])], rel(imp))
		}
	}
	return graph
}

// rel is a module path relative to the module ("kv/vfs"), other paths as
// they are.
func rel(p string) string {
	if p == module {
		return "."
	}
	return strings.TrimPrefix(p, module+"/")
}

func isStd(p string) bool {
	first, _, _ := strings.Cut(p, "/")
	return !strings.Contains(first, ".") && !isOwn(p)
}

func isOwn(p string) bool {
	first, _, _ := strings.Cut(p, "/")
	switch first {
	case "bson", "kv", "internal", "cmd", "test", "bench":
		return true
	}
	return false
}

func under(p, dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }

// importRules says which imports each package may have; a rule returns
// the offending import's explanation, or "".
var importRules = []struct {
	name string
	// applies reports whether the rule concerns package pkg.
	applies func(pkg string) bool
	// bad explains why pkg may not import imp ("" if it may).
	bad func(pkg, imp string) string
}{
	{
		"kv is a storage engine that knows nothing of documents: it imports only the standard library, kv/vfs, its own internal packages and compression",
		func(pkg string) bool { return under(pkg, "kv") },
		func(pkg, imp string) string {
			if isStd(imp) || (pkg == "kv" && (imp == "kv/vfs" || under(imp, "kv/internal"))) || under(imp, "github.com/klauspost/compress") {
				return ""
			}
			return "kv may import only the standard library, kv/vfs, kv/internal/... and github.com/klauspost/compress"
		},
	},
	{
		"the document layer (bson, query, expr, agg, geo, mongoerr, timeseries) never touches storage",
		func(pkg string) bool {
			for _, d := range []string{"bson", "internal/query", "internal/expr", "internal/agg", "internal/geo", "internal/mongoerr", "internal/timeseries"} {
				if under(pkg, d) {
					return true
				}
			}
			return false
		},
		func(pkg, imp string) string {
			if under(imp, "kv") {
				return "documents, queries and pipelines are evaluated without storage: read through the interfaces the caller gives"
			}
			if under(imp, "internal/command") || under(imp, "internal/server") {
				return "dependencies point one way: cmd → server → command → execution → bson, kv"
			}
			return ""
		},
	},
	{
		"the shared mechanisms (extsort, pcre) are leaves: they import only the standard library, so every layer may use them",
		func(pkg string) bool { return under(pkg, "internal/extsort") || under(pkg, "internal/pcre") },
		func(pkg, imp string) string {
			if isStd(imp) || under(imp, "internal/pcre") {
				return ""
			}
			return "extsort and pcre import only the standard library (pcretest: pcre)"
		},
	},
	{
		"the execution layer (internal/exec: planner, executors, storage adapter) is below the handlers: it never imports internal/command or internal/server",
		func(pkg string) bool { return under(pkg, "internal/exec") },
		func(pkg, imp string) string {
			if under(imp, "internal/command") || under(imp, "internal/server") {
				return "dependencies point one way: command → exec → kv"
			}
			return ""
		},
	},
	{
		"the handlers (internal/command) reach storage only through the execution layer: they do not import kv",
		func(pkg string) bool { return under(pkg, "internal/command") },
		func(pkg, imp string) string {
			if under(imp, "kv") {
				return "a command holds the transaction and handles exec gives it (exec.Tx, exec.Snapshot, exec.CollWriter), so that its reads, writes and (next) its oplog entry go through one transaction the execution layer opened"
			}
			return ""
		},
	},
	{
		"only the server, metrics and the binaries import internal/command",
		func(pkg string) bool { return true },
		func(pkg, imp string) string {
			if !under(imp, "internal/command") || under(pkg, "internal/command") {
				return ""
			}
			if under(pkg, "internal/server") || under(pkg, "internal/metrics") || under(pkg, "cmd") {
				return ""
			}
			return "internal/command is reached through internal/server"
		},
	},
	{
		"bson is the bottom layer: it imports no other package of Cairn",
		func(pkg string) bool { return under(pkg, "bson") },
		func(pkg, imp string) string {
			if isOwn(imp) && !under(imp, "bson") {
				return "bson imports nothing of Cairn's"
			}
			return ""
		},
	},
}

// TestImportGraph: every package's imports follow the rules above. To see
// it fail, add `import _ "github.com/cairndb/cairn/kv"` to a file of
// internal/query.
func TestImportGraph(t *testing.T) {
	graph := imports(t)
	if len(graph) < 10 {
		t.Fatalf("go list found only %d packages", len(graph))
	}
	for _, r := range importRules {
		for pkg, imps := range graph {
			if !r.applies(pkg) {
				continue
			}
			for _, imp := range imps {
				if why := r.bad(pkg, imp); why != "" {
					t.Errorf("%s imports %s: %s (rule: %s)", pkg, imp, why, r.name)
				}
			}
		}
	}
}

// TestStaticcheck runs staticcheck (a tool dependency in go.mod) over the
// module; it must report nothing.
func TestStaticcheck(t *testing.T) {
	if testing.Short() {
		t.Skip("staticcheck takes about a minute: skipped with -short")
	}
	run(t, "go", "tool", "staticcheck", "./...")
}

// TestVet runs go vet, unless scripts/test.sh has just run it.
func TestVet(t *testing.T) {
	if os.Getenv("CAIRN_VET_DONE") == "1" {
		t.Skip("go vet ran before the tests (scripts/test.sh)")
	}
	run(t, "go", "vet", "./...")
}

func run(t *testing.T, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = repoRoot(t)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}
