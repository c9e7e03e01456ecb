package command

import (
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/dispatch"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
)

// The listings: listDatabases, listCollections and listIndexes (the
// catalog reads are exec/listings.go's).

func listDatabases(c *Ctx) error {
	a := newArgs(c)
	if err := a.Check("filter", "nameOnly", "authorizedDatabases"); err != nil {
		return err
	}
	nameOnly, filter, err := listingArgs(a)
	if err != nil {
		return err
	}
	visible, err := c.VisibleDatabases()
	if err != nil {
		return err
	}
	tx, err := c.ReadSnapshot()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	dbs, err := exec.ListDatabases(tx, nameOnly)
	if err != nil {
		return err
	}
	exec.AppendDatabases(c.Reply, dbs, nameOnly, filter, visible)
	return nil
}

func listCollections(c *Ctx) error {
	a := newArgs(c)
	if err := a.Check("filter", "nameOnly", "authorizedCollections", "cursor"); err != nil {
		return err
	}
	if err := catalog.ValidateDBName(c.DB); err != nil {
		return err
	}
	nameOnly, filter, err := listingArgs(a)
	if err != nil {
		return err
	}
	batchSize, err := cursorBatchSize(a)
	if err != nil {
		return err
	}
	tx, err := c.ReadSnapshot()
	if err != nil {
		return err
	}
	docs, err := exec.CollectionInfos(tx, c.DB, nameOnly, filter)
	tx.Rollback()
	if err != nil {
		return err
	}
	return writeBatch(c, nil, &exec.SliceSource{Docs: docs}, c.DB+".$cmd.listCollections", 0, batchOptions{batchSize: batchSize, firstBatch: true}, false)
}

// cursorBatchSize reads cursor: {batchSize} of commands that return cursors.
func cursorBatchSize(a args) (int64, error) {
	cur, ok, err := a.Doc("cursor")
	if err != nil || !ok {
		return 0, err
	}
	v, ok := cur.Lookup("batchSize")
	if !ok {
		return 0, nil
	}
	n, err := dispatch.NumberArg(v)
	if err != nil {
		return 0, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'cursor.batchSize' is the wrong type '%s', expected types '[long, int, decimal, double]'", v.Type)
	}
	if n < 0 {
		return 0, mongoerr.New(mongoerr.IDLValueOutOfRange, "BSON field 'batchSize' value must be >= 0, actual value '%d'", n)
	}
	return n, nil
}

func listIndexes(c *Ctx) error {
	a := newArgs(c)
	if err := a.Check("cursor", "includeBuildUUIDs", "includeIndexBuildInfo"); err != nil {
		return err
	}
	name, err := c.CollectionArg()
	if err != nil {
		return err
	}
	batchSize, err := cursorBatchSize(a)
	if err != nil {
		return err
	}
	tx, err := c.ReadSnapshot()
	if err != nil {
		return err
	}
	docs, err := exec.IndexSpecs(tx, c.DB, name)
	tx.Rollback()
	if err != nil {
		return err
	}
	return writeBatch(c, nil, &exec.SliceSource{Docs: docs}, c.DB+"."+name, 0, batchOptions{batchSize: batchSize, firstBatch: true}, false)
}

// listingArgs reads nameOnly and filter, as listDatabases and
// listCollections take them (filter is nil when absent).
func listingArgs(a args) (nameOnly bool, filter *query.Filter, err error) {
	if nameOnly, _, err = a.Boolean("nameOnly"); err != nil {
		return false, nil, err
	}
	if f, ok, err := a.Doc("filter"); err != nil {
		return false, nil, err
	} else if ok {
		if filter, err = query.ParseFilter(f, &query.Options{}); err != nil {
			return false, nil, err
		}
	}
	return nameOnly, filter, nil
}
