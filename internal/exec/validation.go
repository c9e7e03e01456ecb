package exec

import (
	"strings"
	"sync"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
)

// Document validation (MongoDB's schema validation with query operators):
// a collection's options may hold a validator (a filter), a
// validationLevel ("strict", the default; "moderate": updates of documents
// that already failed are allowed; "off") and a validationAction ("error",
// the default; "warn": the write is allowed). Inserts and updates of
// documents that do not match fail with DocumentValidationFailure (121),
// unless the command sets bypassDocumentValidation.

// Validator is a collection's compiled validator with its level and action.
type Validator struct {
	filter *query.Filter
	level  string
	action string
	// operator names the validator's top level in errInfo.details:
	// its one operator ($jsonSchema, $expr, $or, ...), else "$and".
	operator string
}

var validators = struct {
	sync.RWMutex
	m map[string]*Validator
}{m: make(map[string]*Validator)}

// collValidator returns the collection's validator, or nil.
func collValidator(coll *catalog.Collection) (*Validator, error) {
	if len(coll.Options) == 0 {
		return nil, nil
	}
	key := string(coll.Options)
	validators.RLock()
	v, ok := validators.m[key]
	validators.RUnlock()
	if ok {
		return v, nil
	}
	v, err := ParseValidator(coll.Options)
	if err != nil {
		return nil, err
	}
	validators.Lock()
	if len(validators.m) > 1024 {
		clear(validators.m)
	}
	validators.m[key] = v
	validators.Unlock()
	return v, nil
}

// ParseValidator reads validator, validationLevel and validationAction
// from collection options (nil if there is no validator).
func ParseValidator(opts bson.Doc) (*Validator, error) {
	v := &Validator{level: "strict", action: "error"}
	it := opts.Iter()
	var vd bson.Doc
	for it.Next() {
		e := it.Element()
		switch e.Key {
		case "validator":
			if e.Value.Type != bson.TypeDocument {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "'validator' option must be a document")
			}
			vd = e.Value.Document()
		case "validationLevel":
			if e.Value.Type != bson.TypeString {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "'validationLevel' must be a string")
			}
			switch s := e.Value.StringValue(); s {
			case "off", "strict", "moderate":
				v.level = strings.Clone(s)
			default:
				return nil, mongoerr.New(mongoerr.BadValue, "Enumeration value '%s' for field 'validationLevel' is not a valid value.", s)
			}
		case "validationAction":
			if e.Value.Type != bson.TypeString {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "'validationAction' must be a string")
			}
			switch s := e.Value.StringValue(); s {
			case "error", "warn":
				v.action = strings.Clone(s)
			default:
				return nil, mongoerr.New(mongoerr.BadValue, "Enumeration value '%s' for field 'validationAction' is not a valid value.", s)
			}
		}
	}
	if vd == nil || vd.Len() == 0 {
		return nil, nil
	}
	f, err := query.ParseFilter(vd, &query.Options{})
	if err != nil {
		return nil, err
	}
	v.filter = f
	v.operator = "$and"
	if it := vd.Iter(); vd.Len() == 1 && it.Next() && strings.HasPrefix(it.Element().Key, "$") {
		v.operator = strings.Clone(it.Element().Key)
	}
	return v, nil
}

// validate checks doc (replacing old, nil for an insert) against the
// collection's validator.
func (w *CollWriter) validate(old, doc bson.Doc) error {
	if w.Bypass {
		return nil
	}
	v, err := collValidator(w.Coll)
	if err != nil || v == nil || v.level == "off" {
		return err
	}
	if v.level == "moderate" && old != nil && !v.filter.Match(old) {
		return nil
	}
	if v.filter.Match(doc) {
		return nil
	}
	id, _ := doc.Lookup("_id")
	var b bson.Builder
	b.StartDocument("errInfo")
	b.AppendValue("failingDocumentId", id)
	b.StartDocument("details")
	b.AppendString("operatorName", v.operator)
	b.AppendString("reason", "the document does not match the collection's validator")
	b.End()
	b.End()
	extra := b.Finish()
	if v.action == "warn" {
		if w.C != nil {
			w.C.WarnInvalid(w.Coll.Namespace(), doc, extra)
		}
		return nil
	}
	return &mongoerr.Error{Code: mongoerr.DocumentValidationFailure, Message: "Document failed validation", Extra: extra}
}
