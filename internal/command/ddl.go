package command

import (
	"github.com/cairndb/cairn/internal/opctx"
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/oplog"
	"github.com/cairndb/cairn/internal/query"
)

// unsupportedCreateOptions are create options MongoDB has and Cairn does not
// (yet); they are refused rather than ignored.
var unsupportedCreateOptions = map[string]string{
	"pipeline":        "views (a pipeline without viewOn)",
	"encryptedFields": "queryable encryption", "storageEngine": "storage engine options",
	"indexOptionDefaults": "index option defaults", "idIndex": "custom _id indexes",
}

func create(c *Ctx) error {
	name, err := c.collectionArg()
	if err != nil {
		return err
	}
	if _, ok := c.Body.Lookup("viewOn"); ok {
		return createView(c, name)
	}
	if _, ok := c.Body.Lookup("timeseries"); ok {
		return createTimeseries(c, name)
	}
	// The options kept with the collection (listCollections shows them).
	var opts bson.Builder
	var capped cappedCreateOptions
	var clustered catalog.ClusteredOptions
	collated := false
	it := c.Body.Iter()
	it.Next()
	for it.Next() {
		e := it.Element()
		k := e.Key
		if genericFields[k] || k == "flags" || k == "temp" {
			continue
		}
		if ok, err := capped.take(e); ok || err != nil {
			if err != nil {
				return err
			}
			continue
		}
		if ok, err := clustered.TakeClusteredOption(e); ok || err != nil {
			if err != nil {
				return err
			}
			continue
		}
		switch k {
		case "validator", "validationLevel", "validationAction":
			opts.AppendElement(e)
			continue
		case "changeStreamPreAndPostImages":
			if err := checkPreAndPostImages("create", e.Value); err != nil {
				return err
			}
			opts.AppendElement(e)
			continue
		case "collation":
			if e.Value.Type != bson.TypeDocument {
				return mongoerr.New(mongoerr.TypeMismatch, "BSON field 'create.collation' is the wrong type '%s', expected type 'object'", e.Value.Type)
			}
			coll, err := query.ParseCollation(e.Value.Document())
			if err != nil {
				return err
			}
			if coll != nil { // {locale: "simple"} is no default at all
				coll.AppendSpec(&opts, "collation")
				collated = true
			}
			continue
		}
		if what, ok := unsupportedCreateOptions[k]; ok {
			return mongoerr.New(mongoerr.CommandNotSupported, "Cairn does not support %s (create option '%s')", what, k)
		}
		return mongoerr.New(mongoerr.IDLUnknownField, "BSON field 'create.%s' is an unknown field.", k)
	}
	if err := clustered.Check(capped.NoIDIndex, capped.Capped); err != nil {
		return err
	}
	if err := capped.check(c.DB, name); err != nil {
		return err
	}
	clustered.AppendOptions(&opts)
	options := capped.storedOptions(opts.Finish())
	if _, err := exec.ParseValidator(options); err != nil {
		return err
	}
	if options.Len() == 0 {
		options = nil
	}
	wc, err := parseWriteConcern(c)
	if err != nil {
		return err
	}
	if collated {
		c.Env.collations.Note(&c.Env.Engine)
	}
	err = c.writeTx(wc.durability(), func(tx *exec.Tx) error {
		coll, err := catalog.Create(tx, c.DB, name, options)
		if err != nil {
			return err
		}
		return c.Env.Oplog.Create(tx, coll)
	})
	if err == nil && capped.autoIndexID {
		c.Reply.AppendString("note", "The autoIndexId option is deprecated and will be removed in a future release")
	}
	return err
}

