package command

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/index"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// maxIndexes is the most indexes a collection may have, as in MongoDB.
const maxIndexes = 64

func createIndexes(c *Ctx) error {
	a := newArgs(c)
	if err := a.check("indexes", "commitQuorum", "ignoreUnknownIndexOptions", "isTimeseriesNamespace"); err != nil {
		return err
	}
	name, err := c.collectionArg()
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
	arr, ok, err := a.array("indexes")
	if err != nil {
		return err
	}
	if !ok {
		return mongoerr.New(mongoerr.IDLFailedToParse, "BSON field 'createIndexes.indexes' is missing but a required field")
	}
	def, err := c.defaultCollation(name)
	if err != nil {
		return err
	}
	ignoreUnknown, _, err := a.boolean("ignoreUnknownIndexOptions")
	if err != nil {
		return err
	}
	var specs []*index.Spec
	it := arr.Iter()
	for it.Next() {
		v := it.Element().Value
		if v.Type != bson.TypeDocument {
			return mongoerr.New(mongoerr.TypeMismatch, "The elements of the 'indexes' array must be objects, but got %s", v.Type)
		}
		d := v.Document()
		if ignoreUnknown {
			var b bson.Builder
			ei := d.Iter()
			for ei.Next() {
				if index.IsIndexOption(ei.Element().Key) {
					b.AppendElement(ei.Element())
				}
			}
			d = b.Finish()
		}
		if _, ok := d.Lookup("collation"); !ok && def != nil {
			// An index without a collation takes the collection's.
			var b bson.Builder
			ei := d.Iter()
			for ei.Next() {
				b.AppendElement(ei.Element())
			}
			def.AppendSpec(&b, "collation")
			d = b.Finish()
		}
		s, err := index.Parse(d)
		if err != nil {
			return err
		}
		specs = append(specs, s)
	}
	if len(specs) == 0 {
		return mongoerr.New(mongoerr.BadValue, "Must specify at least one index to create")
	}
	cancel, err := withMaxTime(c)
	if err != nil {
		return err
	}
	defer cancel()
	if c.txn != nil {
		if err := checkTxnCreateIndexes(c, name); err != nil {
			return err
		}
	}
	for {
		st, err := startIndexBuild(c, wc.durability(), name, specs)
		if err != nil {
			return err
		}
		if st.wait != "" {
			// Another createIndexes is building it: answer once it is done.
			if err := waitForBuild(c, name, st.wait); err != nil {
				return err
			}
			continue
		}
		if st.build != nil {
			if err := st.build.run(c); err != nil {
				return err
			}
		}
		r := c.Reply
		r.AppendInt32("numIndexesBefore", int32(st.before))
		r.AppendInt32("numIndexesAfter", int32(st.after))
		r.AppendBool("createdCollectionAutomatically", st.created)
		if st.note != "" {
			r.AppendString("note", st.note)
		}
		return nil
	}
}

// buildStart is what createIndexes' first transaction decided.
type buildStart struct {
	before, after int
	created       bool
	note          string
	// wait names an index another build is building: wait for it and
	// start again.
	wait string
	// build is set when the indexes are registered and must be built
	// (indexbuild.go); otherwise they are ready.
	build *indexBuild
}

