package exec

import (
	"errors"
	"fmt"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// checkID rejects _id values MongoDB does not allow.
func checkID(id bson.Value) error {
	switch id.Type {
	case bson.TypeArray:
		return mongoerr.New(mongoerr.InvalidIdField, "The '_id' value cannot be of type array")
	case bson.TypeRegex:
		return mongoerr.New(mongoerr.InvalidIdField, "can't use a regex for _id")
	case bson.TypeUndefined:
		return mongoerr.New(mongoerr.InvalidIdField, "can't use a undefined for _id")
	case bson.TypeDocument:
		return checkIDFields(id.Document())
	}
	return nil
}

// checkIDFields rejects '$'-prefixed field names anywhere inside an _id
// document, as MongoDB's storage validation does.
func checkIDFields(d bson.Doc) error {
	it := d.Iter()
	for it.Next() {
		e := it.Element()
		if len(e.Key) > 0 && e.Key[0] == '$' {
			return mongoerr.New(mongoerr.DollarPrefixedFieldName, "_id fields may not contain '$'-prefixed fields: %s is not valid for storage.", e.Key)
		}
		if e.Value.Type == bson.TypeDocument || e.Value.Type == bson.TypeArray {
			if err := checkIDFields(e.Value.Document()); err != nil {
				return err
			}
		}
	}
	return nil
}

// PrepareInsert validates a document for insertion and returns it with _id
// first (generating an ObjectId if it has none), and its _id.
func PrepareInsert(doc bson.Doc) (bson.Doc, bson.Value, error) {
	if len(doc) > MaxBSONObjectSize {
		return nil, bson.Value{}, mongoerr.New(mongoerr.BadValue, "object to insert too large. size in bytes: %d, max size: %d", len(doc), MaxBSONObjectSize)
	}
	if err := bson.Validate(doc, bson.MaxDepth); err != nil {
		var ve *bson.ValidationError
		if errors.As(err, &ve) && ve.TooDeep {
			return nil, bson.Value{}, mongoerr.New(mongoerr.Overflow, "Document exceeds maximum nesting depth of %d", bson.MaxDepth)
		}
		return nil, bson.Value{}, mongoerr.New(mongoerr.InvalidBSON, "invalid document: %v", err)
	}
	it := doc.Iter()
	first := true
	for it.Next() {
		e := it.Element()
		if e.Key == "_id" {
			if err := checkID(e.Value); err != nil {
				return nil, bson.Value{}, err
			}
			// A second top-level _id would be stored and never found
			// (mongod: "can't have multiple _id fields in one document").
			rest := it
			for rest.Next() {
				if rest.Element().Key == "_id" {
					return nil, bson.Value{}, mongoerr.New(mongoerr.BadValue, "can't have multiple _id fields in one document")
				}
			}
			if first {
				return doc, e.Value, nil
			}
			// Move _id to the front, as MongoDB stores it.
			var b bson.Builder
			b.AppendValue("_id", e.Value)
			it2 := doc.Iter()
			for it2.Next() {
				if it2.Element().Key != "_id" {
					b.AppendElement(it2.Element())
				}
			}
			out := b.Finish()
			id, _ := out.Lookup("_id")
			return out, id, nil
		}
		first = false
	}
	var b bson.Builder
	b.AppendObjectID("_id", NewObjectID())
	it = doc.Iter()
	for it.Next() {
		b.AppendElement(it.Element())
	}
	out := b.Finish()
	if len(out) > MaxBSONObjectSize {
		return nil, bson.Value{}, mongoerr.New(mongoerr.BadValue, "object to insert too large. size in bytes: %d, max size: %d", len(out), MaxBSONObjectSize)
	}
	id, _ := out.Lookup("_id")
	return out, id, nil
}

// DuplicateKey builds MongoDB's E11000 error for the _id index.
func DuplicateKey(ns string, id bson.Value) error {
	var b bson.Builder
	b.StartDocument("keyPattern")
	b.AppendInt32("_id", 1)
	b.End()
	b.StartDocument("keyValue")
	b.AppendValue("_id", id)
	b.End()
	extra := b.Finish()
	return &mongoerr.Error{Code: mongoerr.DuplicateKey,
		Message: fmt.Sprintf("E11000 duplicate key error collection: %s index: _id_ dup key: { _id: %s }", ns, id.String()),
		Extra:   extra}
}

// ErrOnView is MongoDB's error for a write or DDL aimed at a view.
func ErrOnView(ns string) error {
	return mongoerr.New(mongoerr.CommandNotSupportedOnView, "Namespace %s is a view, not a collection", ns)
}

// MaxBSONObjectSize is the largest document a write may store (16 MiB).
const MaxBSONObjectSize = 16 * 1024 * 1024
