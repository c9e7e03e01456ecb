// Package server owns cairnd's listener and client connections: it accepts
// connections, frames and decodes wire messages, hands each command to the
// command table on the connection's own goroutine (no hand-off on the
// request path), and writes the reply, compressed as the client negotiated.
package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"github.com/cairndb/cairn/internal/opctx"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/auth"
	"github.com/cairndb/cairn/internal/changestream"
	"github.com/cairndb/cairn/internal/colcache"
	"github.com/cairndb/cairn/internal/command"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/failpoint"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/oplog"
	"github.com/cairndb/cairn/internal/repl"
	"github.com/cairndb/cairn/internal/session"
	"github.com/cairndb/cairn/kv"
)

// Options configure a Server. Zero values mean the documented defaults.
type Options struct {
	// DBPath is the data directory (required).
	DBPath string
	// KV configures the storage engine; nil means kv's defaults with lazy
	// durability bounded by JournalCommitInterval.
	KV *kv.Options
	// JournalCommitInterval bounds how long an acknowledged write that did
	// not ask for j: true stays only in memory (default 100 ms).
	JournalCommitInterval time.Duration
	// SyncDelay is the checkpoint interval (default 60 s).
	SyncDelay time.Duration
	// Logger receives the server's log (default slog.Default()).
	Logger *slog.Logger
	// Argv and Parsed are reported by getCmdLineOpts.
	Argv   []string
	Parsed bson.Doc
	// MaxConns limits concurrent connections (default 1,000,000, as mongod's
	// maxIncomingConnections).
	MaxConns int
	// ReplSet is the replica set's name; empty (the default) runs a
	// standalone server.
	ReplSet string
	// SessionTimeout is how long an idle logical session lives (default
	// 30 minutes, mongod's localLogicalSessionTimeoutMinutes), and
	// SessionRefreshInterval how often sessions are written to
	// config.system.sessions and expired (default 5 minutes, mongod's
	// logicalSessionRefreshMillis).
	SessionTimeout, SessionRefreshInterval time.Duration
	// OplogSize is the oplog's size in bytes when it is created (0:
	// mongod's default, 5 % of the free disk space, 990 MB to 50 GB);
	// OplogMinRetention keeps entries younger than it past the size.
	OplogSize         int64
	OplogMinRetention time.Duration
	// ReplHost is the host:port the member advertises (hello's me and
	// hosts, the default configuration's member); empty: the first
	// listener's address.
	ReplHost string
	// ReplInitiate initiates the replica set with the default
	// configuration at start if it is not initiated yet (cairnd's default
	// one-member set); a data directory initiated under another set name
	// keeps that name.
	ReplInitiate bool
	// TTLMonitorInterval is how often expired documents are deleted
	// (default 60 s, as mongod's ttlMonitorSleepSecs).
	TTLMonitorInterval time.Duration
	// TestCommands is enableTestCommands: configureFailPoint and the fail
	// points exist (test only: a client can make the server fail).
	TestCommands bool
	// NoScripting disables server-side JavaScript (--noscripting).
	NoScripting bool
	// LogLevel, if set, is changed by setParameter logLevel.
	LogLevel *slog.LevelVar
	// RotateLog, if set, serves the logRotate command.
	RotateLog func() error
	// RecentLog, if set, serves getLog global: the most recent log lines
	// and how many were written.
	RecentLog func() ([]string, int)
	// Auth turns access control on (--auth).
	Auth bool
	// KeyFile is the members' key (--keyFile's content without
	// whitespace; "" when none): they authenticate to each other as
	// __system with it.
	KeyFile string
	// MessageTimeout bounds how long the rest of a message may take to
	// arrive once its first bytes have (default 60 s; negative: no limit).
	// Idle connections between messages are not timed out.
	MessageTimeout time.Duration
	// MaxRequestMemory caps the bytes held by requests being read or run,
	// server-wide (default 1 GiB): a connection whose next message does not
	// fit waits before reading its body.
	MaxRequestMemory int64
	// TLS configures TLS on the listeners (nil: plain only).
	TLS *TLSOptions
	// AuthFailureDelay is how long a failed authentication waits before
	// its answer (default 200 ms; negative: none).
	AuthFailureDelay time.Duration
	// AuthFailuresPerMinute and AuthFailureBurst limit failed
	// authentications per client address (defaults 30 and 10; a negative
	// AuthFailuresPerMinute: no limit; internal/auth/ratelimit.go).
	AuthFailuresPerMinute, AuthFailureBurst int64
	// PreAuthMaxMessageSize is the largest message a connection may send
	// before authenticating when Auth is on (mongod's
	// preAuthMaximumMessageSizeBytes, default 16 KiB).
	PreAuthMaxMessageSize int64
	// SlowMS is the slow-operation log's threshold in milliseconds
	// (mongod's slowms): nil means 100; 0 logs every command.
	SlowMS *int64
	// ColumnCache configures the in-memory column cache of parallel
	// aggregations (zero: colcache's defaults; a negative Budget turns it
	// off).
	ColumnCache colcache.Options
}