// startIndexBuild validates the requested indexes against the collection
// (creating it if needed) and either builds them at once (an empty
// collection) or registers a build (indexbuild.go), in one transaction.
func startIndexBuild(c *Ctx, durability exec.Durability, name string, specs []*index.Spec) (*buildStart, error) {
	st := &buildStart{}
	err := c.writeTx(durability, func(tx *exec.Tx) error {
		*st = buildStart{}
		coll, err := catalog.Get(tx, c.DB, name)
		if err != nil {
			return err
		}
		if coll == nil {
			if coll, err = catalog.Create(tx, c.DB, name, nil); err != nil {
				return err
			}
			if err := c.Env.Oplog.Create(tx, coll); err != nil {
				return err
			}
			st.created = true
		}
		if _, _, view := coll.View(); view {
			return exec.ErrOnView(coll.Namespace())
		}
		st.before = len(coll.Indexes)
		next := *coll
		next.Indexes = append([]catalog.Index(nil), coll.Indexes...)
		var build []*index.Spec
		for _, s := range specs {
			dup, err := existingIndex(next.Indexes, s)
			if err != nil {
				return err
			}
			if dup {
				for _, ix := range next.Indexes {
					if ix.Name == s.Name && !ix.Ready {
						st.wait = s.Name
					}
				}
				continue
			}
			if err := oneTextIndex(next.Indexes, s); err != nil {
				return err
			}
			if coll.Capped && s.ExpireAfterSeconds >= 0 {
				return mongoerr.New(mongoerr.CannotCreateIndex, "Cannot create TTL index on a capped collection")
			}
			for _, b := range build {
				if b.Name == s.Name {
					return mongoerr.New(mongoerr.IndexKeySpecsConflict, "Index with name: %s already exists with a different definition", s.Name)
				}
			}
			build = append(build, s)
		}
		if st.wait != "" {
			return nil
		}
		if len(next.Indexes)+len(build) > maxIndexes {
			return mongoerr.New(mongoerr.CannotCreateIndex, "add index fails, too many indexes for %s key:%s", coll.Namespace(), specs[0].Key.String())
		}
		st.after = len(next.Indexes) + len(build)
		if len(build) == 0 {
			st.note = "all indexes already exist"
			return nil
		}
		data, err := exec.DataTree(tx, coll)
		if err != nil {
			return err
		}
		targets := make([]*index.BuildTarget, len(build))
		for i, s := range build {
			targets[i] = &index.BuildTarget{Spec: s, TreeName: next.IndexTree(s.Name)}
		}
		if data.Len() > 0 && c.txn == nil {
			id, err := newBuildID()
			if err != nil {
				return err
			}
			st.build = &indexBuild{db: c.DB, coll: name, uuid: coll.UUID, id: id, targets: targets, durability: durability}
			if err := st.build.register(tx, &next); err != nil {
				return err
			}
			if err := catalog.Put(tx, &next); err != nil {
				return err
			}
			return st.build.logStep(c, tx, "startIndexBuild", &next, nil)
		}
		// Nothing to scan, or a collection new in this multi-document
		// transaction (only its own documents): build and finish now.
		if err := index.BuildAllWith(c, tx, data, next.Namespace(), targets, index.BuildOptions{TempDir: c.Env.tempDir()}); err != nil {
			return ctxErr(err)
		}
		for _, s := range build {
			next.Indexes = append(next.Indexes, catalog.Index{Name: s.Name, Spec: s.Raw, Ready: true})
		}
		if err := catalog.Put(tx, &next); err != nil {
			return err
		}
		for _, s := range build {
			if err := c.Env.Oplog.CreateIndex(tx, &next, s.Raw); err != nil {
				return err
			}
		}
		return nil
	})
	return st, err
}

// existingIndex reports whether s already exists (same name and
// definition); a name or key reused with another definition is MongoDB's
// conflict error.
func existingIndex(have []catalog.Index, s *index.Spec) (bool, error) {
	for _, ix := range have {
		old, err := index.ParseCached(ix.Spec)
		if err != nil {
			return false, err
		}
		same := index.SameDefinition(old, s)
		switch {
		case ix.Name == s.Name && same:
			return true, nil
		case ix.Name == s.Name:
			return false, mongoerr.New(mongoerr.IndexKeySpecsConflict, "An existing index has the same name as the requested index. When index names are not specified, they are auto generated and can cause conflicts. Please refer to our documentation. Requested index: %s, existing index: %s", s.Raw.String(), ix.Spec.String())
		case same:
			return false, mongoerr.New(mongoerr.IndexOptionsConflict, "Index already exists with a different name: %s", ix.Name)
		}
	}
	return false, nil
}

// oneTextIndex refuses a second text index on a collection, as MongoDB.
func oneTextIndex(have []catalog.Index, s *index.Spec) error {
	if s.Text == nil {
		return nil
	}
	for _, ix := range have {
		old, err := index.ParseCached(ix.Spec)
		if err != nil {
			return err
		}
		if old.Text != nil {
			return mongoerr.New(mongoerr.CannotCreateIndex, "only one text index per collection allowed, found existing text index \"%s\"", ix.Name)
		}
	}
	return nil
}

