package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseArgs(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "cairn.yaml")
	os.WriteFile(conf, []byte(`
storage:
  dbPath: /from/file
  journal:
    commitIntervalMs: 20
  syncPeriodSecs: 30
  wiredTiger:
    engineConfig:
      journalCompressor: zstd
net:
  port: 28000
  bindIp: 127.0.0.1,::1
systemLog:
  destination: file
  path: /var/log/cairn.log
`), 0o644)
	secure := filepath.Join(dir, "secure.yaml")
	os.WriteFile(secure, []byte("security:\n  authorization: enabled\n"), 0o644)
	badAuth := filepath.Join(dir, "badauth.yaml")
	os.WriteFile(badAuth, []byte("security:\n  authorization: yes\n"), 0o644)
	tlsConf := filepath.Join(dir, "tls.yaml")
	os.WriteFile(tlsConf, []byte("net:\n  tls:\n    mode: requireTLS\n    certificateKeyFile: /nonexistent.pem\n    CAFile: /ca.pem\n    allowConnectionsWithoutCertificates: true\n"), 0o644)
	testCmds := filepath.Join(dir, "testcmds.yaml")
	os.WriteFile(testCmds, []byte("setParameter:\n  enableTestCommands: 1\n"), 0o644)
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("storage:\n  dbPathh: /x\n"), 0o644)

	cases := []struct {
		name  string
		args  []string
		check func(t *testing.T, c config)
		err   string
	}{
		{"defaults", nil, func(t *testing.T, c config) {
			if c.DBPath != "data/db" || c.Port != 27017 || c.BindIP != "127.0.0.1" || c.JournalCommitInterval != 100*time.Millisecond || c.SyncDelay != time.Minute || c.JournalCompressor != "snappy" {
				t.Errorf("defaults = %+v", c)
			}
		}, ""},
		{"compressor flag", []string{"--journalCompressor", "none"}, func(t *testing.T, c config) {
			if c.JournalCompressor != "none" {
				t.Errorf("journalCompressor = %q", c.JournalCompressor)
			}
		}, ""},
		{"bad compressor", []string{"--journalCompressor", "lz4"}, nil, "journalCompressor"},
		{"cache size", []string{"--wiredTigerCacheSizeGB", "2.5"}, func(t *testing.T, c config) {
			if c.CacheSizeGB != 2.5 {
				t.Errorf("wiredTigerCacheSizeGB = %v", c.CacheSizeGB)
			}
		}, ""},
		{"bad cache size", []string{"--wiredTigerCacheSizeGB", "-1"}, nil, "wiredTigerCacheSizeGB"},
		{"column cache default", []string{"--wiredTigerCacheSizeGB", "8"}, func(t *testing.T, c config) {
			if b := c.columnCacheBytes(); b != 2<<30 {
				t.Errorf("default column cache budget = %d, want a quarter of 8 GiB", b)
			}
		}, ""},
		{"column cache size", []string{"--columnCacheSizeGB", "0.5"}, func(t *testing.T, c config) {
			if b := c.columnCacheBytes(); b != 1<<29 {
				t.Errorf("column cache budget = %d, want 0.5 GiB", b)
			}
		}, ""},
		{"column cache off", []string{"--columnCacheSizeGB", "-1"}, func(t *testing.T, c config) {
			if b := c.columnCacheBytes(); b >= 0 {
				t.Errorf("column cache budget = %d, want negative (off)", b)
			}
		}, ""},
		{"bad column cache size", []string{"--columnCacheSizeGB", "1e9"}, nil, "columnCacheSizeGB"},
		{"default cache size", nil, func(t *testing.T, c config) {
			if c.CacheSizeGB < 0.25 || c.CacheSizeGB != defaultCacheSizeGB() {
				t.Errorf("default wiredTigerCacheSizeGB = %v, want mongod's default %v", c.CacheSizeGB, defaultCacheSizeGB())
			}
		}, ""},
		{"flags", []string{"--dbpath", "/d", "--port", "1234", "--bind_ip", "0.0.0.0", "--journalCommitInterval", "7", "--syncdelay", "5"}, func(t *testing.T, c config) {
			if c.DBPath != "/d" || c.Port != 1234 || c.BindIP != "0.0.0.0" || c.JournalCommitInterval != 7*time.Millisecond || c.SyncDelay != 5*time.Second {
				t.Errorf("flags = %+v", c)
			}
		}, ""},
		{"file", []string{"--config", conf}, func(t *testing.T, c config) {
			if c.DBPath != "/from/file" || c.Port != 28000 || c.JournalCommitInterval != 20*time.Millisecond || c.SyncDelay != 30*time.Second || c.LogPath != "/var/log/cairn.log" || c.JournalCompressor != "zstd" {
				t.Errorf("file = %+v", c)
			}
			if a := c.listenAddrs(); len(a) != 2 || a[0] != "127.0.0.1:28000" || a[1] != "[::1]:28000" {
				t.Errorf("listen = %v", a)
			}
		}, ""},
		{"flags win over the file", []string{"-f", conf, "--port", "29000", "--journalCommitInterval", "50"}, func(t *testing.T, c config) {
			if c.Port != 29000 || c.DBPath != "/from/file" || c.JournalCommitInterval != 50*time.Millisecond {
				t.Errorf("merged = %+v", c)
			}
		}, ""},
		{"unknown key", []string{"--config", bad}, nil, "dbPathh"},
		{"missing file", []string{"--config", filepath.Join(dir, "nope.yaml")}, nil, "reading config file"},
		{"commit interval range", []string{"--journalCommitInterval", "501"}, nil, "between 1 and 500"},
		{"port range", []string{"--port", "70000"}, nil, "out of range"},
		{"stray argument", []string{"extra"}, nil, "unexpected argument"},
		{"setParameter", []string{"--setParameter", "ttlMonitorSleepSecs=5"}, func(t *testing.T, c config) {
			if c.TTLMonitorSleep != 5*time.Second {
				t.Errorf("ttlMonitorSleepSecs = %v", c.TTLMonitorSleep)
			}
		}, ""},
		{"auth flag", []string{"--auth"}, func(t *testing.T, c config) {
			if !c.Auth {
				t.Error("--auth not set")
			}
		}, ""},
		{"security.authorization", []string{"--config", secure}, func(t *testing.T, c config) {
			if !c.Auth || !strings.Contains(c.parsedDoc().String(), `security: { authorization: "enabled" }`) {
				t.Errorf("auth = %v, parsed %s", c.Auth, c.parsedDoc())
			}
		}, ""},
		{"bad authorization", []string{"--config", badAuth}, nil, "security.authorization"},
		{"tls mode without certificate", []string{"--tlsMode", "requireTLS"}, nil, "need tlsCertificateKeyFile"},
		{"bad tls mode", []string{"--tlsMode", "sometimes", "--tlsCertificateKeyFile", "x"}, nil, "tlsMode"},
		{"tls from the file", []string{"--config", tlsConf}, nil, "loading tlsCertificateKeyFile /nonexistent.pem"},
		{"tls cluster file without a mode", []string{"--tlsClusterFile", "/x.pem"}, nil, "need to enable TLS via the tlsMode flag"},
		{"tls certificate with tls disabled", []string{"--tlsMode", "disabled", "--tlsCertificateKeyFile", "/x.pem"}, nil, "need to enable TLS via the tlsMode flag"},
		{"tls disabled", []string{"--tlsMode", "disabled"}, func(t *testing.T, c config) {
			if c.tls.options() != nil {
				t.Error("TLS options with tlsMode disabled")
			}
		}, ""},
		{"hostile-client parameters' defaults", nil, func(t *testing.T, c config) {
			if c.PreAuthMaxMessageSize != 16384 || c.AuthFailuresPerMinute != 30 || c.AuthFailureBurst != 10 || c.authFailuresPerMinute() != 30 {
				t.Errorf("defaults: %d %d %d", c.PreAuthMaxMessageSize, c.AuthFailuresPerMinute, c.AuthFailureBurst)
			}
		}, ""},
		{"hostile-client parameters", []string{"--setParameter", "preAuthMaximumMessageSizeBytes=65536",
			"--setParameter", "authFailuresPerMinute=0", "--setParameter", "authFailureBurst=3"}, func(t *testing.T, c config) {
			if c.PreAuthMaxMessageSize != 65536 || c.authFailuresPerMinute() != -1 || c.AuthFailureBurst != 3 {
				t.Errorf("got %d %d %d", c.PreAuthMaxMessageSize, c.authFailuresPerMinute(), c.AuthFailureBurst)
			}
		}, ""},
		{"pre-auth size too small", []string{"--setParameter", "preAuthMaximumMessageSizeBytes=100"}, nil, "from 4096 to 48000000"},
		{"negative failure rate", []string{"--setParameter", "authFailuresPerMinute=-1"}, nil, "at least 0"},
		{"zero burst", []string{"--setParameter", "authFailureBurst=0"}, nil, "at least 1"},
		{"unknown parameter", []string{"--setParameter", "noSuch=1"}, nil, "unknown server parameter"},
		{"test commands off by default", nil, func(t *testing.T, c config) {
			if c.TestCommands {
				t.Error("enableTestCommands on by default")
			}
			if _, ok := c.parsedDoc().Lookup("setParameter"); ok {
				t.Error("parsed.setParameter without any --setParameter")
			}
		}, ""},
		{"enableTestCommands flag", []string{"--setParameter", "enableTestCommands=1"}, func(t *testing.T, c config) {
			if !c.TestCommands {
				t.Error("enableTestCommands=1 left test commands off")
			}
			if v, ok := c.parsedDoc().LookupPath("setParameter", "enableTestCommands"); !ok || v.StringValue() != "1" {
				t.Errorf("parsed.setParameter.enableTestCommands = %v", v)
			}
		}, ""},
		{"enableTestCommands in the file", []string{"-f", testCmds}, func(t *testing.T, c config) {
			if !c.TestCommands {
				t.Error("setParameter.enableTestCommands: 1 left test commands off")
			}
		}, ""},
		{"enableTestCommands not a boolean", []string{"--setParameter", "enableTestCommands=yes"}, nil, "not a boolean"},
		{"bad parameter value", []string{"--setParameter", "ttlMonitorSleepSecs=0"}, nil, "positive number"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			c, err := parseArgs(tc.args, &stderr)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, c)
		})
	}
}

func TestVersionAndHelp(t *testing.T) {
	var out, errOut bytes.Buffer
	if rc := run([]string{"--version"}, &out, &errOut); rc != 0 || !strings.Contains(out.String(), "db version v7.0.0") {
		t.Fatalf("--version: rc %d, %q", rc, out.String())
	}
	out.Reset()
	if rc := run([]string{"--help"}, &out, &errOut); rc != 0 || !strings.Contains(out.String(), "--dbpath <string>") && !strings.Contains(out.String(), "--dbpath string") {
		t.Fatalf("--help: rc %d, %q", rc, out.String())
	}
	if rc := run([]string{"--bogus"}, &out, &errOut); rc != 2 {
		t.Fatalf("unknown flag: rc %d", rc)
	}
}
