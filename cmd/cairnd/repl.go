package main

import (
	"errors"
	"flag"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/cairndb/cairn/bson"
)

// Replication options.
//
// With neither --replSet nor --standalone, cairnd runs a one-member
// replica set named rs0 (defaultReplSet), initiated at its first start, so
// that transactions, change streams and retryable writes work with no
// configuration (mongod makes every user set up a replica set first).
// --replSet NAME (replication.replSetName) runs a member of the replica
// set NAME, initiated by replSetInitiate as mongod's. --standalone
// (replication.standalone: true, Cairn's own key) runs a standalone
// server. --replSet and --standalone are exclusive.

// replConfig is cairnd's replication configuration.
type replConfig struct {
	// Standalone runs without a replica set (--standalone,
	// replication.standalone).
	Standalone bool
}

func (r *replConfig) register(fs *flag.FlagSet) {
	fs.BoolVar(&r.Standalone, "standalone", false, "run a standalone server, without a replica set (replication.standalone)")
}

// replMode returns the replica set's name (empty: standalone) and whether
// cairnd initiates it at first start.
func (cfg config) replMode() (name string, initiate bool, err error) {
	switch {
	case cfg.repl.Standalone && cfg.ReplSet != "":
		return "", false, errors.New("--standalone and --replSet (replication.replSetName) cannot be used together")
	case cfg.repl.Standalone:
		return "", false, nil
	case cfg.ReplSet == "":
		return defaultReplSet, true, nil
	}
	return cfg.ReplSet, false, nil
}

// defaultReplSet is the replica set cairnd runs without --replSet or
// --standalone.
const defaultReplSet = "rs0"

// replHost is the host:port the member advertises, chosen as mongod's
// someHostAndPortForMe: the first bind address that is not a loopback or
// wildcard one, else the first (loopback) bind address, and the host's
// name when listening on every interface.
func (cfg config) replHost() string {
	if cfg.ReplHost != "" {
		return cfg.ReplHost
	}
	port := strconv.Itoa(cfg.Port)
	var addrs []string
	for _, h := range strings.Split(cfg.BindIP, ",") {
		if h = strings.TrimSpace(h); h != "" {
			addrs = append(addrs, h)
		}
	}
	wildcard := cfg.BindIPAll
	for _, a := range addrs {
		ip := net.ParseIP(a)
		switch {
		case ip != nil && ip.IsUnspecified():
			wildcard = true
		case ip != nil && ip.IsLoopback(), a == "localhost":
		default:
			if !cfg.BindIPAll {
				return net.JoinHostPort(a, port)
			}
		}
	}
	if wildcard || len(addrs) == 0 {
		if h, err := os.Hostname(); err == nil && h != "" {
			return net.JoinHostPort(h, port)
		}
		return net.JoinHostPort("localhost", port)
	}
	return net.JoinHostPort(addrs[0], port)
}

// appendReplParsed appends getCmdLineOpts' replication section.
func (cfg config) appendReplParsed(b *bson.Builder) {
	name, _, _ := cfg.replMode()
	b.StartDocument("replication")
	if name != "" {
		b.AppendString("replSetName", name)
	} else {
		b.AppendBool("standalone", true)
	}
	b.End()
}
