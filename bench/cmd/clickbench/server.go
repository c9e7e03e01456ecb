package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/cairndb/cairn/bench/internal/cairndproc"
	"github.com/cairndb/cairn/internal/server"
	"github.com/cairndb/cairn/kv"
)

// cairnServer is the server under test: a cairnd process, a server in this
// process (-inproc), or one given by -uri.
type cairnServer struct {
	uri, host, port string
	dbpath          string
	proc            *exec.Cmd
	inproc          *server.Server
}

// buildTool builds ../cmd/<name> into dir unless bin is given.
func buildTool(bin, name, dir string) (string, error) {
	if bin != "" {
		return bin, nil
	}
	root, err := serverModule()
	if err != nil {
		return "", err
	}
	bin = filepath.Join(dir, name+"-bin")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/"+name)
	cmd.Dir = root
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building %s: %w", name, err)
	}
	return bin, nil
}

// serverModule finds the server's module directory: the nearest directory
// above the working directory whose go.mod declares github.com/cairndb/cairn.
func serverModule() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.HasPrefix(string(b), "module github.com/cairndb/cairn\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no github.com/cairndb/cairn module above the working directory")
		}
		dir = parent
	}
}

func startServer(ctx context.Context, c *config) (*cairnServer, error) {
	if c.uri != "" {
		return &cairnServer{uri: c.uri}, nil
	}
	s := &cairnServer{dbpath: filepath.Join(c.dir, "db"), host: "127.0.0.1"}
	if err := os.MkdirAll(s.dbpath, 0o755); err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s.port = fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
	s.uri = "mongodb://127.0.0.1:" + s.port + "/?directConnection=true"
	if c.inproc {
		srv, err := server.New(server.Options{DBPath: s.dbpath, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
			KV: &kv.Options{CacheSize: int64(c.cacheGB * (1 << 30))}})
		if err != nil {
			l.Close()
			return nil, err
		}
		s.inproc = srv
		go srv.Serve(l)
		return s, nil
	}
	l.Close()
	bin, err := buildTool(c.cairnd, "cairnd", c.dir)
	if err != nil {
		return nil, err
	}
	s.proc = exec.Command(bin, "--dbpath", s.dbpath, "--port", s.port, "--logpath", filepath.Join(c.dir, "cairnd.log"),
		"--wiredTigerCacheSizeGB", strconv.FormatFloat(c.cacheGB, 'g', -1, 64))
	s.proc.Args = append(s.proc.Args, c.serverArgs...)
	if err := s.proc.Start(); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *cairnServer) stop() {
	if s.inproc != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = s.inproc.Shutdown(ctx)
	}
	if s.proc != nil {
		_ = s.proc.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { s.proc.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			s.proc.Process.Kill()
		}
	}
}

// cpu returns the server's CPU time (user + system) in seconds: the
// cairnd process's, or this process's with -inproc; 0 when unknown.
func (s *cairnServer) cpu() float64 {
	switch {
	case s.inproc != nil:
		return cpuTime()
	case s.proc != nil && s.proc.Process != nil:
		return cairndproc.CPU(s.proc.Process.Pid).Seconds()
	}
	return 0
}

// startProfile starts a CPU profile of this process (useful with -inproc).
func (s *cairnServer) startProfile(path string) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	if s.inproc == nil {
		return nil, fmt.Errorf("-cpuprofile needs -inproc")
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

func connect(ctx context.Context, uri string) (*mongo.Client, error) {
	cl, err := mongo.Connect(options.Client().ApplyURI(uri).SetTimeout(2 * time.Hour))
	if err != nil {
		return nil, err
	}
	for i := 0; ; i++ {
		if err = cl.Ping(ctx, nil); err == nil {
			return cl, nil
		}
		if i > 200 || strings.Contains(err.Error(), "auth") {
			return nil, fmt.Errorf("server does not answer: %w", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
