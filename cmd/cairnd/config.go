package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/auth"
	"github.com/cairndb/cairn/internal/command"
	"github.com/cairndb/cairn/internal/wire"
	"github.com/cairndb/cairn/kv"
)

// defaultDBPath is where cairnd keeps its data when no --dbpath or
// storage.dbPath is given (relative to the working directory).
const defaultDBPath = "data/db"

// config is cairnd's configuration: mongod's option names, from the command
// line and/or a YAML file in mongod.conf's layout.
type config struct {
	DBPath string
	// ReplSet is the replica set's name (--replSet, replication.replSetName);
	// empty: standalone.
	ReplSet string
	// OplogSizeMB is the oplog's size in MB (--oplogSize,
	// replication.oplogSizeMB; 0: mongod's default), OplogMinRetentionHours
	// its minimum retention (--oplogMinRetentionHours,
	// storage.oplogMinRetentionHours).
	OplogSizeMB            int64
	OplogMinRetentionHours float64
	Port                   int
	// ReplHost, when set, is the host:port the member is known by in its
	// replica set's configuration, when others reach it at another
	// address than it listens on (a TCP proxy, a NAT): --replHost, a
	// Cairn extension.
	ReplHost              string
	BindIP                string
	BindIPAll             bool
	LogPath               string
	LogAppend             bool
	ConfigFile            string
	JournalCommitInterval time.Duration
	SyncDelay             time.Duration
	// JournalCompressor is none, snappy (default) or zstd.
	JournalCompressor string
	// CacheSizeGB is the storage engine's cache budget for clean leaf
	// pages, in GiB (mongod's --wiredTigerCacheSizeGB); 0 means mongod's
	// default, half of (RAM − 1 GiB) and at least 0.25 GiB.
	CacheSizeGB float64
	// ColumnCacheSizeGB is the column cache's budget in GiB (a Cairn
	// extension): 0 means a quarter of CacheSizeGB, a negative value
	// turns the cache off.
	ColumnCacheSizeGB float64
	MaxConns          int
	Verbosity         int
	ShowVersion       bool
	// TTLMonitorSleep is mongod's ttlMonitorSleepSecs server parameter.
	TTLMonitorSleep time.Duration
	// SessionTimeout and SessionRefresh are mongod's
	// localLogicalSessionTimeoutMinutes and logicalSessionRefreshMillis.
	SessionTimeout, SessionRefresh time.Duration
	// PreAuthMaxMessageSize, AuthFailuresPerMinute and AuthFailureBurst
	// are the server parameters preAuthMaximumMessageSizeBytes (mongod
	// 8.0's), authFailuresPerMinute and authFailureBurst (Cairn's, 0
	// failures a minute: no limit).
	PreAuthMaxMessageSize int64
	AuthFailuresPerMinute int64
	AuthFailureBurst      int64
	// TestCommands is mongod's enableTestCommands server parameter.
	TestCommands bool
	// NoScripting turns server-side JavaScript off (--noscripting,
	// security.javascriptEnabled: false).
	NoScripting bool
	// KeyFile is the file of the key the members of a replica set
	// authenticate to each other with (--keyFile, security.keyFile); it
	// turns access control on, as mongod's.
	KeyFile string
	// params are the server parameters given at startup, as given
	// (getCmdLineOpts' parsed.setParameter).
	params map[string]string
	// MetricsAddr serves Prometheus metrics when set (e.g. 127.0.0.1:9216).
	MetricsAddr string
	// SlowMS is the slow-operation log's threshold (mongod's --slowms).
	SlowMS    int64
	profiling profiling
	tls       tlsConfig
	// Auth turns access control on (--auth, security.authorization).
	Auth     bool
	repl     replConfig
	paramErr error
}

func defaultConfig() config {
	return config{DBPath: defaultDBPath, Port: 27017, BindIP: "127.0.0.1",
		JournalCommitInterval: 100 * time.Millisecond, SyncDelay: 60 * time.Second, JournalCompressor: "snappy", TTLMonitorSleep: 60 * time.Second, SlowMS: 100,
		PreAuthMaxMessageSize: command.DefaultPreAuthMaxMessageSize, AuthFailuresPerMinute: auth.DefaultFailuresPerMinute, AuthFailureBurst: auth.DefaultFailureBurst}
}

