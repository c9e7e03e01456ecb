package exec

// Collections' DDL: create's options (as mongod 7.0's IDL reads them),
// drop, dropDatabase, renameCollection and collMod, each run in the
// write transaction the command hands in, with its oplog entry written
// in that same transaction. Capped collections' options are
// capped_ddl.go's, views' view_ddl.go's, index changes collmod_index.go's.

import (
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
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

// CreateOptions are a collection's create options, parsed.
type CreateOptions struct {
	// Stored is the options document kept with the collection
	// (listCollections shows it); nil when there are none.
	Stored bson.Doc
	// Collated: the collection has a default collation.
	Collated bool
	// AutoIndexID: the deprecated autoIndexId option was given (the
	// reply then carries a note).
	AutoIndexID bool
}

// ParseCreateOptions reads create's options for collection db.name from
// the command's body (its first field is the name); generic reports the
// fields every command may carry, which are skipped.
func ParseCreateOptions(db, name string, body bson.Doc, generic func(string) bool) (*CreateOptions, error) {
	var opts bson.Builder
	var capped CappedCreateOptions
	var clustered catalog.ClusteredOptions
	out := &CreateOptions{}
	it := body.Iter()
	it.Next()
	for it.Next() {
		e := it.Element()
		k := e.Key
		if generic(k) || k == "flags" || k == "temp" {
			continue
		}
		if ok, err := capped.Take(e); ok || err != nil {
			if err != nil {
				return nil, err
			}
			continue
		}
		if ok, err := clustered.TakeClusteredOption(e); ok || err != nil {
			if err != nil {
				return nil, err
			}
			continue
		}
		switch k {
		case "validator", "validationLevel", "validationAction":
			opts.AppendElement(e)
			continue
		case "changeStreamPreAndPostImages":
			if err := CheckPreAndPostImages("create", e.Value); err != nil {
				return nil, err
			}
			opts.AppendElement(e)
			continue
		case "collation":
			if e.Value.Type != bson.TypeDocument {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'create.collation' is the wrong type '%s', expected type 'object'", e.Value.Type)
			}
			coll, err := query.ParseCollation(e.Value.Document())
			if err != nil {
				return nil, err
			}
			if coll != nil { // {locale: "simple"} is no default at all
				coll.AppendSpec(&opts, "collation")
				out.Collated = true
			}
			continue
		}
		if what, ok := unsupportedCreateOptions[k]; ok {
			return nil, mongoerr.New(mongoerr.CommandNotSupported, "Cairn does not support %s (create option '%s')", what, k)
		}
		return nil, mongoerr.New(mongoerr.IDLUnknownField, "BSON field 'create.%s' is an unknown field.", k)
	}
	if err := clustered.Check(capped.NoIDIndex, capped.Capped); err != nil {
		return nil, err
	}
	if err := capped.Check(db, name); err != nil {
		return nil, err
	}
	clustered.AppendOptions(&opts)
	out.Stored = capped.StoredOptions(opts.Finish())
	if _, err := ParseValidator(out.Stored); err != nil {
		return nil, err
	}
	if out.Stored.Len() == 0 {
		out.Stored = nil
	}
	out.AutoIndexID = capped.AutoIndexID
	return out, nil
}

// CreateCollection creates db.name with options in tx.
func (e *Engine) CreateCollection(tx *Tx, db, name string, options bson.Doc) error {
	coll, err := catalog.Create(tx, db, name, options)
	if err != nil {
		return err
	}
	return e.Oplog.Create(tx, coll)
}

// CheckDropCollection refuses to drop the live oplog.
func (e *Engine) CheckDropCollection(db, name string) error {
	if e.Oplog != nil && db == oplog.DB && name == oplog.Coll {
		return mongoerr.New(mongoerr.IllegalOperation, "can't drop live oplog while replicating")
	}
	return nil
}

// DropCollection drops db.name in tx, if it exists, and reports how many
// indexes it had (0: none, or no collection).
func (e *Engine) DropCollection(tx *Tx, db, name string) (int, error) {
	coll, err := catalog.Get(tx, db, name)
	if err != nil || coll == nil {
		return 0, err
	}
	if ts, err := TimeseriesOfCollection(tx, coll); err != nil || ts != nil {
		if err != nil {
			return 0, err
		}
		return e.DropTimeseries(tx, ts) // the view and its buckets go together
	}
	if err := catalog.Drop(tx, coll); err != nil {
		return 0, err
	}
	return len(coll.Indexes), e.Oplog.Drop(tx, coll)
}

// DropDatabase drops every collection of db in tx but the live oplog, and
// reports whether it dropped any.
func (e *Engine) DropDatabase(tx *Tx, db string) (bool, error) {
	colls, err := catalog.List(tx, db)
	if err != nil {
		return false, err
	}
	dropped := false
	for _, coll := range colls {
		if e.Oplog != nil && coll.Namespace() == oplog.NS {
			continue // the live oplog stays, as mongod's
		}
		if err := catalog.Drop(tx, coll); err != nil {
			return false, err
		}
		if err := e.Oplog.Drop(tx, coll); err != nil {
			return false, err
		}
		dropped = true
	}
	if !dropped {
		return false, nil
	}
	return true, e.Oplog.DropDatabase(tx, db)
}

// SplitNamespace splits "db.collection" (InvalidNamespace if either part
// is missing).
func SplitNamespace(ns string) (string, string, error) {
	db, coll, ok := strings.Cut(ns, ".")
	if !ok || db == "" || coll == "" {
		return "", "", mongoerr.New(mongoerr.InvalidNamespace, "Invalid namespace specified '%s'", ns)
	}
	return db, coll, nil
}

// Rename is a renameCollection request: the namespaces, and its options.
type Rename struct {
	From, To             string
	DropTarget, StayTemp bool
}

// RenameCollection renames r.From to r.To in tx, dropping an existing
// target when r.DropTarget.
func (e *Engine) RenameCollection(tx *Tx, r Rename) error {
	fdb, fcoll, err := SplitNamespace(r.From)
	if err != nil {
		return err
	}
	tdb, tcoll, err := SplitNamespace(r.To)
	if err != nil {
		return err
	}
	src, err := catalog.Get(tx, fdb, fcoll)
	if err != nil {
		return err
	}
	if src == nil {
		return mongoerr.New(mongoerr.NamespaceNotFound, "Source collection %s does not exist", r.From)
	}
	if err := CheckTimeseriesRename(tx, src); err != nil {
		return err
	}
	if r.From == r.To {
		return mongoerr.New(mongoerr.IllegalOperation, "Can't rename a collection to itself")
	}
	dst, err := catalog.Get(tx, tdb, tcoll)
	if err != nil {
		return err
	}
	var dropped *[16]byte
	if dst != nil {
		if !r.DropTarget {
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
	return e.Oplog.Rename(tx, src, r.To, r.StayTemp, dropped)
}

// CollModChange is what a collMod changes: collection options replaced
// (validator, validationLevel, validationAction,
// changeStreamPreAndPostImages), an index's options (Index), and the
// fields its oplog entry logs.
type CollModChange struct {
	Options []bson.Element
	Index   bson.Doc
	Logged  []bson.Element
}

// ParseCollMod reads collMod's body (its first field names the
// collection); generic reports the fields every command may carry.
func ParseCollMod(body bson.Doc, generic func(string) bool) (*CollModChange, error) {
	ch := &CollModChange{}
	it := body.Iter()
	it.Next()
	for it.Next() {
		e := it.Element()
		if generic(e.Key) {
			continue
		}
		ch.Logged = append(ch.Logged, e)
		switch e.Key {
		case "validator", "validationLevel", "validationAction":
			ch.Options = append(ch.Options, e)
		case "changeStreamPreAndPostImages":
			if err := CheckPreAndPostImages("collMod", e.Value); err != nil {
				return nil, err
			}
			ch.Options = append(ch.Options, e)
		case "index":
			if e.Value.Type != bson.TypeDocument {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'collMod.index' is the wrong type '%s', expected type 'object'", e.Value.Type)
			}
			ch.Index = e.Value.Document()
		default:
			return nil, mongoerr.New(mongoerr.InvalidOptions, "collMod option '%s' is not supported by Cairn", e.Key)
		}
	}
	return ch, nil
}

// CollMod applies ch to db.name in tx.
func (e *Engine) CollMod(tx *Tx, db, name string, ch *CollModChange) error {
	coll, err := catalog.Get(tx, db, name)
	if err != nil {
		return err
	}
	if coll == nil {
		return mongoerr.New(mongoerr.NamespaceNotFound, "ns does not exist: %s.%s", db, name)
	}
	next := *coll
	if len(ch.Options) > 0 {
		var b bson.Builder
		if len(coll.Options) > 0 {
			oit := coll.Options.Iter()
			for oit.Next() {
				replaced := false
				for _, o := range ch.Options {
					replaced = replaced || o.Key == oit.Element().Key
				}
				if !replaced {
					b.AppendElement(oit.Element())
				}
			}
		}
		for _, o := range ch.Options {
			b.AppendElement(o)
		}
		next.Options = b.Finish()
		if _, err := ParseValidator(next.Options); err != nil {
			return err
		}
	}
	if ch.Index != nil {
		if err := ModifyIndex(tx, &next, ch.Index); err != nil {
			return err
		}
	}
	if err := catalog.Put(tx, &next); err != nil {
		return err
	}
	return e.Oplog.CollMod(tx, &next, ch.Logged)
}

// CheckPreAndPostImages checks a changeStreamPreAndPostImages option of
// cmd: {enabled: <bool>}, as mongod's IDL.
func CheckPreAndPostImages(cmd string, v bson.Value) error {
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
