package command

import (
	"testing"

	dbson "go.mongodb.org/mongo-driver/v2/bson"

	"github.com/cairndb/cairn/internal/opctx"
)

// TestKillOpAbortsTransaction: killOp of a transaction's running
// statement fails it (Interrupted) and aborts the transaction, as mongod:
// its earlier writes are discarded and commitTransaction answers
// NoSuchTransaction.
func TestKillOpAbortsTransaction(t *testing.T) {
	env := oplogEnv(t)
	if r := runOplogCmd(t, env, "d", dbson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: dbson.A{dbson.D{{Key: "_id", Value: 1}, {Key: "n", Value: 0}}}}}); replyCode(r) != 0 {
		t.Fatal(r.String())
	}
	lsid := dbson.D{{Key: "id", Value: dbson.Binary{Subtype: 4, Data: make([]byte, 16)}}}
	txn := dbson.D{{Key: "lsid", Value: lsid}, {Key: "txnNumber", Value: int64(1)}, {Key: "autocommit", Value: false}}
	ins := append(dbson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: dbson.A{dbson.D{{Key: "_id", Value: 2}}}}, {Key: "startTransaction", Value: true}}, txn...)
	if r := runOplogCmd(t, env, "d", ins); replyCode(r) != 0 {
		t.Fatal(r.String())
	}
	setUpdateHook(t, env, func(c *Ctx) {
		c.Env.Ops.Each(func(op *opctx.Op) {
			if op.Name() == "update" {
				op.Kill() // killOp, as another connection would send it
			}
		})
	})
	upd := append(dbson.D{{Key: "update", Value: "c"}, {Key: "updates", Value: dbson.A{dbson.D{{Key: "q", Value: dbson.D{{Key: "_id", Value: 1}}},
		{Key: "u", Value: dbson.D{{Key: "$inc", Value: dbson.D{{Key: "n", Value: 1}}}}}}}}}, txn...)
	if r := runOplogCmd(t, env, "d", upd); replyCode(r) != 11601 {
		t.Fatalf("killed statement answered %s, want Interrupted", r.String())
	}
	setUpdateHook(t, env, nil)
	if r := runOplogCmd(t, env, "admin", append(dbson.D{{Key: "commitTransaction", Value: 1}}, txn...)); replyCode(r) != 251 {
		t.Fatalf("commit after the kill answered %s, want NoSuchTransaction", r.String())
	}
	r := runOplogCmd(t, env, "d", dbson.D{{Key: "count", Value: "c"}})
	if n, _ := r.Lookup("n"); n.Int32() != 1 {
		t.Errorf("documents after the aborted transaction: %s", r.String())
	}
	if got := env.Sessions.TxnStats.TotalAborted.Load(); got != 1 {
		t.Errorf("totalAborted %d, want 1", got)
	}
}
