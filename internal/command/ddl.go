package command

import (
	"sort"
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/index"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
	"github.com/cairndb/cairn/kv"
)

// unsupportedCreateOptions are create options MongoDB has and Cairn does not
// (yet); they are refused rather than ignored.
var unsupportedCreateOptions = map[string]string{
	"capped": "capped collections", "size": "capped collections", "max": "capped collections",
	"timeseries": "time-series collections", "clustered": "clustered collections",
	"clusteredIndex": "clustered collections", "expireAfterSeconds": "TTL collections",
	"pipeline":                     "views (a pipeline without viewOn)",
	"changeStreamPreAndPostImages": "change streams",
	"encryptedFields":              "queryable encryption", "storageEngine": "storage engine options",
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
	// The options kept with the collection (listCollections shows them).
	var opts bson.Builder
	collated := false
	it := c.Body.Iter()
	it.Next()
	for it.Next() {
		e := it.Element()
		k := e.Key
		if genericFields[k] || k == "autoIndexId" || k == "flags" || k == "temp" {
			continue
		}
		switch k {
		case "validator", "validationLevel", "validationAction":
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
			if k == "capped" && !e.Value.Truthy() {
				continue
			}
			return mongoerr.New(mongoerr.CommandNotSupported, "Cairn does not support %s (create option '%s')", what, k)
		}
		return mongoerr.New(mongoerr.IDLUnknownField, "BSON field 'create.%s' is an unknown field.", k)
	}
	options := opts.Finish()
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
		c.Env.noteDefaultCollation()
	}
	return c.writeTx(wc.durability(), func(tx *kv.Tx) error {
		_, err := catalog.Create(tx, c.DB, name, options)
		return err
	})
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
	nIndexes := 0
	err = c.writeTx(wc.durability(), func(tx *kv.Tx) error {
		coll, err := catalog.Get(tx, c.DB, name)
		if err != nil || coll == nil {
			return err
		}
		nIndexes = len(coll.Indexes)
		return catalog.Drop(tx, coll)
	})
	if err != nil {
		return err
	}
	if name == profileCollection {
		c.Env.forgetProfileSize(c.DB)
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
	err = c.writeTx(wc.durability(), func(tx *kv.Tx) error {
		colls, err := catalog.List(tx, c.DB)
		if err != nil {
			return err
		}
		for _, coll := range colls {
			if err := catalog.Drop(tx, coll); err != nil {
				return err
			}
			dropped = true
		}
		return nil
	})
	if err != nil {
		return err
	}
	c.Env.forgetProfileSize(c.DB)
	if dropped {
		c.Reply.AppendString("dropped", c.DB)
	}
	return nil
}

// collSizes returns a collection's document count and total document bytes.
func collSizes(c *Ctx, tx *kv.Tx, coll *catalog.Collection) (count, size int64, err error) {
	if _, _, isView := coll.View(); isView {
		return 0, 0, exec.ErrOnView(coll.Namespace()) // collStats on a view, as mongod answers
	}
	t, err := exec.DataTree(tx, coll)
	if err != nil {
		return 0, 0, err
	}
	cur := t.Cursor()
	for k, v := cur.First(); k != nil; k, v = cur.Next() {
		size += int64(len(v))
	}
	if err := cur.Err(); err != nil {
		return 0, 0, err
	}
	return t.Len(), size, nil
}

// indexSizes returns the bytes of each index's entries (keys and values;
// for _id_, the encoded _id keys of the data tree) and their total.
func indexSizes(tx *kv.Tx, coll *catalog.Collection) (map[string]int64, int64, error) {
	sizes := make(map[string]int64, len(coll.Indexes))
	var total int64
	for _, ix := range coll.Indexes {
		name := coll.IndexTree(ix.Name)
		idOnly := ix.Name == "_id_"
		if idOnly {
			name = coll.DataTree()
		}
		t, err := tx.Tree(name)
		if err != nil {
			return nil, 0, err
		}
		var n int64
		cur := t.Cursor()
		for k, v := cur.First(); k != nil; k, v = cur.Next() {
			n += int64(len(k))
			if !idOnly {
				n += int64(len(v))
			}
		}
		if err := cur.Err(); err != nil {
			return nil, 0, err
		}
		sizes[ix.Name] = n
		total += n
	}
	return sizes, total, nil
}

