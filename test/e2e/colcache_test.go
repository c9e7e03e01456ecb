package e2e

import (
	"fmt"
	"reflect"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/cairndb/cairn/internal/testutil/cairndtest"
)

// columnCacheStats reads serverStatus's columnCache section.
func columnCacheStats(t *testing.T, client *mongo.Client) bson.M {
	t.Helper()
	var st struct {
		ColumnCache bson.M `bson:"columnCache"`
	}
	if err := client.Database("admin").RunCommand(ctx(t), bson.D{{Key: "serverStatus", Value: 1}}).Decode(&st); err != nil {
		t.Fatal(err)
	}
	if st.ColumnCache == nil {
		t.Fatal("serverStatus has no columnCache section")
	}
	return st.ColumnCache
}

// colDoc is document i of the column-cache tests: by turns the fields are
// present, missing, null, arrays, embedded documents and of mixed types.
func colDoc(i int, tag string) bson.D {
	d := bson.D{{Key: "_id", Value: i}, {Key: "pad", Value: "filler filler filler filler"}}
	switch i % 6 {
	case 0:
		d = append(d, bson.E{Key: "g", Value: int32(i % 7)})
	case 1:
		d = append(d, bson.E{Key: "g", Value: fmt.Sprintf("s%d", i%5)})
	case 2:
		d = append(d, bson.E{Key: "g", Value: nil})
	case 3:
		d = append(d, bson.E{Key: "g", Value: bson.A{int32(i % 3), tag}})
	case 4:
		d = append(d, bson.E{Key: "g", Value: float64(i % 7)})
	}
	if i%4 != 0 {
		d = append(d, bson.E{Key: "e", Value: bson.D{{Key: "x", Value: int64(i % 9)}, {Key: "t", Value: tag}}})
	}
	if i%3 != 0 {
		d = append(d, bson.E{Key: "v", Value: int32(i % 13)})
	} else if i%9 == 0 {
		d = append(d, bson.E{Key: "v", Value: int64(i)})
	}
	return append(d, bson.E{Key: "s", Value: fmt.Sprintf("%s-%04d", tag, i%50)})
}

func colDocs(lo, hi int, tag string) []any {
	var out []any
	for i := lo; i < hi; i++ {
		out = append(out, colDoc(i, tag))
	}
	return out
}

