package command

import (
	"fmt"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// validate checks a collection against its indexes: every document is
// well-formed BSON under its _id key, and every index holds exactly the
// entries its documents produce. full: true also runs the storage engine's
// page checker over the whole file.
func validate(c *Ctx) error {
	a := newArgs(c)
	if err := a.check("full", "repair", "metadata", "checkBSONConformance", "background", "scandata"); err != nil {
		return err
	}
	name, err := c.collectionArg()
	if err != nil {
		return err
	}
	if rep, _, _ := a.boolean("repair"); rep {
		return mongoerr.New(mongoerr.CommandNotSupported, "validate with repair is not supported by Cairn")
	}
	full, _, err := a.boolean("full")
	if err != nil {
		return err
	}
	tx, coll, err := c.snapshotCollection(name)
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
	r := c.Reply
	r.AppendString("ns", coll.Namespace())
	r.AppendInt64("nInvalidDocuments", v.InvalidDocs)
	r.AppendInt64("nNonCompliantDocuments", 0)
	r.AppendInt64("nrecords", v.NRecords)
	r.AppendInt32("nIndexes", int32(len(v.Indexes)))
	r.StartDocument("keysPerIndex")
	for _, ix := range v.Indexes {
		r.AppendInt64(ix.Name, v.KeysPerIndex[ix.Name])
	}
	r.End()
	r.StartDocument("indexDetails")
	for _, ix := range v.Indexes {
		r.StartDocument(ix.Name)
		r.AppendBool("valid", v.IndexValid[ix.Name])
		r.End()
	}
	r.End()
	r.AppendBool("valid", len(v.Errors) == 0)
	r.AppendBool("repaired", false)
	appendStrings(r, "warnings", v.Warnings)
	appendStrings(r, "errors", v.Errors)
	r.StartArray("extraIndexEntries")
	r.End()
	r.StartArray("missingIndexEntries")
	r.End()
	r.StartArray("corruptRecords")
	r.End()
	return nil
}

func appendStrings(r *bson.Builder, key string, ss []string) {
	r.StartArray(key)
	for i, s := range ss {
		r.AppendString(bson.Index(i), s)
	}
	r.End()
}

// fsync makes every acknowledged write durable and checkpoints the data
// files, as mongod's fsync does. fsync with lock (fsyncLock) is not
// supported.
func fsyncCmd(c *Ctx) error {
	a := newArgs(c)
	if err := a.check("lock", "async", "forBackup", "fsyncLockAcquisitionTimeoutMillis"); err != nil {
		return err
	}
	if lock, _, _ := a.boolean("lock"); lock {
		return mongoerr.New(mongoerr.CommandNotSupported, "fsync with lock: true (fsyncLock) is not supported by Cairn")
	}
	if err := c.Env.KV.Checkpoint(c); err != nil {
		return fmt.Errorf("fsync: %w", err)
	}
	c.Reply.AppendInt32("numFiles", 1)
	return nil
}
