// Package catalog owns Cairn's databases, collections and index metadata. The
// catalog is stored in the kv engine itself, in the tree "_catalog", keyed by
// namespace ("db.collection"), so every transaction sees the catalog of its
// own snapshot: a reader never sees a collection whose creation has not
// committed, and DDL is atomic with the writes around it.
//
// Each collection's documents live in their own kv tree, named after the
// collection's UUID so that dropping and re-creating a namespace never reuses
// a tree; each index likewise.
package catalog

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/kv"
)

// catalogTree is the kv tree that holds one metadata document per collection.
const catalogTree = "_catalog"

// TreeName is the name of the catalog's kv tree, keyed by namespace
// ("db.coll"): a replica-set snapshot copies it without the local
// database's entries.
const TreeName = catalogTree

// Collection is one collection's metadata.
type Collection struct {
	DB, Name string
	UUID     [16]byte
	Created  time.Time
	// Options is the create command's options document as stored (may be
	// empty), returned by listCollections.
	Options bson.Doc
	// Indexes lists the index specifications (the _id index first).
	Indexes []Index
	// Capped is set for a capped collection (Options {capped: true,
	// size, max}): its data tree is keyed by an 8-byte big-endian record
	// id in insertion order instead of by _id, and its _id index (when
	// it has one) is an index tree of its own (capped.go). CappedSize is
	// its size in bytes, CappedMax its maximum document count (0: none).
	Capped                bool
	CappedSize, CappedMax int64
}

// Index is one index's metadata: its specification as listIndexes returns it.
type Index struct {
	Name string
	Spec bson.Doc // {v: 2, key: {...}, name: "...", ...}
	// Ready is false while a build is in progress: the planner does not
	// use the index, and writers record their changes to it in its side
	// tree (SideTree) instead of its tree.
	Ready bool
	// Build identifies the build in progress (a UUID's hex; empty once
	// the index is ready), so that a build can tell its index from one of
	// the same name created after it was dropped.
	Build string
	// Multikey is set once any document put an array in an indexed field;
	// the planner must then not intersect range bounds on it.
	Multikey bool
	// NumTypes, one byte per key field, is the set of numeric types each
	// key field's entries have held (index.NumInt32 ...; it only grows),
	// so that a covered plan returns numbers in their type
	// (internal/index/numtypes.go). nil: not tracked (an index created
	// before tracking, or one that covered plans never use).
	NumTypes []byte
}

// Namespace returns "db.collection".
func (c *Collection) Namespace() string { return c.DB + "." + c.Name }

// View returns the collection a view reads from and its pipeline (an
// array document), or ok=false for an ordinary collection.
func (c *Collection) View() (viewOn string, pipeline bson.Doc, ok bool) {
	if len(c.Options) == 0 {
		return "", nil, false
	}
	v, found := c.Options.Lookup("viewOn")
	if !found || v.Type != bson.TypeString {
		return "", nil, false
	}
	if p, found := c.Options.Lookup("pipeline"); found && p.Type == bson.TypeArray {
		pipeline = p.Document()
	} else {
		pipeline = bson.EmptyDoc
	}
	return v.StringValue(), pipeline, true
}

// CreateView records the view db.name over viewOn with pipeline (an array
// document) and its default collation (nil: none). A view has no storage
// of its own.
func CreateView(tx *kv.Tx, db, name, viewOn string, pipeline, collation bson.Doc) (*Collection, error) {
	if err := ValidateCollectionName(db, name); err != nil {
		return nil, err
	}
	existing, err := Get(tx, db, name)
	if err != nil {
		return nil, err
	}
	if existing != nil {
		return nil, mongoerr.New(mongoerr.NamespaceExists, "Namespace %s.%s already exists", db, name)
	}
	var b bson.Builder
	b.AppendString("viewOn", viewOn)
	b.AppendArray("pipeline", pipeline)
	if collation != nil {
		b.AppendDocument("collation", collation)
	}
	c := &Collection{DB: db, Name: name, Created: time.Now(), Options: b.Finish()}
	if _, err := rand.Read(c.UUID[:]); err != nil {
		return nil, fmt.Errorf("catalog: uuid: %w", err)
	}
	return c, Put(tx, c)
}

