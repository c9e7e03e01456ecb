package main

import (
	"context"
	"errors"
	"fmt"

	drvbson "go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/cairndb/cairn/bson"
)

// writeError is one entry of a write command's writeErrors.
type writeError struct {
	Index  int    `bson:"index"`
	Code   int    `bson:"code"`
	ErrMsg string `bson:"errmsg"`
}

// maxInsertCommandBytes bounds one insert command: MongoDB's limit on a
// command document is 16 MiB plus 16 KiB of overhead.
const maxInsertCommandBytes = 15 << 20

// insertRaw inserts raw documents with insert commands whose documents
// array holds them as they are. (The driver's InsertMany re-encodes every
// document field by field; a raw command is copied whole, which halves the
// client's CPU time on wide rows.) Documents that do not fit one command
// are split over several; after each, done is called with the offset and
// count of the documents it carried and the write errors it reported
// (their Index relative to off). A command error, or an error done
// returns, ends the insert.
func insertRaw(ctx context.Context, coll *mongo.Collection, docs []bson.Doc, ordered, bypassValidation bool,
	done func(off, n int, errs []writeError) error) error {
	off := 0
	for off < len(docs) {
		size, n := 0, 0
		for off+n < len(docs) && (n == 0 || size+len(docs[off+n])+16 <= maxInsertCommandBytes) {
			size += len(docs[off+n]) + 16
			n++
		}
		var b bson.Builder
		b.Reset(make([]byte, 0, size+256))
		b.AppendString("insert", coll.Name())
		b.StartArray("documents")
		for i, d := range docs[off : off+n] {
			b.AppendDocument(bson.Index(i), d)
		}
		b.End()
		b.AppendBool("ordered", ordered)
		if bypassValidation {
			b.AppendBool("bypassDocumentValidation", true)
		}
		var reply struct {
			WriteErrors []writeError `bson:"writeErrors"`
		}
		err := coll.Database().RunCommand(ctx, drvbson.Raw(b.Finish())).Decode(&reply)
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
			return fmt.Errorf("inserting into %s: %w", coll.Name(), err)
		}
		if err := done(off, n, reply.WriteErrors); err != nil {
			return err
		}
		off += n
	}
	return nil
}
