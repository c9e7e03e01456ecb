package conformance

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// errorDetails gathers what the driver exposes of a server error.
type errorDetails struct {
	server    bool
	codes     []int
	codeNames []string
	labels    []string
	messages  []string
	response  bson.Raw // the server's error document, when the driver keeps it
}

func rawCodeName(r bson.Raw) string {
	if v, err := r.LookupErr("codeName"); err == nil {
		if s, ok := v.StringValueOK(); ok {
			return s
		}
	}
	return ""
}

func (d *errorDetails) addWriteError(we mongo.WriteError) {
	d.codes = append(d.codes, we.Code)
	d.messages = append(d.messages, we.Message)
	if n := rawCodeName(we.Raw); n != "" {
		d.codeNames = append(d.codeNames, n)
	}
	if d.response == nil {
		d.response = we.Raw
	}
}

func (d *errorDetails) addWCE(wce *mongo.WriteConcernError) {
	if wce == nil {
		return
	}
	d.codes = append(d.codes, wce.Code)
	d.codeNames = append(d.codeNames, wce.Name)
	d.messages = append(d.messages, wce.Message)
}

func extractErrorDetails(err error) errorDetails {
	d := errorDetails{messages: []string{err.Error()}}
	var (
		ce  mongo.CommandError
		we  mongo.WriteException
		bwe mongo.BulkWriteException
		cbe mongo.ClientBulkWriteException
	)
	switch {
	case errors.As(err, &ce):
		d.server = !mongo.IsNetworkError(err)
		d.codes = append(d.codes, int(ce.Code))
		d.codeNames = append(d.codeNames, ce.Name)
		d.labels = ce.Labels
		d.messages = append(d.messages, ce.Message)
		d.response = ce.Raw
	case errors.As(err, &we):
		d.server = true
		for _, e := range we.WriteErrors {
			d.addWriteError(e)
		}
		d.addWCE(we.WriteConcernError)
		d.labels = we.Labels
		// The whole reply is the error response only when it is a command
		// error; otherwise the first write error is.
		if _, err := we.Raw.LookupErr("code"); err == nil {
			d.response = we.Raw
		}
	case errors.As(err, &bwe):
		d.server = true
		for _, e := range bwe.WriteErrors {
			d.addWriteError(e.WriteError)
		}
		d.addWCE(bwe.WriteConcernError)
		d.labels = bwe.Labels
	case errors.As(err, &cbe):
		if cbe.WriteError != nil {
			d.server = true
			d.addWriteError(*cbe.WriteError)
		}
		if len(cbe.WriteErrors) > 0 || len(cbe.WriteConcernErrors) > 0 {
			d.server = true
		}
	}
	return d
}

// checkExpectedError verifies an expectedError against an operation's
// outcome.
func checkExpectedError(m matcher, spec bson.Raw, res opResult) error {
	if res.err == nil {
		return fmt.Errorf("expected an error, got none (result %s)", show(res.resultValue()))
	}
	err := res.err
	d := extractErrorDetails(err)
	a := newArgs(spec)
	a.bool("isError")
	if a.has("isClientError") && a.bool("isClientError") == d.server {
		return fmt.Errorf("expected a client error: %v; got server error: %v: %v", !d.server, d.server, err)
	}
	if a.has("isTimeoutError") && a.bool("isTimeoutError") != mongo.IsTimeout(err) {
		return fmt.Errorf("expected a timeout error: %v; got: %v", a.bool("isTimeoutError"), err)
	}
	if s := a.str("errorContains"); s != "" {
		found := slices.ContainsFunc(d.messages, func(msg string) bool {
			return strings.Contains(strings.ToLower(msg), strings.ToLower(s))
		})
		if !found {
			return fmt.Errorf("expected error containing %q, got: %v", s, err)
		}
	}
	if a.has("errorCode") {
		code := int(a.int("errorCode"))
		if !slices.Contains(d.codes, code) {
			return fmt.Errorf("expected error code %d, got codes %v: %v", code, d.codes, err)
		}
	}
	if name := a.str("errorCodeName"); name != "" {
		found := slices.ContainsFunc(d.codeNames, func(n string) bool { return strings.EqualFold(n, name) })
		if code, ok := codeNames[name]; ok && slices.Contains(d.codes, code) {
			found = true
		}
		if !found {
			return fmt.Errorf("expected error code name %s, got %v / codes %v: %v", name, d.codeNames, d.codes, err)
		}
	}
	for _, l := range a.strings("errorLabelsContain") {
		if !slices.Contains(d.labels, l) {
			return fmt.Errorf("expected error label %s, got %v: %v", l, d.labels, err)
		}
	}
	for _, l := range a.strings("errorLabelsOmit") {
		if slices.Contains(d.labels, l) {
			return fmt.Errorf("expected no error label %s, got %v: %v", l, d.labels, err)
		}
	}
	if exp, ok := a.doc("errorResponse"); ok {
		if d.response == nil {
			return fmt.Errorf("expected a server error response, got %T: %v", err, err)
		}
		if e := m.matchRoot(docValue(exp), docValue(d.response)); e != nil {
			return fmt.Errorf("errorResponse: %v\nactual: %s", e, d.response)
		}
	}
	if v := a.raw("expectResult"); !isMissing(v) {
		if e := matchResult(m, v, res); e != nil {
			return fmt.Errorf("partial result: %v", e)
		}
	}
	if exp, ok := a.doc("writeErrors"); ok {
		if e := checkClientWriteErrors(m, exp, err); e != nil {
			return e
		}
	}
	if a.has("writeConcernErrors") {
		if e := checkClientWCErrors(m, a.docs("writeConcernErrors"), err); e != nil {
			return e
		}
	}
	if e := a.done(); e != nil {
		return skipf("expectError: %v", e)
	}
	return nil
}

