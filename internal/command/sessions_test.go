package command

import (
	"context"
	"testing"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/repl"
	"github.com/cairndb/cairn/internal/session"
)

// TestCheckTxnFields: the transaction fields are refused as mongod's
// initializeOperationSessionInfo refuses them.
func TestCheckTxnFields(t *testing.T) {
	lsid := func(b *bson.Builder) {
		b.StartDocument("lsid")
		b.AppendBinary("id", 4, make([]byte, 16))
		b.End()
	}
	cases := []struct {
		name  string
		repl  bool
		build func(b *bson.Builder)
		code  int32
	}{
		{"no fields", false, func(b *bson.Builder) {}, 0},
		{"txnNumber without lsid", true, func(b *bson.Builder) { b.AppendInt64("txnNumber", 1) }, 72},
		{"standalone", false, func(b *bson.Builder) { lsid(b); b.AppendInt64("txnNumber", 1) }, 20},
		{"replica set", true, func(b *bson.Builder) { lsid(b); b.AppendInt64("txnNumber", 1) }, 0},
		{"int txnNumber", true, func(b *bson.Builder) { lsid(b); b.AppendInt32("txnNumber", 1) }, 14},
		{"negative", true, func(b *bson.Builder) { lsid(b); b.AppendInt64("txnNumber", -1) }, 72},
		{"autocommit without txnNumber", true, func(b *bson.Builder) { lsid(b); b.AppendBool("autocommit", false) }, 72},
		{"autocommit true", true, func(b *bson.Builder) { lsid(b); b.AppendInt64("txnNumber", 1); b.AppendBool("autocommit", true) }, 72},
		{"startTransaction alone", true, func(b *bson.Builder) { lsid(b); b.AppendInt64("txnNumber", 1); b.AppendBool("startTransaction", true) }, 72},
		{"transaction", true, func(b *bson.Builder) {
			lsid(b)
			b.AppendInt64("txnNumber", 1)
			b.AppendBool("autocommit", false)
			b.AppendBool("startTransaction", true)
		}, 0}, // a well-formed transaction statement (transactions.go runs it)
		{"startTransaction false", true, func(b *bson.Builder) {
			lsid(b)
			b.AppendInt64("txnNumber", 1)
			b.AppendBool("autocommit", false)
			b.AppendBool("startTransaction", false)
		}, 72},
	}
	for _, tc := range cases {
		var b bson.Builder
		b.AppendString("insert", "c")
		tc.build(&b)
		env := &Env{}
		if tc.repl {
			env.Repl = repl.NewSet("rs0", nil)
		}
		c := &Ctx{Context: context.Background(), Env: env, Name: "insert", Body: b.Finish()}
		err := session.CheckFields(c.Body, c.Env.Repl != nil) // what Dispatch checks first
		var got int32
		if err != nil {
			got = asMongoErr(err).Code
		}
		if got != tc.code {
			t.Errorf("%s: code %d (%v), want %d", tc.name, got, err, tc.code)
		}
	}
}
