package command

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/opctx"
)

func createIndexes(c *Ctx) error {
	if name, err := c.CollectionArg(); err == nil {
		if _, err := timeseriesIndexes(c, name); err != nil {
			return err
		}
	}
	a := newArgs(c)
	if err := a.Check("indexes", "commitQuorum", "ignoreUnknownIndexOptions", "isTimeseriesNamespace"); err != nil {
		return err
	}
	name, err := c.CollectionArg()
	if err != nil {
		return err
	}
	if err := catalog.ValidateCollectionName(c.DB, name); err != nil {
		return err
	}
	wc, err := parseWriteConcern(c)
	if err != nil {
		return err
	}
	arr, ok, err := a.Array("indexes")
	if err != nil {
		return err
	}
	if !ok {
		return mongoerr.New(mongoerr.IDLFailedToParse, "BSON field 'createIndexes.indexes' is missing but a required field")
	}
	def, err := defaultCollation(c, name)
	if err != nil {
		return err
	}
	ignoreUnknown, _, err := a.Boolean("ignoreUnknownIndexOptions")
	if err != nil {
		return err
	}
	specs, err := exec.ParseIndexSpecs(arr, def, ignoreUnknown)
	if err != nil {
		return err
	}
	cancel, err := withMaxTime(c)
	if err != nil {
		return err
	}
	defer cancel()
	if c.Txn != nil {
		if err := c.Env.CheckTxnCreateIndexes(c.DB, name); err != nil {
			return err
		}
	}
	ib := &exec.IndexBuilder{Engine: &c.Env.Engine, Log: c.Env.Log, Hook: c.Env.State.IndexBuildHook}
	for {
		st, err := ib.Start(c, wc.durability(), c.DB, name, specs, c.Txn != nil)
		if err != nil {
			return err
		}
		if st.Wait != "" {
			// Another createIndexes is building it: answer once it is done.
			if err := c.Env.WaitForBuild(c, c.DB, name, st.Wait); err != nil {
				return err
			}
			continue
		}
		if b := st.Build; b != nil {
			// A build of a collection with documents (exec/indexbuild.go),
			// its progress shown in currentOp.
			if op := opctx.Of(c); op != nil {
				op.ShowBuild(&b.Progress)
				defer op.ShowBuild(nil)
			}
			if err := b.Run(c); err != nil {
				return err
			}
		}
		r := c.Reply
		r.AppendInt32("numIndexesBefore", int32(st.Before))
		r.AppendInt32("numIndexesAfter", int32(st.After))
		r.AppendBool("createdCollectionAutomatically", st.Created)
		if st.Note != "" {
			r.AppendString("note", st.Note)
		}
		return nil
	}
}

func dropIndexes(c *Ctx) error {
	a := newArgs(c)
	if err := a.Check("index"); err != nil {
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
	which, ok := a.Lookup("index")
	if !ok {
		return mongoerr.New(mongoerr.IDLFailedToParse, "BSON field 'dropIndexes.index' is missing but a required field")
	}
	if ts, err := timeseriesNamed(c, name); err != nil {
		return err
	} else if ts != nil {
		// The index is the buckets', named or keyed as created.
		name = ts.Buckets.Name
		if which.Type == bson.TypeDocument {
			k, err := ts.Opts.BucketIndexKey(which.Document())
			if err != nil {
				return err
			}
			which = bson.Value{Type: bson.TypeDocument, Data: k}
		}
	}
	was := 0
	err = c.WriteTx(wc.durability(), func(tx *exec.Tx) error {
		was, err = c.Env.DropIndexes(tx, c.DB, name, which)
		return err
	})
	if err != nil {
		return err
	}
	c.Reply.AppendInt32("nIndexesWas", int32(was))
	return nil
}
