package query

import (
	"errors"
	"testing"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
	dbson "go.mongodb.org/mongo-driver/v2/bson"
)

// d parses relaxed extended JSON into a raw document.
func d(t testing.TB, js string) bson.Doc {
	t.Helper()
	var raw dbson.Raw
	if err := dbson.UnmarshalExtJSON([]byte(js), false, &raw); err != nil {
		t.Fatalf("bad test JSON %s: %v", js, err)
	}
	return bson.Doc(raw)
}

// js prints a raw document as canonical-ish extended JSON for comparisons.
func js(t testing.TB, doc bson.Doc) string {
	t.Helper()
	if doc == nil {
		return "<nil>"
	}
	b, err := dbson.MarshalExtJSON(dbson.Raw(doc), false, false)
	if err != nil {
		t.Fatalf("bad BSON: %v", err)
	}
	return string(b)
}

// normJSON round-trips JSON through BSON so expectations compare equal to
// js output.
func normJSON(t testing.TB, s string) string { return js(t, d(t, s)) }

// errCode returns the MongoDB code of err, or 0.
func errCode(err error) int32 {
	var e *mongoerr.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

// val wraps a JSON value as a bson.Value via {"v": ...}.
func val(t testing.TB, jsv string) bson.Value {
	v, _ := d(t, `{"v": `+jsv+`}`).Lookup("v")
	return v
}

func bsonDocs(ds ...bson.Doc) []bson.Doc { return ds }
