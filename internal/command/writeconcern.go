package command

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/concern"
	"github.com/cairndb/cairn/internal/exec"
)

// writeConcern is a command's parsed write concern (internal/concern
// parses it); the lower-case methods are the write handlers' spelling.
type writeConcern struct{ concern.Write }

func (wc writeConcern) durability() exec.Durability { return wc.Durability() }
func (wc writeConcern) unacknowledged() bool        { return wc.Unacknowledged() }

// parseWriteConcern reads the command's writeConcern (concern.ParseCommand)
// and, on a replica-set member, records it and the error a one-member set
// reports after the write.
func parseWriteConcern(c *Ctx) (writeConcern, error) {
	replSet := c.Env != nil && c.Env.Repl != nil
	v, ok := c.Body.Lookup("writeConcern")
	var def []byte
	if !ok || v.Type == bson.TypeNull || (v.Type == bson.TypeDocument && v.Document().Len() == 0) {
		d, err := defaultWriteConcern(c.Env)
		if err != nil {
			return writeConcern{concern.Write{W: 1}}, err
		}
		def = d
	}
	wc, err := concern.ParseCommand(v, ok, def, replSet)
	if err != nil {
		return writeConcern{wc}, err
	}
	if replSet {
		// On a set replicated by Raft a majority write needs no flush of
		// its own before the commit point passes it (concern.Write's
		// Durability says why).
		wc.Replicated = c.Env.Raft() != nil
		c.WCPending = wc.Satisfiable(c.Env.Repl.Status().Config)
		c.WC = wc
	}
	return writeConcern{wc}, nil
}
