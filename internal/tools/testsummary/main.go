// Command testsummary reads `go test -json` events on standard input and
// tells a person what ran: one line per package as it finishes, the output
// of every failed test and of every build failure, the conformance
// runner's per-suite report, every skipped top-level test with its reason
// (a test that skips for a missing tool says which), and a closing line
//
//	N passed, N failed, N skipped
//
// over every test and subtest of every package. It exits 1 when a test or
// a build failed, or when the input ends without a single test having run.
//
// scripts/test.sh pipes the suite through it.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"
)

// event is one line of test2json's output (go doc test2json).
type event struct {
	Action      string
	Package     string
	Test        string
	Elapsed     float64
	Output      string
	ImportPath  string // build-output, build-fail
	FailedBuild string // a package's fail event after its build failed
}

type key struct{ pkg, test string }

// summary accumulates what the events say.
type summary struct {
	w                       io.Writer
	passed, failed, skipped int
	pkgCounts               map[string]*[3]int // passed, failed, skipped
	output                  map[key][]string   // a running test's output
	skips                   []string           // "pkg TestX: reason"
	failures                []string
	buildFailed             bool
	inConformance           bool // inside the conformance report's lines
}

func newSummary(w io.Writer) *summary {
	return &summary{w: w, pkgCounts: map[string]*[3]int{}, output: map[key][]string{}}
}

func (s *summary) counts(pkg string) *[3]int {
	c := s.pkgCounts[pkg]
	if c == nil {
		c = &[3]int{}
		s.pkgCounts[pkg] = c
	}
	return c
}

func (s *summary) handle(e event) {
	switch e.Action {
	case "build-output":
		fmt.Fprint(s.w, e.Output)
		return
	case "build-fail":
		s.buildFailed = true
		return
	case "output":
		s.conformanceLine(e.Output)
		k := key{e.Package, e.Test}
		s.output[k] = append(s.output[k], e.Output)
		return
	}
	if e.Test == "" {
		s.packageDone(e)
		return
	}
	k := key{e.Package, e.Test}
	c := s.counts(e.Package)
	switch e.Action {
	case "pass":
		s.passed++
		c[0]++
	case "fail":
		s.failed++
		c[1]++
		s.failures = append(s.failures, e.Package+" "+e.Test)
		fmt.Fprintf(s.w, "--- FAIL: %s (%s, %.2fs)\n", e.Test, e.Package, e.Elapsed)
		for _, l := range s.output[k] {
			if !strings.HasPrefix(l, "=== ") {
				fmt.Fprint(s.w, l)
			}
		}
	case "skip":
		s.skipped++
		c[2]++
		if !strings.Contains(e.Test, "/") {
			s.skips = append(s.skips, fmt.Sprintf("%s %s: %s", short(e.Package), e.Test, skipReason(s.output[k])))
		}
	default:
		return
	}
	delete(s.output, k)
}

// conformanceLine passes the conformance runner's report through: its
// "conformance: N passed, ..." lines and the skip reasons under them.
func (s *summary) conformanceLine(l string) {
	switch {
	case strings.HasPrefix(l, "conformance"):
		s.inConformance = true
	case s.inConformance && (strings.HasPrefix(l, "skip reasons:") || strings.HasPrefix(l, "  ")):
	default:
		s.inConformance = false
		return
	}
	fmt.Fprint(s.w, l)
}

func (s *summary) packageDone(e event) {
	c := s.counts(e.Package)
	figures := fmt.Sprintf("%d passed, %d failed, %d skipped", c[0], c[1], c[2])
	switch e.Action {
	case "pass":
		fmt.Fprintf(s.w, "ok   %-45s %6.1fs  %s\n", e.Package, e.Elapsed, figures)
	case "skip":
		fmt.Fprintf(s.w, "?    %-45s [no test files]\n", e.Package)
	case "fail":
		// A package that failed outside any test (a build failure, a
		// panic, a timeout) shows its own output.
		if c[1] == 0 {
			for _, l := range s.output[key{e.Package, ""}] {
				fmt.Fprint(s.w, l)
			}
			s.failures = append(s.failures, e.Package)
		}
		fmt.Fprintf(s.w, "FAIL %-45s %6.1fs  %s\n", e.Package, e.Elapsed, figures)
	default:
		return
	}
	delete(s.output, key{e.Package, ""})
}

// skipReason is the message a skipped test logged (its last line other
// than the framing go test adds).
func skipReason(lines []string) string {
	var msg []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		// "file_test.go:12: reason"
		if i := strings.Index(t, ".go:"); i >= 0 {
			if j := strings.Index(t[i+4:], ": "); j >= 0 {
				t = t[i+4+j+2:]
			}
		}
		msg = append(msg, t)
	}
	if len(msg) == 0 {
		return "(no reason given)"
	}
	return strings.Join(msg, " ")
}

func short(pkg string) string {
	return strings.TrimPrefix(pkg, "github.com/cairndb/cairn/")
}

// finish prints the closing block and reports whether the run passed.
func (s *summary) finish(elapsed time.Duration) bool {
	if len(s.skips) > 0 {
		fmt.Fprintf(s.w, "\nskipped tests (%d top-level):\n", len(s.skips))
		slices.Sort(s.skips)
		for _, l := range s.skips {
			fmt.Fprintf(s.w, "  %s\n", l)
		}
	}
	ok := s.failed == 0 && !s.buildFailed && len(s.failures) == 0 && s.passed > 0
	if len(s.failures) > 0 {
		fmt.Fprintf(s.w, "\nfailed:\n")
		for _, f := range s.failures {
			fmt.Fprintf(s.w, "  %s\n", short(f))
		}
	}
	if s.buildFailed {
		fmt.Fprintf(s.w, "\nthe build failed (see above)\n")
	}
	fmt.Fprintf(s.w, "\ntests finished in %s\n", elapsed.Round(time.Second))
	fmt.Fprintf(s.w, "%d passed, %d failed, %d skipped\n", s.passed, s.failed, s.skipped)
	return ok
}

func main() {
	start := time.Now()
	s := newSummary(os.Stdout)
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			// Not an event (go vet or the toolchain writing to stdout).
			fmt.Fprintf(os.Stdout, "%s\n", line)
			continue
		}
		s.handle(e)
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintf(os.Stderr, "testsummary: reading events: %v\n", err)
		os.Exit(1)
	}
	if !s.finish(time.Since(start)) {
		os.Exit(1)
	}
}
