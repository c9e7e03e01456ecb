package command

import "github.com/cairndb/cairn/internal/serverstatus"

// serverStatus answers with mongod's sections (internal/serverstatus) and,
// on a member of a replica set, repl (replset.Member.AppendServerStatus).
func serverStatus(c *Ctx) error {
	serverstatus.Append(c.Reply, &serverstatus.Sources{
		Stats: &c.Env.Stats, Version: CompatibleVersion, CairnVersion: Version, Started: c.Env.Started,
		MaxConns: c.Env.MaxConns, CommitInterval: c.Env.CommitInterval, Ops: &c.Env.Ops, Cursors: c.Env.Cursors,
		Sessions: c.Env.Sessions, Engine: &c.Env.Engine,
	})
	if c.Env.Repl != nil {
		c.Env.Member().AppendServerStatus(c.Reply, ProcessID())
	}
	return nil
}
