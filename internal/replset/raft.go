package replset

// A set of several members (internal/raftrepl holds the mechanism):
// starting the Raft node, initiating a set, joining one, and refusing
// reads on a secondary without secondaryOk.

import (
	"context"
	"fmt"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/raftrepl"
	"github.com/cairndb/cairn/internal/repl"
)

// startRaft starts the member's Raft node for cfg.
func (m Member) startRaft(cfg *repl.Config, bootstrap bool) (*raftrepl.Node, error) {
	return m.startRaftTerm(cfg, bootstrap, 1)
}

// startRaftTerm starts the member's Raft node for cfg; a bootstrapped group
// begins in term.
func (m Member) startRaftTerm(cfg *repl.Config, bootstrap bool, term uint64) (*raftrepl.Node, error) {
	m.raftMu.Lock()
	defer m.raftMu.Unlock()
	if n := m.raft.Load(); n != nil {
		return n, nil
	}
	n, err := raftrepl.Start(raftrepl.Options{Set: m.Set, DB: m.Engine.KV, Oplog: m.Engine.Oplog, Log: m.Log,
		ApplyCommand: m.Host.ApplyEntryCommand, StoreConfig: m.storeConfig, OnRollback: m.Sessions.RollBackEntry, BootstrapTerm: term, MemberKey: m.Auth.MemberKey(), MemberTLS: m.TLS,
		Snapshots: m.snapshotOptions(), Restored: m.Host.RestoredSnapshot}, cfg, bootstrap)
	if err != nil {
		return nil, err
	}
	m.raft.Store(n)
	return n, nil
}

// Start starts replication of a set of several members found in storage
// at start, once the member knows its address (the server calls it when
// it listens).
func (m Member) Start() error {
	cfg := m.Set.Status().Config
	if !cfg.Multi() {
		return nil
	}
	_, err := m.startRaft(cfg, false)
	return err
}

// Stop stops the Raft node (server shutdown).
func (m Member) Stop() {
	if n := m.Raft(); n != nil {
		n.Stop()
	}
}

// storeConfig writes a configuration the set committed to
// local.system.replset, durably.
func (m Member) storeConfig(cfg *repl.Config) error {
	tx, err := m.Engine.KV.BeginWrite(context.Background())
	if err != nil {
		return fmt.Errorf("writing the replica set configuration: %w", err)
	}
	defer tx.Rollback()
	if err := replaceOnly(tx, replConfigColl, cfg.Doc()); err != nil {
		return err
	}
	if err := tx.CommitWith(exec.Sync); err != nil {
		return fmt.Errorf("writing the replica set configuration: %w", err)
	}
	return nil
}

// initiateRaft initiates a set of several members: this member stores the
// configuration, starts a Raft group of itself and adds the others in the
// background (raftrepl/join.go).
func (m Member) initiateRaft(cfg *repl.Config) error {
	if m.NoMemberAuth() {
		return ErrNoMemberAuth()
	}
	if _, err := m.persistConfig(cfg, 0); err != nil {
		return err
	}
	m.Set.Follow(cfg, 0)
	n, err := m.startRaft(cfg, true)
	if err != nil {
		return err
	}
	go n.AddMembers(context.Background(), cfg)
	return nil
}

// Join makes this member join the set whose primary sent the join
// (_raftJoin {config}).
func (m Member) Join(body bson.Doc) error {
	set := m.Set
	if set == nil {
		return ErrNoRepl()
	}
	if m.NoMemberAuth() {
		return ErrNoMemberAuth()
	}
	v, _ := body.Lookup("config")
	if v.Type != bson.TypeDocument {
		return mongoerr.New(mongoerr.TypeMismatch, "BSON field 'config' is the wrong type '%s', expected type 'object'", v.Type)
	}
	cfg, err := repl.ParseConfig(v.Document())
	if err != nil {
		return err
	}
	if cfg.Name != set.Name {
		return mongoerr.New(mongoerr.InvalidReplicaSetConfig, "Our replica set configuration is for %s, but the join is for %s", set.Name, cfg.Name)
	}
	if err := CheckSelf(cfg, set.Me()); err != nil {
		return err
	}
	if cur := set.Status().Config; cur != nil {
		if cur.Settings.ReplicaSetID == cfg.Settings.ReplicaSetID && m.Raft() != nil {
			return nil // asked again: joined already
		}
		return repl.ErrAlreadyInitialized
	}
	if err := m.storeConfig(cfg); err != nil {
		return err
	}
	set.Follow(cfg, 0)
	m.Log.Info("Joining the replica set", "c", "REPL", "set", cfg.Name, "version", cfg.Version)
	_, err = m.startRaft(cfg, false)
	return err
}

// secondaryReads are the commands that read data: on a member that is not
// primary they need secondaryOk (a $readPreference other than primary).
var secondaryReads = map[string]bool{"find": true, "aggregate": true, "count": true, "distinct": true,
	"listCollections": true, "listIndexes": true, "collStats": true, "dbStats": true, "dataSize": true,
	"mapReduce": true, "geoNear": true}

// CheckSecondaryOk refuses a read (command name on database db) on a
// secondary of a set of several members without secondaryOk
// (NotPrimaryNoSecondaryOk, 13435).
func (m Member) CheckSecondaryOk(name, db string, body bson.Doc) error {
	if !secondaryReads[name] || db == "local" || m.Raft() == nil || m.Set.IsWritablePrimary() {
		return nil
	}
	if m.Set.Status().State == repl.StateStartup2 {
		return mongoerr.New(mongoerr.NotPrimaryOrSecondary, "node is not in primary or recovering state")
	}
	if rp, ok := body.Lookup("$readPreference"); ok && rp.Type == bson.TypeDocument {
		if md, _ := rp.Document().Lookup("mode"); md.Type == bson.TypeString && md.StringValue() != "primary" {
			return nil
		}
	}
	return mongoerr.New(mongoerr.NotPrimaryNoSecondaryOk, "not primary and secondaryOk=false")
}

// snapshotOptions are the members' snapshot settings: staged snapshots go
// to the data directory's _tmp (emptied at startup).
func (m Member) snapshotOptions() raftrepl.SnapshotOptions {
	return raftrepl.SnapshotOptions{TempDir: m.Engine.TempDir}
}