// Server is a running cairnd.
type Server struct {
	// running counts the connections running a command: the disconnect
	// watcher walks the connection table only while it is not zero.
	running atomic.Int64
	// ticks and walks count the watcher's ticks and the ones that walked
	// the connection table.
	ticks, walks atomic.Int64
	opts         Options
	log          *slog.Logger
	env          *command.Env
	db           *kv.DB
	connID       atomic.Int64

	mu        sync.Mutex
	listeners []net.Listener
	conns     map[*conn]struct{}
	wg        sync.WaitGroup
	closing   atomic.Bool
	closed    chan struct{} // closed when Shutdown starts
	stopBg    context.CancelFunc
	bg        sync.WaitGroup // the background goroutines stopBg ends
	tlsCfg    *tls.Config
	mem       *memBudget
	// stopping ends when Shutdown starts (waits for request memory end).
	stopping context.Context
	stop     context.CancelFunc
}

// New opens the data directory and prepares a server.
func New(opts Options) (*Server, error) {
	if opts.DBPath == "" {
		return nil, errors.New("server: no data directory")
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.JournalCommitInterval <= 0 {
		opts.JournalCommitInterval = 100 * time.Millisecond
	}
	if opts.SyncDelay <= 0 {
		opts.SyncDelay = 60 * time.Second
	}
	if opts.MaxConns <= 0 {
		opts.MaxConns = 1000000
	}
	if opts.MessageTimeout == 0 {
		opts.MessageTimeout = defaultMessageTimeout
	}
	if opts.MaxRequestMemory <= 0 {
		opts.MaxRequestMemory = defaultMaxRequestMemory
	}
	ko := kv.Options{}
	if opts.KV != nil {
		ko = *opts.KV
	}
	ko.CommitInterval = opts.JournalCommitInterval
	ko.CheckpointInterval = opts.SyncDelay
	if ko.Logger == nil {
		ko.Logger = opts.Logger.With("c", "STORAGE")
	}
	db, err := kv.Open(opts.DBPath, &ko)
	if err != nil {
		return nil, fmt.Errorf("opening data directory %s: %w", opts.DBPath, err)
	}
	s := &Server{opts: opts, log: opts.Logger, db: db, conns: make(map[*conn]struct{}), closed: make(chan struct{}),
		mem: newMemBudget(opts.MaxRequestMemory)}
	s.stopping, s.stop = context.WithCancel(context.Background())
	var memberTLS *tls.Config
	if opts.TLS.enabled() {
		if s.tlsCfg, err = opts.TLS.Config(); err != nil {
			db.Close()
			return nil, err
		}
		if memberTLS, err = opts.TLS.MemberConfig(); err != nil {
			db.Close()
			return nil, err
		}
	}
	// Spill files of sorts and aggregations live under the data directory;
	// whatever a previous run left there is garbage.
	tmp := ""
	if opts.KV == nil || opts.KV.FS == nil {
		tmp = filepath.Join(opts.DBPath, "_tmp")
		if err := os.RemoveAll(tmp); err != nil {
			db.Close()
			return nil, fmt.Errorf("cleaning %s: %w", tmp, err)
		}
		if err := os.MkdirAll(tmp, 0o700); err != nil {
			db.Close()
			return nil, fmt.Errorf("creating %s: %w", tmp, err)
		}
	}
	if n, err := exec.AbortUnfinishedBuilds(context.Background(), db); err != nil {
		db.Close()
		return nil, fmt.Errorf("removing unfinished index builds: %w", err)
	} else if n > 0 {
		opts.Logger.Warn("removed indexes whose build did not finish before the server stopped", "indexes", n)
	}
	s.env = &command.Env{
		Engine:          exec.Engine{KV: db, TempDir: tmp, ColumnCache: colcache.New(opts.ColumnCache)},
		Cursors:         exec.NewCursors(0),
		Log:             opts.Logger,
		Started:         time.Now(),
		Argv:            opts.Argv,
		Parsed:          opts.Parsed,
		CommitInterval:  opts.JournalCommitInterval,
		MaxConns:        opts.MaxConns,
		LogLevel:        opts.LogLevel,
		RotateLog:       opts.RotateLog,
		RecentLog:       opts.RecentLog,
		TestCommands:    opts.TestCommands,
		NoScripting:     opts.NoScripting,
		FailPoints:      failpoint.NewRegistry(failpoint.Defs()...),
		TTLMonitorSleep: opts.TTLMonitorInterval,
		MemberTLS:       memberTLS,
	}
	if opts.TestCommands {
		opts.Logger.Warn("Test commands are enabled (enableTestCommands): configureFailPoint lets any client make this server fail commands, stall and drop connections; for tests only", "c", "CONTROL")
	}
	if opts.ReplSet != "" {
		s.env.Repl = repl.NewSet(opts.ReplSet, nil)
		// The oplog: created if missing; the clock continues after its
		// last entry.
		dir := opts.DBPath
		l, err := oplog.Open(db, s.env.Repl.Clock, oplog.Config{MaxBytes: opts.OplogSize, MinRetention: opts.OplogMinRetention},
			func() int64 { return oplog.DefaultSize(dir) })
		if err != nil {
			db.Close()
			return nil, fmt.Errorf("opening the oplog: %w", err)
		}
		l.Term = s.env.Repl.WriteTerm
		s.env.Oplog = l
		s.env.ChangeStreams = changestream.NewHub(db, l, changestream.HubOptions{CommitPoint: s.env.StreamCommitPoint})
		if opts.ReplHost != "" {
			s.env.Repl.SetMe(opts.ReplHost)
		}
		if err := s.env.AttachRepl(opts.ReplInitiate); err != nil {
			db.Close()
			return nil, fmt.Errorf("replica set: %w", err)
		}
	}
	s.env.Sessions = session.New(session.Options{Timeout: opts.SessionTimeout})
	am, err := auth.NewManager(db, auth.Options{Enabled: opts.Auth, FailureDelay: opts.AuthFailureDelay, Logger: opts.Logger, KeyFile: opts.KeyFile,
		FailuresPerMinute: opts.AuthFailuresPerMinute, FailureBurst: opts.AuthFailureBurst})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("reading users: %w", err)
	}
	s.env.Auth = am
	s.env.PreAuthMaxMessageSize.Store(opts.PreAuthMaxMessageSize)
	s.env.SlowMS.Store(opctx.DefaultSlowMS)
	if opts.SlowMS != nil {
		s.env.SlowMS.Store(*opts.SlowMS)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.stopBg = cancel
	s.bg.Add(5)
	go func() { defer s.bg.Done(); s.env.RunTxnReaper(ctx, time.Second) }()
	go func() {
		defer s.bg.Done()
		s.env.Sessions.Run(ctx, db, opts.SessionRefreshInterval, s.env.KillSessions, func(err error) {
			s.log.Warn("Failed to refresh the logical sessions", "c", "CONTROL", "error", err.Error())
		})
	}()
	go func() { defer s.bg.Done(); s.env.Cursors.RunReaper(ctx, time.Minute) }()
	go func() { defer s.bg.Done(); exec.RunTTLMonitor(ctx, &s.env.Engine, s.env.Log, s.env.TTLInterval) }()
	go func() { defer s.bg.Done(); s.watchDisconnects(ctx) }()
	return s, nil
}

// Env exposes the command environment (for tests and the metrics endpoint).
func (s *Server) Env() *command.Env { return s.env }

// Serve accepts connections on l until Shutdown. It returns nil after a
// clean shutdown.
func (s *Server) Serve(l net.Listener) error {
	s.mu.Lock()
	s.listeners = append(s.listeners, l)
	s.mu.Unlock()
	if err := s.startRepl(l); err != nil {
		return err
	}
	s.log.Info("Waiting for connections", "c", "NETWORK", "id", 23016, "ctx", "listener", "address", l.Addr().String())
	var delay time.Duration
	for {
		nc, err := l.Accept()
		if err != nil {
			if s.closing.Load() {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, errTooManyFiles) {
				delay = min(max(delay*2, 5*time.Millisecond), time.Second)
				s.log.Warn("Error accepting new connection", "c", "NETWORK", "id", 23019, "ctx", "listener", "error", err.Error())
				time.Sleep(delay)
				continue
			}
			return fmt.Errorf("accept: %w", err)
		}
		delay = 0
		if int(s.env.Stats.ConnsCurrent.Load()) >= s.opts.MaxConns {
			s.env.Stats.ConnsRejected.Add(1)
			s.log.Info("Connection refused because there are too many open connections", "c", "NETWORK", "id", 22942, "ctx", "listener", "remote", nc.RemoteAddr().String())
			nc.Close()
			continue
		}
		if s.tlsCfg != nil {
			nc = newTLSConn(nc, s.opts.TLS, s.tlsCfg, s.log)
		}
		c := s.newConn(nc)
		s.mu.Lock()
		if s.closing.Load() {
			s.mu.Unlock()
			nc.Close()
			return nil
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			c.serve()
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
		}()
	}
}

// Shutdown stops accepting, lets in-flight requests finish (idle
// connections are closed at once; busy ones after their current request),
// and when ctx ends first interrupts the running operations with
// InterruptedAtShutdown (11600) and closes the connections; then it joins
// the background goroutines (cursor reaper, TTL monitor, disconnect
// watcher), checkpoints and closes the engine.
func (s *Server) Shutdown(ctx context.Context) error {
	if s.closing.Swap(true) {
		return errors.New("server: already shut down")
	}
	close(s.closed)
	s.stop()
	if s.env.Repl != nil {
		s.env.StopRepl()
		s.env.Repl.Stop()
	}
	s.mu.Lock()
	for _, l := range s.listeners {
		l.Close()
	}
	for c := range s.conns {
		c.closeWhenIdle()
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		// The deadline passed: running operations end with
		// InterruptedAtShutdown (11600) at their next check, and
		// connections are closed.
		if n := s.env.Ops.KillAll(mongoerr.ErrShutdown); n > 0 {
			s.log.Info("Interrupted operations at shutdown", "c", "CONTROL", "ctx", "SignalHandler", "operations", n)
		}
		s.mu.Lock()
		for c := range s.conns {
			c.nc.Close()
		}
		s.mu.Unlock()
		<-done
	}
	s.stopBg()
	s.bg.Wait()
	s.env.Cursors.KillAll()
	s.env.CloseSnapshots()
	s.log.Info("Closing the storage engine", "c", "STORAGE", "id", 22261, "ctx", "SignalHandler")
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("closing storage engine: %w", err)
	}
	return nil
}

