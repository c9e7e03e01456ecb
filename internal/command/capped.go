package command

// Capped collections' DDL: create's capped, size and max options (as
// mongod 7.0 checks and rounds them), convertToCapped and
// cloneCollectionAsCapped. The storage layout is catalog/capped.go's, the
// writes exec/capped.go's.

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// maxCappedSize is mongod's limit on a capped collection's size (1 PB).
const maxCappedSize = 1 << 50

// cappedCreateOptions are create's capped options as given.
type cappedCreateOptions struct {
	capped, hasSize, hasMax bool
	size, max               int64
	// noIDIndex is autoIndexId: false; autoIndexID records that the
	// (deprecated) option was given at all.
	noIDIndex, autoIndexID bool
}

// take reads one of create's capped options (ok=false: not one).
func (o *cappedCreateOptions) take(e bson.Element) (bool, error) {
	num := func() (int64, error) {
		n, err := numberArg(e.Value)
		if err != nil {
			return 0, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'create.%s' is the wrong type '%s', expected types '[long, int, decimal, double]'", e.Key, e.Value.Type)
		}
		return n, nil
	}
	var err error
	switch e.Key {
	case "capped":
		switch e.Value.Type {
		case bson.TypeBoolean, bson.TypeInt32, bson.TypeInt64, bson.TypeDouble, bson.TypeDecimal128:
			o.capped = e.Value.Truthy()
		default:
			return true, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'create.capped' is the wrong type '%s', expected types '[bool, long, int, decimal, double]'", e.Value.Type)
		}
	case "size":
		o.hasSize = true
		if o.size, err = num(); err != nil {
			return true, err
		}
		if o.size < 1 {
			return true, mongoerr.New(mongoerr.IDLValueOutOfRange, "BSON field 'size' value must be >= 1, actual value '%d'", o.size)
		}
		if o.size > maxCappedSize {
			return true, mongoerr.New(mongoerr.BadValue, "size cannot exceed 1 PB")
		}
	case "max":
		o.hasMax = true
		if o.max, err = num(); err != nil {
			return true, err
		}
		if o.max >= 1<<31 {
			return true, mongoerr.New(mongoerr.BadValue, "max in a capped collection has to be < 2^31 or not set")
		}
	case "autoIndexId":
		o.autoIndexID = true
		o.noIDIndex = !e.Value.Truthy()
	default:
		return false, nil
	}
	return true, nil
}

// check applies mongod's rules between the options for db.name.
func (o *cappedCreateOptions) check(db, name string) error {
	if o.capped && !o.hasSize {
		return mongoerr.New(mongoerr.InvalidOptions, "the 'size' field is required when 'capped' is true")
	}
	if (o.hasSize || o.hasMax) && !o.capped {
		return mongoerr.New(mongoerr.InvalidOptions, "the 'capped' field needs to be true when either the 'size' or 'max' fields are present")
	}
	if db == "local" && name == "oplog.rs" {
		o.noIDIndex = true // the oplog has no _id index (mongod's requiresIdIndex)
	}
	if o.noIDIndex {
		if db != "local" {
			return mongoerr.New(mongoerr.AutoIndexIDReplicated, "autoIndexId:false is not allowed for collection %s.%s because it can be replicated", db, name)
		}
		if !o.capped {
			// An ordinary collection's data tree is its _id index.
			return mongoerr.New(mongoerr.CommandNotSupported, "Cairn supports autoIndexId: false only for capped collections")
		}
	}
	return nil
}

// cappedSize rounds a capped collection's size up to a multiple of 256
// bytes, as mongod 7.0.
func cappedSize(n int64) int64 { return (n + 0xff) &^ 0xff }

// storedOptions is the options document kept for the collection: capped,
// size and max first, then the others.
func (o *cappedCreateOptions) storedOptions(rest bson.Doc) bson.Doc {
	if !o.capped {
		return rest
	}
	max := o.max
	if max < 0 {
		max = 0
	}
	opts := catalog.CappedOptions(cappedSize(o.size), max, rest)
	if o.noIDIndex {
		var b bson.Builder
		it := opts.Iter()
		for it.Next() {
			b.AppendElement(it.Element())
		}
		b.AppendBool("autoIndexId", false)
		opts = b.Finish()
	}
	return opts
}

