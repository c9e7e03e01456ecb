package catalog

// Capped collections. A capped collection's data tree is keyed by a record
// id, an 8-byte big-endian uint64 given in insertion order, instead of by
// the encoded _id: a scan of the tree is insertion order ($natural), the
// oldest document is the tree's first key, and a tailable cursor resumes
// after the last record id it returned. Its _id index is then an index tree
// of its own (i:<uuid>:_id_, unique, values holding the record key, like
// every index entry), so every path that finds a document by _id goes
// through it (exec's records.go); collections created with autoIndexId:
// false (only in "local", as mongod) and local.oplog.rs have none.
//
// The capped figures tree m:<uuid> holds the next record id and the total
// bytes of the documents, updated by the collection writer in the
// transaction of each write, so that capping never scans. local.oplog.rs,
// which the oplog writes directly (its record id is the entry's ts), has no
// figures tree: its truncation is the oplog's.

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/kv"
)

// OplogNamespace is the replica set's oplog.
const OplogNamespace = "local.oplog.rs"

// RecordKeyLen is the length of a capped collection's record keys.
const RecordKeyLen = 8

// AppendRecordKey appends record id rid's data tree key.
func AppendRecordKey(dst []byte, rid uint64) []byte {
	return binary.BigEndian.AppendUint64(dst, rid)
}

// RecordID decodes a record key (ok=false: not one).
func RecordID(key []byte) (uint64, bool) {
	if len(key) != RecordKeyLen {
		return 0, false
	}
	return binary.BigEndian.Uint64(key), true
}

// MetaTree names the tree of a capped collection's figures (next record id,
// data size).
func (c *Collection) MetaTree() string { return "m:" + hex.EncodeToString(c.UUID[:]) }

// IsOplog reports whether c is local.oplog.rs.
func (c *Collection) IsOplog() bool { return c.DB == "local" && c.Name == "oplog.rs" }

// HasIDIndex reports whether c has an _id index.
func (c *Collection) HasIDIndex() bool {
	for _, ix := range c.Indexes {
		if ix.IsID() {
			return true
		}
	}
	return false
}

// setCapped reads the capped options.
func (c *Collection) setCapped() {
	c.Capped, c.CappedSize, c.CappedMax = false, 0, 0
	if len(c.Options) == 0 {
		return
	}
	v, ok := c.Options.Lookup("capped")
	if !ok || !v.Truthy() {
		return
	}
	c.Capped = true
	if s, ok := c.Options.Lookup("size"); ok {
		c.CappedSize, _ = s.AsInt64()
	}
	if m, ok := c.Options.Lookup("max"); ok {
		c.CappedMax, _ = m.AsInt64()
	}
}

// createCappedTrees creates a new capped collection's figures tree and,
// when it has one, its _id index tree.
func (c *Collection) createCappedTrees(tx *kv.Tx) error {
	if _, err := tx.CreateTree(c.MetaTree()); err != nil {
		return fmt.Errorf("catalog: creating capped figures of %s: %w", c.Namespace(), err)
	}
	if c.HasIDIndex() {
		if _, err := tx.CreateTree(c.IndexTree("_id_")); err != nil {
			return fmt.Errorf("catalog: creating _id index of %s: %w", c.Namespace(), err)
		}
	}
	return nil
}

// CappedOptions builds the stored options {capped: true, size, max} (max
// left out when 0), followed by the elements of rest.
func CappedOptions(size, max int64, rest bson.Doc) bson.Doc {
	var b bson.Builder
	b.AppendBool("capped", true)
	appendNumber(&b, "size", size)
	if max > 0 {
		appendNumber(&b, "max", max)
	}
	if len(rest) > 0 {
		it := rest.Iter()
		for it.Next() {
			switch it.Element().Key {
			case "capped", "size", "max":
			default:
				b.AppendElement(it.Element())
			}
		}
	}
	return b.Finish()
}

// appendNumber appends n as an int32 when it fits, as mongod's
// appendNumber stores collection options.
func appendNumber(b *bson.Builder, key string, n int64) {
	if n < 1<<31 {
		b.AppendInt32(key, int32(n))
		return
	}
	b.AppendInt64(key, n)
}

// Capped figures keys.
var (
	metaNext = []byte("next")
	metaSize = []byte("size")
)

// CappedFigures are a capped collection's next record id and data size.
type CappedFigures struct {
	t    *kv.Tree // nil: the collection has no figures tree (the oplog)
	Next uint64
	Size int64
}

// ReadCappedFigures reads c's figures in tx (a zero value without a tree).
func ReadCappedFigures(tx *kv.Tx, c *Collection) (*CappedFigures, error) {
	t, err := tx.Tree(c.MetaTree())
	if errors.Is(err, kv.ErrTreeNotFound) {
		return &CappedFigures{Next: 1}, nil // no figures tree: the oplog
	}
	if err != nil {
		return nil, fmt.Errorf("catalog: capped figures of %s: %w", c.Namespace(), err)
	}
	f := &CappedFigures{t: t, Next: 1}
	if v, err := t.Get(metaNext); err != nil {
		return nil, fmt.Errorf("catalog: capped figures of %s: %w", c.Namespace(), err)
	} else if len(v) == 8 {
		f.Next = binary.BigEndian.Uint64(v)
	}
	if v, err := t.Get(metaSize); err != nil {
		return nil, fmt.Errorf("catalog: capped figures of %s: %w", c.Namespace(), err)
	} else if len(v) == 8 {
		f.Size = int64(binary.BigEndian.Uint64(v))
	}
	return f, nil
}

// Tracked reports whether the figures are kept (not for the oplog).
func (f *CappedFigures) Tracked() bool { return f.t != nil }

// Write stores the figures in the write transaction.
func (f *CappedFigures) Write() error {
	if f.t == nil {
		return nil
	}
	if err := f.t.Put(metaNext, binary.BigEndian.AppendUint64(nil, f.Next)); err != nil {
		return fmt.Errorf("catalog: capped figures: %w", err)
	}
	if err := f.t.Put(metaSize, binary.BigEndian.AppendUint64(nil, uint64(f.Size))); err != nil {
		return fmt.Errorf("catalog: capped figures: %w", err)
	}
	return nil
}
