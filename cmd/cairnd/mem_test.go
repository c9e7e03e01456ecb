package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMemTotalFrom: RAM comes from meminfo unless the first control-group
// limit file present holds a lower number ("max" is no limit).
func TestMemTotalFrom(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	meminfo := write("meminfo", "MemTotal:       24000000 kB\nMemFree:  1 kB\n")
	ram := int64(24000000) << 10
	for _, tc := range []struct {
		name  string
		files []string
		want  int64
	}{
		{"no cgroup", []string{filepath.Join(dir, "none")}, ram},
		{"v2 lower", []string{write("v2low", "1073741824\n")}, 1 << 30},
		{"v2 max", []string{write("v2max", "max\n"), write("v1", "1048576\n")}, ram},
		{"v1 unlimited", []string{filepath.Join(dir, "none"), write("v1huge", "9223372036854771712\n")}, ram},
		{"v1 lower", []string{filepath.Join(dir, "none"), write("v1low", "2147483648\n")}, 2 << 30},
	} {
		if got := memTotalFrom(meminfo, tc.files...); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
	if got := memTotalFrom(filepath.Join(dir, "nomeminfo"), write("only", "4096\n")); got != 4096 {
		t.Errorf("no meminfo: %d, want the cgroup limit", got)
	}
}