// startRepl gives the member its address (the first listener's, unless
// ReplHost set one) and, with ReplInitiate, initiates a set that is not
// initiated yet with the default configuration.
func (s *Server) startRepl(l net.Listener) error {
	set := s.env.Repl
	if set == nil {
		return nil
	}
	if set.Me() == "" {
		set.SetMe(l.Addr().String())
	}
	if err := s.env.StartRepl(); err != nil {
		return fmt.Errorf("replica set %s: %w", set.Name, err)
	}
	if old := set.Status().Config; old != nil {
		if moved, err := set.Rehost(set.Me()); err != nil {
			return fmt.Errorf("replica set %s: %w", set.Name, err)
		} else if moved {
			s.log.Warn("The replica set's one member moved to this node's address", "c", "REPL", "set", set.Name, "from", old.Members[0].Host, "to", set.Me())
		}
	}
	if !s.opts.ReplInitiate || set.Status().Config != nil {
		return nil
	}
	cfg := repl.DefaultConfig(set.Name, set.Me())
	cfg.Settings.ReplicaSetID = repl.NewObjectID()
	if err := set.Initiate(cfg); err != nil && err != repl.ErrAlreadyInitialized {
		return fmt.Errorf("initiating replica set %s: %w", set.Name, err)
	}
	s.log.Info("Initiated the replica set with the default configuration", "c", "REPL", "id", 21577, "set", set.Name, "me", set.Me())
	return nil
}
