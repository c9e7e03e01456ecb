package exec

import (
	"bytes"
	"context"
	"fmt"
	"sort"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/index"
	"github.com/cairndb/cairn/kv"
)

// Validation is what ValidateCollection found in one collection.
type Validation struct {
	// Indexes are the ready indexes: the ones validated (an index being
	// built is not complete yet).
	Indexes               []catalog.Index
	NRecords, InvalidDocs int64
	KeysPerIndex          map[string]int64 // entries found, by index name
	IndexValid            map[string]bool
	Errors, Warnings      []string
}

// ValidateCollection checks coll, read in tx, against its indexes (the
// validate command): every document is well-formed BSON under its _id key,
// and every index holds exactly the entries its documents produce. full
// also runs the storage engine's page checker over the whole file.
// Inconsistencies are reported in the Validation; the error is the
// failure to read the collection at all.
func (e *Engine) ValidateCollection(ctx context.Context, tx *kv.Tx, coll *catalog.Collection, full bool) (*Validation, error) {
	// An index being built is not complete yet: it is not validated.
	var indexes []catalog.Index
	for _, ix := range coll.Indexes {
		if ix.Ready {
			indexes = append(indexes, ix)
		}
	}
	data, err := DataTree(tx, coll)
	if err != nil {
		return nil, err
	}
	var errs, warnings []string
	// Expected entries per index, from the documents.
	type entry struct{ key, val []byte }
	type want struct {
		spec    *index.Spec
		entries []entry
	}
	wants := map[string]*want{}
	for _, ix := range indexes {
		if ix.IsID() && !coll.Capped {
			continue // the data tree
		}
		spec, err := index.ParseCached(ix.Spec)
		if err != nil {
			errs = append(errs, fmt.Sprintf("index %s has an invalid specification: %v", ix.Name, err))
			continue
		}
		if spec.IsID() {
			u := *spec
			u.Unique = true
			spec = &u
		}
		wants[ix.Name] = &want{spec: spec}
	}
	var nrecords, invalidDocs, dataSize int64
	var lastRID uint64
	cur := data.Cursor()
	for k, v := cur.First(); k != nil; k, v = cur.Next() {
		nrecords++
		if err := bson.Validate(v, bson.MaxDepth); err != nil {
			invalidDocs++
			errs = append(errs, fmt.Sprintf("document under key %x is not valid BSON: %v", k, err))
			continue
		}
		id, ok := bson.Doc(v).Lookup("_id")
		dataSize += int64(len(v))
		if coll.Capped {
			rid, isRID := catalog.RecordID(k)
			if !isRID {
				invalidDocs++
				errs = append(errs, fmt.Sprintf("document under key %x of capped collection has no record id key", k))
			}
			lastRID = rid
		} else if !ok || !bytes.Equal(DocKey(nil, id), k) {
			invalidDocs++
			errs = append(errs, fmt.Sprintf("document under key %x does not have that _id", k))
		}
		for _, w := range wants {
			if !w.spec.Applies(v) {
				continue
			}
			keys, _, err := w.spec.Keys(v)
			if err != nil {
				errs = append(errs, fmt.Sprintf("index %s cannot index document %s: %v", w.spec.Name, id.String(), err))
				continue
			}
			for _, key := range keys {
				ek, ev := w.spec.EntryOf(key, k)
				w.entries = append(w.entries, entry{ek, ev})
			}
		}
	}
	if err := cur.Err(); err != nil {
		errs = append(errs, fmt.Sprintf("reading the collection: %v", err))
	}
	keysPerIndex := map[string]int64{}
	indexValid := map[string]bool{}
	if !coll.Capped {
		if !coll.Clustered() { // a clustered collection has no _id index
			keysPerIndex["_id_"], indexValid["_id_"] = nrecords, true
		}
	} else if f, err := catalog.ReadCappedFigures(tx, coll); err != nil {
		errs = append(errs, fmt.Sprintf("reading the capped figures: %v", err))
	} else if f.Tracked() && (f.Size != dataSize || (nrecords > 0 && f.Next <= lastRID)) {
		errs = append(errs, fmt.Sprintf("capped figures (size %d, next record id %d) disagree with the data (size %d, last record id %d)", f.Size, f.Next, dataSize, lastRID))
	}
	for name, w := range wants {
		t, err := tx.Tree(coll.IndexTree(name))
		if err != nil {
			errs = append(errs, fmt.Sprintf("index %s has no storage: %v", name, err))
			indexValid[name] = false
			continue
		}
		sort.Slice(w.entries, func(i, j int) bool { return bytes.Compare(w.entries[i].key, w.entries[j].key) < 0 })
		ok := true
		i := 0
		ic := t.Cursor()
		var have int64
		for k, v := ic.First(); k != nil; k, v = ic.Next() {
			have++
			if i < len(w.entries) && bytes.Equal(w.entries[i].key, k) && bytes.Equal(w.entries[i].val, v) {
				i++
				continue
			}
			ok = false
		}
		if i != len(w.entries) || int64(len(w.entries)) != have {
			ok = false
		}
		if !ok {
			errs = append(errs, fmt.Sprintf("index %s is inconsistent with the collection: %d entries, %d expected", name, have, len(w.entries)))
		}
		keysPerIndex[name] = have
		indexValid[name] = ok
	}
	if full {
		if err := e.KV.Check(ctx); err != nil {
			errs = append(errs, fmt.Sprintf("storage engine check: %v", err))
		}
	}
	return &Validation{Indexes: indexes, NRecords: nrecords, InvalidDocs: invalidDocs, KeysPerIndex: keysPerIndex,
		IndexValid: indexValid, Errors: errs, Warnings: warnings}, nil
}

// AppendReply appends validate's reply fields for the collection ns to r,
// as mongod names them (Cairn repairs nothing and lists no individual
// extra, missing or corrupt entries: the errors describe them).
func (v *Validation) AppendReply(r *bson.Builder, ns string) {
	r.AppendString("ns", ns)
	r.AppendInt64("nInvalidDocuments", v.InvalidDocs)
	r.AppendInt64("nNonCompliantDocuments", 0)
	r.AppendInt64("nrecords", v.NRecords)
	r.AppendInt32("nIndexes", int32(len(v.Indexes)))
	r.StartDocument("keysPerIndex")
	for _, ix := range v.Indexes {
		r.AppendInt64(ix.Name, v.KeysPerIndex[ix.Name])
	}
	r.End()
	r.StartDocument("indexDetails")
	for _, ix := range v.Indexes {
		r.StartDocument(ix.Name)
		r.AppendBool("valid", v.IndexValid[ix.Name])
		r.End()
	}
	r.End()
	r.AppendBool("valid", len(v.Errors) == 0)
	r.AppendBool("repaired", false)
	appendStrings(r, "warnings", v.Warnings)
	appendStrings(r, "errors", v.Errors)
	r.StartArray("extraIndexEntries")
	r.End()
	r.StartArray("missingIndexEntries")
	r.End()
	r.StartArray("corruptRecords")
	r.End()
}

func appendStrings(r *bson.Builder, key string, ss []string) {
	r.StartArray(key)
	for i, s := range ss {
		r.AppendString(bson.Index(i), s)
	}
	r.End()
}
