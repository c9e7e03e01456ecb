// Package cairndtest starts real cairnd processes for end-to-end tests: it
// builds the binary once per test process, runs it on a free loopback port
// with a fresh data directory, and stops it when the test ends.
package cairndtest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// RepoRoot returns the module's root directory (where go.mod is).
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", ".."))
}

// Binary builds cmd/cairnd (once per process) and returns its path. The
// binary is built with the invariants tag, so the storage engine's
// self-checks (kv/internal/invariants) run under every end-to-end test.
// Set CAIRND_BIN to use a prebuilt binary instead.
func Binary() (string, error) {
	buildOnce.Do(func() {
		if p := os.Getenv("CAIRND_BIN"); p != "" {
			binPath = p
			return
		}
		dir, err := os.MkdirTemp("", "cairnd-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "cairnd")
		cmd := exec.Command("go", "build", "-tags", "invariants", "-o", binPath, "./cmd/cairnd")
		cmd.Dir = RepoRoot()
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("building cairnd: %v\n%s", err, out)
		}
	})
	return binPath, buildErr
}

// Server is a running cairnd.
type Server struct {
	Port   int
	DBPath string
	URI    string // mongodb://127.0.0.1:PORT/?directConnection=true
	cmd    *exec.Cmd
	logs   *syncBuffer
	done   chan struct{}
}

// FreePort returns a loopback port that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Start runs cairnd with a new data directory under t.TempDir() and extra
// flags, waits until it accepts connections, and stops it at test cleanup.
func Start(t testing.TB, args ...string) *Server {
	t.Helper()
	s, err := StartDir(t.TempDir(), args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("stopping cairnd: %v\nlog:\n%s", err, s.Logs())
		}
	})
	return s
}

// StartDir runs cairnd on dbpath (created if missing) and waits until it
// accepts connections. The caller must Stop it.
func StartDir(dbpath string, args ...string) (*Server, error) {
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	return StartDirPort(dbpath, port, args...)
}

// StartDirPort is StartDir on a given loopback port (a replica set's
// member restarted at its address).
func StartDirPort(dbpath string, port int, args ...string) (*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	all := append([]string{"--dbpath", dbpath, "--port", strconv.Itoa(port), "--bind_ip", "127.0.0.1"}, args...)
	if !hasAny(args, "--replSet", "--standalone", "--config", "-f", DefaultMode) {
		// cairnd's default is a one-member replica set; the suite's
		// servers are standalone unless a test asks for a replica set
		// (--replSet) or for the default (DefaultMode).
		all = append(all, "--standalone")
	}
	all = withoutArg(all, DefaultMode)
	cmd := exec.Command(bin, all...)
	logs := &syncBuffer{}
	cmd.Stdout = logs
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting cairnd: %w", err)
	}
	s := &Server{Port: port, DBPath: dbpath, cmd: cmd, logs: logs, done: make(chan struct{}),
		URI: fmt.Sprintf("mongodb://127.0.0.1:%d/?directConnection=true", port)}
	go func() { cmd.Wait(); close(s.done) }()
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 200*time.Millisecond)
		if err == nil {
			c.Close()
			return s, nil
		}
		select {
		case <-s.done:
			return nil, fmt.Errorf("cairnd exited before listening: %v\nlog:\n%s", cmd.ProcessState, logs.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.Kill()
			return nil, fmt.Errorf("cairnd did not listen on %d within 20s\nlog:\n%s", port, logs.String())
		}
	}
}

// Stop sends SIGTERM and waits for a clean exit (up to 30 s).
func (s *Server) Stop() error {
	select {
	case <-s.done:
		return nil
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	select {
	case <-s.done:
		if st := s.cmd.ProcessState; st != nil && !st.Success() {
			return fmt.Errorf("cairnd exited with %v", st)
		}
		return nil
	case <-ctx.Done():
		s.Kill()
		return fmt.Errorf("cairnd did not stop within 30s")
	}
}

// Kill ends the server with SIGKILL, as a crash would.
func (s *Server) Kill() {
	_ = s.cmd.Process.Kill()
	<-s.done
}

// Pause stops the server with SIGSTOP (a frozen process: its connections
// stay open and nothing answers).
func (s *Server) Pause() { _ = s.cmd.Process.Signal(syscall.SIGSTOP) }

// Dump makes the server print its goroutines and exit (SIGQUIT), for a
// test's failure report.
func (s *Server) Dump() {
	_ = s.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
	}
}

// Resume continues a paused server (SIGCONT).
func (s *Server) Resume() { _ = s.cmd.Process.Signal(syscall.SIGCONT) }

// Exited reports whether the process has ended.
func (s *Server) Exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// Logs returns what the server printed so far.
func (s *Server) Logs() string { return s.logs.String() }

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// DefaultMode, passed as an argument to Start or StartDir, runs cairnd in
// its default mode (no --standalone added): the one-member replica set rs0.
const DefaultMode = "<default-mode>"

func hasAny(args []string, names ...string) bool {
	for _, a := range args {
		for _, n := range names {
			if a == n || strings.HasPrefix(a, n+"=") {
				return true
			}
		}
	}
	return false
}

func withoutArg(args []string, drop string) []string {
	out := args[:0]
	for _, a := range args {
		if a != drop {
			out = append(out, a)
		}
	}
	return out
}
