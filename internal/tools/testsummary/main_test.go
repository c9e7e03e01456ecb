package main

import (
	"bufio"
	"encoding/json"
	"strings"
	"testing"
)

func TestSummary(t *testing.T) {
	events := []event{
		{Action: "run", Package: "p", Test: "TestA"},
		{Action: "output", Package: "p", Test: "TestA", Output: "=== RUN   TestA\n"},
		{Action: "pass", Package: "p", Test: "TestA"},
		{Action: "run", Package: "p", Test: "TestTool"},
		{Action: "output", Package: "p", Test: "TestTool", Output: "    tool_test.go:9: mongosh is not installed\n"},
		{Action: "output", Package: "p", Test: "TestTool", Output: "--- SKIP: TestTool (0.00s)\n"},
		{Action: "skip", Package: "p", Test: "TestTool"},
		{Action: "output", Package: "p", Test: "TestB", Output: "    b_test.go:3: got 1, want 2\n"},
		{Action: "fail", Package: "p", Test: "TestB"},
		{Action: "output", Package: "p", Test: "TestC/sub", Output: "conformance: 3 passed, 0 failed, 1 skipped\n"},
		{Action: "output", Package: "p", Test: "TestC/sub", Output: "skip reasons:\n"},
		{Action: "output", Package: "p", Test: "TestC/sub", Output: "     1  needs a replica set\n"},
		{Action: "pass", Package: "p", Test: "TestC/sub"},
		{Action: "fail", Package: "p", Elapsed: 1.5},
	}
	var out strings.Builder
	s := newSummary(&out)
	for _, e := range events {
		b, _ := json.Marshal(e)
		var back event
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		s.handle(back)
	}
	if s.finish(0) {
		t.Error("a run with a failed test passed")
	}
	got := out.String()
	for _, want := range []string{
		"--- FAIL: TestB (p, 0.00s)\n    b_test.go:3: got 1, want 2\n",
		"conformance: 3 passed, 0 failed, 1 skipped\nskip reasons:\n     1  needs a replica set\n",
		"  p TestTool: mongosh is not installed\n",
		"FAIL p",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	var last string
	sc := bufio.NewScanner(strings.NewReader(got))
	for sc.Scan() {
		last = sc.Text()
	}
	if last != "2 passed, 1 failed, 1 skipped" {
		t.Errorf("closing line %q", last)
	}
}

func TestNothingRanFails(t *testing.T) {
	var out strings.Builder
	if newSummary(&out).finish(0) {
		t.Error("a run in which no test ran passed")
	}
}
