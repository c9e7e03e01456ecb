package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestVersus inserts into two servers, builds every index kind twice on
// each, and checks that the JSON has every step of both, the builds as
// medians of positive times.
func TestVersus(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two cairnd")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "cairnd")
	build := exec.Command("go", "build", "-o", bin, "./cmd/cairnd")
	build.Dir = "../../.." // the server's module
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building cairnd: %v\n%s", err, out)
	}
	js := filepath.Join(dir, "steps.json")
	if err := run(2000, 2, 2, bin, bin, filepath.Join(dir, "data"), nil, js); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var sides []struct {
		Label string
		Steps []struct {
			Name  string
			MS    float64 `json:"ms"`
			CPUMS float64 `json:"cpu_ms"`
		}
	}
	if err := json.Unmarshal(b, &sides); err != nil {
		t.Fatal(err)
	}
	if len(sides) != 2 || sides[0].Label != "" || sides[1].Label != "versus" {
		t.Fatalf("sides: %+v", sides)
	}
	for _, s := range sides {
		if want := 2 + len(builds); len(s.Steps) != want {
			t.Errorf("%q: %d steps, want %d: %+v", s.Label, len(s.Steps), want, s.Steps)
		}
		for _, st := range s.Steps {
			if st.MS <= 0 {
				t.Errorf("%q: step %s took %v ms", s.Label, st.Name, st.MS)
			}
		}
	}
}
