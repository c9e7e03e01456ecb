package lint

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
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
		// An import cycle (say internal/query importing internal/command)
		// stops go list itself: its message names the cycle.
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("go list: %v\n%s", err, stderr)
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
		"the mechanism below the handlers (internal/replset: the replica-set glue; internal/concern: read and write concerns; internal/session, internal/auth, internal/opctx, internal/params, internal/failpoint) never imports internal/command or internal/server",
		func(pkg string) bool {
			for _, d := range belowHandlers {
				if under(pkg, d) {
					return true
				}
			}
			return false
		},
		func(pkg, imp string) string {
			if under(imp, "internal/command") || under(imp, "internal/server") {
				return "dependencies point one way: command → replset, concern, session, auth, ... → exec → kv; a command hands these packages the request's parts"
			}
			return ""
		},
	},
	{
		"read and write concerns are parsed without the replica set's machinery: internal/concern imports neither internal/replset nor internal/raftrepl",
		func(pkg string) bool { return under(pkg, "internal/concern") },
		func(pkg, imp string) string {
			if under(imp, "internal/replset") || under(imp, "internal/raftrepl") {
				return "the concern packages describe the concerns; waiting for one is internal/replset's"
			}
			return ""
		},
	},
	{
		"only the binaries import internal/server",
		func(pkg string) bool { return !under(pkg, "cmd") && !under(pkg, "internal/server") },
		func(pkg, imp string) string {
			if under(imp, "internal/server") {
				return "internal/server is the top of the server: only cmd/... starts it"
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
		"the request framework (internal/dispatch: Env, Ctx, Dispatch, authorization, sessions, observation) is between the server and the handlers: it imports neither kv, internal/command nor internal/server",
		func(pkg string) bool { return under(pkg, "internal/dispatch") },
		func(pkg, imp string) string {
			if under(imp, "kv") {
				return "the framework holds a command's transactions as exec hands them (exec.Tx, exec.Snapshot), as the handlers do"
			}
			if under(imp, "internal/command") || under(imp, "internal/server") {
				return "dependencies point one way: server → command → dispatch → exec; the handlers register their table with the framework, it never reaches up to them"
			}
			return ""
		},
	},
	{
		"only internal/command imports internal/dispatch",
		func(pkg string) bool { return !under(pkg, "internal/command") && !under(pkg, "internal/dispatch") },
		func(pkg, imp string) string {
			if under(imp, "internal/dispatch") {
				return "the framework is reached through internal/command, whose import registers the command table before the first Dispatch"
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

// belowHandlers are the packages of mechanism the handlers call into.
var belowHandlers = []string{"internal/replset", "internal/concern", "internal/session", "internal/auth",
	"internal/opctx", "internal/params", "internal/failpoint", "internal/repl"}

// violations is every import of graph that breaks a rule, one line each,
// sorted.
func violations(graph map[string][]string) []string {
	var out []string
	for _, r := range importRules {
		for pkg, imps := range graph {
			if !r.applies(pkg) {
				continue
			}
			for _, imp := range imps {
				if why := r.bad(pkg, imp); why != "" {
					out = append(out, fmt.Sprintf("%s imports %s: %s (rule: %s)", pkg, imp, why, r.name))
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// TestImportGraph: every package's imports follow the rules above. To see
// it fail, add `import _ "github.com/cairndb/cairn/kv"` to a file of
// internal/query.
func TestImportGraph(t *testing.T) {
	graph := imports(t)
	if len(graph) < 10 {
		t.Fatalf("go list found only %d packages", len(graph))
	}
	for _, v := range violations(graph) {
		t.Error(v)
	}
}

// TestImportRulesCatch feeds the checker synthetic graphs: each bad
// import must be reported (by the rule named), and a graph of allowed
// imports must pass.
func TestImportRulesCatch(t *testing.T) {
	cases := []struct {
		name  string
		graph map[string][]string
		want  []string // substrings of the reports, one per report
	}{
		{"allowed", map[string][]string{
			"cmd/cairnd":        {"internal/server"},
			"internal/server":   {"internal/command", "internal/wire"},
			"internal/command":  {"internal/dispatch", "internal/replset", "internal/concern", "internal/exec", "bson"},
			"internal/dispatch": {"internal/opctx", "internal/session", "internal/replset", "internal/exec", "bson"},
			"internal/replset":  {"internal/raftrepl", "internal/concern", "internal/exec", "internal/repl"},
			"internal/concern":  {"internal/exec", "internal/repl", "bson"},
			"kv":                {"kv/vfs", "github.com/klauspost/compress/zstd", "os"},
		}, nil},
		{"query imports command", map[string][]string{"internal/query": {"internal/command"}},
			[]string{"internal/query imports internal/command: dependencies point one way", "internal/query imports internal/command: internal/command is reached through internal/server"}},
		{"kv imports bson", map[string][]string{"kv": {"bson"}}, []string{"kv imports bson: kv may import only"}},
		{"replset imports command", map[string][]string{"internal/replset": {"internal/command"}},
			[]string{"internal/replset imports internal/command: dependencies point one way: command → replset", "internal/replset imports internal/command: internal/command is reached through internal/server"}},
		{"concern imports replset", map[string][]string{"internal/concern": {"internal/replset"}}, []string{"internal/concern imports internal/replset: the concern packages describe the concerns"}},
		{"session imports server", map[string][]string{"internal/session": {"internal/server"}},
			[]string{"internal/session imports internal/server: dependencies point one way", "internal/session imports internal/server: internal/server is the top of the server"}},
		{"command imports kv", map[string][]string{"internal/command": {"kv"}}, []string{"internal/command imports kv: a command holds the transaction"}},
		{"dispatch imports command", map[string][]string{"internal/dispatch": {"internal/command"}},
			[]string{"internal/dispatch imports internal/command: dependencies point one way: server → command → dispatch", "internal/dispatch imports internal/command: internal/command is reached through internal/server"}},
		{"dispatch imports kv", map[string][]string{"internal/dispatch": {"kv"}}, []string{"internal/dispatch imports kv: the framework holds a command's transactions"}},
		{"dispatch imports server", map[string][]string{"internal/dispatch": {"internal/server"}},
			[]string{"internal/dispatch imports internal/server: dependencies point one way: server → command → dispatch", "internal/dispatch imports internal/server: internal/server is the top of the server"}},
		{"server imports dispatch", map[string][]string{"internal/server": {"internal/dispatch"}}, []string{"internal/server imports internal/dispatch: the framework is reached through internal/command"}},
		{"bson imports query", map[string][]string{"bson": {"internal/query"}}, []string{"bson imports internal/query: bson imports nothing of Cairn's"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := violations(tc.graph)
			if len(got) != len(tc.want) {
				t.Fatalf("got %d reports, want %d:\n%s", len(got), len(tc.want), strings.Join(got, "\n"))
			}
			for _, w := range tc.want {
				found := false
				for _, g := range got {
					found = found || strings.Contains(g, w)
				}
				if !found {
					t.Errorf("no report contains %q:\n%s", w, strings.Join(got, "\n"))
				}
			}
		})
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
