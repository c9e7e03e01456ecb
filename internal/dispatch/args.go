package dispatch

import (
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
)

// Generic fields any command may carry (MongoDB's generic command arguments).
var genericFields = map[string]bool{
	"$db": true, "lsid": true, "txnNumber": true, "$clusterTime": true, "$readPreference": true,
	"comment": true, "maxTimeMS": true, "writeConcern": true, "readConcern": true, "apiVersion": true,
	"apiStrict": true, "apiDeprecationErrors": true, "$audit": true, "$client": true,
	"mayBypassWriteBlocking": true, "autocommit": true, "startTransaction": true, "stmtId": true,
	"$configServerState": true, "$topologyTime": true, "$gleStats": true, "$oplogQueryData": true,
	"$replData": true, "clientOperationKey": true, "$queryOptions": true, "readPreference": true,
}

// Args gives typed access to a command's fields with MongoDB's IDL errors.
type Args struct {
	Cmd  string
	Body bson.Doc
}

func NewArgs(c *Ctx) Args { return Args{Cmd: c.Name, Body: c.Body} }

// Check rejects fields that are neither generic nor in known, with
// MongoDB's IDLUnknownField error (40415).
func (a Args) Check(known ...string) error {
	it := a.Body.Iter()
	it.Next() // the command name itself
	for it.Next() {
		k := it.Element().Key
		if genericFields[k] {
			continue
		}
		found := false
		for _, n := range known {
			if n == k {
				found = true
				break
			}
		}
		if !found {
			return mongoerr.New(mongoerr.IDLUnknownField, "BSON field '%s.%s' is an unknown field.", a.Cmd, k)
		}
	}
	return nil
}

func (a Args) First() bson.Value {
	it := a.Body.Iter()
	it.Next()
	return it.Element().Value
}

func (a Args) WrongType(field string, v bson.Value, expected string) error {
	return mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s.%s' is the wrong type '%s', expected type '%s'", a.Cmd, field, v.Type, expected)
}

func (a Args) WrongTypes(field string, v bson.Value, expected string) error {
	return mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s.%s' is the wrong type '%s', expected types '[%s]'", a.Cmd, field, v.Type, expected)
}

// Lookup returns a field unless it is absent (null counts as absent for
// optional fields, as MongoDB's IDL treats it).
func (a Args) Lookup(field string) (bson.Value, bool) {
	v, ok := a.Body.Lookup(field)
	if !ok || v.Type == bson.TypeNull || v.Type == bson.TypeUndefined {
		return bson.Value{}, false
	}
	return v, true
}

func (a Args) Str(field string) (string, bool, error) {
	v, ok := a.Lookup(field)
	if !ok {
		return "", false, nil
	}
	if v.Type != bson.TypeString {
		return "", false, a.WrongType(field, v, "string")
	}
	return v.StringValue(), true, nil
}

func (a Args) Doc(field string) (bson.Doc, bool, error) {
	v, ok := a.Lookup(field)
	if !ok {
		return nil, false, nil
	}
	if v.Type != bson.TypeDocument {
		return nil, false, a.WrongType(field, v, "object")
	}
	return v.Document(), true, nil
}

func (a Args) Array(field string) (bson.Doc, bool, error) {
	v, ok := a.Lookup(field)
	if !ok {
		return nil, false, nil
	}
	if v.Type != bson.TypeArray {
		return nil, false, a.WrongType(field, v, "array")
	}
	return v.Document(), true, nil
}

// Boolean accepts booleans and numbers, as MongoDB's "safeBool" fields do.
func (a Args) Boolean(field string) (bool, bool, error) {
	v, ok := a.Lookup(field)
	if !ok {
		return false, false, nil
	}
	switch v.Type {
	case bson.TypeBoolean, bson.TypeInt32, bson.TypeInt64, bson.TypeDouble, bson.TypeDecimal128:
		return v.Truthy(), true, nil
	}
	return false, false, a.WrongTypes(field, v, "bool, long, int, decimal, double")
}

// Integer accepts any numeric type whose value is whole (doubles are
// truncated as MongoDB's "safeInt64" does when exactly representable).
func (a Args) Integer(field string) (int64, bool, error) {
	v, ok := a.Lookup(field)
	if !ok {
		return 0, false, nil
	}
	n, err := NumberArg(v)
	if err != nil {
		return 0, false, a.WrongTypes(field, v, "long, int, decimal, double")
	}
	return n, true, nil
}

// NumberArg is query.SafeInt64.
func NumberArg(v bson.Value) (int64, error) { return query.SafeInt64(v) }

// Docs returns the documents of an array field or of the OP_MSG kind-1
// sequence with that name (drivers send insert documents, update and delete
// statements either way).
func (c *Ctx) Docs(field string) ([]bson.Doc, bool, error) {
	if seq, ok := c.Seqs[field]; ok {
		if _, dup := c.Body.Lookup(field); dup {
			return nil, false, mongoerr.New(mongoerr.BadValue, "Duplicate field %s.%s", c.Name, field)
		}
		return seq, true, nil
	}
	a := NewArgs(c)
	arr, ok, err := a.Array(field)
	if err != nil || !ok {
		return nil, ok, err
	}
	var out []bson.Doc
	it := arr.Iter()
	for it.Next() {
		v := it.Element().Value
		if v.Type != bson.TypeDocument {
			return nil, false, mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s.%s.%s' is the wrong type '%s', expected type 'object'", c.Name, field, it.Element().Key, v.Type)
		}
		out = append(out, v.Document())
	}
	return out, true, nil
}

// CollectionArg returns the collection named by the command's first field.
func (c *Ctx) CollectionArg() (string, error) {
	v := NewArgs(c).First()
	if v.Type != bson.TypeString {
		return "", mongoerr.New(mongoerr.InvalidNamespace, "collection name has invalid type %s", v.Type)
	}
	name := v.StringValue()
	if name == "" {
		return "", mongoerr.New(mongoerr.InvalidNamespace, "Invalid namespace specified '%s.'", c.DB)
	}
	return name, nil
}

// DataSizeNamespace reads dataSize's argument, "db.collection".
func DataSizeNamespace(c *Ctx) (db, coll string, err error) {
	v := NewArgs(c).First()
	if v.Type != bson.TypeString {
		return "", "", mongoerr.New(mongoerr.TypeMismatch, "BSON field 'dataSize.dataSize' is the wrong type '%s', expected type 'string'", v.Type)
	}
	db, coll, ok := strings.Cut(v.StringValue(), ".")
	if !ok || db == "" || coll == "" {
		return "", "", mongoerr.New(mongoerr.InvalidNamespace, "Invalid namespace specified '%s'", v.StringValue())
	}
	return db, coll, nil
}

func IsGenericField(k string) bool { return genericFields[k] }
