package command

import (
	"sort"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/auth"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/serverstatus"
)

// hostInfo describes the machine (internal/serverstatus).
func hostInfo(c *Ctx) error {
	serverstatus.AppendHostInfo(c.Reply)
	return nil
}

func getCmdLineOpts(c *Ctx) error {
	r := c.Reply
	r.StartArray("argv")
	for i, a := range c.Env.Argv {
		r.AppendString(bson.Index(i), a)
	}
	r.End()
	if c.Env.Parsed != nil {
		r.AppendDocument("parsed", c.Env.Parsed)
	} else {
		r.AppendDocument("parsed", bson.EmptyDoc)
	}
	return nil
}

func listCommands(c *Ctx) error {
	names := make([]string, 0, len(byName))
	for n, cmd := range byName {
		if n == cmd.Name && (!cmd.TestOnly || c.Env.TestCommands) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	r := c.Reply
	r.StartDocument("commands")
	for _, n := range names {
		cmd := byName[n]
		r.StartDocument(n)
		r.AppendString("help", cmd.Help)
		r.AppendBool("requiresAuth", cmd.Needs&auth.Open == 0)
		r.AppendBool("secondaryOk", true)
		r.AppendBool("adminOnly", cmd.AdminOnly)
		r.End()
	}
	r.End()
	return nil
}

func getLog(c *Ctx) error {
	first := newArgs(c).First()
	if first.Type != bson.TypeString {
		return mongoerr.New(mongoerr.TypeMismatch, "Argument to getLog must be of type String; found %s of type %s", first.String(), first.Type)
	}
	r := c.Reply
	switch first.StringValue() {
	case "*":
		r.StartArray("names")
		r.AppendString("0", "global")
		r.AppendString("1", "startupWarnings")
		r.End()
	case "startupWarnings":
		r.AppendInt32("totalLinesWritten", int32(len(c.Env.StartupWarnings)))
		r.StartArray("log")
		for i, l := range c.Env.StartupWarnings {
			r.AppendString(bson.Index(i), l)
		}
		r.End()
	case "global":
		var lines []string
		var total int
		if c.Env.RecentLog != nil {
			lines, total = c.Env.RecentLog()
		}
		r.AppendInt32("totalLinesWritten", int32(total))
		r.StartArray("log")
		for i, l := range lines {
			r.AppendString(bson.Index(i), l)
		}
		r.End()
	default:
		return mongoerr.New(mongoerr.BadValue, "No log named '%s'", first.StringValue())
	}
	return nil
}

// dropConnections drops outgoing connection pools to the given hosts; a
// standalone Cairn keeps none, so there is nothing to drop.
func dropConnections(c *Ctx) error {
	a := newArgs(c)
	if err := a.Check("hostAndPort"); err != nil {
		return err
	}
	if _, ok, err := a.Array("hostAndPort"); err != nil {
		return err
	} else if !ok {
		return mongoerr.New(mongoerr.IDLFailedToParse, "BSON field 'dropConnections.hostAndPort' is missing but a required field")
	}
	return nil
}

// connPoolStats reports the server's outgoing connection pools (to other
// members and shards). A standalone Cairn opens no outgoing connections, so
// every figure is zero and there are no pools, hosts or replica sets.
// Arguments are ignored, as mongod ignores them (old tools send
// recordStats).
func connPoolStats(c *Ctx) error {
	r := c.Reply
	for _, k := range []string{"numClientConnections", "numAScopedConnections", "totalInUse", "totalAvailable", "totalLeased", "totalCreated", "totalRefreshing", "totalRefreshed"} {
		r.AppendInt64(k, 0)
	}
	for _, k := range []string{"pools", "hosts", "replicaSets"} {
		r.AppendDocument(k, bson.EmptyDoc)
	}
	return nil
}
