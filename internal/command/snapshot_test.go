package command

import (
	"testing"

	dbson "go.mongodb.org/mongo-driver/v2/bson"
)

func setFindHook(t *testing.T, env *Env, h func(c *Ctx)) {
	t.Helper()
	env.State.FindHook = h
	t.Cleanup(func() { env.State.FindHook = nil })
}

// values lists field a of a batch.
func values(t *testing.T, batch any) []int32 {
	t.Helper()
	var out []int32
	for _, d := range batch.(dbson.A) {
		out = append(out, d.(dbson.M)["a"].(int32))
	}
	return out
}

// TestFindReadsOneSnapshot: a find chooses its plan and reads its first
// batch in one snapshot. Between the two, another command drops the index
// the plan uses, inserts documents that match and deletes one: the answer
// is the documents as they were when the find began, in index order.
func TestFindReadsOneSnapshot(t *testing.T) {
	e := newBuildEnv(t)
	var docs dbson.A
	for i := 1; i <= 10; i++ {
		docs = append(docs, dbson.D{{Key: "_id", Value: i}, {Key: "a", Value: int32(11 - i)}})
	}
	e.must(dbson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: docs}})
	e.must(dbson.D{{Key: "createIndexes", Value: "c"}, {Key: "indexes", Value: dbson.A{dbson.D{{Key: "key", Value: dbson.D{{Key: "a", Value: 1}}}, {Key: "name", Value: "a_1"}}}}})
	fired := false
	setFindHook(t, e.env, func(c *Ctx) {
		if fired {
			return
		}
		fired = true
		e.must(dbson.D{{Key: "dropIndexes", Value: "c"}, {Key: "index", Value: "a_1"}})
		e.must(dbson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: dbson.A{dbson.D{{Key: "_id", Value: 11}, {Key: "a", Value: int32(0)}}}}})
		e.must(dbson.D{{Key: "delete", Value: "c"}, {Key: "deletes", Value: dbson.A{dbson.D{{Key: "q", Value: dbson.D{{Key: "a", Value: int32(5)}}}, {Key: "limit", Value: 1}}}}})
	})
	r := e.must(dbson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: dbson.D{{Key: "a", Value: dbson.D{{Key: "$gte", Value: 0}}}}},
		{Key: "sort", Value: dbson.D{{Key: "a", Value: 1}}}})
	if !fired {
		t.Fatal("the hook did not run")
	}
	got := values(t, r["cursor"].(dbson.M)["firstBatch"])
	want := []int32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	if len(got) != len(want) {
		t.Fatalf("find returned %v, want the snapshot's %v", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("find returned %v, want the snapshot's %v", got, want)
		}
	}
}

// TestGetMoreReadsCursorSnapshot: every getMore reads the snapshot the
// cursor was opened on: documents deleted and inserted after the first
// batch change nothing it returns.
func TestGetMoreReadsCursorSnapshot(t *testing.T) {
	for _, cmd := range []string{"find", "aggregate"} {
		t.Run(cmd, func(t *testing.T) {
			e := newBuildEnv(t)
			var docs dbson.A
			for i := 1; i <= 10; i++ {
				docs = append(docs, dbson.D{{Key: "_id", Value: i}, {Key: "a", Value: int32(i)}})
			}
			e.must(dbson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: docs}})
			open := dbson.D{{Key: "find", Value: "c"}, {Key: "batchSize", Value: 3}}
			if cmd == "aggregate" {
				open = dbson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: dbson.A{dbson.D{{Key: "$match", Value: dbson.D{}}}}},
					{Key: "cursor", Value: dbson.D{{Key: "batchSize", Value: 3}}}}
			}
			r := e.must(open)
			cur := r["cursor"].(dbson.M)
			got := values(t, cur["firstBatch"])
			e.must(dbson.D{{Key: "delete", Value: "c"}, {Key: "deletes", Value: dbson.A{dbson.D{{Key: "q", Value: dbson.D{}}, {Key: "limit", Value: 0}}}}})
			e.must(dbson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: dbson.A{dbson.D{{Key: "_id", Value: 100}, {Key: "a", Value: int32(100)}}}}})
			for id := cur["id"].(int64); id != 0; {
				r := e.must(dbson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "c"}})
				cur := r["cursor"].(dbson.M)
				got = append(got, values(t, cur["nextBatch"])...)
				id = cur["id"].(int64)
			}
			if len(got) != 10 || got[9] != 10 {
				t.Fatalf("the cursor returned %v, want the 10 documents of its snapshot", got)
			}
		})
	}
}
