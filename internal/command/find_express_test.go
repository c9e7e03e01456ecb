package command

import (
	"bytes"
	"context"
	"testing"

	dbson "go.mongodb.org/mongo-driver/v2/bson"

	"github.com/cairndb/cairn/bson"
)

// TestFindExpressMatchesGeneral: every find the express path answers gets
// the same reply from the general path, and the shapes it must not take
// (views, collations, operators, projections that are not plain...) are left to the general
// path.
func TestFindExpressMatchesGeneral(t *testing.T) {
	env := memEnv(t)
	run := func(body dbson.D) bson.Doc {
		t.Helper()
		raw, err := dbson.Marshal(append(body, dbson.E{Key: "$db", Value: "t"}))
		if err != nil {
			t.Fatal(err)
		}
		c := &Ctx{Context: context.Background(), Env: env, DB: "t", Body: bson.Doc(raw), Reply: &bson.Builder{}}
		return bson.Doc(append([]byte(nil), Dispatch(c)...))
	}
	oid := dbson.NewObjectID()
	docs := dbson.A{
		dbson.D{{Key: "_id", Value: "user1"}, {Key: "f", Value: 1}, {Key: "g", Value: dbson.D{{Key: "x", Value: 1}}}, {Key: "h", Value: dbson.A{1, 2}}, {Key: "i", Value: "s"}},
		dbson.D{{Key: "_id", Value: int32(7)}, {Key: "f", Value: 2}},
		dbson.D{{Key: "_id", Value: oid}, {Key: "f", Value: 3}},
		dbson.D{{Key: "_id", Value: 2.5}, {Key: "f", Value: 4}},
		dbson.D{{Key: "_id", Value: dbson.D{{Key: "a", Value: 1}}}, {Key: "f", Value: 5}},
	}
	if r := run(dbson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: docs}}); !ok(r) {
		t.Fatalf("insert: %s", r.String())
	}
	run(dbson.D{{Key: "create", Value: "v"}, {Key: "viewOn", Value: "c"}, {Key: "pipeline", Value: dbson.A{}}})

	cases := []struct {
		body    dbson.D
		express bool
	}{
		{dbson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: dbson.D{{Key: "_id", Value: "user1"}}}}, true},
		{dbson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: dbson.D{{Key: "_id", Value: "user1"}}}, {Key: "limit", Value: int64(1)}, {Key: "singleBatch", Value: true}}, true},
		{dbson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: dbson.D{{Key: "_id", Value: "nope"}}}, {Key: "limit", Value: int64(1)}}, true},
		{dbson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: dbson.D{{Key: "_id", Value: int64(7)}}}}, true},
		{dbson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: dbson.D{{Key: "_id", Value: 7.0}}}}, true},
		{dbson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: dbson.D{{Key: "_id", Value: oid}}}}, true},
		{dbson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: dbson.D{{Key: "_id", Value: 2.5}}}}, true},
		{dbson.D{{Key: "find", Value: "missing"}, {Key: "filter", Value: dbson.D{{Key: "_id", Value: 1}}}}, true},
		{dbson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: dbson.D{{Key: "_id", Value: dbson.D{{Key: "a", Value: 1}}}}}}, false},
		{dbson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: dbson.D{{Key: "_id", Value: dbson.D{{Key: "$gte", Value: "user"}}}}}}, false},
		{dbson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: dbson.D{{Key: "_id", Value: "user1"}, {Key: "f", Value: 2}}}}, false},
		{dbson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: dbson.D{{Key: "_id", Value: "user1"}}}, {Key: "projection", Value: dbson.D{{Key: "f", Value: 0}}}}, true},
		{dbson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: dbson.D{{Key: "_id", Value: "user1"}}}, {Key: "projection", Value: dbson.D{{Key: "f", Value: false}, {Key: "h", Value: int64(0)}}}}, true},
		{dbson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: dbson.D{{Key: "_id", Value: "user1"}}}, {Key: "projection", Value: dbson.D{{Key: "_id", Value: false}, {Key: "i", Value: true}, {Key: "g", Value: true}, {Key: "f", Value: true}}}}, true},
		{dbson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: dbson.D{{Key: "_id", Value: "user1"}}}, {Key: "projection", Value: dbson.D{{Key: "g", Value: 1}, {Key: "nope", Value: 1.5}}}}, true},
		{dbson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: dbson.D{{Key: "_id", Value: "user1"}}}, {Key: "projection", Value: dbson.D{{Key: "_id", Value: 1}}}}, true},
		{dbson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: dbson.D{{Key: "_id", Value: "user1"}}}, {Key: "projection", Value: dbson.D{{Key: "_id", Value: 0}}}}, true},
		{dbson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: dbson.D{{Key: "_id", Value: "user1"}}}, {Key: "projection", Value: dbson.D{{Key: "_id", Value: 0}, {Key: "g", Value: 0}}}}, true},
		{dbson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: dbson.D{{Key: "_id", Value: "user1"}}}, {Key: "projection", Value: dbson.D{}}}, true},
		{dbson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: dbson.D{{Key: "_id", Value: "user1"}}}, {Key: "projection", Value: dbson.D{{Key: "f", Value: 1}, {Key: "g", Value: 0}}}}, false},
		{dbson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: dbson.D{{Key: "_id", Value: "user1"}}}, {Key: "projection", Value: dbson.D{{Key: "f", Value: 1}, {Key: "f", Value: 1}}}}, false},
		{dbson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: dbson.D{{Key: "_id", Value: "user1"}}}, {Key: "projection", Value: dbson.D{{Key: "g.x", Value: 1}}}}, false},
		{dbson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: dbson.D{{Key: "_id", Value: "user1"}}}, {Key: "projection", Value: dbson.D{{Key: "f", Value: "$i"}}}}, false},
		{dbson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: dbson.D{{Key: "_id", Value: "user1"}}}, {Key: "projection", Value: dbson.D{{Key: "h", Value: dbson.D{{Key: "$slice", Value: 1}}}}}}, false},
		{dbson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: dbson.D{{Key: "_id", Value: "user1"}}}, {Key: "projection", Value: dbson.D{{Key: "$f", Value: 1}}}}, false},
		{dbson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: dbson.D{{Key: "_id", Value: "user1"}}}, {Key: "projection", Value: int32(1)}}, false},
		{dbson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: dbson.D{{Key: "_id", Value: "nope"}}}, {Key: "projection", Value: dbson.D{{Key: "_id", Value: 0}, {Key: "f", Value: 1}}}}, true},
		{dbson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: dbson.D{{Key: "_id", Value: "user1"}}}, {Key: "limit", Value: int64(0)}}, false},
		{dbson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: dbson.D{{Key: "_id", Value: "user1"}}}, {Key: "limit", Value: int64(-1)}}, false},
		{dbson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: dbson.D{{Key: "_id", Value: "user1"}}}, {Key: "skip", Value: int64(1)}}, false},
		{dbson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: dbson.D{{Key: "_id", Value: "user1"}}}, {Key: "bogus", Value: 1}}, false},
		{dbson.D{{Key: "find", Value: "v"}, {Key: "filter", Value: dbson.D{{Key: "_id", Value: "user1"}}}}, false},
		{dbson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: dbson.D{{Key: "_id", Value: "USER1"}}}, {Key: "collation", Value: dbson.D{{Key: "locale", Value: "en"}, {Key: "strength", Value: 2}}}}, false},
		{dbson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: dbson.D{{Key: "_id", Value: "user1"}}}, {Key: "maxTimeMS", Value: int64(1000)}}, false},
	}
	for _, tc := range cases {
		env.State.NoExpress = true
		want := run(tc.body)
		env.State.NoExpress = false
		raw, _ := dbson.Marshal(append(tc.body, dbson.E{Key: "$db", Value: "t"}))
		probe := &Ctx{Context: context.Background(), Env: env, DB: "t", Body: bson.Doc(raw), Reply: &bson.Builder{}}
		took, err := expressFind(probe)
		if err != nil {
			t.Fatalf("%v: express path failed: %v", tc.body, err)
		}
		if took != tc.express {
			t.Errorf("%v: express path taken = %v, want %v", tc.body, took, tc.express)
		}
		got := run(tc.body)
		if !bytes.Equal(got, want) {
			t.Errorf("%v:\nexpress %s\ngeneral %s", tc.body, got.String(), want.String())
		}
	}
}

func ok(r bson.Doc) bool {
	v, _ := r.Lookup("ok")
	n, _ := v.AsInt64()
	return n == 1
}
