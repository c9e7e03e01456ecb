package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReplOptions(t *testing.T) {
	dir := t.TempDir()
	file := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	rsFile := file("rs.yaml", "replication:\n  replSetName: rs7\n")
	aloneFile := file("alone.yaml", "replication:\n  standalone: true\n")
	host, _ := os.Hostname()
	cases := []struct {
		name     string
		args     []string
		set      string
		initiate bool
		host     string
		err      string
	}{
		{"no flags: the default one-member set", nil, "rs0", true, "127.0.0.1:27017", ""},
		{"replSet", []string{"--replSet", "rs1", "--port", "28000"}, "rs1", false, "127.0.0.1:28000", ""},
		{"config file", []string{"--config", rsFile}, "rs7", false, "127.0.0.1:27017", ""},
		{"standalone", []string{"--standalone"}, "", false, "127.0.0.1:27017", ""},
		{"standalone key", []string{"--config", aloneFile}, "", false, "127.0.0.1:27017", ""},
		{"both", []string{"--standalone", "--replSet", "rs1"}, "", false, "", "cannot be used together"},
		{"key and flag", []string{"--config", aloneFile, "--replSet", "rs1"}, "", false, "", "cannot be used together"},
		{"named bind address", []string{"--replSet", "rs1", "--bind_ip", "localhost,db.example"}, "rs1", false, "db.example:27017", ""},
		{"loopback names only", []string{"--replSet", "rs1", "--bind_ip", "localhost,127.0.0.1"}, "rs1", false, "localhost:27017", ""},
		{"all interfaces", []string{"--replSet", "rs1", "--bind_ip_all"}, "rs1", false, host + ":27017", ""},
	}
	for _, tc := range cases {
		cfg, err := parseArgs(tc.args, io.Discard)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("%s: err %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		set, initiate, err := cfg.replMode()
		if err != nil || set != tc.set || initiate != tc.initiate || cfg.replHost() != tc.host {
			t.Fatalf("%s: set %q initiate %v host %q (%v)", tc.name, set, initiate, cfg.replHost(), err)
		}
	}
}
