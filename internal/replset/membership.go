package replset

// The replSet* commands' mechanism: initiating the set, changing its
// configuration (a one-member set in place, a set of several members
// through Raft, one member added or removed at a time), stepping down and
// freezing. The commands parse their arguments and call these.

import (
	"context"
	"errors"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/raftrepl"
	"github.com/cairndb/cairn/internal/repl"
)

// Initiate is replSetInitiate with the configuration v (an empty or
// missing document: the default configuration, which r's reply reports).
func (m Member) Initiate(v bson.Value, r *bson.Builder) error {
	set := m.Set
	if set.Status().Config != nil {
		return repl.ErrAlreadyInitialized // checked first, as mongod
	}
	var cfg *repl.Config
	if v.Type == bson.TypeDocument && v.Document().Len() > 0 {
		var err error
		if cfg, err = repl.ParseConfig(v.Document()); err != nil {
			return err
		}
		cfg.Term = 0 // an initiate's configuration is of the first term
		if cfg.Name != set.Name {
			return mongoerr.New(mongoerr.InvalidReplicaSetConfig, "Rejecting initiate with a set name that differs from command line set name, initiate set name: %s, command line set name: %s", cfg.Name, set.Name)
		}
		if err := CheckSelf(cfg, set.Me()); err != nil {
			return err
		}
	} else {
		r.AppendString("info2", "no configuration specified. Using a default configuration for the set")
		r.AppendString("me", set.Me())
		cfg = repl.DefaultConfig(set.Name, set.Me())
	}
	cfg.Settings.ReplicaSetID = repl.NewObjectID()
	m.Log.Info("replSetInitiate admin command received from client", "c", "REPL", "id", 21356, "config", cfg.Name)
	if cfg.Multi() {
		return m.initiateRaft(cfg)
	}
	return set.Initiate(cfg)
}

// CheckSelf requires the one member to be this node, as mongod's
// findSelfInConfig.
func CheckSelf(cfg *repl.Config, me string) error {
	for _, mb := range cfg.Members {
		if mb.Host == me {
			return nil
		}
	}
	return mongoerr.New(mongoerr.NodeNotFound, "No host described in new configuration with {version: %d, term: %d} for replica set %s maps to this node", cfg.Version, cfg.Term, cfg.Name)
}

// Reconfig is replSetReconfig of the set in status st with the
// configuration v.
func (m Member) Reconfig(ctx context.Context, st repl.Status, v bson.Value, force bool) error {
	cfg, err := repl.ParseConfig(v.Document())
	if err != nil {
		return err
	}
	old := st.Config
	if cfg.Name != old.Name {
		return mongoerr.New(mongoerr.NewReplicaSetConfigurationIncompatible, "New and old configurations differ in replica set name; old was %s, and new is %s", old.Name, cfg.Name)
	}
	if id := cfg.Settings.ReplicaSetID; id != ([12]byte{}) && id != old.Settings.ReplicaSetID {
		return mongoerr.New(mongoerr.NewReplicaSetConfigurationIncompatible, "New and old configurations differ in replica set ID; old was %x, and new is %x", old.Settings.ReplicaSetID, id)
	}
	cfg.Settings.ReplicaSetID = old.Settings.ReplicaSetID
	if force {
		// mongod moves a forced configuration's version far ahead, so that
		// it wins over any configuration elsewhere.
		cfg.Version = max(cfg.Version, old.Version) + 10000 + time.Now().UnixNano()%100000
	} else if cfg.Version <= old.Version {
		return mongoerr.New(mongoerr.NewReplicaSetConfigurationIncompatible, "New replica set configuration version must be greater than old, but {version: %d, term: %d} is not greater than {version: %d, term: %d} for replica set %s",
			cfg.Version, st.Term, old.Version, old.Term, cfg.Name)
	}
	if old.Multi() || cfg.Multi() {
		return m.reconfigRaft(ctx, old, cfg, force)
	}
	if err := CheckSelf(cfg, old.Members[0].Host); err != nil {
		return err
	}
	if cfg.Members[0].ID != old.Members[0].ID && !force {
		return mongoerr.New(mongoerr.NewReplicaSetConfigurationIncompatible, "New and old configurations both have members with host of %s but in the new configuration the _id field is %d and in the old configuration it is %d for replica set %s",
			old.Members[0].Host, cfg.Members[0].ID, old.Members[0].ID, cfg.Name)
	}
	return m.Set.Reconfig(cfg, force)
}

