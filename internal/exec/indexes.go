package exec

// createIndexes' first transaction and dropIndexes: what they decide
// against the catalog entry (indexbuild.go builds what Start registers).

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/index"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
)

// MaxIndexes is the most indexes a collection may have, as in MongoDB.
const MaxIndexes = 64

// BuildStart is what createIndexes' first transaction decided.
type BuildStart struct {
	Before, After int
	Created       bool
	Note          string
	// Wait names an index another build is building: wait for it
	// (Engine.WaitForBuild) and start again.
	Wait string
	// Build is set when the indexes are registered and must be built
	// (IndexBuild.Run); otherwise they are ready.
	Build *IndexBuild
}

// ParseIndexSpecs reads createIndexes' indexes array: with ignoreUnknown
// the options an index does not have are dropped (ignoreUnknownIndexOptions),
// and an index without a collation takes the collection's default (def,
// nil: none).
func ParseIndexSpecs(arr bson.Doc, def *query.Collation, ignoreUnknown bool) ([]*index.Spec, error) {
	var specs []*index.Spec
	it := arr.Iter()
	for it.Next() {
		v := it.Element().Value
		if v.Type != bson.TypeDocument {
			return nil, mongoerr.New(mongoerr.TypeMismatch, "The elements of the 'indexes' array must be objects, but got %s", v.Type)
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
			return nil, err
		}
		specs = append(specs, s)
	}
	if len(specs) == 0 {
		return nil, mongoerr.New(mongoerr.BadValue, "Must specify at least one index to create")
	}
	return specs, nil
}