// copyCapped creates the capped collection db.name of size bytes holding
// src's documents in their order (the oldest removed if they do not fit),
// with src's other options and an _id index, in tx.
func copyCapped(tx *exec.Tx, src *catalog.Collection, db, name string, size int64) (*catalog.Collection, error) {
	dst, err := catalog.Create(tx, db, name, catalog.CappedOptions(cappedSize(size), 0, src.Options))
	if err != nil {
		return nil, err
	}
	w, err := exec.OpenWriter(tx, dst)
	if err != nil {
		return nil, err
	}
	w.Bypass = true
	data, err := exec.DataTree(tx, src)
	if err != nil {
		return nil, err
	}
	cur := data.Cursor()
	for k, v := cur.First(); k != nil; k, v = cur.Next() {
		if _, _, err := w.Insert(bson.Doc(v)); err != nil {
			return nil, err
		}
	}
	if err := cur.Err(); err != nil {
		return nil, err
	}
	return w.Coll, nil
}

// cappedSizeArg reads the size argument of convertToCapped or
// cloneCollectionAsCapped.
func cappedSizeArg(a args, cmd string) (int64, error) {
	v, ok := a.lookup("size")
	if !ok {
		return 0, mongoerr.New(mongoerr.IDLFailedToParse, "BSON field '%s.size' is missing but a required field", cmd)
	}
	if !v.IsNumber() {
		return 0, mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s.size' is the wrong type '%s', expected types '[long, int, decimal, double]'", cmd, v.Type)
	}
	f, _ := v.AsFloat64()
	if f > maxCappedSize || f < -maxCappedSize {
		return 0, mongoerr.New(mongoerr.BadValue, "size cannot exceed 1 PB")
	}
	n, err := numberArg(v)
	if err != nil {
		return 0, mongoerr.New(mongoerr.BadValue, "invalid size: %s", v.String())
	}
	if n < 0 {
		return 0, mongoerr.New(mongoerr.BadValue, "size has to be >= 0")
	}
	return n, nil
}

func convertToCapped(c *Ctx) error {
	a := newArgs(c)
	if err := a.check("size"); err != nil {
		return err
	}
	name, err := c.collectionArg()
	if err != nil {
		return err
	}
	size, err := cappedSizeArg(a, "convertToCapped")
	if err != nil {
		return err
	}
	wc, err := parseWriteConcern(c)
	if err != nil {
		return err
	}
	return c.writeTx(wc.durability(), func(tx *exec.Tx) error {
		src, err := cappedSource(tx, c.DB, name)
		if err != nil {
			return err
		}
		tmp := "tmp.convertToCapped." + name
		if err := catalog.ValidateCollectionName(c.DB, tmp); err != nil {
			return err
		}
		dst, err := copyCapped(tx, src, c.DB, tmp, size)
		if err != nil {
			return err
		}
		if err := catalog.Drop(tx, src); err != nil {
			return err
		}
		_, err = catalog.Rename(tx, dst, c.DB, name)
		return err
	})
}

func cloneCollectionAsCapped(c *Ctx) error {
	a := newArgs(c)
	if err := a.check("toCollection", "size", "temp"); err != nil {
		return err
	}
	from, err := c.collectionArg()
	if err != nil {
		return err
	}
	to, ok, err := a.str("toCollection")
	if err != nil {
		return err
	}
	if !ok {
		return mongoerr.New(mongoerr.IDLFailedToParse, "BSON field 'cloneCollectionAsCapped.toCollection' is missing but a required field")
	}
	size, err := cappedSizeArg(a, "cloneCollectionAsCapped")
	if err != nil {
		return err
	}
	wc, err := parseWriteConcern(c)
	if err != nil {
		return err
	}
	return c.writeTx(wc.durability(), func(tx *exec.Tx) error {
		src, err := cappedSource(tx, c.DB, from)
		if err != nil {
			return err
		}
		if dst, err := catalog.Get(tx, c.DB, to); err != nil {
			return err
		} else if dst != nil {
			return mongoerr.New(mongoerr.NamespaceExists, "collection already exists %s.%s", c.DB, to)
		}
		_, err = copyCapped(tx, src, c.DB, to, size)
		return err
	})
}

// cappedSource returns the collection convertToCapped or
// cloneCollectionAsCapped copies: it must exist and not be a view.
func cappedSource(tx *exec.Tx, db, name string) (*catalog.Collection, error) {
	src, err := catalog.Get(tx, db, name)
	if err != nil {
		return nil, err
	}
	if src == nil {
		return nil, mongoerr.New(mongoerr.NamespaceNotFound, "source collection %s.%s does not exist", db, name)
	}
	if _, _, view := src.View(); view {
		return nil, exec.ErrOnView(src.Namespace())
	}
	return src, nil
}