// growRaft is replSetReconfig of a one-member set into several members:
// the member starts a Raft group of itself in a term after its own (so
// that electionIds keep growing), becomes its primary, then adds the new
// member, which receives a snapshot of its data (its initial sync).
func (m Member) growRaft(c context.Context, old, next *repl.Config) error {
	if m.NoMemberAuth() {
		return ErrNoMemberAuth()
	}
	if !m.Set.IsWritablePrimary() {
		return mongoerr.New(mongoerr.NotWritablePrimary, "replSetReconfig should only be run on a writable PRIMARY. Current state %s;", m.Set.Status().State)
	}
	added, removed := raftrepl.Diff(old, next)
	if len(added) != len(next.Members)-1 || len(removed) > 0 {
		return mongoerr.New(mongoerr.NewReplicaSetConfigurationIncompatible, "A one-member set grows by adding members: this node (%s) must stay its member", old.Members[0].Host)
	}
	if len(added) > 1 {
		return mongoerr.New(mongoerr.NewReplicaSetConfigurationIncompatible, "Only one member can be added or removed at a time (Cairn's Raft membership changes)")
	}
	// mongod's quorum check: the new member must answer before anything
	// changes here (it is told to join, and waits for the leader).
	qctx, qcancel := context.WithTimeout(c, 5*time.Second)
	err := raftrepl.SendJoin(qctx, added[0].Host, next, m.MemberAuth())
	qcancel()
	if err != nil {
		return mongoerr.New(mongoerr.NodeNotFound, "Quorum check failed because not enough voting nodes responded; required 2 but only the following 1 voters responded: %s; the following nodes did not respond affirmatively: %s failed with %v",
			old.Members[0].Host, added[0].Host, err)
	}
	st := m.Set.Status()
	cur := *old
	cur.Term = st.Term
	m.Log.Info("Growing the one-member set: starting Raft", "c", "REPL", "term", st.Term, "adding", added[0].Host)
	m.Set.Follow(&cur, st.Term)
	n, err := m.startRaftTerm(&cur, true, uint64(st.Term)+1)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(c, 2*time.Minute)
	defer cancel()
	for !m.Set.IsWritablePrimary() {
		select {
		case <-ctx.Done():
			return mongoerr.New(mongoerr.NewReplicaSetConfigurationIncompatible, "reconfig failed: the member did not become primary of its Raft group")
		case <-time.After(10 * time.Millisecond):
		}
	}
	next.Term = m.Set.Status().Term
	if err = n.AddMember(ctx, next, added[0]); err != nil {
		return mongoerr.New(mongoerr.NewReplicaSetConfigurationIncompatible, "reconfig failed: %v", err)
	}
	return nil
}

// reconfigRaft is replSetReconfig on a set of several members: one member
// added or removed at a time (Raft's single-member changes), or the same
// members with other settings. A one-member set grows by starting Raft
// (growRaft).
func (m Member) reconfigRaft(c context.Context, old, next *repl.Config, force bool) error {
	n := m.Raft()
	if n == nil && !force {
		return m.growRaft(c, old, next)
	}
	if force {
		return mongoerr.New(mongoerr.NotImplemented, "Cairn does not support forced reconfigs of a set of several members: Raft needs a majority for every configuration change")
	}
	if !m.Set.IsWritablePrimary() {
		return mongoerr.New(mongoerr.NotWritablePrimary, "replSetReconfig should only be run on a writable PRIMARY. Current state %s;", m.Set.Status().State)
	}
	next.Term = m.Set.Status().Term
	added, removed := raftrepl.Diff(old, next)
	if len(added)+len(removed) > 1 {
		return mongoerr.New(mongoerr.NewReplicaSetConfigurationIncompatible, "Only one member can be added or removed at a time (Cairn's Raft membership changes)")
	}
	for _, mb := range next.Members {
		for _, o := range old.Members {
			if mb.ID == o.ID && (mb.Host != o.Host || (mb.Votes == 0) != (o.Votes == 0)) {
				return mongoerr.New(mongoerr.NewReplicaSetConfigurationIncompatible, "Cairn does not change a member's host or votes in place: remove the member, then add it back")
			}
		}
	}
	ctx, cancel := context.WithTimeout(c, 2*time.Minute)
	defer cancel()
	var err error
	switch {
	case len(added) == 1:
		if err = raftrepl.SendJoin(ctx, added[0].Host, next, m.MemberAuth()); err == nil {
			err = n.AddMember(ctx, next, added[0])
		}
	case len(removed) == 1:
		err = n.RemoveMember(ctx, next, raftrepl.RaftID(removed[0]))
	default:
		err = n.UpdateConfig(ctx, next)
	}
	if err != nil {
		return mongoerr.New(mongoerr.NewReplicaSetConfigurationIncompatible, "reconfig failed: %v", err)
	}
	return nil
}

