package exec

// Capped collections' DDL: create's capped, size and max options (as
// mongod 7.0 checks and rounds them), convertToCapped and
// cloneCollectionAsCapped. The storage layout is catalog/capped.go's, the
// writes capped.go's.

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
)

// MaxCappedSize is mongod's limit on a capped collection's size (1 PB).
const MaxCappedSize = 1 << 50

// CappedCreateOptions are create's capped options as given.
type CappedCreateOptions struct {
	Capped, HasSize, HasMax bool
	Size, Max               int64
	// NoIDIndex is autoIndexId: false; AutoIndexID records that the
	// (deprecated) option was given at all.
	NoIDIndex, AutoIndexID bool
}

// Take reads one of create's capped options (ok=false: not one).
func (o *CappedCreateOptions) Take(e bson.Element) (bool, error) {
	num := func() (int64, error) {
		n, err := query.SafeInt64(e.Value)
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
			o.Capped = e.Value.Truthy()
		default:
			return true, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'create.capped' is the wrong type '%s', expected types '[bool, long, int, decimal, double]'", e.Value.Type)
		}
	case "size":
		o.HasSize = true
		if o.Size, err = num(); err != nil {
			return true, err
		}
		if o.Size < 1 {
			return true, mongoerr.New(mongoerr.IDLValueOutOfRange, "BSON field 'size' value must be >= 1, actual value '%d'", o.Size)
		}
		if o.Size > MaxCappedSize {
			return true, mongoerr.New(mongoerr.BadValue, "size cannot exceed 1 PB")
		}
	case "max":
		o.HasMax = true
		if o.Max, err = num(); err != nil {
			return true, err
		}
		if o.Max >= 1<<31 {
			return true, mongoerr.New(mongoerr.BadValue, "max in a capped collection has to be < 2^31 or not set")
		}
	case "autoIndexId":
		o.AutoIndexID = true
		o.NoIDIndex = !e.Value.Truthy()
	default:
		return false, nil
	}
	return true, nil
}

// Check applies mongod's rules between the options for db.name.
func (o *CappedCreateOptions) Check(db, name string) error {
	if o.Capped && !o.HasSize {
		return mongoerr.New(mongoerr.InvalidOptions, "the 'size' field is required when 'capped' is true")
	}
	if (o.HasSize || o.HasMax) && !o.Capped {
		return mongoerr.New(mongoerr.InvalidOptions, "the 'capped' field needs to be true when either the 'size' or 'max' fields are present")
	}
	if db == "local" && name == "oplog.rs" {
		o.NoIDIndex = true // the oplog has no _id index (mongod's requiresIdIndex)
	}
	if o.NoIDIndex {
		if db != "local" {
			return mongoerr.New(mongoerr.AutoIndexIDReplicated, "autoIndexId:false is not allowed for collection %s.%s because it can be replicated", db, name)
		}
		if !o.Capped {
			// An ordinary collection's data tree is its _id index.
			return mongoerr.New(mongoerr.CommandNotSupported, "Cairn supports autoIndexId: false only for capped collections")
		}
	}
	return nil
}

// CappedSize rounds a capped collection's size up to a multiple of 256
// bytes, as mongod 7.0.
func CappedSize(n int64) int64 { return (n + 0xff) &^ 0xff }

// StoredOptions is the options document kept for the collection: capped,
// size and max first, then the others (rest).
func (o *CappedCreateOptions) StoredOptions(rest bson.Doc) bson.Doc {
	if !o.Capped {
		return rest
	}
	max := o.Max
	if max < 0 {
		max = 0
	}
	opts := catalog.CappedOptions(CappedSize(o.Size), max, rest)
	if o.NoIDIndex {
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

// CappedSizeArg reads the size argument (v, present) of convertToCapped or
// cloneCollectionAsCapped (cmd).
func CappedSizeArg(v bson.Value, present bool, cmd string) (int64, error) {
	if !present {
		return 0, mongoerr.New(mongoerr.IDLFailedToParse, "BSON field '%s.size' is missing but a required field", cmd)
	}
	if !v.IsNumber() {
		return 0, mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s.size' is the wrong type '%s', expected types '[long, int, decimal, double]'", cmd, v.Type)
	}
	f, _ := v.AsFloat64()
	if f > MaxCappedSize || f < -MaxCappedSize {
		return 0, mongoerr.New(mongoerr.BadValue, "size cannot exceed 1 PB")
	}
	n, err := query.SafeInt64(v)
	if err != nil {
		return 0, mongoerr.New(mongoerr.BadValue, "invalid size: %s", v.String())
	}
	if n < 0 {
		return 0, mongoerr.New(mongoerr.BadValue, "size has to be >= 0")
	}
	return n, nil
}

// ConvertToCapped replaces db.name by a capped collection of size bytes
// holding its documents (the oldest removed if they do not fit), in tx.
func ConvertToCapped(tx *Tx, db, name string, size int64) error {
	src, err := cappedSource(tx, db, name)
	if err != nil {
		return err
	}
	tmp := "tmp.convertToCapped." + name
	if err := catalog.ValidateCollectionName(db, tmp); err != nil {
		return err
	}
	dst, err := copyCapped(tx, src, db, tmp, size)
	if err != nil {
		return err
	}
	if err := catalog.Drop(tx, src); err != nil {
		return err
	}
	_, err = catalog.Rename(tx, dst, db, name)
	return err
}

// CloneCollectionAsCapped creates the capped collection db.to of size
// bytes holding db.from's documents, in tx.
func CloneCollectionAsCapped(tx *Tx, db, from, to string, size int64) error {
	src, err := cappedSource(tx, db, from)
	if err != nil {
		return err
	}
	if dst, err := catalog.Get(tx, db, to); err != nil {
		return err
	} else if dst != nil {
		return mongoerr.New(mongoerr.NamespaceExists, "collection already exists %s.%s", db, to)
	}
	_, err = copyCapped(tx, src, db, to, size)
	return err
}

// copyCapped creates the capped collection db.name of size bytes holding
// src's documents in their order (the oldest removed if they do not fit),
// with src's other options and an _id index, in tx.
func copyCapped(tx *Tx, src *catalog.Collection, db, name string, size int64) (*catalog.Collection, error) {
	dst, err := catalog.Create(tx, db, name, catalog.CappedOptions(CappedSize(size), 0, src.Options))
	if err != nil {
		return nil, err
	}
	w, err := OpenWriter(tx, dst)
	if err != nil {
		return nil, err
	}
	w.Bypass = true
	data, err := DataTree(tx, src)
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

// cappedSource returns the collection convertToCapped or
// cloneCollectionAsCapped copies: it must exist and not be a view.
func cappedSource(tx *Tx, db, name string) (*catalog.Collection, error) {
	src, err := catalog.Get(tx, db, name)
	if err != nil {
		return nil, err
	}
	if src == nil {
		return nil, mongoerr.New(mongoerr.NamespaceNotFound, "source collection %s.%s does not exist", db, name)
	}
	if _, _, view := src.View(); view {
		return nil, ErrOnView(src.Namespace())
	}
	return src, nil
}
