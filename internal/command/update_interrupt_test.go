package command

import (
	"context"
	"testing"
	"time"

	"github.com/cairndb/cairn/internal/opctx"

	dbson "go.mongodb.org/mongo-driver/v2/bson"
)

// setUpdateHook installs h as updateHook for the test.
func setUpdateHook(t *testing.T, env *Env, h func(c *Ctx)) {
	t.Helper()
	env.State.UpdateHook = h
	t.Cleanup(func() { env.State.UpdateHook = nil })
}

// TestUpdateInterruptedRollsBack: an update statement interrupted while it
// applies a large $addToSet — by killOp (Interrupted, 11601) or by its
// maxTimeMS (MaxTimeMSExpired, 50) — fails the command, and nothing of the
// command is written: not the interrupted document, not the documents of
// the statements before it.
func TestUpdateInterruptedRollsBack(t *testing.T) {
	const n = 20_000
	each := make(dbson.A, n)
	for i := range each {
		each[i] = i
	}
	addToSet := dbson.D{{Key: "q", Value: dbson.D{{Key: "_id", Value: 1}}}, {Key: "u", Value: dbson.D{{Key: "$addToSet", Value: dbson.D{{Key: "a", Value: dbson.D{{Key: "$each", Value: each}}}}}}}}
	bump := dbson.D{{Key: "q", Value: dbson.D{{Key: "_id", Value: 2}}}, {Key: "u", Value: dbson.D{{Key: "$inc", Value: dbson.D{{Key: "n", Value: 1}}}}}}
	cases := []struct {
		name string
		hook func(c *Ctx)
		opts dbson.D
		code int32
	}{
		{"killOp", func(c *Ctx) {
			// killOp of the running update, as another connection would.
			c.Env.Ops.Each(func(op *opctx.Op) {
				if op.Name() == "update" {
					op.Kill()
				}
			})
		}, nil, 11601},
		{"maxTimeMS", func(c *Ctx) {
			// The deadline passes while the update runs.
			if dl, ok := c.Deadline(); ok {
				time.Sleep(time.Until(dl) + time.Millisecond)
			}
		}, dbson.D{{Key: "maxTimeMS", Value: 200}}, 50},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newBuildEnv(t)
			e.must(dbson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: dbson.A{
				dbson.D{{Key: "_id", Value: 1}, {Key: "a", Value: dbson.A{-1}}},
				dbson.D{{Key: "_id", Value: 2}, {Key: "n", Value: 0}},
			}}})
			hooked := 0
			setUpdateHook(t, e.env, func(c *Ctx) {
				// Interrupt the second statement only, the large one.
				if hooked++; hooked == 2 {
					tc.hook(c)
				}
			})
			cmd := append(dbson.D{{Key: "update", Value: "c"}, {Key: "updates", Value: dbson.A{bump, addToSet}}}, tc.opts...)
			r := e.run(context.Background(), cmd)
			if r["ok"] != 0.0 || code(r) != tc.code {
				t.Fatalf("interrupted update answered %v, want code %d", r, tc.code)
			}
			setUpdateHook(t, e.env, nil)
			got := e.must(dbson.D{{Key: "find", Value: "c"}, {Key: "sort", Value: dbson.D{{Key: "_id", Value: 1}}}})
			docs := got["cursor"].(dbson.M)["firstBatch"].(dbson.A)
			if a := docs[0].(dbson.M)["a"].(dbson.A); len(a) != 1 {
				t.Errorf("the interrupted document holds %d values, want its 1", len(a))
			}
			if v := docs[1].(dbson.M)["n"]; v != int32(0) {
				t.Errorf("the statement before the interruption was kept: n = %v", v)
			}
			// Not interrupted, the same update applies.
			if r := e.must(cmd[:2]); r["nModified"] != int32(2) {
				t.Fatalf("update: %v", r)
			}
		})
	}
}
