package command

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/repl"
	"github.com/cairndb/cairn/internal/replset"
)

// The replSet* commands (internal/replset holds the mechanism). A
// standalone answers every one as mongod does without --replSet:
// NoReplicationEnabled (76).

// errNoRepl is a standalone's answer (checkReplEnabledForCommand).
func errNoRepl() error { return replset.ErrNoRepl() }

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
	return c.Env.Member().Initiate(newArgs(c).First(), c.Reply)
}

func replSetGetConfig(c *Ctx) error {
	if err := newArgs(c).Check("commitmentStatus", "$_internalIncludeNewlyAdded"); err != nil {
		return err
	}
	st, err := replEnabled(c)
	if err != nil {
		return err
	}
	commitment, _, err := newArgs(c).Boolean("commitmentStatus")
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
	if err := newArgs(c).Check("force", "maxTimeMS"); err != nil {
		return err
	}
	st, err := replEnabled(c)
	if err != nil {
		return err
	}
	v := newArgs(c).First()
	if v.Type != bson.TypeDocument {
		return mongoerr.New(mongoerr.InvalidReplicaSetConfig, "no configuration specified")
	}
	force, _, err := newArgs(c).Boolean("force")
	if err != nil {
		return err
	}
	return c.Env.Member().Reconfig(c, st, v, force)
}

func replSetStepDown(c *Ctx) error {
	if err := newArgs(c).Check("force", "secondaryCatchUpPeriodSecs"); err != nil {
		return err
	}
	if _, err := replEnabled(c); err != nil {
		return err
	}
	force, _, err := newArgs(c).Boolean("force")
	if err != nil {
		return err
	}
	secs, _ := newArgs(c).First().AsInt64()
	if secs == 0 {
		secs = 60
	} else if secs < 0 {
		return mongoerr.New(mongoerr.BadValue, "stepdown period must be a positive integer")
	}
	catchUp := int64(10)
	if force {
		catchUp = 0
	}
	if n, ok, err := newArgs(c).Integer("secondaryCatchUpPeriodSecs"); err != nil {
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
	return c.Env.Member().StepDown(c, secs, catchUp, force)
}

func replSetFreeze(c *Ctx) error {
	if _, err := replEnabled(c); err != nil {
		return err
	}
	secs, _ := newArgs(c).First().AsInt64()
	return c.Env.Member().Freeze(secs, c.Reply)
}

// replSetGetStatus reports the set as mongod's prepareStatusResponse does
// (replset.Member's AppendStatus).
func replSetGetStatus(c *Ctx) error {
	if err := newArgs(c).Check("initialSync"); err != nil {
		return err
	}
	st, err := replEnabled(c)
	if err != nil {
		return err
	}
	c.Env.Member().AppendStatus(c.Reply, st, c.Body)
	return nil
}
