package replset

import (
	"context"
	"fmt"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/repl"
)

// The replica set's configuration is kept where mongod keeps it: the one
// document of local.system.replset (readable with find), and the member's
// last term in local.replset.election ({_id, term, candidateIndex}, as
// mongod's lastVote). Both are written in one transaction, journaled,
// before the member acts on them.

const (
	replConfigColl   = "system.replset"
	replElectionColl = "replset.election"
)

// Attach connects the replica-set state to storage: it installs the
// persister and, when local.system.replset holds a configuration (a set
// initiated before a restart), loads it and elects the member. A stored
// configuration of another set is refused unless adoptName (the server
// runs its default set, whose name the user did not choose): the member
// then keeps the stored set's name.
func (m Member) Attach(adoptName bool) error {
	m.Set.SetPersister(m.persistConfig)
	var cfgDoc bson.Doc
	var term int64
	err := m.Engine.KV.View(func(tx *exec.Tx) error {
		d, err := firstDoc(tx, replConfigColl)
		if err != nil || d == nil {
			return err
		}
		cfgDoc = d
		ev, err := firstDoc(tx, replElectionColl)
		if err != nil {
			return err
		}
		if v, ok := ev.Lookup("term"); ok {
			term, _ = v.AsInt64()
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("reading local.%s: %w", replConfigColl, err)
	}
	if cfgDoc == nil {
		return nil // not initiated: STARTUP until replSetInitiate
	}
	cfg, err := repl.ParseConfig(cfgDoc)
	if err != nil {
		return fmt.Errorf("local.%s holds an invalid configuration: %w", replConfigColl, err)
	}
	if cfg.Name != m.Set.Name && adoptName {
		m.Log.Info("The data directory holds another replica set: keeping its name", "c", "REPL", "set", cfg.Name, "default", m.Set.Name)
		m.Set.Name = cfg.Name
	}
	if cfg.Name != m.Set.Name {
		return fmt.Errorf("local.%s is the configuration of replica set %q, but the server was started with --replSet %s", replConfigColl, cfg.Name, m.Set.Name)
	}
	if cfg.Term > term {
		term = cfg.Term
	}
	if cfg.Multi() {
		m.Set.Follow(cfg, term) // Raft decides, once the server listens (Start)
		return nil
	}
	return m.Set.Load(cfg, term)
}

// firstDoc returns the first document of local.name (nil if none).
func firstDoc(tx *exec.Tx, name string) (bson.Doc, error) {
	coll, err := catalog.Get(tx, "local", name)
	if err != nil || coll == nil {
		return nil, err
	}
	t, err := exec.DataTree(tx, coll)
	if err != nil {
		return nil, err
	}
	cur := t.Cursor()
	k, v := cur.First()
	if err := cur.Err(); err != nil || k == nil {
		return nil, err
	}
	return bson.Doc(append([]byte(nil), v...)), nil
}

// persistConfig writes the configuration and the term (repl.Persister).
// The transaction is stamped like any write, and its stamp is the optime
// the caller records.
func (m Member) persistConfig(cfg *repl.Config, term int64) (repl.Timestamp, error) {
	tx, err := m.Engine.KV.BeginWrite(context.Background())
	if err != nil {
		return 0, fmt.Errorf("writing the replica set configuration: %w", err)
	}
	defer tx.Rollback()
	ts, err := m.noteChange(tx, cfg, term)
	if err != nil {
		return 0, err
	}
	if err := replaceOnly(tx, replConfigColl, cfg.Doc()); err != nil {
		return 0, err
	}
	var b bson.Builder
	b.AppendObjectID("_id", repl.NewObjectID())
	b.AppendInt64("term", term)
	b.AppendInt32("candidateIndex", 0)
	if err := replaceOnly(tx, replElectionColl, b.Finish()); err != nil {
		return 0, err
	}
	if err := tx.CommitWith(exec.Sync); err != nil {
		return 0, fmt.Errorf("writing the replica set configuration: %w", err)
	}
	return ts, nil
}

// noteChange stamps a configuration or term change: with an oplog, by
// the no-op entry mongod writes for it ("initiating set" at initiation,
// "new primary" when the member is elected in a new term, "Reconfig set"
// for a new configuration), otherwise by a fresh stamp of the clock.
func (m Member) noteChange(tx *exec.Tx, cfg *repl.Config, term int64) (repl.Timestamp, error) {
	if m.Engine.Oplog == nil {
		return m.Set.Clock.Next(), nil
	}
	prev, err := firstDoc(tx, replConfigColl)
	if err != nil {
		return 0, err
	}
	if prev == nil {
		return m.Engine.Oplog.Initiated(tx)
	}
	var b bson.Builder
	election, err := firstDoc(tx, replElectionColl)
	if err != nil {
		return 0, err
	}
	prevTerm := int64(-1)
	if election != nil {
		if v, ok := election.Lookup("term"); ok {
			prevTerm, _ = v.AsInt64()
		}
	}
	if prevTerm != term {
		b.AppendString("msg", "new primary")
	} else {
		b.AppendString("msg", "Reconfig set")
		b.AppendInt64("version", cfg.Version)
	}
	return m.Engine.Oplog.Noop(tx, b.Finish())
}

// replaceOnly makes doc the only document of local.name.
func replaceOnly(tx *exec.Tx, name string, doc bson.Doc) error {
	coll, err := exec.CollectionForWrite(tx, "local", name, true, nil) // local is not logged
	if err != nil {
		return fmt.Errorf("local.%s: %w", name, err)
	}
	w, err := exec.OpenWriter(tx, coll)
	if err != nil {
		return fmt.Errorf("local.%s: %w", name, err)
	}
	if err := exec.ClearCollection(w); err != nil {
		return fmt.Errorf("local.%s: %w", name, err)
	}
	if _, _, err := w.Insert(doc); err != nil {
		return fmt.Errorf("local.%s: %w", name, err)
	}
	return nil
}
