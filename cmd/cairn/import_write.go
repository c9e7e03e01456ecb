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

// writeError is one entry of a write command's writeErrors.
type writeError struct {
	Index  int    `bson:"index"`
	Code   int    `bson:"code"`
	ErrMsg string `bson:"errmsg"`
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

// maxInsertCommandBytes bounds one insert command: MongoDB's limit on a
// command document is 16 MiB plus 16 KiB of overhead.
const maxInsertCommandBytes = 15 << 20

// insertBatch sends the batch as insert commands built directly from the
// raw documents. (The driver's InsertMany re-encodes every document field
// by field; a command whose documents array holds the raw documents is
// copied whole, which makes imports of wide rows about twice as fast.)
// Batches larger than a command can hold are split.
func (imp *importer) insertBatch(ctx context.Context, batch docBatch, ordered bool) error {
	docs := batch.docs
	for len(docs) > 0 {
		size, n := 0, 0
		for n < len(docs) && (n == 0 || size+len(docs[n])+16 <= maxInsertCommandBytes) {
			size += len(docs[n]) + 16
			n++
		}
		var b bson.Builder
		b.Reset(make([]byte, 0, size+256))
		b.AppendString("insert", imp.o.coll)
		b.StartArray("documents")
		for i, d := range docs[:n] {
			b.AppendDocument(bson.Index(i), d)
		}
		b.End()
		b.AppendBool("ordered", ordered)
		if imp.o.bypassValidation {
			b.AppendBool("bypassDocumentValidation", true)
		}
		var reply struct {
			WriteErrors []writeError `bson:"writeErrors"`
		}
		err := imp.coll.Database().RunCommand(ctx, drvbson.Raw(b.Finish())).Decode(&reply)
		var we mongo.WriteException
		if errors.As(err, &we) && we.WriteConcernError == nil && len(we.WriteErrors) > 0 {
			// The driver turns a reply with writeErrors into an error.
			reply.WriteErrors = reply.WriteErrors[:0]
			for _, e := range we.WriteErrors {
				reply.WriteErrors = append(reply.WriteErrors, writeError{Index: e.Index, Code: e.Code, ErrMsg: e.Message})
			}
			err = nil
		}
		if err != nil {
			return fmt.Errorf("inserting the batch that starts at input row %d: %w", batch.firstRow, err)
		}
		part := docBatch{docs: docs[:n], firstRow: batch.firstRow}
		if err := imp.account(part, n, reply.WriteErrors, ordered); err != nil {
			return err
		}
		docs = docs[n:]
		batch.firstRow += int64(n)
	}
	return nil
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
