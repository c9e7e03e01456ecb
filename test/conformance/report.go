package conformance

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
)

// Counts tallies test outcomes. Known counts the failures listed in
// testdata/known_failures.txt; Failed the others.
type Counts struct {
	Passed, Failed, Known, Skipped int
}

func (c *Counts) add(s Status, known bool) {
	switch {
	case s == Passed:
		c.Passed++
	case s == Failed && known:
		c.Known++
	case s == Failed:
		c.Failed++
	case s == Skipped:
		c.Skipped++
	}
}

func (c Counts) String() string {
	return fmt.Sprintf("%d passed, %d failed, %d known failures, %d skipped", c.Passed, c.Failed, c.Known, c.Skipped)
}

// Report collects outcomes for the whole corpus.
type Report struct {
	mu          sync.Mutex
	Total       Counts
	Files       map[string]*Counts
	SkipReasons map[string]int
	Failures    map[string]string   // "file/description" -> message
	Notes       map[string][]string // "file/description" -> notes
}

// NewReport returns an empty report.
func NewReport() *Report {
	return &Report{Files: map[string]*Counts{}, SkipReasons: map[string]int{}, Failures: map[string]string{},
		Notes: map[string][]string{}}
}

// Add records one test's outcome; known says the test is a listed known
// failure.
func (r *Report) Add(file, description string, res Result, known bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Total.add(res.Status, known)
	c := r.Files[file]
	if c == nil {
		c = &Counts{}
		r.Files[file] = c
	}
	c.add(res.Status, known)
	if len(res.Notes) > 0 {
		r.Notes[file+"/"+description] = res.Notes
	}
	switch res.Status {
	case Skipped:
		r.SkipReasons[res.Reason]++
	case Failed:
		r.Failures[file+"/"+description] = res.Reason
	}
}

// FileLine is the per-file summary line.
func (r *Report) FileLine(file string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.Files[file]
	if c == nil {
		c = &Counts{}
	}
	return fmt.Sprintf("%s: %s", file, c)
}

// WriteSummary writes the suite's total line and the skip reasons table.
func (r *Report) WriteSummary(w io.Writer, suite string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintf(w, "conformance %s: %s\n", suite, r.Total)
	if len(r.SkipReasons) == 0 {
		return
	}
	type row struct {
		reason string
		n      int
	}
	rows := make([]row, 0, len(r.SkipReasons))
	for k, v := range r.SkipReasons {
		rows = append(rows, row{k, v})
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].n != rows[j].n {
			return rows[i].n > rows[j].n
		}
		return rows[i].reason < rows[j].reason
	})
	fmt.Fprintf(w, "skip reasons:\n")
	for _, x := range rows {
		fmt.Fprintf(w, "  %4d  %s\n", x.n, x.reason)
	}
}

// KnownFailures are spec tests expected to fail, keyed
// "suite/file/description", with the reason.
type KnownFailures map[string]string

// LoadKnownFailures reads a list of "suite/file/description # reason" lines.
// Blank lines and lines starting with '#' are ignored. A missing file is an
// empty list.
func LoadKnownFailures(path string) (KnownFailures, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return KnownFailures{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseKnownFailures(f)
}

func parseKnownFailures(r io.Reader) (KnownFailures, error) {
	kf := KnownFailures{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, reason, _ := strings.Cut(line, " # ")
		name = strings.TrimSpace(name)
		if strings.Count(name, "/") < 2 {
			return nil, fmt.Errorf("line %d: want suite/file/description, got %q", n, line)
		}
		if _, dup := kf[name]; dup {
			return nil, fmt.Errorf("line %d: %q listed twice", n, name)
		}
		kf[name] = strings.TrimSpace(reason)
	}
	return kf, sc.Err()
}