// colPipelines are pipelines a parallel aggregation runs, reading a few
// fields: each must answer the same with and without the column cache.
var colPipelines = []bson.A{
	{bson.M{"$group": bson.D{{Key: "_id", Value: "$g"}, {Key: "n", Value: bson.M{"$sum": 1}}, {Key: "sv", Value: bson.M{"$sum": "$v"}},
		{Key: "mins", Value: bson.M{"$min": "$s"}}, {Key: "maxe", Value: bson.M{"$max": "$e"}},
		{Key: "first", Value: bson.M{"$first": "$_id"}}, {Key: "last", Value: bson.M{"$last": "$_id"}}}}, bson.M{"$sort": bson.M{"_id": 1}}},
	{bson.M{"$match": bson.M{"v": bson.M{"$gt": 3}}}, bson.M{"$count": "c"}},
	{bson.M{"$match": bson.M{"s": bson.M{"$ne": "x"}, "e.x": bson.M{"$gte": 2}}},
		bson.M{"$group": bson.D{{Key: "_id", Value: "$e.x"}, {Key: "avg", Value: bson.M{"$avg": "$v"}}, {Key: "tags", Value: bson.M{"$addToSet": "$e.t"}}}},
		bson.M{"$set": bson.M{"tags": bson.M{"$sortArray": bson.M{"input": "$tags", "sortBy": 1}}}}, bson.M{"$sort": bson.M{"_id": 1}}},
	{bson.M{"$project": bson.M{"g": 1, "v": 1}}, bson.M{"$group": bson.D{{Key: "_id", Value: bson.M{"$type": "$g"}}, {Key: "n", Value: bson.M{"$sum": 1}}, {Key: "gs", Value: bson.M{"$addToSet": "$g"}}}},
		bson.M{"$set": bson.M{"gs": bson.M{"$sortArray": bson.M{"input": "$gs", "sortBy": 1}}}}, bson.M{"$sort": bson.M{"_id": 1}}},
	{bson.M{"$match": bson.M{"g": bson.M{"$in": bson.A{1, 2, "s3"}}}}, bson.M{"$group": bson.D{{Key: "_id", Value: "$g"}, {Key: "n", Value: bson.M{"$sum": 1}}, {Key: "sv", Value: bson.M{"$sum": "$v"}}}},
		bson.M{"$sort": bson.M{"_id": 1}}},
	{bson.M{"$group": bson.D{{Key: "_id", Value: nil}, {Key: "missing", Value: bson.M{"$max": "$nosuchfield"}}, {Key: "n", Value: bson.M{"$sum": 1}}}}},
	{bson.M{"$match": bson.M{"v": bson.M{"$gte": 2}}}, bson.M{"$project": bson.M{"_id": 0, "s": 1, "v": 1, "e": 1}},
		bson.M{"$sort": bson.D{{Key: "v", Value: -1}, {Key: "s", Value: 1}}}, bson.M{"$limit": 7}},
	// Equalities the column scan narrows by: numbers of every type,
	// arrays holding the value, strings.
	{bson.M{"$match": bson.M{"g": 2}}, bson.M{"$group": bson.D{{Key: "_id", Value: bson.M{"$type": "$g"}}, {Key: "n", Value: bson.M{"$sum": 1}}}}, bson.M{"$sort": bson.M{"_id": 1}}},
	{bson.M{"$match": bson.M{"g": 4.0, "v": int64(4)}}, bson.M{"$count": "c"}},
	{bson.M{"$match": bson.M{"g": "s2"}}, bson.M{"$group": bson.D{{Key: "_id", Value: "$g"}, {Key: "n", Value: bson.M{"$sum": 1}}, {Key: "sv", Value: bson.M{"$sum": "$v"}}}}},
	// A top-k over whole documents: run over the columns it reads, the
	// winners fetched whole by _id.
	{bson.M{"$match": bson.M{"v": bson.M{"$gte": 2}, "s": bson.M{"$regex": "-00"}}}, bson.M{"$sort": bson.D{{Key: "s", Value: -1}, {Key: "e.x", Value: 1}}}, bson.M{"$limit": 9}},
	{bson.M{"$sort": bson.M{"v": -1}}, bson.M{"$limit": 4}, bson.M{"$project": bson.M{"pad": 0}}},
	// A correlated $lookup whose sub-pipeline runs in parallel, narrowed by
	// the equality its $expr makes.
	{bson.M{"$group": bson.D{{Key: "_id", Value: "$g"}, {Key: "n", Value: bson.M{"$sum": 1}}}}, bson.M{"$sort": bson.M{"_id": 1}}, bson.M{"$limit": 12},
		bson.M{"$lookup": bson.M{"from": "rows", "let": bson.M{"gv": "$_id"}, "as": "m", "pipeline": bson.A{
			bson.M{"$match": bson.M{"$expr": bson.M{"$eq": bson.A{"$g", "$$gv"}}}},
			bson.M{"$group": bson.D{{Key: "_id", Value: nil}, {Key: "c", Value: bson.M{"$sum": 1}}, {Key: "sv", Value: bson.M{"$sum": "$v"}}}}}}}},
}