func dropIndexes(c *Ctx) error {
	a := newArgs(c)
	if err := a.check("index"); err != nil {
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
	which, ok := a.lookup("index")
	if !ok {
		return mongoerr.New(mongoerr.IDLFailedToParse, "BSON field 'dropIndexes.index' is missing but a required field")
	}
	was := 0
	err = c.writeTx(wc.durability(), func(tx *exec.Tx) error {
		coll, err := catalog.Get(tx, c.DB, name)
		if err != nil {
			return err
		}
		if coll == nil {
			return mongoerr.New(mongoerr.NamespaceNotFound, "ns not found %s.%s", c.DB, name)
		}
		was = len(coll.Indexes)
		drop, err := indexesToDrop(coll, which)
		if err != nil {
			return err
		}
		next := *coll
		next.Indexes = nil
		for _, ix := range coll.Indexes {
			if drop[ix.Name] {
				if err := coll.DropIndexTrees(tx, ix); err != nil {
					return err
				}
				if err := c.Env.Oplog.DropIndex(tx, coll, ix.Name, ix.Spec); err != nil {
					return err
				}
				continue
			}
			next.Indexes = append(next.Indexes, ix)
		}
		return catalog.Put(tx, &next)
	})
	if err != nil {
		return err
	}
	c.Reply.AppendInt32("nIndexesWas", int32(was))
	return nil
}

// indexesToDrop resolves dropIndexes' "index": a name, a key pattern, a
// list of names, or "*" (every index but _id).
func indexesToDrop(coll *catalog.Collection, which bson.Value) (map[string]bool, error) {
	drop := map[string]bool{}
	byName := func(n string) error {
		if n == "_id_" {
			return mongoerr.New(mongoerr.InvalidOptions, "cannot drop _id index")
		}
		for _, ix := range coll.Indexes {
			if ix.Name == n {
				drop[n] = true
				return nil
			}
		}
		return mongoerr.New(mongoerr.IndexNotFound, "index not found with name [%s]", n)
	}
	switch which.Type {
	case bson.TypeString:
		if which.StringValue() == "*" {
			for _, ix := range coll.Indexes {
				if ix.Name != "_id_" {
					drop[ix.Name] = true
				}
			}
			return drop, nil
		}
		return drop, byName(which.StringValue())
	case bson.TypeArray:
		it := which.Document().Iter()
		for it.Next() {
			v := it.Element().Value
			if v.Type != bson.TypeString {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "dropIndexes 'index' array must contain strings, found %s", v.Type)
			}
			if err := byName(v.StringValue()); err != nil {
				return nil, err
			}
		}
		return drop, nil
	case bson.TypeDocument:
		var found []string
		for _, ix := range coll.Indexes {
			if key, ok := ix.Spec.Lookup("key"); ok && bson.Equal(key, which) {
				found = append(found, ix.Name)
			}
		}
		switch len(found) {
		case 0:
			return nil, mongoerr.New(mongoerr.IndexNotFound, "can't find index with key: %s", which.Document().String())
		case 1:
			return drop, byName(found[0])
		}
		return nil, mongoerr.New(mongoerr.BadValue, "%d indexes found for key: %s, identify by name instead. Conflicting indexes: %v", len(found), which.Document().String(), found)
	}
	return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'dropIndexes.index' is the wrong type '%s', expected types '[string, object, array]'", which.Type)
}

// checkTxnCreateIndexes refuses createIndexes in a multi-document
// transaction on a collection that exists outside it, as mongod 4.4+
// (which builds indexes in a transaction only on a collection that is
// new: missing, or created by the transaction itself).
func checkTxnCreateIndexes(c *Ctx, name string) error {
	cur, err := c.currentTx()
	if err != nil {
		return err
	}
	defer cur.Rollback()
	coll, err := catalog.Get(cur, c.DB, name)
	if err != nil {
		return err
	}
	if coll != nil {
		return mongoerr.New(mongoerr.OperationNotSupportedInTransaction, "Cannot create new indexes on existing collection %s.%s in a multi-document transaction.", c.DB, name)
	}
	return nil
}
