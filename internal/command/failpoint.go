package command

// Fail points and test commands (--setParameter enableTestCommands=1).
//
// configureFailPoint exists only with test commands on: without them it is
// not a command at all (CommandNotFound, as on a mongod without
// enableTestCommands). The fail points and their evaluation are
// internal/failpoint's (eval.go there says where mongod applies them);
// internal/dispatch/failpoint.go describes the running command to them.

import (
	"github.com/cairndb/cairn/internal/mongoerr"
)

// configureFailPoint sets a fail point's mode and data and answers how many
// times it had fired before: {count, ok}.
func configureFailPoint(c *Ctx) error {
	if c.Env.FailPoints == nil {
		return mongoerr.New(mongoerr.CommandNotFound, "no such command: '%s'", c.Name)
	}
	n, err := c.Env.FailPoints.Configure(c.Body)
	if err != nil {
		return err
	}
	if n == int64(int32(n)) {
		c.Reply.AppendInt32("count", int32(n))
	} else {
		c.Reply.AppendInt64("count", n)
	}
	name := newArgs(c).First()
	mode, _ := c.Body.Lookup("mode")
	data, _ := c.Body.Lookup("data")
	c.Env.Log.Warn("Set failpoint", "c", "CONTROL", "id", 23829, "failPointName", name.String(), "mode", mode.String(), "data", data.String())
	return nil
}
