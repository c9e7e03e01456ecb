package conformance

import (
	"errors"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

func TestCheckExpectedError(t *testing.T) {
	raw := ej(t, `{"ok": 0, "code": 11000, "codeName": "DuplicateKey", "errmsg": "E11000 duplicate key", "keyValue": {"x": 1}}`).Document()
	cmdErr := mongo.CommandError{Code: 11000, Name: "DuplicateKey", Message: "E11000 duplicate key", Raw: raw,
		Labels: []string{"RetryableWriteError"}}
	writeErr := mongo.WriteException{WriteErrors: mongo.WriteErrors{{Index: 0, Code: 121, Message: "Document failed validation",
		Raw: ej(t, `{"index": 0, "code": 121, "errmsg": "Document failed validation"}`).Document()}}}
	bulkErr := mongo.BulkWriteException{WriteErrors: []mongo.BulkWriteError{{WriteError: mongo.WriteError{Index: 1, Code: 11000, Message: "dup key"}}}}
	clientErr := errors.New("update document must contain key beginning with '$'")

	cases := []struct {
		name string
		spec string
		err  error
		ok   bool
	}{
		{"no error at all", `{"isError": true}`, nil, false},
		{"any error", `{"isError": true}`, clientErr, true},
		{"client error", `{"isClientError": true}`, clientErr, true},
		{"server error is not a client error", `{"isClientError": true}`, cmdErr, false},
		{"server error", `{"isClientError": false}`, writeErr, true},
		{"client error is not a server error", `{"isClientError": false}`, clientErr, false},
		{"code", `{"errorCode": 11000}`, cmdErr, true},
		{"wrong code", `{"errorCode": 8}`, cmdErr, false},
		{"write error code", `{"errorCode": 121}`, writeErr, true},
		{"bulk write error code", `{"errorCode": 11000}`, bulkErr, true},
		{"code name", `{"errorCodeName": "duplicatekey"}`, cmdErr, true},
		{"code name from code", `{"errorCodeName": "DocumentValidationFailure"}`, writeErr, true},
		{"wrong code name", `{"errorCodeName": "BadValue"}`, cmdErr, false},
		{"contains, any case", `{"errorContains": "e11000 DUPLICATE"}`, cmdErr, true},
		{"contains in bulk write error", `{"errorContains": "dup key"}`, bulkErr, true},
		{"does not contain", `{"errorContains": "nope"}`, cmdErr, false},
		{"label", `{"errorLabelsContain": ["RetryableWriteError"]}`, cmdErr, true},
		{"missing label", `{"errorLabelsContain": ["TransientTransactionError"]}`, cmdErr, false},
		{"omitted label", `{"errorLabelsOmit": ["TransientTransactionError"]}`, cmdErr, true},
		{"label present", `{"errorLabelsOmit": ["RetryableWriteError"]}`, cmdErr, false},
		{"error response", `{"errorResponse": {"keyValue": {"x": 1}}}`, cmdErr, true},
		{"error response differs", `{"errorResponse": {"keyValue": {"x": 2}}}`, cmdErr, false},
		{"error response of a write error", `{"errorResponse": {"code": 121}}`, writeErr, true},
		{"error response of a client error", `{"errorResponse": {"code": 1}}`, clientErr, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := checkExpectedError(matcher{}, ej(t, c.spec).Document(), opResult{err: c.err})
			if c.ok && err != nil {
				t.Errorf("expected %s to accept %v, got: %v", c.spec, c.err, err)
			}
			if !c.ok && err == nil {
				t.Errorf("expected %s to reject %v", c.spec, c.err)
			}
		})
	}
}

func TestCheckExpectedErrorPartialResult(t *testing.T) {
	bulkErr := mongo.BulkWriteException{WriteErrors: []mongo.BulkWriteError{{WriteError: mongo.WriteError{Index: 1, Code: 11000}}}}
	res := bulkWriteResult(&mongo.BulkWriteResult{InsertedCount: 2, Acknowledged: true}, bulkErr)
	if err := checkExpectedError(matcher{}, ej(t, `{"isError": true, "expectResult": {"insertedCount": 2, "upsertedIds": {}}}`).Document(), res); err != nil {
		t.Errorf("partial result should match: %v", err)
	}
	if err := checkExpectedError(matcher{}, ej(t, `{"isError": true, "expectResult": {"insertedCount": 3}}`).Document(), res); err == nil {
		t.Error("a wrong partial result should not match")
	}
	// A command or network error after some batches succeeded carries
	// the driver's result (bulkWrite's "Second updateOne is never
	// committed").
	for _, err := range []error{
		mongo.CommandError{Code: 1, Message: "Failing write"},
		mongo.CommandError{Labels: []string{"NetworkError"}, Message: "connection closed"},
	} {
		res = bulkWriteResult(&mongo.BulkWriteResult{InsertedCount: 1, Acknowledged: true}, err)
		if e := checkExpectedError(matcher{}, ej(t, `{"isError": true, "expectResult": {"insertedCount": 1}}`).Document(), res); e != nil {
			t.Errorf("%v: partial result should match: %v", err, e)
		}
	}
	// A client error carries no partial result.
	res = bulkWriteResult(&mongo.BulkWriteResult{}, errors.New("invalid model"))
	if !isMissing(res.value) {
		t.Errorf("client error should leave no result, got %s", res.value)
	}
}

func TestInsertManyResultCountsFromWriteErrors(t *testing.T) {
	bwe := mongo.BulkWriteException{WriteErrors: []mongo.BulkWriteError{{WriteError: mongo.WriteError{Index: 1, Code: 11000}}}}
	for _, c := range []struct {
		ordered bool
		want    int64
	}{{true, 1}, {false, 2}} {
		res := insertManyResult(nil, 3, c.ordered, bwe)
		got := res.value.Document().Lookup("insertedCount")
		if got.Type != bson.TypeInt64 || got.Int64() != c.want {
			t.Errorf("ordered=%v: insertedCount %s, want %d", c.ordered, got, c.want)
		}
	}
}
