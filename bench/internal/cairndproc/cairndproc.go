// Package cairndproc starts a cairnd process for the benchmark programs:
// it builds the binary from the server's module (unless one is given),
// runs it on a free loopback port with its own data directory and waits
// until it answers.
package cairndproc

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Options say how to start cairnd.
type Options struct {
	// Binary is the cairnd binary; "" builds ../cmd/cairnd (run from bench/)
	// into Dir.
	Binary string
	// BuildFlags are extra `go build` flags when building (e.g. "-pgo=off").
	BuildFlags []string
	// Dir holds the data directory ("db") and the log; required.
	Dir string
	// Args are extra cairnd flags.
	Args []string
}

// Server is a running cairnd.
type Server struct {
	cmd  *exec.Cmd
	Port int
	// URI connects to it directly.
	URI string
	// DBPath is its data directory.
	DBPath string
}

// Build compiles cairnd into dir and returns the binary's path.
func Build(dir string, flags ...string) (string, error) {
	bin := filepath.Join(dir, "cairnd-bin")
	args := append([]string{"build", "-o", bin}, flags...)
	cmd := exec.Command("go", append(args, "./cmd/cairnd")...)
	cmd.Dir = ".."
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building cairnd: %w", err)
	}
	return bin, nil
}

// Start starts cairnd and waits (up to 20 s) until it answers ping.
func Start(ctx context.Context, o Options) (*Server, error) {
	bin := o.Binary
	if bin == "" {
		var err error
		if bin, err = Build(o.Dir, o.BuildFlags...); err != nil {
			return nil, err
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	s := &Server{Port: port, DBPath: filepath.Join(o.Dir, "db"),
		URI: fmt.Sprintf("mongodb://127.0.0.1:%d/?directConnection=true", port)}
	args := append([]string{"--dbpath", s.DBPath, "--port", fmt.Sprint(port), "--logpath", filepath.Join(o.Dir, "cairnd.log")}, o.Args...)
	s.cmd = exec.Command(bin, args...)
	s.cmd.Stderr = os.Stderr
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	client, err := mongo.Connect(options.Client().ApplyURI(s.URI))
	if err != nil {
		s.Stop()
		return nil, err
	}
	defer client.Disconnect(ctx)
	deadline := time.Now().Add(20 * time.Second)
	for {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		err = client.Ping(pctx, nil)
		cancel()
		if err == nil {
			return s, nil
		}
		if time.Now().After(deadline) {
			s.Stop()
			return nil, fmt.Errorf("cairnd does not answer: %w", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Pid is the server's process id.
func (s *Server) Pid() int { return s.cmd.Process.Pid }

// Stop ends the server with SIGTERM (SIGKILL after 30 s) and waits for it.
func (s *Server) Stop() {
	if s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
}

// ServerStatus runs serverStatus.
func ServerStatus(ctx context.Context, c *mongo.Client) (bson.M, error) {
	var m bson.M
	err := c.Database("admin").RunCommand(ctx, bson.D{{Key: "serverStatus", Value: 1}}).Decode(&m)
	return m, err
}

// Int reads a number at a dotted path of a decoded document (0 if absent).
func Int(m bson.M, path ...string) int64 {
	var cur any = m
	for _, p := range path {
		switch d := cur.(type) {
		case bson.M:
			cur = d[p]
		case bson.D:
			cur = nil
			for _, e := range d {
				if e.Key == p {
					cur = e.Value
				}
			}
		default:
			return 0
		}
	}
	switch v := cur.(type) {
	case int32:
		return int64(v)
	case int64:
		return v
	case float64:
		return int64(v)
	}
	return 0
}