// TestColumnCacheAnswers runs the same pipelines on a server with the
// column cache and one without, over the same documents and the same
// writes (insert, update, delete, rename, drop): the answers must agree,
// and the cache must have served and been invalidated.
func TestColumnCacheAnswers(t *testing.T) {
	withSrv := cairndtest.Start(t)
	withoutSrv := cairndtest.Start(t, "--columnCacheSizeGB", "-1")
	with, without := dial(t, withSrv.URI), dial(t, withoutSrv.URI)
	colls := func(name string) [2]*mongo.Collection {
		return [2]*mongo.Collection{with.Database("e2ecol").Collection(name), without.Database("e2ecol").Collection(name)}
	}
	both := func(fn func(c *mongo.Collection) error) {
		t.Helper()
		for _, c := range []*mongo.Collection{colls("rows")[0], colls("rows")[1]} {
			if err := fn(c); err != nil {
				t.Fatal(err)
			}
		}
	}
	compare := func(step, name string) {
		t.Helper()
		cs := colls(name)
		for i, p := range colPipelines {
			var got [2][]bson.M
			for k, c := range cs {
				for rep := range 2 { // the second run is served by the columns the first built
					cur, err := c.Aggregate(ctx(t), p)
					r := aggAll(t, cur, err)
					if rep == 1 && !reflect.DeepEqual(r, got[k]) {
						t.Fatalf("%s, pipeline %d: the repeat differs:\n%v\n%v", step, i, got[k], r)
					}
					got[k] = r
				}
			}
			if !reflect.DeepEqual(got[0], got[1]) {
				t.Fatalf("%s, pipeline %d:\nwith the cache    %v\nwithout the cache %v", step, i, got[0], got[1])
			}
			if len(got[0]) == 0 {
				t.Fatalf("%s, pipeline %d: no result", step, i)
			}
		}
	}
	both(func(c *mongo.Collection) error { _, err := c.InsertMany(ctx(t), colDocs(0, 3000, "a")); return err })
	both(func(c *mongo.Collection) error {
		_, err := c.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "g", Value: 1}}})
		return err
	})
	compare("initial", "rows")
	st := columnCacheStats(t, with)
	if st["enabled"] != true || st["hits"].(int64) == 0 || st["builds"].(int64) == 0 || st["bytes"].(int64) == 0 {
		t.Fatalf("after the first pipelines: columnCache %v, want builds, hits and bytes", st)
	}
	if off := columnCacheStats(t, without); off["enabled"] != false || off["builds"].(int64) != 0 {
		t.Fatalf("disabled cache: %v", off)
	}

	steps := []struct {
		name string
		fn   func(c *mongo.Collection) error
	}{
		{"insert", func(c *mongo.Collection) error { _, err := c.InsertMany(ctx(t), colDocs(3000, 3100, "b")); return err }},
		{"update", func(c *mongo.Collection) error {
			_, err := c.UpdateMany(ctx(t), bson.M{"v": 5}, bson.M{"$set": bson.M{"v": "five", "g": bson.A{"x"}}, "$unset": bson.M{"s": 1}})
			return err
		}},
		{"delete", func(c *mongo.Collection) error { _, err := c.DeleteMany(ctx(t), bson.M{"e.x": 3}); return err }},
		{"replace one", func(c *mongo.Collection) error {
			_, err := c.ReplaceOne(ctx(t), bson.M{"_id": 10}, bson.M{"g": 99, "v": 1000})
			return err
		}},
	}
	for _, s := range steps {
		before := columnCacheStats(t, with)
		both(s.fn)
		compare(s.name, "rows")
		after := columnCacheStats(t, with)
		if after["invalidations"].(int64) <= before["invalidations"].(int64) {
			t.Errorf("%s: no columns invalidated: %v -> %v", s.name, before, after)
		}
	}
	// Rename: the renamed collection answers as before, the old name is empty.
	for _, c := range []*mongo.Client{with, without} {
		err := c.Database("admin").RunCommand(ctx(t), bson.D{{Key: "renameCollection", Value: "e2ecol.rows"}, {Key: "to", Value: "e2ecol.renamed"}}).Err()
		if err != nil {
			t.Fatal(err)
		}
	}
	compare("rename", "renamed")
	cur, err := colls("rows")[0].Aggregate(ctx(t), colPipelines[0])
	if got := aggAll(t, cur, err); len(got) != 0 {
		t.Fatalf("the old name after a rename answers %v", got)
	}
	// Drop, and a new collection of the same name with other documents.
	for _, c := range colls("renamed") {
		if err := c.Drop(ctx(t)); err != nil {
			t.Fatal(err)
		}
		if _, err := c.InsertMany(ctx(t), colDocs(500, 2600, "c")); err != nil {
			t.Fatal(err)
		}
	}
	compare("drop and recreate", "renamed")
	// A write from another connection invalidates too.
	other := dial(t, withSrv.URI).Database("e2ecol").Collection("renamed")
	if _, err := other.InsertOne(ctx(t), colDoc(9000, "z")); err != nil {
		t.Fatal(err)
	}
	if _, err := colls("renamed")[1].InsertOne(ctx(t), colDoc(9000, "z")); err != nil {
		t.Fatal(err)
	}
	compare("write from another connection", "renamed")
}