// StepDown is replSetStepDown on the primary, past its argument checks:
// for secs seconds, waiting up to catchUp seconds for a secondary.
func (m Member) StepDown(c context.Context, secs, catchUp int64, force bool) error {
	if n := m.Raft(); n != nil {
		return m.stepDownRaft(c, n, time.Duration(secs)*time.Second, time.Duration(catchUp)*time.Second)
	}
	if !force {
		// No secondary can catch up in a one-member set: mongod waits the
		// catch-up period for one, then gives up.
		if catchUp > 0 {
			t := time.NewTimer(time.Duration(catchUp) * time.Second)
			defer t.Stop()
			select {
			case <-t.C:
			case <-c.Done():
				return mongoerr.FromContext(c.Err())
			}
		}
		return mongoerr.New(mongoerr.ExceededTimeLimit, "No electable secondaries caught up as of %s. Please use the replSetStepDown command with the argument {force: true} to force node to step down.",
			time.Now().Format("2006-01-02T15:04:05.000-07:00"))
	}
	m.Log.Info("Attempting to step down in response to replSetStepDown command", "c", "REPL", "id", 21579)
	return m.Set.StepDown(time.Duration(secs) * time.Second)
}

// stepDownRaft hands the primary to the most up-to-date voter (Raft's
// leadership transfer, which waits for it to catch up) and keeps this
// member from running for election for the step-down period.
func (m Member) stepDownRaft(c context.Context, n *raftrepl.Node, period, catchUp time.Duration) error {
	m.Log.Info("Attempting to step down in response to replSetStepDown command", "c", "REPL", "id", 21579)
	n.Freeze(time.Now().Add(period))
	ctx, cancel := context.WithTimeout(c, max(catchUp, 2*time.Second))
	defer cancel()
	err := n.StepDown(ctx)
	if err == nil {
		return nil
	}
	n.Freeze(time.Time{})
	if errors.Is(err, raftrepl.ErrNotPrimary) {
		return mongoerr.New(mongoerr.NotWritablePrimary, "not primary so can't step down")
	}
	return mongoerr.New(mongoerr.ExceededTimeLimit, "No electable secondaries caught up as of %s. Please use the replSetStepDown command with the argument {force: true} to force node to step down.",
		time.Now().Format("2006-01-02T15:04:05.000-07:00"))
}

// Freeze is replSetFreeze for secs seconds (0: unfreeze); r receives its
// info and warning.
func (m Member) Freeze(secs int64, r *bson.Builder) error {
	if n := m.Raft(); n != nil {
		return m.freezeRaft(n, secs, r)
	}
	info, warning, err := m.Set.Freeze(secs)
	if err != nil {
		return err
	}
	if info != "" {
		r.AppendString("info", info)
	}
	if warning != "" {
		r.AppendString("warning", warning)
	}
	return nil
}

// freezeRaft is replSetFreeze on a member of a set of several members.
func (m Member) freezeRaft(n *raftrepl.Node, secs int64, r *bson.Builder) error {
	if m.Set.IsWritablePrimary() {
		return mongoerr.New(mongoerr.NotSecondary, "cannot freeze node when primary or running for election. state: Primary")
	}
	if secs <= 0 {
		n.Freeze(time.Time{})
		r.AppendString("info", "unfreezing")
		return nil
	}
	if secs == 1 {
		r.AppendString("warning", "you really want to freeze for only 1 second?")
	}
	if until := time.Now().Add(time.Duration(secs) * time.Second); until.After(n.Frozen()) {
		n.Freeze(until)
	}
	return nil
}
