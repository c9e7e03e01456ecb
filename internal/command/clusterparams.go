package command

// setClusterParameter and getClusterParameter (internal/params/cluster.go
// reads and answers changeStreamOptions); the value is stored with the
// oplog.

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/oplog"
	"github.com/cairndb/cairn/internal/params"
)

func setClusterParameter(c *Ctx) error {
	a := newArgs(c)
	if err := a.Check(); err != nil {
		return err
	}
	if c.Env.Oplog == nil {
		return mongoerr.New(mongoerr.IllegalOperation, "setClusterParameter cannot be run on standalones")
	}
	first := a.First()
	if first.Type != bson.TypeDocument {
		return a.WrongType("setClusterParameter", first, "object")
	}
	opts, err := params.ParseSetClusterParameter(first.Document())
	if err != nil {
		return err
	}
	l := c.Env.Oplog
	if err := c.WriteTx(exec.Sync, func(tx *exec.Tx) error { return l.SaveChangeStreamOptions(tx, opts) }); err != nil {
		return err
	}
	l.SetPreImageExpiry(oplog.ExpiryOf(opts))
	return nil
}

func getClusterParameter(c *Ctx) error {
	a := newArgs(c)
	if err := a.Check(); err != nil {
		return err
	}
	if c.Env.Oplog == nil {
		return mongoerr.New(mongoerr.IllegalOperation, "getClusterParameter cannot be run on standalones")
	}
	var names []string
	switch first := a.First(); first.Type {
	case bson.TypeString:
		names = []string{first.StringValue()}
	case bson.TypeArray:
		it := first.Document().Iter()
		for it.Next() {
			if it.Element().Value.Type != bson.TypeString {
				return a.WrongType("getClusterParameter", first, "string or array of strings")
			}
			names = append(names, it.Element().Value.StringValue())
		}
	default:
		return a.WrongType("getClusterParameter", first, "string or array of strings")
	}
	if err := params.CheckClusterParameterNames(names); err != nil {
		return err
	}
	tx, err := c.ReadSnapshot()
	if err != nil {
		return err
	}
	opts, err := c.Env.Oplog.LoadChangeStreamOptions(tx)
	if err != nil {
		return err
	}
	params.AppendClusterParameters(c.Reply, opts)
	return nil
}
