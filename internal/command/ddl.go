package command

import (
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/dispatch"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/opctx"
)

// The collection DDL commands: create, drop, dropDatabase,
// renameCollection and collMod. What they do, in the write transaction
// they hand it, is exec/ddl.go's.

func create(c *Ctx) error {
	name, err := c.CollectionArg()
	if err != nil {
		return err
	}
	if _, ok := c.Body.Lookup("viewOn"); ok {
		return createView(c, name)
	}
	if _, ok := c.Body.Lookup("timeseries"); ok {
		return createTimeseries(c, name)
	}
	opts, err := exec.ParseCreateOptions(c.DB, name, c.Body, dispatch.IsGenericField)
	if err != nil {
		return err
	}
	wc, err := parseWriteConcern(c)
	if err != nil {
		return err
	}
	if opts.Collated {
		c.Env.Collations.Note(&c.Env.Engine)
	}
	err = c.WriteTx(wc.durability(), func(tx *exec.Tx) error {
		return c.Env.CreateCollection(tx, c.DB, name, opts.Stored)
	})
	if err == nil && opts.AutoIndexID {
		c.Reply.AppendString("note", "The autoIndexId option is deprecated and will be removed in a future release")
	}
	return err
}

func drop(c *Ctx) error {
	if err := newArgs(c).Check(); err != nil {
		return err
	}
	name, err := c.CollectionArg()
	if err != nil {
		return err
	}
	wc, err := parseWriteConcern(c)
	if err != nil {
		return err
	}
	if err := c.Env.CheckDropCollection(c.DB, name); err != nil {
		return err
	}
	nIndexes := 0
	err = c.WriteTx(wc.durability(), func(tx *exec.Tx) (err error) {
		nIndexes, err = c.Env.DropCollection(tx, c.DB, name)
		return err
	})
	if err != nil {
		return err
	}
	if name == opctx.ProfileCollection {
		c.Env.Profiler.ForgetSize(c.DB)
	}
	if nIndexes > 0 {
		c.Reply.AppendInt32("nIndexesWas", int32(nIndexes))
		c.Reply.AppendString("ns", c.DB+"."+name)
	}
	return nil
}

func dropDatabase(c *Ctx) error {
	if err := newArgs(c).Check(); err != nil {
		return err
	}
	if err := catalog.ValidateDBName(c.DB); err != nil {
		return err
	}
	wc, err := parseWriteConcern(c)
	if err != nil {
		return err
	}
	dropped := false
	err = c.WriteTx(wc.durability(), func(tx *exec.Tx) (err error) {
		dropped, err = c.Env.DropDatabase(tx, c.DB)
		return err
	})
	if err != nil {
		return err
	}
	c.Env.Profiler.ForgetSize(c.DB)
	if dropped {
		c.Reply.AppendString("dropped", c.DB)
	}
	return nil
}

func renameCollection(c *Ctx) error {
	a := newArgs(c)
	if err := a.Check("to", "dropTarget", "stayTemp"); err != nil {
		return err
	}
	var r exec.Rename
	from, ok, err := a.Str("renameCollection")
	if err != nil {
		return err
	}
	to, ok2, err := a.Str("to")
	if err != nil {
		return err
	}
	if !ok || !ok2 {
		return mongoerr.New(mongoerr.IDLFailedToParse, "BSON field 'renameCollection.to' is missing but a required field")
	}
	r.From, r.To = from, to
	if r.DropTarget, _, err = a.Boolean("dropTarget"); err != nil {
		return err
	}
	if r.StayTemp, _, err = a.Boolean("stayTemp"); err != nil {
		return err
	}
	for _, ns := range []string{from, to} {
		if _, _, err := exec.SplitNamespace(ns); err != nil {
			return err
		}
	}
	wc, err := parseWriteConcern(c)
	if err != nil {
		return err
	}
	return c.WriteTx(wc.durability(), func(tx *exec.Tx) error { return c.Env.RenameCollection(tx, r) })
}

// collMod changes a collection's validation options and an index's
// hidden and expireAfterSeconds.
func collMod(c *Ctx) error {
	name, err := c.CollectionArg()
	if err != nil {
		return err
	}
	wc, err := parseWriteConcern(c)
	if err != nil {
		return err
	}
	if ok, err := timeseriesCollMod(c, name, wc); ok || err != nil {
		return err
	}
	ch, err := exec.ParseCollMod(c.Body, dispatch.IsGenericField)
	if err != nil {
		return err
	}
	return c.WriteTx(wc.durability(), func(tx *exec.Tx) error { return c.Env.CollMod(tx, c.DB, name, ch) })
}
