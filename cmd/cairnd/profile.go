package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"runtime"
	rpprof "runtime/pprof"
	"time"
)

// profiling holds the profiling options: --cpuprofile writes a CPU profile
// of the whole run (for PGO, see bench/pgo.sh), --pprofAddr serves
// net/http/pprof on a loopback address, whose mutex and block profiles
// sample at --mutexProfileFraction (1 in N contention events; 0, the
// default, records none) and --blockProfileRate (one blocking event per
// that many nanoseconds blocked; 0, the default, records none).
type profiling struct {
	CPUProfile           string
	PprofAddr            string
	MutexProfileFraction int
	BlockProfileRate     int
}

func (p *profiling) register(fs *flag.FlagSet) {
	fs.StringVar(&p.CPUProfile, "cpuprofile", "", "write a CPU profile of the run to this file (written at clean shutdown)")
	fs.StringVar(&p.PprofAddr, "pprofAddr", "", "serve net/http/pprof at this loopback host:port (off when empty)")
	fs.IntVar(&p.MutexProfileFraction, "mutexProfileFraction", 0, "sample 1 in N mutex contention events for pprof's mutex profile (0: off)")
	fs.IntVar(&p.BlockProfileRate, "blockProfileRate", 0, "sample one blocking event per N nanoseconds blocked for pprof's block profile (0: off)")
}

// startProfiling starts what the options ask for; the returned function
// stops the CPU profile and flushes it (call it after the server has shut
// down).
func startProfiling(p profiling, log *slog.Logger) (stop func(), err error) {
	stop = func() {}
	if p.MutexProfileFraction < 0 || p.BlockProfileRate < 0 {
		return stop, errors.New("mutexProfileFraction and blockProfileRate must not be negative")
	}
	runtime.SetMutexProfileFraction(p.MutexProfileFraction)
	runtime.SetBlockProfileRate(p.BlockProfileRate)
	if p.PprofAddr != "" {
		if _, err := servePprof(p.PprofAddr, log); err != nil {
			return stop, err
		}
	}
	if p.CPUProfile == "" {
		return stop, nil
	}
	f, err := os.Create(p.CPUProfile)
	if err != nil {
		return stop, fmt.Errorf("cpuprofile: %w", err)
	}
	if err := rpprof.StartCPUProfile(f); err != nil {
		f.Close()
		return stop, fmt.Errorf("cpuprofile: %w", err)
	}
	log.Info("Writing a CPU profile", "c", "CONTROL", "ctx", "initandlisten", "path", p.CPUProfile)
	return func() {
		rpprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			log.Error("Writing the CPU profile failed", "c", "CONTROL", "ctx", "SignalHandler", "error", err.Error())
		}
	}, nil
}

// servePprof listens on addr, which must be a loopback address: the
// profiling endpoints expose the process's internals and have no
// authentication. It returns the address it listens on.
func servePprof(addr string, log *slog.Logger) (net.Addr, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("pprofAddr %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, errors.New("pprofAddr must be a loopback address (127.0.0.1, ::1 or localhost)")
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("pprofAddr: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	log.Info("Serving pprof", "c", "CONTROL", "ctx", "initandlisten", "address", "http://"+l.Addr().String()+"/debug/pprof/")
	return l.Addr(), nil
}
