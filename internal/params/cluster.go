package params

// Cluster parameters: setClusterParameter and getClusterParameter for
// the one cluster parameter Cairn has, changeStreamOptions
// ({preAndPostImages: {expireAfterSeconds: <seconds> | "off"}}): how long
// pre-images are kept (internal/oplog/preimage.go). The command layer
// stores it with the oplog, so it survives restarts, as mongod's
// config.clusterParameters document; this file reads and answers it.

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// ChangeStreamOptions is the cluster parameter's name.
const ChangeStreamOptions = "changeStreamOptions"

// ParseSetClusterParameter reads setClusterParameter's document
// ({<name>: <value>}, exactly one field) and returns the parameter's value
// as stored.
func ParseSetClusterParameter(param bson.Doc) (bson.Doc, error) {
	it := param.Iter()
	if !it.Next() || param.Len() != 1 {
		return nil, mongoerr.New(mongoerr.IllegalOperation, "Cluster parameter value must be a document with exactly one field, the parameter's name")
	}
	el := it.Element()
	if el.Key != ChangeStreamOptions {
		return nil, mongoerr.New(mongoerr.NoSuchKey, "Unknown Cluster Parameter %s", el.Key)
	}
	if el.Value.Type != bson.TypeDocument {
		return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'changeStreamOptions' is the wrong type '%s', expected type 'object'", el.Value.Type)
	}
	return ParseChangeStreamOptions(el.Value.Document())
}

// ParseChangeStreamOptions checks changeStreamOptions and returns it as
// stored: {preAndPostImages: {expireAfterSeconds: <long> | "off"}} (nil d:
// the default, "off").
func ParseChangeStreamOptions(d bson.Doc) (bson.Doc, error) {
	var b bson.Builder
	b.StartDocument("preAndPostImages")
	expire := false
	it := d.Iter()
	for it.Next() {
		e := it.Element()
		if e.Key != "preAndPostImages" {
			return nil, mongoerr.New(mongoerr.IDLUnknownField, "BSON field 'changeStreamOptions.%s' is an unknown field.", e.Key)
		}
		if e.Value.Type != bson.TypeDocument {
			return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'changeStreamOptions.preAndPostImages' is the wrong type '%s', expected type 'object'", e.Value.Type)
		}
		pit := e.Value.Document().Iter()
		for pit.Next() {
			pe := pit.Element()
			if pe.Key != "expireAfterSeconds" {
				return nil, mongoerr.New(mongoerr.IDLUnknownField, "BSON field 'changeStreamOptions.preAndPostImages.%s' is an unknown field.", pe.Key)
			}
			switch n, isNum := pe.Value.AsInt64(); {
			case pe.Value.Type == bson.TypeString && pe.Value.StringValue() == "off":
				b.AppendString("expireAfterSeconds", "off")
			case pe.Value.IsNumber() && isNum && n > 0:
				b.AppendInt64("expireAfterSeconds", n)
			default:
				return nil, mongoerr.New(mongoerr.BadValue, "Expected 'expireAfterSeconds' to be either 'off' or a positive number, but found %s", pe.Value.String())
			}
			expire = true
		}
	}
	if !expire {
		b.AppendString("expireAfterSeconds", "off")
	}
	b.End()
	return b.Finish(), nil
}

// CheckClusterParameterNames refuses a name getClusterParameter does not
// know ("*" is every parameter).
func CheckClusterParameterNames(names []string) error {
	for _, n := range names {
		if n != "*" && n != ChangeStreamOptions {
			return mongoerr.New(mongoerr.NoSuchKey, "Unknown Cluster Parameter %s", n)
		}
	}
	return nil
}

// AppendClusterParameters appends getClusterParameter's answer: the array
// clusterParameters holding changeStreamOptions as stored (nil: never
// set, the default).
func AppendClusterParameters(r *bson.Builder, changeStreamOptions bson.Doc) {
	if changeStreamOptions == nil {
		changeStreamOptions, _ = ParseChangeStreamOptions(nil)
	}
	r.StartArray("clusterParameters")
	r.StartDocument("0")
	r.AppendString("_id", ChangeStreamOptions)
	it := changeStreamOptions.Iter()
	for it.Next() {
		r.AppendElement(it.Element())
	}
	r.End()
	r.End()
}
