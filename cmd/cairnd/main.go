// Command cairnd is the Cairn database server: it speaks MongoDB's wire
// protocol and stores data in Cairn's own engine. Its flags and config file
// follow mongod's; with no flags it serves 127.0.0.1:27017 from ./data/db.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/cairndb/cairn/internal/auth"
	"github.com/cairndb/cairn/internal/colcache"
	"github.com/cairndb/cairn/internal/command"
	"github.com/cairndb/cairn/internal/logging"
	"github.com/cairndb/cairn/internal/metrics"
	"github.com/cairndb/cairn/internal/server"
	"github.com/cairndb/cairn/kv"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	usageOut := stderr
	for _, a := range args {
		if a == "--help" || a == "-help" || a == "-h" {
			usageOut = stdout // asked for: the usage is the output
		}
	}
	cfg, err := parseArgs(args, usageOut)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "cairnd: %v\ntry 'cairnd --help' for more information\n", err)
		return 2
	}
	if cfg.ShowVersion {
		fmt.Fprintf(stdout, "db version v%s\ncairn version %s\ngo version %s %s/%s\n", command.CompatibleVersion, command.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
		return 0
	}
	logOut, err := openLog(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "cairnd: %v\n", err)
		return 1
	}
	level := new(slog.LevelVar) // changed at run time by setParameter logLevel
	if cfg.Verbosity > 0 {
		level.Set(slog.LevelDebug)
	}
	ring := logging.NewRing(1024)
	handler := logging.NewHandler(logOut, level, ring)
	log := slog.New(handler)
	slog.SetDefault(log)
	log.Info("Cairn starting", "c", "CONTROL", "id", 4615611, "ctx", "initandlisten",
		"pid", os.Getpid(), "port", cfg.Port, "dbPath", cfg.DBPath, "version", command.Version, "compatibleVersion", command.CompatibleVersion)

	gcp, memLimit := tuneGC()
	log.Info("Memory management", "c", "CONTROL", "ctx", "initandlisten", "gcPercent", gcp, "memoryLimitBytes", memLimit)

	if err := os.MkdirAll(cfg.DBPath, 0o755); err != nil {
		log.Error("Cannot create data directory", "c", "STORAGE", "ctx", "initandlisten", "dbPath", cfg.DBPath, "error", err.Error())
		return 1
	}
	var key string
	if cfg.KeyFile != "" {
		content, err := os.ReadFile(cfg.KeyFile)
		if err == nil {
			key, err = auth.ParseKeyFile(string(content))
		}
		if err != nil {
			log.Error("Error reading the key file", "c", "ACCESS", "ctx", "initandlisten", "keyFile", cfg.KeyFile, "error", err.Error())
			return 1
		}
	}
	compressor, _ := kv.ParseCompression(cfg.JournalCompressor) // checked by parseArgs
	replSet, replInitiate, _ := cfg.replMode()                  // checked by parseArgs
	srv, err := server.New(server.Options{
		KV:     &kv.Options{JournalCompression: compressor, CacheSize: int64(cfg.CacheSizeGB * (1 << 30))},
		DBPath: cfg.DBPath, JournalCommitInterval: cfg.JournalCommitInterval, SyncDelay: cfg.SyncDelay,
		Logger: log, Argv: append([]string{"cairnd"}, args...), Parsed: cfg.parsedDoc(), MaxConns: cfg.MaxConns,
		TTLMonitorInterval:     cfg.TTLMonitorSleep,
		SessionTimeout:         cfg.SessionTimeout,
		SessionRefreshInterval: cfg.SessionRefresh,
		Auth:                   cfg.Auth || key != "",
		KeyFile:                key,
		TestCommands:           cfg.TestCommands,
		NoScripting:            cfg.NoScripting,
		ReplSet:                replSet,
		ReplHost:               cfg.replHost(),
		ReplInitiate:           replInitiate,
		OplogSize:              cfg.OplogSizeMB << 20,
		OplogMinRetention:      time.Duration(cfg.OplogMinRetentionHours * float64(time.Hour)),
		PreAuthMaxMessageSize:  cfg.PreAuthMaxMessageSize,
		AuthFailuresPerMinute:  cfg.authFailuresPerMinute(),
		AuthFailureBurst:       cfg.AuthFailureBurst,
		TLS:                    cfg.tls.options(),
		LogLevel:               level,
		RotateLog:              func() error { return rotateLog(cfg, handler, log) },
		RecentLog:              ring.Lines,
		SlowMS:                 &cfg.SlowMS,
		ColumnCache:            colcache.Options{Budget: cfg.columnCacheBytes()},
	})
	if err != nil {
		log.Error("Cannot start the storage engine", "c", "STORAGE", "ctx", "initandlisten", "error", err.Error())
		return 1
	}
	stopProfiling, err := startProfiling(cfg.profiling, log)
	if err != nil {
		log.Error("Cannot start profiling", "c", "CONTROL", "ctx", "initandlisten", "error", err.Error())
		_ = srv.Shutdown(context.Background())
		return 1
	}
	defer stopProfiling()
	if cfg.MetricsAddr != "" {
		addr, err := metrics.Serve(context.Background(), cfg.MetricsAddr, srv.Env())
		if err != nil {
			log.Error("Cannot serve metrics", "c", "NETWORK", "ctx", "initandlisten", "error", err.Error())
			_ = srv.Shutdown(context.Background())
			return 1
		}
		log.Info("Serving Prometheus metrics", "c", "NETWORK", "ctx", "initandlisten", "address", "http://"+addr.String()+"/metrics")
	}
	// Signals are caught before the first connection can be accepted: a
	// client (or a test) that stops the server as soon as it answers must
	// get a clean shutdown, not the default SIGTERM action.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGUSR1)
	var listeners []net.Listener
	for _, addr := range cfg.listenAddrs() {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			log.Error("Failed to listen", "c", "NETWORK", "id", 23024, "ctx", "initandlisten", "address", addr, "error", err.Error())
			for _, l := range listeners {
				l.Close()
			}
			_ = srv.Shutdown(context.Background())
			return 1
		}
		listeners = append(listeners, l)
	}
	errc := make(chan error, len(listeners))
	for _, l := range listeners {
		go func() { errc <- srv.Serve(l) }()
	}
	for {
		select {
		case sig := <-sigs:
			if sig == syscall.SIGUSR1 {
				_ = rotateLog(cfg, handler, log) // failures are logged
				continue
			}
			log.Info("Received signal", "c", "CONTROL", "id", 23377, "ctx", "SignalHandler", "signal", sig.String())
			return shutdown(srv, log)
		case err := <-errc:
			if err != nil {
				log.Error("Listener failed", "c", "NETWORK", "ctx", "listener", "error", err.Error())
				shutdown(srv, log)
				return 1
			}
		}
	}
}