func listDatabases(c *Ctx) error {
	a := newArgs(c)
	if err := a.check("filter", "nameOnly", "authorizedDatabases"); err != nil {
		return err
	}
	nameOnly, filter, err := listingArgs(a)
	if err != nil {
		return err
	}
	visible, err := c.visibleDatabases()
	if err != nil {
		return err
	}
	tx, err := c.readTx()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	colls, err := catalog.List(tx, "")
	if err != nil {
		return err
	}
	sizes := map[string]int64{}
	var names []string
	for _, coll := range colls {
		if _, ok := sizes[coll.DB]; !ok {
			names = append(names, coll.DB)
			sizes[coll.DB] = 0
		}
		if _, _, isView := coll.View(); !nameOnly && !isView {
			_, size, err := collSizes(c, tx, coll)
			if err != nil {
				return err
			}
			sizes[coll.DB] += size
		}
	}
	sort.Strings(names)
	r := c.Reply
	r.StartArray("databases")
	var total int64
	i := 0
	for _, n := range names {
		var b bson.Builder
		b.AppendString("name", n)
		if !nameOnly {
			b.AppendInt64("sizeOnDisk", sizes[n])
			b.AppendBool("empty", false)
		}
		d := b.Finish()
		if filter != nil && !filter.Match(d) || visible != nil && !visible(n) {
			continue
		}
		total += sizes[n]
		r.AppendDocument(bson.Index(i), d)
		i++
	}
	r.End()
	if !nameOnly {
		r.AppendInt64("totalSize", total)
		r.AppendInt64("totalSizeMb", total>>20)
	}
	return nil
}

// uuidValue is a collection UUID as BSON binary subtype 4.
func collectionInfo(b *bson.Builder, coll *catalog.Collection, nameOnly bool) {
	b.AppendString("name", coll.Name)
	if _, _, isView := coll.View(); isView {
		b.AppendString("type", "view")
		if nameOnly {
			return
		}
		b.AppendDocument("options", coll.Options)
		b.StartDocument("info")
		b.AppendBool("readOnly", true)
		b.End()
		return
	}
	b.AppendString("type", "collection")
	if nameOnly {
		return
	}
	if len(coll.Options) > 0 {
		b.AppendDocument("options", coll.Options)
	} else {
		b.AppendDocument("options", bson.EmptyDoc)
	}
	b.StartDocument("info")
	b.AppendBool("readOnly", false)
	b.AppendBinary("uuid", 4, coll.UUID[:])
	b.End()
	b.AppendDocument("idIndex", catalog.IDIndexSpec())
}