// parseArgs reads flags (and the config file they name). Flags given on
// the command line win over the file.
func parseArgs(args []string, stderr io.Writer) (config, error) {
	cfg := defaultConfig()
	fs := flag.NewFlagSet("cairnd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { usage(stderr, fs) }
	fs.StringVar(&cfg.DBPath, "dbpath", cfg.DBPath, "directory for the data files (created if missing)")
	fs.IntVar(&cfg.Port, "port", cfg.Port, "TCP port to listen on")
	fs.StringVar(&cfg.BindIP, "bind_ip", cfg.BindIP, "comma-separated addresses to listen on")
	fs.BoolVar(&cfg.BindIPAll, "bind_ip_all", false, "listen on all IPv4 and IPv6 addresses")
	fs.StringVar(&cfg.ConfigFile, "config", "", "YAML configuration file (mongod.conf keys)")
	fs.StringVar(&cfg.ConfigFile, "f", "", "shorthand for --config")
	fs.StringVar(&cfg.LogPath, "logpath", "", "log file (default: standard error)")
	fs.BoolVar(&cfg.LogAppend, "logappend", false, "append to the log file instead of rotating it at startup")
	ms := fs.Int("journalCommitInterval", 100, "milliseconds an acknowledged j:false write may stay only in memory (1-500)")
	sd := fs.Int("syncdelay", 60, "seconds between checkpoints")
	fs.StringVar(&cfg.JournalCompressor, "journalCompressor", cfg.JournalCompressor, "journal record compression: none, snappy or zstd")
	fs.StringVar(&cfg.JournalCompressor, "wiredTigerJournalCompressor", cfg.JournalCompressor, "mongod's name for --journalCompressor")
	fs.Float64Var(&cfg.CacheSizeGB, "wiredTigerCacheSizeGB", 0, "cache budget of the storage engine in GiB (default: half of RAM − 1 GiB, at least 0.25)")
	fs.Float64Var(&cfg.ColumnCacheSizeGB, "columnCacheSizeGB", 0, "memory budget in GiB of the in-memory columns that serve analytical aggregations (default: a quarter of wiredTigerCacheSizeGB; negative: off)")
	fs.IntVar(&cfg.MaxConns, "maxConns", 1000000, "maximum concurrent connections")
	fs.BoolVar(&cfg.ShowVersion, "version", false, "print the version and exit")
	fs.StringVar(&cfg.MetricsAddr, "metricsAddr", "", "serve Prometheus metrics at host:port/metrics (off when empty; keep it on loopback)")
	fs.Int64Var(&cfg.SlowMS, "slowms", cfg.SlowMS, "log operations that take at least this many milliseconds (0: every operation)")
	cfg.profiling.register(fs)
	cfg.tls.register(fs)
	cfg.repl.register(fs)
	fs.StringVar(&cfg.ReplSet, "replSet", "", "run as a member of the replica set of this name (replication.replSetName)")
	fs.StringVar(&cfg.ReplHost, "replHost", "", "host:port this member is known by in the replica set configuration when it differs from its listening address (a proxy or NAT; default: from --bind_ip and --port)")
	fs.Int64Var(&cfg.OplogSizeMB, "oplogSize", 0, "size of the oplog in MB (replication.oplogSizeMB; default: 5% of free disk space, 990 MB to 50 GB)")
	fs.Float64Var(&cfg.OplogMinRetentionHours, "oplogMinRetentionHours", 0, "keep oplog entries at least this many hours even past the oplog's size (storage.oplogMinRetentionHours)")
	fs.BoolVar(&cfg.NoScripting, "noscripting", false, "disable server-side JavaScript ($where, $function, $accumulator, mapReduce; security.javascriptEnabled: false)")
	fs.BoolVar(&cfg.Auth, "auth", false, "require clients to authenticate (SCRAM-SHA-256, SCRAM-SHA-1) and check their roles")
	fs.StringVar(&cfg.KeyFile, "keyFile", "", "file of the key replica set members authenticate to each other with (implies --auth)")
	verbose := fs.Bool("v", false, "verbose logging")
	var params []string
	fs.Func("setParameter", "server parameter name=value (ttlMonitorSleepSecs, preAuthMaximumMessageSizeBytes, authFailuresPerMinute, authFailureBurst, localLogicalSessionTimeoutMinutes, logicalSessionRefreshMillis, enableTestCommands); repeatable", func(v string) error {
		params = append(params, v)
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	cfg.JournalCommitInterval = time.Duration(*ms) * time.Millisecond
	cfg.SyncDelay = time.Duration(*sd) * time.Second
	if cfg.ConfigFile != "" {
		file, err := loadConfigFile(cfg.ConfigFile)
		if err != nil {
			return cfg, err
		}
		merge(&cfg, file, set)
		if cfg.paramErr != nil {
			return cfg, cfg.paramErr
		}
	}
	if *verbose {
		cfg.Verbosity = 1
	}
	for _, p := range params {
		name, value, ok := strings.Cut(p, "=")
		if !ok {
			return cfg, fmt.Errorf("--setParameter %q: expected name=value", p)
		}
		if err := cfg.setParameter(name, value); err != nil {
			return cfg, err
		}
	}
	if cfg.JournalCommitInterval < time.Millisecond || cfg.JournalCommitInterval > 500*time.Millisecond {
		return cfg, errors.New("journalCommitInterval must be between 1 and 500 milliseconds")
	}
	if _, err := kv.ParseCompression(cfg.JournalCompressor); err != nil {
		return cfg, fmt.Errorf("journalCompressor: %q is not one of none, snappy, zstd", cfg.JournalCompressor)
	}
	if cfg.CacheSizeGB < 0 || cfg.CacheSizeGB > 10000 {
		return cfg, errors.New("wiredTigerCacheSizeGB must be between 0 and 10000")
	}
	if cfg.CacheSizeGB == 0 {
		cfg.CacheSizeGB = defaultCacheSizeGB()
	}
	if cfg.ColumnCacheSizeGB > 10000 {
		return cfg, errors.New("columnCacheSizeGB must be at most 10000")
	}
	if cfg.SyncDelay <= 0 {
		return cfg, errors.New("syncdelay must be a positive number of seconds")
	}
	if cfg.OplogSizeMB < 0 || cfg.OplogSizeMB > 1<<30 {
		return cfg, errors.New("bad --oplogSize, arg must be greater than 0 and at most 1073741824 (1 PB)")
	}
	if cfg.OplogMinRetentionHours < 0 {
		return cfg, errors.New("bad --oplogMinRetentionHours, argument must be greater or equal to 0")
	}
	if cfg.Port < 0 || cfg.Port > 65535 {
		return cfg, fmt.Errorf("port number %d is out of range", cfg.Port)
	}
	if err := cfg.tls.check(); err != nil {
		return cfg, err
	}
	if _, _, err := cfg.replMode(); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// fileConfig mirrors the mongod.conf keys cairnd understands.
type fileConfig struct {
	Storage struct {
		DBPath  *string `yaml:"dbPath"`
		Journal struct {
			Enabled          *bool `yaml:"enabled"`
			CommitIntervalMs *int  `yaml:"commitIntervalMs"`
		} `yaml:"journal"`
		SyncPeriodSecs         *float64 `yaml:"syncPeriodSecs"`
		OplogMinRetentionHours *float64 `yaml:"oplogMinRetentionHours"`
		WiredTiger             struct {
			EngineConfig struct {
				JournalCompressor *string  `yaml:"journalCompressor"`
				CacheSizeGB       *float64 `yaml:"cacheSizeGB"`
			} `yaml:"engineConfig"`
		} `yaml:"wiredTiger"`
	} `yaml:"storage"`
	Net struct {
		Port                   *int    `yaml:"port"`
		BindIP                 *string `yaml:"bindIp"`
		BindIPAll              *bool   `yaml:"bindIpAll"`
		MaxIncomingConnections *int    `yaml:"maxIncomingConnections"`
		TLS                    tlsFile `yaml:"tls"`
	} `yaml:"net"`
	Security struct {
		Authorization     *string `yaml:"authorization"`
		JavascriptEnabled *bool   `yaml:"javascriptEnabled"`
		KeyFile           *string `yaml:"keyFile"`
	} `yaml:"security"`
	Replication struct {
		ReplSetName *string `yaml:"replSetName"`
		OplogSizeMB *int64  `yaml:"oplogSizeMB"`
		Standalone  *bool   `yaml:"standalone"`
	} `yaml:"replication"`
	OperationProfiling struct {
		Mode              *string `yaml:"mode"`
		SlowOpThresholdMs *int64  `yaml:"slowOpThresholdMs"`
	} `yaml:"operationProfiling"`
	SetParameter map[string]string `yaml:"setParameter"`
	SystemLog    struct {
		Destination *string `yaml:"destination"`
		Path        *string `yaml:"path"`
		LogAppend   *bool   `yaml:"logAppend"`
		Verbosity   *int    `yaml:"verbosity"`
	} `yaml:"systemLog"`
}

func loadConfigFile(path string) (*fileConfig, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading config file: %w", err)
	}
	var fc fileConfig
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(&fc); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("config file %s: %w", path, err)
	}
	return &fc, nil
}

// merge applies the file's values for the options not given as flags.
func merge(cfg *config, fc *fileConfig, set map[string]bool) {
	if v := fc.Storage.DBPath; v != nil && !set["dbpath"] {
		cfg.DBPath = *v
	}
	if v := fc.Storage.Journal.CommitIntervalMs; v != nil && !set["journalCommitInterval"] {
		cfg.JournalCommitInterval = time.Duration(*v) * time.Millisecond
	}
	if v := fc.Storage.SyncPeriodSecs; v != nil && !set["syncdelay"] {
		cfg.SyncDelay = time.Duration(*v * float64(time.Second))
	}
	if v := fc.Storage.WiredTiger.EngineConfig.CacheSizeGB; v != nil && !set["wiredTigerCacheSizeGB"] {
		cfg.CacheSizeGB = *v
	}
	if v := fc.Storage.WiredTiger.EngineConfig.JournalCompressor; v != nil && !set["journalCompressor"] && !set["wiredTigerJournalCompressor"] {
		cfg.JournalCompressor = *v
	}
	cfg.tls.merge(fc.Net.TLS, set)
	if v := fc.Net.Port; v != nil && !set["port"] {
		cfg.Port = *v
	}
	if v := fc.Net.BindIP; v != nil && !set["bind_ip"] {
		cfg.BindIP = *v
	}
	if v := fc.Net.BindIPAll; v != nil && !set["bind_ip_all"] {
		cfg.BindIPAll = *v
	}
	if v := fc.Net.MaxIncomingConnections; v != nil && !set["maxConns"] {
		cfg.MaxConns = *v
	}
	if v := fc.SystemLog.Path; v != nil && !set["logpath"] && (fc.SystemLog.Destination == nil || *fc.SystemLog.Destination == "file") {
		cfg.LogPath = *v
	}
	if v := fc.SystemLog.LogAppend; v != nil && !set["logappend"] {
		cfg.LogAppend = *v
	}
	if v := fc.SystemLog.Verbosity; v != nil {
		cfg.Verbosity = *v
	}
	if v := fc.Replication.ReplSetName; v != nil && !set["replSet"] {
		cfg.ReplSet = *v
	}
	if v := fc.Replication.OplogSizeMB; v != nil && !set["oplogSize"] {
		cfg.OplogSizeMB = *v
	}
	if v := fc.Storage.OplogMinRetentionHours; v != nil && !set["oplogMinRetentionHours"] {
		cfg.OplogMinRetentionHours = *v
	}
	if v := fc.Replication.Standalone; v != nil && !set["standalone"] {
		cfg.repl.Standalone = *v
	}
	if v := fc.Security.JavascriptEnabled; v != nil && !set["noscripting"] {
		cfg.NoScripting = !*v
	}
	if v := fc.Security.KeyFile; v != nil && !set["keyFile"] {
		cfg.KeyFile = *v
	}
	if v := fc.Security.Authorization; v != nil && !set["auth"] {
		switch *v {
		case "enabled":
			cfg.Auth = true
		case "disabled":
			cfg.Auth = false
		default:
			cfg.paramErr = fmt.Errorf("security.authorization: %q is neither \"enabled\" nor \"disabled\"", *v)
		}
	}
	if v := fc.OperationProfiling.SlowOpThresholdMs; v != nil && !set["slowms"] {
		cfg.SlowMS = *v
	}
	if v := fc.OperationProfiling.Mode; v != nil && *v != "off" {
		cfg.paramErr = fmt.Errorf("operationProfiling.mode %q: Cairn has no system.profile collection; only \"off\" (slow operations are logged)", *v)
	}
	for name, value := range fc.SetParameter {
		if err := cfg.setParameter(name, value); err != nil {
			cfg.paramErr = err
		}
	}
}

// setParameter applies one server parameter given at startup.
func (cfg *config) setParameter(name, value string) error {
	if err := cfg.applyParameter(name, value); err != nil {
		return err
	}
	if cfg.params == nil {
		cfg.params = map[string]string{}
	}
	cfg.params[name] = value
	return nil
}

func (cfg *config) applyParameter(name, value string) error {
	switch name {
	case "enableTestCommands":
		switch value {
		case "1", "true":
			cfg.TestCommands = true
		case "0", "false":
			cfg.TestCommands = false
		default:
			return fmt.Errorf("setParameter enableTestCommands: %q is not a boolean (1, 0, true or false)", value)
		}
		return nil
	case "ttlMonitorSleepSecs":
		n, err := strconv.Atoi(value)
		if err != nil || n < 1 {
			return fmt.Errorf("setParameter ttlMonitorSleepSecs: %q is not a positive number of seconds", value)
		}
		cfg.TTLMonitorSleep = time.Duration(n) * time.Second
		return nil
	case "preAuthMaximumMessageSizeBytes":
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil || n < command.MinPreAuthMaxMessageSize || n > wire.MaxMessageSize {
			return fmt.Errorf("setParameter preAuthMaximumMessageSizeBytes: %q is not a number of bytes from %d to %d", value, command.MinPreAuthMaxMessageSize, wire.MaxMessageSize)
		}
		cfg.PreAuthMaxMessageSize = n
		return nil
	case "authFailuresPerMinute":
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("setParameter authFailuresPerMinute: %q is not a number of at least 0 (0: no limit)", value)
		}
		cfg.AuthFailuresPerMinute = n
		return nil
	case "localLogicalSessionTimeoutMinutes":
		n, err := strconv.Atoi(value)
		if err != nil || n < 1 {
			return fmt.Errorf("setParameter localLogicalSessionTimeoutMinutes: %q is not a positive number of minutes", value)
		}
		cfg.SessionTimeout = time.Duration(n) * time.Minute
		return nil
	case "logicalSessionRefreshMillis":
		n, err := strconv.Atoi(value)
		if err != nil || n < 1 {
			return fmt.Errorf("setParameter logicalSessionRefreshMillis: %q is not a positive number of milliseconds", value)
		}
		cfg.SessionRefresh = time.Duration(n) * time.Millisecond
		return nil
	case "authFailureBurst":
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil || n < 1 {
			return fmt.Errorf("setParameter authFailureBurst: %q is not a number of at least 1", value)
		}
		cfg.AuthFailureBurst = n
		return nil
	}
	return fmt.Errorf("unknown server parameter %q", name)
}

// parsedDoc is getCmdLineOpts' "parsed": the effective options in
// mongod.conf's shape.
func (cfg config) parsedDoc() bson.Doc {
	var b bson.Builder
	if cfg.ConfigFile != "" {
		b.AppendString("config", cfg.ConfigFile)
	}
	b.StartDocument("net")
	if cfg.BindIPAll {
		b.AppendBool("bindIpAll", true)
	} else {
		b.AppendString("bindIp", cfg.BindIP)
	}
	b.AppendInt32("port", int32(cfg.Port))
	b.AppendInt32("maxIncomingConnections", int32(cfg.MaxConns))
	cfg.tls.appendParsed(&b)
	b.End()
	b.StartDocument("storage")
	b.AppendString("dbPath", cfg.DBPath)
	b.StartDocument("journal")
	b.AppendInt32("commitIntervalMs", int32(cfg.JournalCommitInterval/time.Millisecond))
	b.End()
	b.AppendDouble("syncPeriodSecs", cfg.SyncDelay.Seconds())
	b.StartDocument("wiredTiger")
	b.StartDocument("engineConfig")
	b.AppendString("journalCompressor", cfg.JournalCompressor)
	b.AppendDouble("cacheSizeGB", cfg.CacheSizeGB)
	b.End()
	b.End()
	b.End()
	b.StartDocument("operationProfiling")
	b.AppendString("mode", "off")
	b.AppendInt64("slowOpThresholdMs", cfg.SlowMS)
	b.End()
	if cfg.Auth || cfg.KeyFile != "" {
		b.StartDocument("security")
		if cfg.Auth {
			b.AppendString("authorization", "enabled")
		}
		if cfg.KeyFile != "" {
			b.AppendString("keyFile", cfg.KeyFile)
		}
		b.End()
	}
	if len(cfg.params) > 0 {
		names := make([]string, 0, len(cfg.params))
		for n := range cfg.params {
			names = append(names, n)
		}
		sort.Strings(names)
		b.StartDocument("setParameter")
		for _, n := range names {
			b.AppendString(n, cfg.params[n])
		}
		b.End()
	}
	cfg.appendReplParsed(&b)
	if cfg.LogPath != "" {
		b.StartDocument("systemLog")
		b.AppendString("destination", "file")
		b.AppendString("path", cfg.LogPath)
		b.AppendBool("logAppend", cfg.LogAppend)
		b.End()
	}
	return b.Finish()
}

// listenAddrs returns host:port for every address to listen on.
// columnCacheBytes is the column cache's budget in bytes (colcache's
// Options.Budget): ColumnCacheSizeGB, by default a quarter of the storage
// engine's cache; negative when the cache is off.
func (cfg config) columnCacheBytes() int64 {
	switch gb := cfg.ColumnCacheSizeGB; {
	case gb < 0:
		return -1
	case gb == 0:
		return max(int64(cfg.CacheSizeGB*(1<<30))/4, 1)
	default:
		return max(int64(gb*(1<<30)), 1)
	}
}

func (cfg config) listenAddrs() []string {
	port := fmt.Sprint(cfg.Port)
	if cfg.BindIPAll {
		return []string{":" + port}
	}
	var out []string
	seen := map[string]bool{}
	for _, h := range strings.Split(cfg.BindIP, ",") {
		h = strings.TrimSpace(h)
		if h == "" || seen[h] {
			continue
		}
		seen[h] = true
		if strings.Contains(h, ":") {
			out = append(out, "["+h+"]:"+port)
		} else {
			out = append(out, h+":"+port)
		}
	}
	sort.Strings(out)
	return out
}

// usage prints the options as mongod spells them (--name).
func usage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "cairnd: a MongoDB-compatible document database server.\n\nUsage: cairnd [options]\n\nOptions (named as mongod's):\n")
	fs.VisitAll(func(f *flag.Flag) {
		name, _ := flag.UnquoteUsage(f)
		dash := "--"
		if len(f.Name) == 1 {
			dash = "-"
		}
		line := "  " + dash + f.Name
		if name != "" {
			line += " " + name
		}
		fmt.Fprintf(w, "%-34s %s", line, f.Usage)
		if f.DefValue != "" && f.DefValue != "false" {
			fmt.Fprintf(w, " (default %s)", f.DefValue)
		}
		fmt.Fprintln(w)
	})
}

// authFailuresPerMinute is the server's AuthFailuresPerMinute: the
// parameter's 0 (no limit) is the option's negative value.
func (cfg config) authFailuresPerMinute() int64 {
	if cfg.AuthFailuresPerMinute == 0 {
		return -1
	}
	return cfg.AuthFailuresPerMinute
}
