package exec

import (
	"slices"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/agg"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/index"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/oplog"
	"github.com/cairndb/cairn/kv"
)

// CheckNotView refuses $out/$merge into a view.
func CheckNotView(coll *catalog.Collection) error {
	if _, _, ok := coll.View(); ok {
		return ErrOnView(coll.Namespace())
	}
	return nil
}

// ClearCollection removes every document of w's collection through the
// writer (so indexes follow).
func ClearCollection(w *CollWriter) error {
	type kvPair struct{ k, v []byte }
	var all []kvPair
	cur := w.Data.Cursor()
	for key, val := cur.First(); key != nil; key, val = cur.Next() {
		all = append(all, kvPair{append([]byte(nil), key...), append([]byte(nil), val...)})
	}
	if err := cur.Err(); err != nil {
		return err
	}
	for _, p := range all {
		if err := w.Remove(p.k, bson.Doc(p.v)); err != nil {
			return err
		}
	}
	return nil
}

// HasUniqueIndexOn reports whether coll has a unique, non-partial index
// whose key fields are exactly fields (in any order).
func HasUniqueIndexOn(coll *catalog.Collection, fields []string) bool {
	for _, ix := range coll.Indexes {
		spec, err := index.ParseCached(ix.Spec)
		if err != nil || !spec.Unique || spec.Partial != nil || !ix.Ready || len(spec.Fields) != len(fields) {
			continue
		}
		all := true
		for _, f := range spec.Fields {
			if f.Hashed || !slices.Contains(fields, f.Path) {
				all = false
			}
		}
		if all {
			return true
		}
	}
	return false
}

// Merger applies $merge documents to the target.
type Merger struct {
	Spec *agg.MergeSpec
	W    *CollWriter
	NS   string
	// byOn maps the 'on' key of target documents to their storage keys
	// (only when matching on fields other than _id).
	byOn map[string][]byte
	key  []byte
}

// IndexTarget indexes the target's documents by their 'on' key, for a $merge
// that matches on fields other than _id.
func (m *Merger) IndexTarget() error {
	m.byOn = map[string][]byte{}
	cur := m.W.Data.Cursor()
	for key, val := cur.First(); key != nil; key, val = cur.Next() {
		on, err := m.Spec.OnKey(nil, bson.Doc(val))
		if err != nil {
			continue // documents without the fields match nothing
		}
		m.byOn[string(on)] = append([]byte(nil), key...)
	}
	return cur.Err()
}

func (m *Merger) Merge(d bson.Doc) error {
	var storageKey []byte
	var onKey []byte
	if m.Spec.OnID() {
		var id bson.Value
		var err error
		if d, id, err = PrepareInsert(d); err != nil {
			return err
		}
		if m.W.Coll.Capped {
			key, _, err := LookupID(m.W.tx, m.W.Coll, m.W.Data, m.key[:0], id)
			if err != nil {
				return err
			}
			m.key, storageKey = key, key
		} else {
			m.key = DocKey(m.key[:0], id)
			storageKey = m.key
		}
	} else {
		var err error
		if onKey, err = m.Spec.OnKey(nil, d); err != nil {
			return err
		}
		storageKey = m.byOn[string(onKey)]
	}
	var existing bson.Doc
	if storageKey != nil {
		old, err := m.W.Data.Get(storageKey)
		if err != nil {
			return err
		}
		if old != nil {
			existing = append(bson.Doc(nil), old...)
		}
	}
	out, action, err := m.Spec.Resolve(existing, d)
	if err != nil {
		return err
	}
	switch action {
	case agg.MergeInsert:
		if existing != nil {
			id, _ := existing.Lookup("_id")
			return DuplicateKey(m.NS, id)
		}
		if _, _, err := m.W.Insert(out); err != nil {
			return err
		}
		if m.byOn != nil {
			m.byOn[string(onKey)] = append([]byte(nil), m.W.key...) // its record key
		}
	case agg.MergeReplace:
		oldID, _ := existing.Lookup("_id")
		if _, ok := out.Lookup("_id"); !ok {
			var b bson.Builder
			b.AppendValue("_id", oldID)
			it := out.Iter()
			for it.Next() {
				b.AppendElement(it.Element())
			}
			out = b.Finish()
		}
		out, newID, err := PrepareInsert(out)
		if err != nil {
			return err
		}
		if !bson.Equal(newID, oldID) {
			return mongoerr.New(mongoerr.ImmutableField, "$merge failed to update the matching document, did you attempt to modify the _id or the shard key?")
		}
		write := m.W.Update // merge and pipelines update (a $v: 2 diff in the oplog)
		if m.Spec.WhenMatched == "replace" {
			write = m.W.Replace
		}
		if err := write(append([]byte(nil), storageKey...), existing, out); err != nil {
			return err
		}
	}
	return nil
}

// CollectionForWrite returns db.name, creating it (implicitly, as an insert
// or upsert does) when create is set; the creation is logged to log (nil:
// none).
func CollectionForWrite(tx *kv.Tx, db, name string, create bool, log *oplog.Log) (*catalog.Collection, error) {
	coll, err := catalog.Get(tx, db, name)
	if err != nil || coll != nil || !create {
		return coll, err
	}
	if coll, err = catalog.Create(tx, db, name, nil); err != nil {
		return nil, err
	}
	if err := log.Create(tx, coll); err != nil {
		return nil, err
	}
	return coll, nil
}
