package changestream

import (
	"sync"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/agg"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/repl"
)

// Full-document modes.
const (
	FullDefault       = "default"
	FullUpdateLookup  = "updateLookup"
	FullWhenAvailable = "whenAvailable"
	FullRequired      = "required"
	BeforeOff         = "off"
)

// Spec is a parsed $changeStream stage.
type Spec struct {
	FullDocument             string // FullDefault when absent
	FullDocumentBeforeChange string // BeforeOff when absent
	// ResumeAfter, StartAfter (nil: absent) and StartAtOperationTime (0:
	// absent): at most one is set.
	ResumeAfter, StartAfter *Token
	StartAtOperationTime    repl.Timestamp
	AllChangesForCluster    bool
	ShowExpandedEvents      bool
}

// ParseSpec reads the $changeStream stage's specification.
func ParseSpec(v bson.Value) (*Spec, error) {
	if v.Type != bson.TypeDocument {
		return nil, mongoerr.New(mongoerr.ChangeStreamSpecNotObject, "the $changeStream stage specification must be an object, but found %s", v.Type)
	}
	s := &Spec{FullDocument: FullDefault, FullDocumentBeforeChange: BeforeOff}
	resumes := 0
	it := v.Document().Iter()
	for it.Next() {
		e := it.Element()
		field := "$changeStream." + e.Key
		str := func(allowed ...string) (string, error) {
			if e.Value.Type != bson.TypeString {
				return "", mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s' is the wrong type '%s', expected type 'string'", field, e.Value.Type)
			}
			got := e.Value.StringValue()
			for _, a := range allowed {
				if got == a {
					return got, nil
				}
			}
			return "", mongoerr.New(mongoerr.BadValue, "Enumeration value '%s' for field '%s' is not a valid value.", got, field)
		}
		boolean := func() (bool, error) {
			if e.Value.Type != bson.TypeBoolean {
				return false, mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s' is the wrong type '%s', expected type 'bool'", field, e.Value.Type)
			}
			return e.Value.Boolean(), nil
		}
		token := func() (*Token, error) {
			if e.Value.Type != bson.TypeDocument {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s' is the wrong type '%s', expected type 'object'", field, e.Value.Type)
			}
			t, err := DecodeToken(e.Value.Document())
			if err != nil {
				return nil, err
			}
			resumes++
			return &t, nil
		}
		var err error
		switch e.Key {
		case "fullDocument":
			s.FullDocument, err = str(FullDefault, FullUpdateLookup, FullWhenAvailable, FullRequired)
		case "fullDocumentBeforeChange":
			s.FullDocumentBeforeChange, err = str(BeforeOff, FullWhenAvailable, FullRequired)
		case "resumeAfter":
			s.ResumeAfter, err = token()
		case "startAfter":
			s.StartAfter, err = token()
		case "startAtOperationTime":
			if e.Value.Type != bson.TypeTimestamp {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s' is the wrong type '%s', expected type 'timestamp'", field, e.Value.Type)
			}
			t, i := e.Value.Timestamp()
			s.StartAtOperationTime = repl.MakeTimestamp(t, i)
			resumes++
		case "allChangesForCluster":
			s.AllChangesForCluster, err = boolean()
		case "showExpandedEvents":
			s.ShowExpandedEvents, err = boolean()
		case "showSystemEvents", "showRawUpdateDescription":
			return nil, mongoerr.New(mongoerr.NotImplemented, "$changeStream option '%s' is not supported by Cairn", e.Key)
		default:
			return nil, mongoerr.New(mongoerr.IDLUnknownField, "BSON field '%s' is an unknown field.", field)
		}
		if err != nil {
			return nil, err
		}
	}
	if resumes > 1 {
		return nil, mongoerr.New(mongoerr.ChangeStreamMultipleResumeOptions, "Only one type of resume option is allowed, but multiple were found.")
	}
	if s.ResumeAfter != nil && s.ResumeAfter.FromInvalidate {
		return nil, mongoerr.New(mongoerr.InvalidResumeToken, "Attempting to resume a change stream using 'resumeAfter' is not allowed from an invalidate notification.")
	}
	return s, nil
}

// allowedStages are the stages a change stream's pipeline may hold after
// $changeStream (mongod's list).
var allowedStages = map[string]bool{
	"$match": true, "$project": true, "$addFields": true, "$set": true, "$unset": true,
	"$replaceRoot": true, "$replaceWith": true, "$redact": true,
}

// CheckStages refuses a stage a change stream may not run, as mongod.
func CheckStages(stages []bson.Doc) error {
	for _, st := range stages {
		it := st.Iter()
		if !it.Next() {
			continue
		}
		name := it.Element().Key
		if name == "$changeStream" {
			return mongoerr.New(mongoerr.StageMustBeFirst, "$changeStream is only valid as the first stage in a pipeline")
		}
		if !allowedStages[name] && knownStage(name) {
			return mongoerr.New(mongoerr.IllegalOperation, "%s is not permitted in a $changeStream pipeline", name)
		}
	}
	return nil
}

// knownStage reports whether the pipeline parser knows a stage (an unknown
// one gets the parser's own error, 40324, as mongod).
func knownStage(name string) bool {
	knownOnce.Do(func() {
		known = map[string]bool{}
		for _, n := range agg.StageNames() {
			known[n] = true
		}
	})
	return known[name]
}

var (
	knownOnce sync.Once
	known     map[string]bool
)