// Start validates the requested indexes against db.name (creating it if
// needed) and either builds them at once (an empty collection, or one new
// in the command's multi-document transaction: inTxn) or registers a
// build, in one write transaction of c.
func (ib *IndexBuilder) Start(c BuildCmd, durability Durability, db, name string, specs []*index.Spec, inTxn bool) (*BuildStart, error) {
	st := &BuildStart{}
	oplog := ib.Engine.Oplog
	err := c.WriteTx(durability, func(tx *Tx) error {
		*st = BuildStart{}
		coll, err := catalog.Get(tx, db, name)
		if err != nil {
			return err
		}
		if coll == nil {
			if coll, err = catalog.Create(tx, db, name, nil); err != nil {
				return err
			}
			if err := oplog.Create(tx, coll); err != nil {
				return err
			}
			st.Created = true
		}
		if _, _, view := coll.View(); view {
			return ErrOnView(coll.Namespace())
		}
		st.Before = len(coll.Indexes)
		next := *coll
		next.Indexes = append([]catalog.Index(nil), coll.Indexes...)
		var build []*index.Spec
		for _, s := range specs {
			idKey := len(s.Fields) == 1 && s.Fields[0].Path == "_id" && !s.Fields[0].Desc && !s.Fields[0].Hashed && s.Collation == nil
			if exists, err := coll.ClusteredIndexRequest(idKey, s.Clustered, s.Unique); err != nil || exists {
				if err != nil {
					return err
				}
				continue
			}
			dup, err := existingIndex(next.Indexes, s)
			if err != nil {
				return err
			}
			if dup {
				for _, ix := range next.Indexes {
					if ix.Name == s.Name && !ix.Ready {
						st.Wait = s.Name
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
		if st.Wait != "" {
			return nil
		}
		if len(next.Indexes)+len(build) > MaxIndexes {
			return mongoerr.New(mongoerr.CannotCreateIndex, "add index fails, too many indexes for %s key:%s", coll.Namespace(), specs[0].Key.String())
		}
		st.After = len(next.Indexes) + len(build)
		if len(build) == 0 {
			st.Note = "all indexes already exist"
			return nil
		}
		data, err := DataTree(tx, coll)
		if err != nil {
			return err
		}
		targets := make([]*index.BuildTarget, len(build))
		for i, s := range build {
			targets[i] = &index.BuildTarget{Spec: s, TreeName: next.IndexTree(s.Name)}
		}
		if data.Len() > 0 && !inTxn {
			id, err := newBuildID()
			if err != nil {
				return err
			}
			st.Build = &IndexBuild{DB: db, Coll: name, UUID: coll.UUID, ID: id, Targets: targets, Durability: durability, ib: ib}
			if err := st.Build.Register(tx, &next); err != nil {
				return err
			}
			if err := catalog.Put(tx, &next); err != nil {
				return err
			}
			return st.Build.logStep(tx, "startIndexBuild", &next, nil)
		}
		// Nothing to scan, or a collection new in this multi-document
		// transaction (only its own documents): build and finish now.
		if err := index.BuildAllWith(c, tx, data, next.Namespace(), targets, index.BuildOptions{TempDir: ib.Engine.SpillDir()}); err != nil {
			return mongoerr.FromContext(err)
		}
		for i, s := range build {
			next.Indexes = append(next.Indexes, catalog.Index{Name: s.Name, Spec: s.Raw, Ready: true,
				Multikey: targets[i].Multikey, NumTypes: targets[i].NumTypes})
		}
		if err := catalog.Put(tx, &next); err != nil {
			return err
		}
		for _, s := range build {
			if err := oplog.CreateIndex(tx, &next, s.Raw); err != nil {
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

// CheckTxnCreateIndexes refuses createIndexes in a multi-document
// transaction on a collection that exists outside it, as mongod 4.4+
// (which builds indexes in a transaction only on a collection that is
// new: missing, or created by the transaction itself).
func (e *Engine) CheckTxnCreateIndexes(db, name string) error {
	cur, err := e.Current()
	if err != nil {
		return err
	}
	defer cur.Rollback()
	coll, err := catalog.Get(cur, db, name)
	if err != nil {
		return err
	}
	if coll != nil {
		return mongoerr.New(mongoerr.OperationNotSupportedInTransaction, "Cannot create new indexes on existing collection %s.%s in a multi-document transaction.", db, name)
	}
	return nil
}

// DropIndexes drops the indexes of db.name that which names (dropIndexes'
// index: a name, a key pattern, a list of names, or "*" for every index
// but _id) in tx, logging each drop, and returns how many indexes the
// collection had.
func (e *Engine) DropIndexes(tx *Tx, db, name string, which bson.Value) (int, error) {
	coll, err := catalog.Get(tx, db, name)
	if err != nil {
		return 0, err
	}
	if coll == nil {
		return 0, mongoerr.New(mongoerr.NamespaceNotFound, "ns not found %s.%s", db, name)
	}
	drop, err := indexesToDrop(coll, which)
	if err != nil {
		return 0, err
	}
	next := *coll
	next.Indexes = nil
	for _, ix := range coll.Indexes {
		if drop[ix.Name] {
			if err := coll.DropIndexTrees(tx, ix); err != nil {
				return 0, err
			}
			if err := e.Oplog.DropIndex(tx, coll, ix.Name, ix.Spec); err != nil {
				return 0, err
			}
			continue
		}
		next.Indexes = append(next.Indexes, ix)
	}
	return len(coll.Indexes), catalog.Put(tx, &next)
}

// indexesToDrop resolves dropIndexes' "index".
func indexesToDrop(coll *catalog.Collection, which bson.Value) (map[string]bool, error) {
	drop := map[string]bool{}
	byName := func(n string) error {
		if n == "_id_" && !coll.Clustered() {
			return mongoerr.New(mongoerr.InvalidOptions, "cannot drop _id index")
		}
		for _, ix := range coll.Indexes {
			if ix.Name == n && ix.IsID() && coll.Clustered() {
				return mongoerr.New(mongoerr.ClusteredIndexDrop, "It is illegal to drop the clusteredIndex")
			}
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
				if !ix.IsID() {
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