// DataTree returns the name of the kv tree holding the documents.
func (c *Collection) DataTree() string { return "c:" + hex.EncodeToString(c.UUID[:]) }

// IndexTree returns the name of the kv tree holding an index's entries.
func (c *Collection) IndexTree(name string) string {
	return "i:" + hex.EncodeToString(c.UUID[:]) + ":" + name
}

// SideTree returns the name of the kv tree holding the writes made to an
// index while it is being built.
func (c *Collection) SideTree(name string) string {
	return "b:" + hex.EncodeToString(c.UUID[:]) + ":" + name
}

// DropIndexTrees drops the trees of index ix (its entries and, while it is
// being built, its side writes) in the write transaction tx.
func (c *Collection) DropIndexTrees(tx *kv.Tx, ix Index) error {
	names := []string{c.IndexTree(ix.Name)}
	if !ix.Ready {
		names = append(names, c.SideTree(ix.Name))
	}
	for _, n := range names {
		if err := tx.DropTree(n); err != nil && !errors.Is(err, kv.ErrTreeNotFound) {
			return fmt.Errorf("catalog: dropping index %s of %s: %w", ix.Name, c.Namespace(), err)
		}
	}
	return nil
}

// IDIndexSpec is the _id index every collection has.
func IDIndexSpec() bson.Doc {
	var b bson.Builder
	b.AppendInt32("v", 2)
	b.StartDocument("key")
	b.AppendInt32("_id", 1)
	b.End()
	b.AppendString("name", "_id_")
	return b.Finish()
}

// encode serialises the metadata.
func (c *Collection) encode() bson.Doc {
	var b bson.Builder
	b.AppendString("db", c.DB)
	b.AppendString("name", c.Name)
	b.AppendBinary("uuid", 4, c.UUID[:])
	b.AppendDateTime("created", c.Created.UnixMilli())
	b.AppendDocument("options", orEmpty(c.Options))
	b.StartArray("indexes")
	for i, ix := range c.Indexes {
		b.StartDocument(bson.Index(i))
		b.AppendString("name", ix.Name)
		b.AppendDocument("spec", ix.Spec)
		b.AppendBool("ready", ix.Ready)
		if ix.Multikey {
			b.AppendBool("multikey", true)
		}
		if ix.NumTypes != nil {
			b.AppendBinary("numTypes", 0, ix.NumTypes)
		}
		if ix.Build != "" {
			b.AppendString("build", ix.Build)
		}
		b.End()
	}
	b.End()
	return b.Finish()
}

func orEmpty(d bson.Doc) bson.Doc {
	if len(d) == 0 {
		return bson.EmptyDoc
	}
	return d
}

func decode(raw []byte) (*Collection, error) {
	d := bson.Doc(raw)
	c := &Collection{}
	db, ok1 := d.Lookup("db")
	name, ok2 := d.Lookup("name")
	uuid, ok3 := d.Lookup("uuid")
	if !ok1 || !ok2 || !ok3 || db.Type != bson.TypeString || name.Type != bson.TypeString || uuid.Type != bson.TypeBinary {
		return nil, errors.New("catalog: corrupt collection entry")
	}
	c.DB = strings.Clone(db.StringValue())
	c.Name = strings.Clone(name.StringValue())
	_, u := uuid.Binary()
	copy(c.UUID[:], u)
	if v, ok := d.Lookup("created"); ok && v.Type == bson.TypeDateTime {
		c.Created = time.UnixMilli(v.DateTime())
	}
	if v, ok := d.Lookup("options"); ok && v.Type == bson.TypeDocument {
		c.Options = bson.Doc(append([]byte(nil), v.Data...))
		c.setCapped()
	}
	if v, ok := d.Lookup("indexes"); ok && v.Type == bson.TypeArray {
		it := v.Document().Iter()
		for it.Next() {
			ixd := it.Element().Value.Document()
			var ix Index
			if n, ok := ixd.Lookup("name"); ok && n.Type == bson.TypeString {
				ix.Name = strings.Clone(n.StringValue())
			}
			if s, ok := ixd.Lookup("spec"); ok && s.Type == bson.TypeDocument {
				ix.Spec = bson.Doc(append([]byte(nil), s.Data...))
			}
			if r, ok := ixd.Lookup("ready"); ok && r.Type == bson.TypeBoolean {
				ix.Ready = r.Boolean()
			}
			if m, ok := ixd.Lookup("multikey"); ok && m.Type == bson.TypeBoolean {
				ix.Multikey = m.Boolean()
			}
			if n, ok := ixd.Lookup("numTypes"); ok && n.Type == bson.TypeBinary {
				_, data := n.Binary()
				ix.NumTypes = append([]byte{}, data...)
			}
			if b, ok := ixd.Lookup("build"); ok && b.Type == bson.TypeString {
				ix.Build = strings.Clone(b.StringValue())
			}
			c.Indexes = append(c.Indexes, ix)
		}
	}
	return c, nil
}

