package command

// Capped collections' DDL: the options, checks and copies are
// exec/capped_ddl.go's; these are the handlers.

import (
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
)

func convertToCapped(c *Ctx) error {
	a := newArgs(c)
	if err := a.Check("size"); err != nil {
		return err
	}
	name, err := c.CollectionArg()
	if err != nil {
		return err
	}
	v, ok := a.Lookup("size")
	size, err := exec.CappedSizeArg(v, ok, "convertToCapped")
	if err != nil {
		return err
	}
	wc, err := parseWriteConcern(c)
	if err != nil {
		return err
	}
	return c.WriteTx(wc.durability(), func(tx *exec.Tx) error { return exec.ConvertToCapped(tx, c.DB, name, size) })
}

func cloneCollectionAsCapped(c *Ctx) error {
	a := newArgs(c)
	if err := a.Check("toCollection", "size", "temp"); err != nil {
		return err
	}
	from, err := c.CollectionArg()
	if err != nil {
		return err
	}
	to, ok, err := a.Str("toCollection")
	if err != nil {
		return err
	}
	if !ok {
		return mongoerr.New(mongoerr.IDLFailedToParse, "BSON field 'cloneCollectionAsCapped.toCollection' is missing but a required field")
	}
	v, ok := a.Lookup("size")
	size, err := exec.CappedSizeArg(v, ok, "cloneCollectionAsCapped")
	if err != nil {
		return err
	}
	wc, err := parseWriteConcern(c)
	if err != nil {
		return err
	}
	return c.WriteTx(wc.durability(), func(tx *exec.Tx) error { return exec.CloneCollectionAsCapped(tx, c.DB, from, to, size) })
}
