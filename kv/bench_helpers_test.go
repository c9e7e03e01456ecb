package kv

import (
	"bytes"
	"os"
	"slices"
	"syscall"
	"testing"
)

func sortSlice(keys [][]byte) { slices.SortFunc(keys, bytes.Compare) }

func datasyncFile(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }

// benchTempDirs are the directories of databases shared between benchmarks
// (shapeDB, sharedPrefixDB, loadedDB): they outlive any one benchmark, so
// TestMain removes them when the test binary is done (a 5,000,000-key
// shape database is about 2 GiB).
var benchTempDirs []string

func benchTempDir(b *testing.B, pattern string) string {
	dir, err := os.MkdirTemp("", pattern)
	if err != nil {
		b.Fatal(err)
	}
	benchTempDirs = append(benchTempDirs, dir)
	return dir
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, d := range benchTempDirs {
		os.RemoveAll(d)
	}
	os.Exit(code)
}
