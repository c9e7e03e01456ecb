package command

import (
	"testing"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/exec"
)

func TestRequestShape(t *testing.T) {
	var b bson.Builder
	b.AppendString("find", "secret-collection")
	b.StartDocument("filter")
	b.StartDocument("ssn")
	b.AppendString("$eq", "123-45-6789")
	b.End()
	b.End()
	b.StartArray("a")
	b.AppendInt32("0", 1)
	b.AppendInt32("1", 2)
	b.End()
	b.AppendString("$db", "t")
	got := exec.RequestShape(b.Finish())
	want := "{ find: string, filter: { ssn: { $eq: string } }, a: [ int x2 ], $db: string }"
	if got != want {
		t.Errorf("shape = %s\nwant    %s", got, want)
	}
}
