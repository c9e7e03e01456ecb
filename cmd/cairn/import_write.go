package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	drvbson "go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/cairndb/cairn/bson"
)

// write sends one batch: an unordered insertMany in insert mode (ordered
// with --stopOnError or --maintainInsertionOrder), else a bulk write of
// replaces, updates or deletes keyed by --upsertFields.
func (imp *importer) write(ctx context.Context, batch docBatch) error {
	o := imp.o
	ordered := o.stopOnError || o.maintainOrder
	n := int64(len(batch.docs))
	if o.mode == "insert" {
		return imp.insertBatch(ctx, batch, ordered)
	}
	models := make([]mongo.WriteModel, 0, len(batch.docs))
	for _, d := range batch.docs {
		if m := imp.model(d); m != nil {
			models = append(models, m)
		}
	}
	if len(models) == 0 {
		imp.ok.Add(n)
		return nil
	}
	opts := options.BulkWrite().SetOrdered(ordered)
	if o.bypassValidation {
		opts.SetBypassDocumentValidation(true)
	}
	_, err := imp.coll.BulkWrite(ctx, models, opts)
	if err == nil {
		imp.ok.Add(n)
		return nil
	}
	var bwe mongo.BulkWriteException
	if !errors.As(err, &bwe) || bwe.WriteConcernError != nil || len(bwe.WriteErrors) == 0 {
		return fmt.Errorf("writing the batch that starts at input row %d: %w", batch.firstRow, err)
	}
	errs := make([]writeError, len(bwe.WriteErrors))
	for i, we := range bwe.WriteErrors {
		errs[i] = writeError{Index: we.Index, Code: we.Code, ErrMsg: we.Message}
	}
	return imp.account(batch, len(batch.docs), errs, ordered)
}

// account counts a write of n documents of batch that failed for errs: an
// unordered write goes on past its errors (reported as warnings), an
// ordered one stops the import at its first.
func (imp *importer) account(batch docBatch, n int, errs []writeError, ordered bool) error {
	if len(errs) == 0 {
		imp.ok.Add(int64(n))
		return nil
	}
	if ordered {
		// An ordered write stops at its first error: the documents after it
		// were not written.
		first := errs[0]
		imp.ok.Add(int64(first.Index))
		imp.failed.Add(int64(n - first.Index))
		return fmt.Errorf("input row about %d: %s", batch.firstRow+int64(first.Index), first.ErrMsg)
	}
	imp.ok.Add(int64(n - len(errs)))
	imp.failed.Add(int64(len(errs)))
	for i, we := range errs {
		if i == 5 {
			imp.warn("... and %d more write errors in this batch", len(errs)-5)
			break
		}
		imp.warn("%s", we.ErrMsg)
	}
	return nil
}

// insertBatch inserts the batch, splitting it into commands as needed.
func (imp *importer) insertBatch(ctx context.Context, batch docBatch, ordered bool) error {
	return insertRaw(ctx, imp.coll, batch.docs, ordered, imp.o.bypassValidation, func(off, n int, errs []writeError) error {
		part := docBatch{docs: batch.docs[off : off+n], firstRow: batch.firstRow + int64(off)}
		return imp.account(part, n, errs, ordered)
	})
}

// model is the write of one document in upsert, merge or delete mode; nil
// for a document delete mode has no --upsertFields values to match by.
func (imp *importer) model(d bson.Doc) mongo.WriteModel {
	fields := []string{"_id"}
	if imp.o.upsertFields != "" {
		fields = strings.Split(imp.o.upsertFields, ",")
	}
	var f bson.Builder
	complete := true
	for _, name := range fields {
		v, ok := d.LookupPath(strings.Split(name, ".")...)
		if !ok {
			complete = false
			break
		}
		f.AppendValue(name, v)
	}
	if !complete { // nothing identifies the document: it can only be new
		if imp.o.mode == "delete" {
			return nil // nothing to delete by
		}
		return mongo.NewInsertOneModel().SetDocument(drvbson.Raw(d))
	}
	filter := drvbson.Raw(f.Finish())
	switch imp.o.mode {
	case "upsert":
		return mongo.NewReplaceOneModel().SetFilter(filter).SetReplacement(drvbson.Raw(d)).SetUpsert(true)
	case "merge":
		var u bson.Builder
		u.AppendDocument("$set", withoutID(d))
		return mongo.NewUpdateOneModel().SetFilter(filter).SetUpdate(drvbson.Raw(u.Finish())).SetUpsert(true)
	default: // delete
		return mongo.NewDeleteOneModel().SetFilter(filter)
	}
}

// withoutID returns d without its _id field (merge mode sets the other
// fields; _id is immutable).
func withoutID(d bson.Doc) bson.Doc {
	if _, ok := d.Lookup("_id"); !ok {
		return d
	}
	var b bson.Builder
	it := d.Iter()
	for it.Next() {
		if e := it.Element(); e.Key != "_id" {
			b.AppendElement(e)
		}
	}
	return b.Finish()
}
