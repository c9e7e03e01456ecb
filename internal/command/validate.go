package command

import (
	"bytes"
	"fmt"
	"sort"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/index"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// validate checks a collection against its indexes: every document is
// well-formed BSON under its _id key, and every index holds exactly the
// entries its documents produce. full: true also runs the storage engine's
// page checker over the whole file.
func validate(c *Ctx) error {
	a := newArgs(c)
	if err := a.check("full", "repair", "metadata", "checkBSONConformance", "background", "scandata"); err != nil {
		return err
	}
	name, err := c.collectionArg()
	if err != nil {
		return err
	}
	if rep, _, _ := a.boolean("repair"); rep {
		return mongoerr.New(mongoerr.CommandNotSupported, "validate with repair is not supported by Cairn")
	}
	full, _, err := a.boolean("full")
	if err != nil {
		return err
	}
	tx, coll, err := c.snapshotCollection(name)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if coll == nil {
		return mongoerr.New(mongoerr.NamespaceNotFound, "Collection '%s.%s' does not exist to validate.", c.DB, name)
	}
	// An index being built is not complete yet: it is not validated.
	var indexes []catalog.Index
	for _, ix := range coll.Indexes {
		if ix.Ready {
			indexes = append(indexes, ix)
		}
	}
	data, err := exec.DataTree(tx, coll)
	if err != nil {
		return err
	}
	var errs, warnings []string
	// Expected entries per index, from the documents.
	type want struct {
		spec    *index.Spec
		entries [][]byte
	}
	wants := map[string]*want{}
	for _, ix := range indexes {
		if ix.Name == "_id_" {
			continue
		}
		spec, err := index.ParseCached(ix.Spec)
		if err != nil {
			errs = append(errs, fmt.Sprintf("index %s has an invalid specification: %v", ix.Name, err))
			continue
		}
		wants[ix.Name] = &want{spec: spec}
	}
	var nrecords, invalidDocs int64
	cur := data.Cursor()
	for k, v := cur.First(); k != nil; k, v = cur.Next() {
		nrecords++
		if err := bson.Validate(v, bson.MaxDepth); err != nil {
			invalidDocs++
			errs = append(errs, fmt.Sprintf("document under key %x is not valid BSON: %v", k, err))
			continue
		}
		id, ok := bson.Doc(v).Lookup("_id")
		if !ok || !bytes.Equal(exec.DocKey(nil, id), k) {
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
				e := append([]byte(nil), key...)
				if !w.spec.Unique {
					e = append(e, k...)
				}
				w.entries = append(w.entries, e)
			}
		}
	}
	if err := cur.Err(); err != nil {
		errs = append(errs, fmt.Sprintf("reading the collection: %v", err))
	}
	keysPerIndex := map[string]int64{"_id_": nrecords}
	indexValid := map[string]bool{"_id_": true}
	for name, w := range wants {
		t, err := tx.Tree(coll.IndexTree(name))
		if err != nil {
			errs = append(errs, fmt.Sprintf("index %s has no storage: %v", name, err))
			indexValid[name] = false
			continue
		}
		sort.Slice(w.entries, func(i, j int) bool { return bytes.Compare(w.entries[i], w.entries[j]) < 0 })
		ok := true
		i := 0
		ic := t.Cursor()
		var have int64
		for k, _ := ic.First(); k != nil; k, _ = ic.Next() {
			have++
			if i < len(w.entries) && bytes.Equal(w.entries[i], k) {
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
		if err := c.Env.KV.Check(c); err != nil {
			errs = append(errs, fmt.Sprintf("storage engine check: %v", err))
		}
	}
	r := c.Reply
	r.AppendString("ns", coll.Namespace())
	r.AppendInt64("nInvalidDocuments", invalidDocs)
	r.AppendInt64("nNonCompliantDocuments", 0)
	r.AppendInt64("nrecords", nrecords)
	r.AppendInt32("nIndexes", int32(len(indexes)))
	r.StartDocument("keysPerIndex")
	for _, ix := range indexes {
		r.AppendInt64(ix.Name, keysPerIndex[ix.Name])
	}
	r.End()
	r.StartDocument("indexDetails")
	for _, ix := range indexes {
		r.StartDocument(ix.Name)
		r.AppendBool("valid", indexValid[ix.Name])
		r.End()
	}
	r.End()
	r.AppendBool("valid", len(errs) == 0)
	r.AppendBool("repaired", false)
	appendStrings(r, "warnings", warnings)
	appendStrings(r, "errors", errs)
	r.StartArray("extraIndexEntries")
	r.End()
	r.StartArray("missingIndexEntries")
	r.End()
	r.StartArray("corruptRecords")
	r.End()
	return nil
}

func appendStrings(r *bson.Builder, key string, ss []string) {
	r.StartArray(key)
	for i, s := range ss {
		r.AppendString(bson.Index(i), s)
	}
	r.End()
}

// fsync makes every acknowledged write durable and checkpoints the data
// files, as mongod's fsync does. fsync with lock (fsyncLock) is not
// supported.
func fsyncCmd(c *Ctx) error {
	a := newArgs(c)
	if err := a.check("lock", "async", "forBackup", "fsyncLockAcquisitionTimeoutMillis"); err != nil {
		return err
	}
	if lock, _, _ := a.boolean("lock"); lock {
		return mongoerr.New(mongoerr.CommandNotSupported, "fsync with lock: true (fsyncLock) is not supported by Cairn")
	}
	if err := c.Env.KV.Checkpoint(c); err != nil {
		return fmt.Errorf("fsync: %w", err)
	}
	c.Reply.AppendInt32("numFiles", 1)
	return nil
}