// shutdownGrace is how long commands running at a signalled shutdown may
// go on before they are interrupted (InterruptedAtShutdown, 11600); mongod
// interrupts them at once.
const shutdownGrace = 2 * time.Second

func shutdown(srv *server.Server, log *slog.Logger) int {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		log.Error("Shutdown failed", "c", "CONTROL", "ctx", "SignalHandler", "error", err.Error())
		return 1
	}
	log.Info("Now exiting", "c", "CONTROL", "id", 23138, "ctx", "SignalHandler")
	return 0
}

// openLog opens --logpath (renaming an existing file aside unless
// --logappend, as mongod does) or returns standard error.
func openLog(cfg config) (io.Writer, error) {
	if cfg.LogPath == "" {
		return os.Stderr, nil
	}
	flags := os.O_CREATE | os.O_WRONLY | os.O_APPEND
	if !cfg.LogAppend {
		if _, err := os.Stat(cfg.LogPath); err == nil {
			if err := os.Rename(cfg.LogPath, cfg.LogPath+"."+time.Now().UTC().Format("2006-01-02T15-04-05")); err != nil {
				return nil, fmt.Errorf("rotating log file: %w", err)
			}
		}
	}
	f, err := os.OpenFile(cfg.LogPath, flags, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening log file: %w", err)
	}
	return f, nil
}

// rotateLog renames the log file aside and starts a new one (SIGUSR1 and
// the logRotate command). Logging to standard error there is nothing to
// rotate.
func rotateLog(cfg config, h *logging.Handler, log *slog.Logger) error {
	if cfg.LogPath == "" {
		return nil
	}
	c := cfg
	c.LogAppend = false
	w, err := openLog(c)
	if err != nil {
		log.Error("Log rotation failed", "c", "CONTROL", "ctx", "SignalHandler", "error", err.Error())
		return err
	}
	if old := h.SetOutput(w); old != nil {
		if f, ok := old.(*os.File); ok && f != os.Stderr {
			f.Close()
		}
	}
	log.Info("Log rotation initiated", "c", "CONTROL", "id", 23166, "ctx", "SignalHandler")
	return nil
}
