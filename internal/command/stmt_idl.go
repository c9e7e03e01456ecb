package command

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// stmtField describes one field of an update or delete statement as
// MongoDB's IDL declares it.
type stmtField struct {
	types    []bson.Type // accepted types; nil = any
	required bool
	expected string // the type list as MongoDB's message spells it
}

var numberTypes = []bson.Type{bson.TypeInt32, bson.TypeInt64, bson.TypeDouble, bson.TypeDecimal128}

var boolish = append([]bson.Type{bson.TypeBoolean}, numberTypes...)

var updateStmtFields = map[string]stmtField{
	"q":              {types: []bson.Type{bson.TypeDocument}, required: true, expected: "object"},
	"u":              {types: []bson.Type{bson.TypeDocument, bson.TypeArray}, required: true, expected: "[object, array]"},
	"c":              {types: []bson.Type{bson.TypeDocument}, expected: "object"},
	"upsert":         {types: boolish, expected: "[bool, long, int, decimal, double]"},
	"multi":          {types: boolish, expected: "[bool, long, int, decimal, double]"},
	"arrayFilters":   {types: []bson.Type{bson.TypeArray}, expected: "array"},
	"collation":      {types: []bson.Type{bson.TypeDocument}, expected: "object"},
	"hint":           {types: []bson.Type{bson.TypeDocument, bson.TypeString}, expected: "[object, string]"},
	"upsertSupplied": {types: boolish, expected: "[bool, long, int, decimal, double]"},
	"comment":        {},
}

var deleteStmtFields = map[string]stmtField{
	"q":         {types: []bson.Type{bson.TypeDocument}, required: true, expected: "object"},
	"limit":     {types: numberTypes, required: true, expected: "[long, int, decimal, double]"},
	"collation": {types: []bson.Type{bson.TypeDocument}, expected: "object"},
	"hint":      {types: []bson.Type{bson.TypeDocument, bson.TypeString}, expected: "[object, string]"},
	"comment":   {},
}

// checkStatements validates the shape of every statement of a write command
// before any runs: as in MongoDB, where these are parsed with the command,
// a malformed statement fails the whole command rather than one statement.
func checkStatements(cmd, field string, stmts []bson.Doc, spec map[string]stmtField) error {
	for _, st := range stmts {
		it := st.Iter()
		for it.Next() {
			e := it.Element()
			f, ok := spec[e.Key]
			if !ok {
				return mongoerr.New(mongoerr.IDLUnknownField, "BSON field '%s.%s.%s' is an unknown field.", cmd, field, e.Key)
			}
			if f.types == nil {
				continue
			}
			good := false
			for _, t := range f.types {
				if e.Value.Type == t {
					good = true
					break
				}
			}
			if !good {
				word := "type"
				if len(f.types) > 1 {
					word = "types"
				}
				return mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s.%s.%s' is the wrong type '%s', expected %s '%s'", cmd, field, e.Key, e.Value.Type, word, f.expected)
			}
		}
		for name, f := range spec {
			if !f.required {
				continue
			}
			if _, ok := st.Lookup(name); !ok {
				return mongoerr.New(mongoerr.IDLFailedToParse, "BSON field '%s.%s.%s' is missing but a required field", cmd, field, name)
			}
		}
	}
	return nil
}