func drop(c *Ctx) error {
	if err := newArgs(c).check(); err != nil {
		return err
	}
	name, err := c.collectionArg()
	if err != nil {
		return err
	}
	wc, err := parseWriteConcern(c)
	if err != nil {
		return err
	}
	if c.Env.Oplog != nil && c.DB == oplog.DB && name == oplog.Coll {
		return mongoerr.New(mongoerr.IllegalOperation, "can't drop live oplog while replicating")
	}
	nIndexes := 0
	err = c.writeTx(wc.durability(), func(tx *exec.Tx) error {
		coll, err := catalog.Get(tx, c.DB, name)
		if err != nil || coll == nil {
			return err
		}
		if ts, err := timeseriesOf(tx, coll); err != nil || ts != nil {
			if err == nil {
				nIndexes, err = c.Env.DropTimeseries(tx, ts)
			}
			return err
		}
		nIndexes = len(coll.Indexes)
		if err := catalog.Drop(tx, coll); err != nil {
			return err
		}
		return c.Env.Oplog.Drop(tx, coll)
	})
	if err != nil {
		return err
	}
	if name == opctx.ProfileCollection {
		c.Env.profiler.ForgetSize(c.DB)
	}
	if nIndexes > 0 {
		c.Reply.AppendInt32("nIndexesWas", int32(nIndexes))
		c.Reply.AppendString("ns", c.DB+"."+name)
	}
	return nil
}