// Get returns the collection db.name as of tx's snapshot, or nil.
func Get(tx *kv.Tx, db, name string) (*Collection, error) {
	t, err := tx.Tree(catalogTree)
	if errors.Is(err, kv.ErrTreeNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	raw, err := t.Get([]byte(db + "." + name))
	if err != nil {
		return nil, fmt.Errorf("catalog: reading %s.%s: %w", db, name, err)
	}
	if raw == nil {
		return nil, nil
	}
	return decodeCached(raw)
}

// decodeCache maps a catalog entry's bytes to its decoded metadata, so the
// hot path (every CRUD command looks up its collection) does not decode and
// allocate each time. Entries are keyed by content, so a stale entry can
// never be returned for changed metadata; the cache is bounded.
var decodeCache = struct {
	sync.RWMutex
	m map[string]*Collection
}{m: make(map[string]*Collection)}

const maxDecodeCache = 4096

// decodeCached returns the shared, read-only metadata for raw. Callers must
// not modify the result (Rename copies it).
func decodeCached(raw []byte) (*Collection, error) {
	decodeCache.RLock()
	c, ok := decodeCache.m[string(raw)]
	decodeCache.RUnlock()
	if ok {
		return c, nil
	}
	c, err := decode(raw)
	if err != nil {
		return nil, err
	}
	decodeCache.Lock()
	if len(decodeCache.m) >= maxDecodeCache {
		clear(decodeCache.m)
	}
	decodeCache.m[string(raw)] = c
	decodeCache.Unlock()
	return c, nil
}

// List returns the collections of db (all databases if db is ""), in
// namespace order.
func List(tx *kv.Tx, db string) ([]*Collection, error) {
	t, err := tx.Tree(catalogTree)
	if errors.Is(err, kv.ErrTreeNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	var out []*Collection
	cur := t.Cursor()
	prefix := []byte(nil)
	if db != "" {
		prefix = []byte(db + ".")
	}
	for k, v := cur.Seek(prefix); k != nil; k, v = cur.Next() {
		if prefix != nil && !strings.HasPrefix(string(k), string(prefix)) {
			break
		}
		c, err := decode(v)
		if err != nil {
			return nil, err
		}
		if db == "" || c.DB == db {
			out = append(out, c)
		}
	}
	if err := cur.Err(); err != nil {
		return nil, fmt.Errorf("catalog: listing: %w", err)
	}
	return out, nil
}

// Put writes c's metadata in the write transaction tx.
func Put(tx *kv.Tx, c *Collection) error {
	t, err := tx.CreateTreeIfNotExists(catalogTree)
	if err != nil {
		return fmt.Errorf("catalog: %w", err)
	}
	if err := t.Put([]byte(c.Namespace()), c.encode()); err != nil {
		return fmt.Errorf("catalog: writing %s: %w", c.Namespace(), err)
	}
	return nil
}

// Create makes a new collection db.name with its data tree and _id index in
// the write transaction tx. It fails with NamespaceExists if it exists.
func Create(tx *kv.Tx, db, name string, options bson.Doc) (*Collection, error) {
	if err := ValidateCollectionName(db, name); err != nil {
		return nil, err
	}
	existing, err := Get(tx, db, name)
	if err != nil {
		return nil, err
	}
	if existing != nil {
		return nil, mongoerr.New(mongoerr.NamespaceExists, "Collection %s.%s already exists.", db, name)
	}
	c := &Collection{DB: db, Name: name, Created: time.Now(), Options: options,
		Indexes: []Index{{Name: "_id_", Spec: IDIndexSpec(), Ready: true}}}
	if u, ok := sourcedUUID(tx, db, name); ok {
		c.UUID = u // the primary's (uuidsource.go)
	} else {
		if _, err := rand.Read(c.UUID[:]); err != nil {
			return nil, fmt.Errorf("catalog: uuid: %w", err)
		}
		c.UUID[6] = c.UUID[6]&0x0f | 0x40 // version 4
		c.UUID[8] = c.UUID[8]&0x3f | 0x80 // RFC 4122 variant
	}
	c.setCapped()
	if v, ok := options.Lookup("autoIndexId"); ok && !v.Truthy() {
		c.Indexes = nil // autoIndexId: false (local only, checked by create)
	}
	if spec := c.ClusteredIndexSpec(); spec != nil {
		name, _ := spec.Lookup("name")
		c.Indexes = []Index{{Name: name.StringValue(), Spec: spec, Ready: true}}
	}
	if _, err := tx.CreateTree(c.DataTree()); err != nil {
		return nil, fmt.Errorf("catalog: creating data tree for %s: %w", c.Namespace(), err)
	}
	if c.Capped {
		if err := c.createCappedTrees(tx); err != nil {
			return nil, err
		}
	}
	if err := Put(tx, c); err != nil {
		return nil, err
	}
	return c, nil
}

// Drop removes c, its documents and its indexes in the write transaction tx.
func Drop(tx *kv.Tx, c *Collection) error {
	t, err := tx.Tree(catalogTree)
	if err != nil {
		return fmt.Errorf("catalog: %w", err)
	}
	if _, err := t.Delete([]byte(c.Namespace())); err != nil {
		return fmt.Errorf("catalog: dropping %s: %w", c.Namespace(), err)
	}
	if err := tx.DropTree(c.DataTree()); err != nil && !errors.Is(err, kv.ErrTreeNotFound) {
		return fmt.Errorf("catalog: dropping data of %s: %w", c.Namespace(), err)
	}
	for _, ix := range c.Indexes {
		if ix.IsID() && !c.Capped {
			continue // the data tree is the _id index
		}
		if err := c.DropIndexTrees(tx, ix); err != nil {
			return err
		}
	}
	if c.Capped {
		if err := tx.DropTree(c.MetaTree()); err != nil && !errors.Is(err, kv.ErrTreeNotFound) {
			return fmt.Errorf("catalog: dropping capped figures of %s: %w", c.Namespace(), err)
		}
	}
	return nil
}

// Rename moves c to db.name (same tree, new catalog key) in tx.
func Rename(tx *kv.Tx, c *Collection, db, name string) (*Collection, error) {
	if err := ValidateCollectionName(db, name); err != nil {
		return nil, err
	}
	t, err := tx.Tree(catalogTree)
	if err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	if _, err := t.Delete([]byte(c.Namespace())); err != nil {
		return nil, fmt.Errorf("catalog: renaming %s: %w", c.Namespace(), err)
	}
	n := *c
	n.DB, n.Name = db, name
	if err := Put(tx, &n); err != nil {
		return nil, err
	}
	return &n, nil
}

// AppendInfo appends the collection's listCollections entry to b: name,
// type, and unless nameOnly its options, info (readOnly, uuid) and idIndex.
func (coll *Collection) AppendInfo(b *bson.Builder, nameOnly bool) {
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
	if !coll.Clustered() { // a clustered collection has no _id index
		b.AppendDocument("idIndex", IDIndexSpec())
	}
}
