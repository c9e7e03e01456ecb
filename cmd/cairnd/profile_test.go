package main

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

func TestPprofAddrLoopbackOnly(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:0", "example.com:0", "127.0.0.1"} {
		if _, err := servePprof(addr, log); err == nil {
			t.Errorf("servePprof(%q) accepted a non-loopback address", addr)
		}
	}
	a, err := servePprof("127.0.0.1:0", log)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + a.String() + "/debug/pprof/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /debug/pprof/cmdline: %s", resp.Status)
	}
}

func TestCPUProfileWritten(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.pprof")
	stop, err := startProfiling(profiling{CPUProfile: path}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	stop()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte{0x1f, 0x8b}) { // profiles are gzipped protobuf
		t.Errorf("profile does not start with gzip's magic: % x", b[:min(len(b), 4)])
	}
}
