package command

import (
	"os"

	"github.com/cairndb/cairn/internal/agg"
	"github.com/cairndb/cairn/internal/exec"
)

// explainAggregate answers explain: true with the plan, in the command's
// snapshot (exec.Engine.AppendAggregateStages).
func explainAggregate(c *Ctx, ns, source string, p *agg.Pipeline, planning *exec.AggPlanning) error {
	tx, err := c.ReadSnapshot()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	r := c.Reply
	r.AppendString("explainVersion", "1")
	if err := c.Env.AppendAggregateStages(c, tx, r, c.DB, ns, source, p, planning); err != nil {
		return err
	}
	r.AppendDocument("command", c.Body)
	host, _ := os.Hostname()
	r.StartDocument("serverInfo")
	r.AppendString("host", host)
	r.AppendString("version", CompatibleVersion)
	r.End()
	return nil
}