// TestColumnCacheSelectiveIndex: once the column cache holds a field, a
// pipeline whose leading $match an index answers with a few entries still
// walks the index (ClickBench's Q19: a UserID equality), while one the
// index would answer with most of the collection reads the columns.
func TestColumnCacheSelectiveIndex(t *testing.T) {
	srv := cairndtest.Start(t)
	client := dial(t, srv.URI)
	c := client.Database("e2ecol").Collection("sel")
	var docs []any
	for i := range 4000 {
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "u", Value: int32(i)}, {Key: "pad", Value: "filler filler filler"}})
	}
	if _, err := c.InsertMany(ctx(t), docs); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "u", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	count := func(match bson.M) int32 {
		t.Helper()
		cur, err := c.Aggregate(ctx(t), bson.A{bson.M{"$match": match}, bson.M{"$group": bson.M{"_id": nil, "n": bson.M{"$sum": 1}, "s": bson.M{"$sum": "$u"}}}})
		r := aggAll(t, cur, err)
		if len(r) != 1 {
			t.Fatalf("%v: %v", match, r)
		}
		return r[0]["n"].(int32)
	}
	// An unfiltered $group on u builds the column.
	cur, err := c.Aggregate(ctx(t), bson.A{bson.M{"$group": bson.M{"_id": nil, "m": bson.M{"$max": "$u"}}}})
	if r := aggAll(t, cur, err); len(r) != 1 || r[0]["m"] != int32(3999) {
		t.Fatalf("max: %v", r)
	}
	// An index scan that reads most of the collection asks the cache to
	// serve u to index plans from then on; the next runs read the column.
	for range 3 {
		if got := count(bson.M{"u": bson.M{"$gte": 100}}); got != 3900 {
			t.Fatalf("warm-up: n = %d", got)
		}
	}
	if st := columnCacheStats(t, client); st["builds"].(int64) == 0 || st["hits"].(int64) == 0 {
		t.Fatalf("the column of u is not served: %v", st)
	}
	for _, tc := range []struct {
		match   bson.M
		want    int32
		columns bool
	}{
		{bson.M{"u": 1234}, 1, false},
		{bson.M{"u": bson.M{"$in": bson.A{5, 17, 3000}}}, 3, false},
		{bson.M{"u": bson.M{"$gte": 3900}}, 100, false},
		{bson.M{"u": bson.M{"$gte": 100}}, 3900, true},
	} {
		before := columnCacheStats(t, client)["hits"].(int64)
		if got := count(tc.match); got != tc.want {
			t.Errorf("%v: n = %d, want %d", tc.match, got, tc.want)
		}
		after := columnCacheStats(t, client)["hits"].(int64)
		if used := after > before; used != tc.columns {
			t.Errorf("%v: served by the column cache = %v, want %v (hits %d -> %d)", tc.match, used, tc.columns, before, after)
		}
	}
}
