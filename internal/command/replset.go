package command

import (
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/repl"
)

// The replSet* commands of a one-member replica set (internal/repl holds
// the state). A standalone answers every one as mongod does without
// --replSet: NoReplicationEnabled (76).

// errNoRepl is a standalone's answer (checkReplEnabledForCommand).
func errNoRepl() error {
	return mongoerr.New(mongoerr.NoReplicationEnabled, "not running with --replSet")
}

// replEnabled is mongod's checkReplEnabledForCommand: a standalone answers
// 76, a member without a configuration NotYetInitialized (94).
func replEnabled(c *Ctx) (repl.Status, error) {
	if c.Env.Repl == nil {
		return repl.Status{}, errNoRepl()
	}
	st := c.Env.Repl.Status()
	if st.Config == nil {
		return st, mongoerr.New(mongoerr.NotYetInitialized, "no replset config has been received")
	}
	return st, nil
}

func replSetInitiate(c *Ctx) error {
	if c.Env.Repl == nil {
		return mongoerr.New(mongoerr.NoReplicationEnabled, "This node was not started with replication enabled.")
	}
	set := c.Env.Repl
	if set.Status().Config != nil {
		return repl.ErrAlreadyInitialized // checked first, as mongod
	}
	v := newArgs(c).first()
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
		if err := checkSelf(cfg, set.Me()); err != nil {
			return err
		}
	} else {
		c.Reply.AppendString("info2", "no configuration specified. Using a default configuration for the set")
		c.Reply.AppendString("me", set.Me())
		cfg = repl.DefaultConfig(set.Name, set.Me())
	}
	cfg.Settings.ReplicaSetID = repl.NewObjectID()
	c.Env.Log.Info("replSetInitiate admin command received from client", "c", "REPL", "id", 21356, "config", cfg.Name)
	if cfg.Multi() {
		return c.Env.initiateRaft(cfg)
	}
	return set.Initiate(cfg)
}

// checkSelf requires the one member to be this node, as mongod's
// findSelfInConfig.
func checkSelf(cfg *repl.Config, me string) error {
	for _, m := range cfg.Members {
		if m.Host == me {
			return nil
		}
	}
	return mongoerr.New(mongoerr.NodeNotFound, "No host described in new configuration with {version: %d, term: %d} for replica set %s maps to this node", cfg.Version, cfg.Term, cfg.Name)
}

func replSetGetConfig(c *Ctx) error {
	if err := newArgs(c).check("commitmentStatus", "$_internalIncludeNewlyAdded"); err != nil {
		return err
	}
	st, err := replEnabled(c)
	if err != nil {
		return err
	}
	commitment, _, err := newArgs(c).boolean("commitmentStatus")
	if err != nil {
		return err
	}
	c.Reply.StartDocument("config")
	st.Config.Append(c.Reply)
	c.Reply.End()
	if commitment {
		// One member: every configuration is committed when installed.
		c.Reply.AppendBool("commitmentStatus", true)
	}
	return nil
}

func replSetReconfig(c *Ctx) error {
	if err := newArgs(c).check("force", "maxTimeMS"); err != nil {
		return err
	}
	st, err := replEnabled(c)
	if err != nil {
		return err
	}
	v := newArgs(c).first()
	if v.Type != bson.TypeDocument {
		return mongoerr.New(mongoerr.InvalidReplicaSetConfig, "no configuration specified")
	}
	force, _, err := newArgs(c).boolean("force")
	if err != nil {
		return err
	}
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
		return reconfigRaft(c, old, cfg, force)
	}
	if err := checkSelf(cfg, old.Members[0].Host); err != nil {
		return err
	}
	if cfg.Members[0].ID != old.Members[0].ID && !force {
		return mongoerr.New(mongoerr.NewReplicaSetConfigurationIncompatible, "New and old configurations both have members with host of %s but in the new configuration the _id field is %d and in the old configuration it is %d for replica set %s",
			old.Members[0].Host, cfg.Members[0].ID, old.Members[0].ID, cfg.Name)
	}
	return c.Env.Repl.Reconfig(cfg, force)
}

func replSetStepDown(c *Ctx) error {
	if err := newArgs(c).check("force", "secondaryCatchUpPeriodSecs"); err != nil {
		return err
	}
	if _, err := replEnabled(c); err != nil {
		return err
	}
	force, _, err := newArgs(c).boolean("force")
	if err != nil {
		return err
	}
	secs, _ := newArgs(c).first().AsInt64()
	if secs == 0 {
		secs = 60
	} else if secs < 0 {
		return mongoerr.New(mongoerr.BadValue, "stepdown period must be a positive integer")
	}
	catchUp := int64(10)
	if force {
		catchUp = 0
	}
	if n, ok, err := newArgs(c).integer("secondaryCatchUpPeriodSecs"); err != nil {
		return err
	} else if ok {
		catchUp = n
	}
	if catchUp < 0 {
		return mongoerr.New(mongoerr.BadValue, "secondaryCatchUpPeriodSecs period must be a positive or absent")
	}
	if secs < catchUp {
		return mongoerr.New(mongoerr.BadValue, "stepdown period must be longer than secondaryCatchUpPeriodSecs")
	}
	if !c.Env.Repl.IsWritablePrimary() {
		return mongoerr.New(mongoerr.NotWritablePrimary, "not primary so can't step down")
	}
	if n := c.Env.Raft(); n != nil {
		return stepDownRaft(c, n, time.Duration(secs)*time.Second, time.Duration(catchUp)*time.Second)
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
				return ctxErr(c.Err())
			}
		}
		return mongoerr.New(mongoerr.ExceededTimeLimit, "No electable secondaries caught up as of %s. Please use the replSetStepDown command with the argument {force: true} to force node to step down.",
			time.Now().Format("2006-01-02T15:04:05.000-07:00"))
	}
	c.Env.Log.Info("Attempting to step down in response to replSetStepDown command", "c", "REPL", "id", 21579)
	return c.Env.Repl.StepDown(time.Duration(secs) * time.Second)
}

func replSetFreeze(c *Ctx) error {
	if _, err := replEnabled(c); err != nil {
		return err
	}
	secs, _ := newArgs(c).first().AsInt64()
	if n := c.Env.Raft(); n != nil {
		return freezeRaft(c, n, secs)
	}
	info, warning, err := c.Env.Repl.Freeze(secs)
	if err != nil {
		return err
	}
	if info != "" {
		c.Reply.AppendString("info", info)
	}
	if warning != "" {
		c.Reply.AppendString("warning", warning)
	}
	return nil
}
