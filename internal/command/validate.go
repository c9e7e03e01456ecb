package command

import (
	"fmt"

	"github.com/cairndb/cairn/internal/mongoerr"
)

// validate checks a collection against its indexes: every document is
// well-formed BSON under its _id key, and every index holds exactly the
// entries its documents produce. full: true also runs the storage engine's
// page checker over the whole file.
func validate(c *Ctx) error {
	a := newArgs(c)
	if err := a.Check("full", "repair", "metadata", "checkBSONConformance", "background", "scandata"); err != nil {
		return err
	}
	name, err := c.CollectionArg()
	if err != nil {
		return err
	}
	if rep, _, _ := a.Boolean("repair"); rep {
		return mongoerr.New(mongoerr.CommandNotSupported, "validate with repair is not supported by Cairn")
	}
	full, _, err := a.Boolean("full")
	if err != nil {
		return err
	}
	tx, coll, err := c.SnapshotCollection(name)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if coll == nil {
		return mongoerr.New(mongoerr.NamespaceNotFound, "Collection '%s.%s' does not exist to validate.", c.DB, name)
	}
	v, err := c.Env.ValidateCollection(c, tx, coll, full)
	if err != nil {
		return err
	}
	v.AppendReply(c.Reply, coll.Namespace())
	return nil
}

// fsync makes every acknowledged write durable and checkpoints the data
// files, as mongod's fsync does. fsync with lock (fsyncLock) is not
// supported.
func fsyncCmd(c *Ctx) error {
	a := newArgs(c)
	if err := a.Check("lock", "async", "forBackup", "fsyncLockAcquisitionTimeoutMillis"); err != nil {
		return err
	}
	if lock, _, _ := a.Boolean("lock"); lock {
		return mongoerr.New(mongoerr.CommandNotSupported, "fsync with lock: true (fsyncLock) is not supported by Cairn")
	}
	if err := c.Env.KV.Checkpoint(c); err != nil {
		return fmt.Errorf("fsync: %w", err)
	}
	c.Reply.AppendInt32("numFiles", 1)
	return nil
}