func writeErrorDoc(code int, msg string, details bson.Raw) bson.Raw {
	d := bson.D{{Key: "code", Value: int32(code)}, {Key: "message", Value: msg}}
	if details != nil {
		d = append(d, bson.E{Key: "details", Value: details})
	}
	raw, err := bson.Marshal(d)
	if err != nil {
		panic(err)
	}
	return raw
}

func checkClientWriteErrors(m matcher, exp bson.Raw, err error) error {
	var cbe mongo.ClientBulkWriteException
	if !errors.As(err, &cbe) {
		return fmt.Errorf("expected a client bulk write exception, got %T: %v", err, err)
	}
	elems, _ := exp.Elements()
	if len(elems) != len(cbe.WriteErrors) {
		return fmt.Errorf("expected %d write errors, got %d: %v", len(elems), len(cbe.WriteErrors), err)
	}
	for _, e := range elems {
		i, perr := strconv.Atoi(e.Key())
		if perr != nil {
			return fmt.Errorf("bad writeErrors index %q", e.Key())
		}
		we, ok := cbe.WriteErrors[i]
		if !ok {
			var got []int
			for k := range cbe.WriteErrors {
				got = append(got, k)
			}
			sort.Ints(got)
			return fmt.Errorf("expected a write error at index %d, got indexes %v", i, got)
		}
		act := writeErrorDoc(we.Code, we.Message, we.Details)
		if merr := m.matchRoot(e.Value(), docValue(act)); merr != nil {
			return fmt.Errorf("write error %d: %v", i, merr)
		}
	}
	return nil
}

func checkClientWCErrors(m matcher, exp []bson.Raw, err error) error {
	var cbe mongo.ClientBulkWriteException
	if !errors.As(err, &cbe) {
		return fmt.Errorf("expected a client bulk write exception, got %T: %v", err, err)
	}
	if len(exp) != len(cbe.WriteConcernErrors) {
		return fmt.Errorf("expected %d write concern errors, got %d: %v", len(exp), len(cbe.WriteConcernErrors), err)
	}
	for i, e := range exp {
		w := cbe.WriteConcernErrors[i]
		act := writeErrorDoc(w.Code, w.Message, w.Details)
		if merr := m.matchRoot(docValue(e), docValue(act)); merr != nil {
			return fmt.Errorf("write concern error %d: %v", i, merr)
		}
	}
	return nil
}

// codeNames maps the code names tests may assert to their codes, for errors
// (write errors) whose code name the driver does not expose.
var codeNames = map[string]int{
	"BadValue":                   2,
	"FailedToParse":              9,
	"TypeMismatch":               14,
	"InvalidOptions":             72,
	"IllegalOperation":           20,
	"NamespaceNotFound":          26,
	"IndexNotFound":              27,
	"PathNotViable":              28,
	"ConflictingUpdateOperators": 40,
	"CursorNotFound":             43,
	"NamespaceExists":            48,
	"MaxTimeMSExpired":           50,
	"DollarPrefixedFieldName":    52,
	"InvalidIdField":             53,
	"NotSingleValueField":        54,
	"CommandNotFound":            59,
	"ImmutableField":             66,
	"InvalidNamespace":           73,
	"WriteConcernFailed":         64,
	"OperationFailed":            96,
	"DocumentValidationFailure":  121,
	"NotWritablePrimary":         10107,
	"DuplicateKey":               11000,
	"Location40415":              40415,
}
