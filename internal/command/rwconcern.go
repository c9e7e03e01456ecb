package command

import "time"

// getDefaultRWConcern reports the cluster-wide defaults. A standalone
// Cairn has MongoDB's implicit defaults: read concern "local" and write
// concern {w: 1}.
func getDefaultRWConcern(c *Ctx) error {
	if err := newArgs(c).check("inMemory"); err != nil {
		return err
	}
	r := c.Reply
	r.StartDocument("defaultReadConcern")
	r.AppendString("level", "local")
	r.End()
	r.StartDocument("defaultWriteConcern")
	r.AppendInt32("w", 1)
	r.AppendInt32("wtimeout", 0)
	r.End()
	r.AppendString("defaultWriteConcernSource", "implicit")
	r.AppendString("defaultReadConcernSource", "implicit")
	r.AppendDateTime("localUpdateWallClockTime", time.Now().UnixMilli())
	return nil
}