func listCollections(c *Ctx) error {
	a := newArgs(c)
	if err := a.check("filter", "nameOnly", "authorizedCollections", "cursor"); err != nil {
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
	tx, err := c.readTx()
	if err != nil {
		return err
	}
	colls, err := catalog.List(tx, c.DB)
	tx.Rollback()
	if err != nil {
		return err
	}
	var docs []bson.Doc
	for _, coll := range colls {
		var b bson.Builder
		collectionInfo(&b, coll, nameOnly)
		d := b.Finish()
		if filter != nil && !filter.Match(d) {
			continue
		}
		docs = append(docs, d)
	}
	return writeBatch(c, nil, &exec.SliceSource{Docs: docs}, c.DB+".$cmd.listCollections", 0, batchOptions{batchSize: batchSize, firstBatch: true}, false)
}

// cursorBatchSize reads cursor: {batchSize} of commands that return cursors.
func cursorBatchSize(a args) (int64, error) {
	cur, ok, err := a.doc("cursor")
	if err != nil || !ok {
		return 0, err
	}
	v, ok := cur.Lookup("batchSize")
	if !ok {
		return 0, nil
	}
	n, err := numberArg(v)
	if err != nil {
		return 0, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'cursor.batchSize' is the wrong type '%s', expected types '[long, int, decimal, double]'", v.Type)
	}
	if n < 0 {
		return 0, mongoerr.New(mongoerr.BatchOptionNegative, "BSON field 'batchSize' value must be >= 0, actual value '%d'", n)
	}
	return n, nil
}

func listIndexes(c *Ctx) error {
	a := newArgs(c)
	if err := a.check("cursor", "includeBuildUUIDs", "includeIndexBuildInfo"); err != nil {
		return err
	}
	name, err := c.collectionArg()
	if err != nil {
		return err
	}
	batchSize, err := cursorBatchSize(a)
	if err != nil {
		return err
	}
	tx, err := c.readTx()
	if err != nil {
		return err
	}
	coll, err := catalog.Get(tx, c.DB, name)
	tx.Rollback()
	if err != nil {
		return err
	}
	if coll == nil {
		return mongoerr.New(mongoerr.NamespaceNotFound, "ns does not exist: %s.%s", c.DB, name)
	}
	var docs []bson.Doc
	for _, ix := range coll.Indexes {
		if ix.Ready {
			docs = append(docs, ix.Spec)
		}
	}
	return writeBatch(c, nil, &exec.SliceSource{Docs: docs}, c.DB+"."+name, 0, batchOptions{batchSize: batchSize, firstBatch: true}, false)
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
	return c.writeTx(wc.durability(), func(tx *kv.Tx) error {
		src, err := catalog.Get(tx, fdb, fcoll)
		if err != nil {
			return err
		}
		if src == nil {
			return mongoerr.New(mongoerr.NamespaceNotFound, "Source collection %s does not exist", from)
		}
		if from == to {
			return mongoerr.New(mongoerr.IllegalOperation, "Can't rename a collection to itself")
		}
		dst, err := catalog.Get(tx, tdb, tcoll)
		if err != nil {
			return err
		}
		if dst != nil {
			if !dropTarget {
				return mongoerr.New(mongoerr.NamespaceExists, "target namespace exists")
			}
			if err := catalog.Drop(tx, dst); err != nil {
				return err
			}
		}
		_, err = catalog.Rename(tx, src, tdb, tcoll)
		return err
	})
}

// scaleArg reads collStats/dbStats' scale (default 1).
func scaleArg(a args) (int64, error) {
	scale, ok, err := a.integer("scale")
	if err != nil {
		return 0, err
	}
	if !ok {
		return 1, nil
	}
	if scale < 1 {
		return 0, mongoerr.New(mongoerr.BadValue, "scale has to be >= 1")
	}
	return scale, nil
}

func collStats(c *Ctx) error {
	a := newArgs(c)
	if err := a.check("scale", "verbose"); err != nil {
		return err
	}
	name, err := c.collectionArg()
	if err != nil {
		return err
	}
	scale, err := scaleArg(a)
	if err != nil {
		return err
	}
	tx, coll, err := c.snapshotCollection(name)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if coll == nil {
		return mongoerr.New(mongoerr.NamespaceNotFound, "Collection [%s.%s] not found.", c.DB, name)
	}
	count, size, err := collSizes(c, tx, coll)
	if err != nil {
		return err
	}
	ixSizes, ixTotal, err := indexSizes(tx, coll)
	if err != nil {
		return err
	}
	r := c.Reply
	r.AppendString("ns", coll.Namespace())
	r.AppendInt64("size", size/scale)
	r.AppendInt64("count", count)
	if count > 0 {
		r.AppendInt64("avgObjSize", size/count)
	} else {
		r.AppendInt64("avgObjSize", 0)
	}
	r.AppendInt64("storageSize", size/scale)
	r.AppendInt64("freeStorageSize", 0)
	r.AppendBool("capped", false)
	r.AppendInt32("nindexes", int32(len(coll.Indexes)))
	r.AppendInt64("totalIndexSize", ixTotal/scale)
	r.AppendInt64("totalSize", (size+ixTotal)/scale)
	r.StartDocument("indexSizes")
	for _, ix := range coll.Indexes {
		r.AppendInt64(ix.Name, ixSizes[ix.Name]/scale)
	}
	r.End()
	r.AppendInt64("scaleFactor", scale)
	return nil
}

func dbStats(c *Ctx) error {
	a := newArgs(c)
	if err := a.check("scale", "freeStorage"); err != nil {
		return err
	}
	if err := catalog.ValidateDBName(c.DB); err != nil {
		return err
	}
	scale, err := scaleArg(a)
	if err != nil {
		return err
	}
	tx, err := c.readTx()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	colls, err := catalog.List(tx, c.DB)
	if err != nil {
		return err
	}
	var objects, size, indexes, ixBytes, views int64
	for _, coll := range colls {
		if _, _, isView := coll.View(); isView {
			views++ // a view has no storage of its own
			continue
		}
		n, s, err := collSizes(c, tx, coll)
		if err != nil {
			return err
		}
		_, ixs, err := indexSizes(tx, coll)
		if err != nil {
			return err
		}
		objects += n
		size += s
		ixBytes += ixs
		indexes += int64(len(coll.Indexes))
	}
	r := c.Reply
	r.AppendString("db", c.DB)
	r.AppendInt64("collections", int64(len(colls))-views)
	r.AppendInt64("views", views)
	r.AppendInt64("objects", objects)
	if objects > 0 {
		r.AppendDouble("avgObjSize", float64(size)/float64(objects))
	} else {
		r.AppendDouble("avgObjSize", 0)
	}
	r.AppendDouble("dataSize", float64(size/scale))
	r.AppendDouble("storageSize", float64(size/scale))
	r.AppendInt64("indexes", indexes)
	r.AppendDouble("indexSize", float64(ixBytes/scale))
	r.AppendDouble("totalSize", float64((size+ixBytes)/scale))
	r.AppendInt64("scaleFactor", scale)
	return nil
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
	var change []bson.Element
	var indexChange bson.Doc
	it := c.Body.Iter()
	it.Next()
	for it.Next() {
		e := it.Element()
		switch {
		case genericFields[e.Key]:
		case e.Key == "validator" || e.Key == "validationLevel" || e.Key == "validationAction":
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
	return c.writeTx(wc.durability(), func(tx *kv.Tx) error {
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
			if err := modifyIndex(&next, indexChange); err != nil {
				return err
			}
		}
		return catalog.Put(tx, &next)
	})
}

// modifyIndex applies collMod's index: {name | keyPattern, hidden,
// expireAfterSeconds}.
func modifyIndex(coll *catalog.Collection, spec bson.Doc) error {
	pos := -1
	var set []bson.Element
	it := spec.Iter()
	for it.Next() {
		e := it.Element()
		switch e.Key {
		case "name", "keyPattern":
			for i, ix := range coll.Indexes {
				if e.Key == "name" && e.Value.Type == bson.TypeString && ix.Name == e.Value.StringValue() {
					pos = i
				}
				if key, ok := ix.Spec.Lookup("key"); e.Key == "keyPattern" && ok && bson.Equal(key, e.Value) {
					pos = i
				}
			}
		case "hidden", "expireAfterSeconds":
			set = append(set, e)
		default:
			return mongoerr.New(mongoerr.InvalidOptions, "collMod index option '%s' is not supported by Cairn", e.Key)
		}
	}
	if pos < 0 {
		return mongoerr.New(mongoerr.IndexNotFound, "cannot find index %s for ns %s", spec.String(), coll.Namespace())
	}
	if coll.Indexes[pos].Name == "_id_" {
		return mongoerr.New(mongoerr.BadValue, "cannot modify the _id index")
	}
	var b bson.Builder
	sit := coll.Indexes[pos].Spec.Iter()
	for sit.Next() {
		keep := true
		for _, e := range set {
			keep = keep && e.Key != sit.Element().Key
		}
		if keep {
			b.AppendElement(sit.Element())
		}
	}
	for _, e := range set {
		if e.Key == "hidden" {
			if e.Value.Truthy() {
				b.AppendBool("hidden", true)
			}
			continue
		}
		b.AppendElement(e)
	}
	raw := b.Finish()
	if _, err := index.Parse(raw); err != nil {
		return err
	}
	coll.Indexes = append([]catalog.Index(nil), coll.Indexes...)
	coll.Indexes[pos].Spec = raw
	return nil
}

// listingArgs reads nameOnly and filter, as listDatabases and
// listCollections take them (filter is nil when absent).
func listingArgs(a args) (nameOnly bool, filter *query.Filter, err error) {
	if nameOnly, _, err = a.boolean("nameOnly"); err != nil {
		return false, nil, err
	}
	if f, ok, err := a.doc("filter"); err != nil {
		return false, nil, err
	} else if ok {
		if filter, err = query.ParseFilter(f, &query.Options{}); err != nil {
			return false, nil, err
		}
	}
	return nameOnly, filter, nil
}
