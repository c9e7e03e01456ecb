package catalog

// Clustered collections. Every ordinary Cairn collection already keeps its
// documents in a kv tree keyed by the encoded _id (there is no record id
// beside the _id index, as in mongod's WiredTiger tables), so a clustered
// collection — mongod 5.3+'s create option clusteredIndex: {key: {_id: 1},
// unique: true, name} — differs from an ordinary one only in what the
// catalog says about it: its one index is the clustered index (listed by
// listIndexes as {v, key, name, unique, clustered: true}, under the name
// given, "_id_" by default), there is no separate _id index, and the
// collection may carry expireAfterSeconds, a TTL on _id (documents whose
// _id is a date older than that many seconds are removed by the TTL
// monitor, which seeks them by range in the data tree). _id range scans are
// served by the data tree's order, as for every collection.
//
// The options are kept as create received them, in mongod's canonical
// form: {clusteredIndex: {v: 2, key: {_id: 1}, name, unique: true},
// expireAfterSeconds: NumberLong}, which listCollections returns.

import (
	"math"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// DefaultClusteredIndexName is the clustered index's name when create
// gives none (mongod's).
const DefaultClusteredIndexName = "_id_"

// ClusteredOptions are create's clusteredIndex and expireAfterSeconds.
type ClusteredOptions struct {
	// Set: the collection is clustered (clusteredIndex was given and is
	// not false).
	Set bool
	// Name is the clustered index's name (DefaultClusteredIndexName when
	// not given).
	Name string
	// ExpireAfterSeconds is the TTL on _id (-1: none).
	ExpireAfterSeconds int64
	// hasExpire: expireAfterSeconds was given.
	hasExpire bool
	version   int64
}

// TakeClusteredOption reads create's clusteredIndex or expireAfterSeconds
// element into o (ok=false: e is neither).
func (o *ClusteredOptions) TakeClusteredOption(e bson.Element) (ok bool, err error) {
	switch e.Key {
	case "clusteredIndex":
		return true, o.parseIndex(e.Value)
	case "expireAfterSeconds":
		if !e.Value.IsNumber() {
			return true, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'create.expireAfterSeconds' is the wrong type '%s', expected types '[long, int, decimal, double]'", e.Value.Type)
		}
		n, _ := e.Value.AsInt64()
		if f, _ := e.Value.AsFloat64(); f < 0 {
			n = -1
		}
		o.ExpireAfterSeconds, o.hasExpire = n, true
		return true, nil
	}
	return false, nil
}

func (o *ClusteredOptions) parseIndex(v bson.Value) error {
	switch v.Type {
	case bson.TypeBoolean:
		if !v.Boolean() {
			return nil // {clusteredIndex: false}: not clustered
		}
		// The legacy format is only for time-series buckets collections,
		// which Cairn does not have.
		return mongoerr.New(mongoerr.ClusteredLegacyFormat, "The 'clusteredIndex' legacy format {clusteredIndex: <bool>} is only supported for specific internal collections and vice versa")
	case bson.TypeDocument:
	default:
		return mongoerr.New(mongoerr.ClusteredNotBoolOrObject, "'clusteredIndex' has to be a boolean or object.")
	}
	d := v.Document()
	o.Set, o.Name, o.version = true, DefaultClusteredIndexName, 2
	var key bson.Doc
	unique, hasUnique := false, false
	it := d.Iter()
	for it.Next() {
		e := it.Element()
		switch e.Key {
		case "key":
			if e.Value.Type != bson.TypeDocument {
				return mongoerr.New(mongoerr.TypeMismatch, "BSON field 'create.clusteredIndex.key' is the wrong type '%s', expected type 'object'", e.Value.Type)
			}
			key = e.Value.Document()
		case "unique":
			if e.Value.Type != bson.TypeBoolean {
				return mongoerr.New(mongoerr.TypeMismatch, "BSON field 'create.clusteredIndex.unique' is the wrong type '%s', expected type 'bool'", e.Value.Type)
			}
			unique, hasUnique = e.Value.Boolean(), true
		case "name":
			if e.Value.Type != bson.TypeString {
				return mongoerr.New(mongoerr.TypeMismatch, "BSON field 'create.clusteredIndex.name' is the wrong type '%s', expected type 'string'", e.Value.Type)
			}
			o.Name = e.Value.StringValue()
		case "v":
			n, ok := e.Value.AsInt64()
			if !e.Value.IsNumber() || !ok {
				return mongoerr.New(mongoerr.TypeMismatch, "BSON field 'create.clusteredIndex.v' is the wrong type '%s', expected types '[long, int, decimal, double]'", e.Value.Type)
			}
			o.version = n
		default:
			return mongoerr.New(mongoerr.IDLUnknownField, "BSON field 'create.clusteredIndex.%s' is an unknown field.", e.Key)
		}
	}
	if key == nil {
		return mongoerr.New(mongoerr.IDLFailedToParse, "BSON field 'create.clusteredIndex.key' is missing but a required field")
	}
	if !hasUnique {
		return mongoerr.New(mongoerr.IDLFailedToParse, "BSON field 'create.clusteredIndex.unique' is missing but a required field")
	}
	if !unique {
		return mongoerr.New(mongoerr.ClusteredRequiresUnique, "The clusteredIndex option requires unique: true to be specified")
	}
	if !isIDAscending(key) {
		return mongoerr.New(mongoerr.InvalidIndexSpecificationOption, "The clusteredIndex option is only supported for key: {_id: 1}")
	}
	return nil
}

// isIDAscending reports whether key is {_id: 1} (mongod compares the
// documents, so 1.0 and NumberLong(1) are {_id: 1} too).
func isIDAscending(key bson.Doc) bool {
	if key.Len() != 1 {
		return false
	}
	v, ok := key.Lookup("_id")
	if !ok || !v.IsNumber() {
		return false
	}
	f, _ := v.AsFloat64()
	return f == 1
}

// Check validates the options together with autoIndexId and capped, in
// mongod's order, once every create option has been read.
func (o *ClusteredOptions) Check(autoIndexIDFalse, capped bool) error {
	if !o.Set {
		if o.hasExpire {
			return mongoerr.New(mongoerr.InvalidOptions, "'expireAfterSeconds' requires clustering to be enabled")
		}
		return nil
	}
	if autoIndexIDFalse {
		return mongoerr.New(mongoerr.ClusteredNoAutoIndexID, "The 'clusteredIndex' option does not support {autoIndexId: false}")
	}
	if o.hasExpire {
		if o.ExpireAfterSeconds < 0 {
			return mongoerr.New(mongoerr.InvalidOptions, "TTL index 'expireAfterSeconds' option cannot be less than 0")
		}
		if o.ExpireAfterSeconds > math.MaxInt32 {
			return mongoerr.New(mongoerr.InvalidOptions, "TTL index 'expireAfterSeconds' option must be within an acceptable range, try a lower number")
		}
	}
	if o.version != 2 {
		return mongoerr.New(mongoerr.ClusteredBadVersion, "Invalid clusteredIndex specification %s; cannot create a clusteredIndex with v=%d", o.indexOption().String(), o.version)
	}
	if capped {
		return mongoerr.New(mongoerr.InvalidOptions, "Cairn does not support capped clustered collections")
	}
	return nil
}

// indexOption is the clusteredIndex option as stored and listed:
// {v, key: {_id: 1}, name, unique: true}.
func (o *ClusteredOptions) indexOption() bson.Doc {
	var b bson.Builder
	b.AppendInt32("v", int32(o.version))
	b.StartDocument("key")
	b.AppendInt32("_id", 1)
	b.End()
	b.AppendString("name", o.Name)
	b.AppendBool("unique", true)
	return b.Finish()
}

// AppendOptions appends the stored options (clusteredIndex and, when
// given, expireAfterSeconds as a NumberLong) to b.
func (o *ClusteredOptions) AppendOptions(b *bson.Builder) {
	if !o.Set {
		return
	}
	b.AppendDocument("clusteredIndex", o.indexOption())
	if o.hasExpire {
		b.AppendInt64("expireAfterSeconds", o.ExpireAfterSeconds)
	}
}

// ClusteredIndexSpec is the clustered index as listIndexes shows it:
// {v, key, name, unique: true, clustered: true} (nil: c is not
// clustered).
func (c *Collection) ClusteredIndexSpec() bson.Doc {
	if len(c.Options) == 0 {
		return nil
	}
	v, ok := c.Options.Lookup("clusteredIndex")
	if !ok || v.Type != bson.TypeDocument {
		return nil
	}
	var b bson.Builder
	it := v.Document().Iter()
	for it.Next() {
		b.AppendElement(it.Element())
	}
	b.AppendBool("clustered", true)
	return b.Finish()
}

// Clustered reports whether c is a clustered collection.
func (c *Collection) Clustered() bool {
	if len(c.Options) == 0 {
		return false
	}
	v, ok := c.Options.Lookup("clusteredIndex")
	return ok && v.Type == bson.TypeDocument
}

// ClusteredExpireAfterSeconds is a clustered collection's TTL on _id in
// seconds (-1: none).
func (c *Collection) ClusteredExpireAfterSeconds() int64 {
	if !c.Clustered() {
		return -1
	}
	return c.ExpireAfterSeconds()
}

// ExpireAfterSeconds is the expireAfterSeconds of c's options (a
// clustered or a time-series buckets collection's TTL), -1 when they have
// none.
func (c *Collection) ExpireAfterSeconds() int64 {
	v, ok := c.Options.Lookup("expireAfterSeconds")
	if !ok {
		return -1
	}
	n, ok := v.AsInt64()
	if !ok {
		return -1
	}
	return n
}

// IsID reports whether ix is the collection's _id index: "_id_", or a
// clustered collection's clustered index (whatever its name).
func (ix *Index) IsID() bool {
	if ix.Name == "_id_" {
		return true
	}
	v, ok := ix.Spec.Lookup("clustered")
	return ok && v.Truthy()
}

// ClusteredIndexRequest answers createIndexes' request for an index on
// c's cluster key, as mongod: an index option clustered: true is allowed
// only as the clustered index c already has ({_id: 1}, unique: true), and
// on a clustered collection an index {_id: 1} is that index. exists
// reports that nothing is to be built.
func (c *Collection) ClusteredIndexRequest(idKey, clustered, unique bool) (exists bool, err error) {
	switch {
	case clustered && !unique:
		return false, mongoerr.New(mongoerr.CannotCreateIndex, "The 'clustered' option is only supported for indexes with 'unique: true'")
	case clustered && !c.Clustered():
		return false, mongoerr.New(mongoerr.CannotCreateIndex, "cannot create a clustered index on a collection that is not clustered")
	case clustered && !idKey:
		return false, mongoerr.New(mongoerr.CannotCreateIndex, "the 'clustered' index option must match the collection's cluster key {_id: 1}")
	}
	return c.Clustered() && idKey, nil
}
