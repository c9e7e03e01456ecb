package command

import (
	"context"
	"testing"
	"time"

	dbson "go.mongodb.org/mongo-driver/v2/bson"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/opctx"
)

// TestKillOp: a registered operation's context is cancelled by killOp, and
// a cancelled scan reports Interrupted.
func TestKillOp(t *testing.T) {
	env := &Env{}
	running := ctxWith(t, dbson.D{{Key: "find", Value: "c"}})
	running.Env = env
	op := env.Ops.Begin(running.Context, 0, "", running.DB, "find", running.Body, time.Now())
	running.Context = op // as Dispatch registers a command
	defer env.Ops.End(op)
	var id int64
	env.Ops.Each(func(op *opctx.Op) { id = op.ID() })
	killer := ctxWith(t, dbson.D{{Key: "killOp", Value: 1}, {Key: "op", Value: id}})
	killer.Env = env
	killer.Reply = &bson.Builder{}
	if err := killOp(killer); err != nil {
		t.Fatal(err)
	}
	if running.Err() != context.Canceled {
		t.Fatalf("operation context: %v", running.Err())
	}
	if e := mongoerr.As(ctxErr(running.Err())); e.Code != mongoerr.Interrupted {
		t.Fatalf("interrupted scan answers %d", e.Code)
	}
	// currentOp lists it, filtered by its fields.
	list := ctxWith(t, dbson.D{{Key: "currentOp", Value: 1}, {Key: "op", Value: "query"}})
	list.Env = env
	list.Reply = &bson.Builder{}
	if err := currentOp(list); err != nil {
		t.Fatal(err)
	}
	reply := list.Reply.Finish()
	ops, _ := reply.Lookup("inprog")
	if n := ops.Document().Len(); n != 1 {
		t.Fatalf("currentOp listed %d operations: %s", n, reply.String())
	}
}