func dropDatabase(c *Ctx) error {
	if err := newArgs(c).check(); err != nil {
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
	err = c.writeTx(wc.durability(), func(tx *exec.Tx) error {
		colls, err := catalog.List(tx, c.DB)
		if err != nil {
			return err
		}
		for _, coll := range colls {
			if c.Env.Oplog != nil && coll.Namespace() == oplog.NS {
				continue // the live oplog stays, as mongod's
			}
			if err := catalog.Drop(tx, coll); err != nil {
				return err
			}
			if err := c.Env.Oplog.Drop(tx, coll); err != nil {
				return err
			}
			dropped = true
		}
		if !dropped {
			return nil
		}
		return c.Env.Oplog.DropDatabase(tx, c.DB)
	})
	if err != nil {
		return err
	}
	c.Env.profiler.ForgetSize(c.DB)
	if dropped {
		c.Reply.AppendString("dropped", c.DB)
	}
	return nil
}

func renameCollection(c *Ctx) error {
	a := newArgs(c)
	if err := a.check("to", "dropTarget", "stayTemp"); err != nil {
		return err
	}
	from, ok, err := a.str("renameCollection")
	if err != nil {
		return err
	}
	to, ok2, err := a.str("to")
	if err != nil {
		return err
	}
	if !ok || !ok2 {
		return mongoerr.New(mongoerr.IDLFailedToParse, "BSON field 'renameCollection.to' is missing but a required field")
	}
	dropTarget, _, err := a.boolean("dropTarget")
	if err != nil {
		return err
	}
	stayTemp, _, err := a.boolean("stayTemp")
	if err != nil {
		return err
	}
	split := func(ns string) (string, string, error) {
		db, coll, ok := strings.Cut(ns, ".")
		if !ok || db == "" || coll == "" {
			return "", "", mongoerr.New(mongoerr.InvalidNamespace, "Invalid namespace specified '%s'", ns)
		}
		return db, coll, nil
	}
	fdb, fcoll, err := split(from)
	if err != nil {
		return err
	}
	tdb, tcoll, err := split(to)
	if err != nil {
		return err
	}
	wc, err := parseWriteConcern(c)
	if err != nil {
		return err
	}
	return c.writeTx(wc.durability(), func(tx *exec.Tx) error {
		src, err := catalog.Get(tx, fdb, fcoll)
		if err != nil {
			return err
		}
		if src == nil {
			return mongoerr.New(mongoerr.NamespaceNotFound, "Source collection %s does not exist", from)
		}
		if err := exec.CheckTimeseriesRename(tx, src); err != nil {
			return err
		}
		if from == to {
			return mongoerr.New(mongoerr.IllegalOperation, "Can't rename a collection to itself")
		}
		dst, err := catalog.Get(tx, tdb, tcoll)
		if err != nil {
			return err
		}
		var dropped *[16]byte
		if dst != nil {
			if !dropTarget {
				return mongoerr.New(mongoerr.NamespaceExists, "target namespace exists")
			}
			if err := catalog.Drop(tx, dst); err != nil {
				return err
			}
			dropped = &dst.UUID
		}
		if _, err = catalog.Rename(tx, src, tdb, tcoll); err != nil {
			return err
		}
		return c.Env.Oplog.Rename(tx, src, to, stayTemp, dropped)
	})
}

// collMod changes a collection's validation options and an index's
// hidden and expireAfterSeconds.
func collMod(c *Ctx) error {
	name, err := c.collectionArg()
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
	var change, logged []bson.Element
	var indexChange bson.Doc
	it := c.Body.Iter()
	it.Next()
	for it.Next() {
		e := it.Element()
		if !genericFields[e.Key] {
			logged = append(logged, e)
		}
		switch {
		case genericFields[e.Key]:
		case e.Key == "validator" || e.Key == "validationLevel" || e.Key == "validationAction":
			change = append(change, e)
		case e.Key == "changeStreamPreAndPostImages":
			if err := checkPreAndPostImages("collMod", e.Value); err != nil {
				return err
			}
			change = append(change, e)
		case e.Key == "index":
			if e.Value.Type != bson.TypeDocument {
				return mongoerr.New(mongoerr.TypeMismatch, "BSON field 'collMod.index' is the wrong type '%s', expected type 'object'", e.Value.Type)
			}
			indexChange = e.Value.Document()
		default:
			return mongoerr.New(mongoerr.InvalidOptions, "collMod option '%s' is not supported by Cairn", e.Key)
		}
	}
	return c.writeTx(wc.durability(), func(tx *exec.Tx) error {
		coll, err := catalog.Get(tx, c.DB, name)
		if err != nil {
			return err
		}
		if coll == nil {
			return mongoerr.New(mongoerr.NamespaceNotFound, "ns does not exist: %s.%s", c.DB, name)
		}
		next := *coll
		if len(change) > 0 {
			var b bson.Builder
			if len(coll.Options) > 0 {
				oit := coll.Options.Iter()
				for oit.Next() {
					replaced := false
					for _, ch := range change {
						replaced = replaced || ch.Key == oit.Element().Key
					}
					if !replaced {
						b.AppendElement(oit.Element())
					}
				}
			}
			for _, ch := range change {
				b.AppendElement(ch)
			}
			next.Options = b.Finish()
			if _, err := exec.ParseValidator(next.Options); err != nil {
				return err
			}
		}
		if indexChange != nil {
			if err := exec.ModifyIndex(tx, &next, indexChange); err != nil {
				return err
			}
		}
		if err := catalog.Put(tx, &next); err != nil {
			return err
		}
		return c.Env.Oplog.CollMod(tx, &next, logged)
	})
}

// checkPreAndPostImages checks a changeStreamPreAndPostImages option:
// {enabled: <bool>}, as mongod's IDL.
func checkPreAndPostImages(cmd string, v bson.Value) error {
	if v.Type != bson.TypeDocument {
		return mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s.changeStreamPreAndPostImages' is the wrong type '%s', expected type 'object'", cmd, v.Type)
	}
	enabled := false
	it := v.Document().Iter()
	for it.Next() {
		e := it.Element()
		if e.Key != "enabled" {
			return mongoerr.New(mongoerr.IDLUnknownField, "BSON field '%s.changeStreamPreAndPostImages.%s' is an unknown field.", cmd, e.Key)
		}
		if e.Value.Type != bson.TypeBoolean {
			return mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s.changeStreamPreAndPostImages.enabled' is the wrong type '%s', expected type 'bool'", cmd, e.Value.Type)
		}
		enabled = true
	}
	if !enabled {
		return mongoerr.New(mongoerr.IDLFailedToParse, "BSON field '%s.changeStreamPreAndPostImages.enabled' is missing but a required field", cmd)
	}
	return nil
}
