package e2e

import (
	"fmt"
	"reflect"
	"sort"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestIDRangesAndSort covers the scans that use the data tree's _id order:
// _id ranges are read from their start, and a sort on _id is the scan
// order (forward and backward), across batches and mixed _id types.
func TestIDRangesAndSort(t *testing.T) {
	_, client := connect(t)
	coll := client.Database("ids").Collection("c")
	var docs []any
	var nums []float64
	var strs []string
	for i := 0; i < 300; i++ {
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "v", Value: i % 3}})
		nums = append(nums, float64(i))
	}
	for i := 0; i < 50; i++ {
		s := fmt.Sprintf("s%d", i)
		docs = append(docs, bson.D{{Key: "_id", Value: s}, {Key: "v", Value: i % 3}})
		strs = append(strs, s)
	}
	for _, f := range []float64{10.5, 99.5, 299.25} {
		docs = append(docs, bson.D{{Key: "_id", Value: f}, {Key: "v", Value: 0}})
		nums = append(nums, f)
	}
	if _, err := coll.InsertMany(ctx(t), docs); err != nil {
		t.Fatal(err)
	}
	sort.Float64s(nums)
	sort.Strings(strs)
	ids := func(filter bson.D, opts *options.FindOptionsBuilder) []string {
		t.Helper()
		cur, err := coll.Find(ctx(t), filter, opts.SetBatchSize(7))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for cur.Next(ctx(t)) {
			out = append(out, fmt.Sprint(cur.Current.Lookup("_id")))
		}
		if err := cur.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	fmtNum := func(f float64) string {
		if f == float64(int(f)) {
			return fmt.Sprint(bson.RawValue{Type: bson.TypeInt32, Value: int32Bytes(int32(f))})
		}
		return fmt.Sprint(bson.RawValue{Type: bson.TypeDouble, Value: float64Bytes(f)})
	}
	var want []string
	for _, f := range nums {
		if f >= 100 && f < 150 {
			want = append(want, fmtNum(f))
		}
	}
	if got := ids(bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: 100}, {Key: "$lt", Value: 150}}}}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}})); !reflect.DeepEqual(got, want) {
		t.Fatalf("_id in [100,150) ascending: got %d ids %v..., want %d", len(got), head(got), len(want))
	}
	// The same range, no sort: _id order anyway, with a residual filter.
	var wantV []string
	for _, f := range nums {
		if f >= 100 && f < 150 && f == float64(int(f)) && int(f)%3 == 1 {
			wantV = append(wantV, fmtNum(f))
		}
	}
	if got := ids(bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: 100}, {Key: "$lt", Value: 150}}}, {Key: "v", Value: 1}}, options.Find()); !reflect.DeepEqual(got, wantV) {
		t.Fatalf("_id range with v=1: got %v, want %v", head(got), head(wantV))
	}
	// Strings above "s3", descending.
	var wantS []string
	for i := len(strs) - 1; i >= 0; i-- {
		if strs[i] > "s3" {
			wantS = append(wantS, fmt.Sprintf("%q", strs[i]))
		}
	}
	if got := ids(bson.D{{Key: "_id", Value: bson.D{{Key: "$gt", Value: "s3"}}}}, options.Find().SetSort(bson.D{{Key: "_id", Value: -1}})); !reflect.DeepEqual(got, wantS) {
		t.Fatalf("strings > s3 descending: got %v, want %v", head(got), head(wantS))
	}
	// Everything, descending, limited: strings sort after numbers.
	wantTop := []string{fmt.Sprintf("%q", strs[49]), fmt.Sprintf("%q", strs[48]), fmt.Sprintf("%q", strs[47])}
	if got := ids(bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: -1}}).SetLimit(3)); !reflect.DeepEqual(got, wantTop) {
		t.Fatalf("top 3 descending: got %v, want %v", got, wantTop)
	}
	// A range through the number/string boundary.
	got := ids(bson.D{{Key: "_id", Value: bson.D{{Key: "$gt", Value: 299}}}}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if len(got) != 1 || got[0] != fmtNum(299.25) {
		t.Fatalf("_id > 299 (numbers only, type bracketing) = %v", got)
	}
}

func head(s []string) []string {
	if len(s) > 5 {
		return s[:5]
	}
	return s
}

func int32Bytes(n int32) []byte {
	return []byte{byte(n), byte(n >> 8), byte(n >> 16), byte(n >> 24)}
}

func float64Bytes(f float64) []byte {
	b, _ := bson.Marshal(bson.D{{Key: "x", Value: f}})
	return b[7:15]
}

// TestBatchSizeZero: find with batchSize 0 returns an empty first batch and
// an open cursor, as MongoDB does; getMore then returns the documents.
func TestBatchSizeZero(t *testing.T) {
	_, client := connect(t)
	db := client.Database("bs0")
	for i := 0; i < 5; i++ {
		if _, err := db.Collection("c").InsertOne(ctx(t), bson.D{{Key: "_id", Value: i}}); err != nil {
			t.Fatal(err)
		}
	}
	var r struct {
		Cursor struct {
			FirstBatch []bson.Raw `bson:"firstBatch"`
			NextBatch  []bson.Raw `bson:"nextBatch"`
			ID         int64
		}
	}
	if err := db.RunCommand(ctx(t), bson.D{{Key: "find", Value: "c"}, {Key: "batchSize", Value: 0}}).Decode(&r); err != nil {
		t.Fatal(err)
	}
	if len(r.Cursor.FirstBatch) != 0 || r.Cursor.ID == 0 {
		t.Fatalf("batchSize 0: %d documents, cursor %d", len(r.Cursor.FirstBatch), r.Cursor.ID)
	}
	id := r.Cursor.ID
	if err := db.RunCommand(ctx(t), bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "c"}}).Decode(&r); err != nil {
		t.Fatal(err)
	}
	if len(r.Cursor.NextBatch) != 5 || r.Cursor.ID != 0 {
		t.Fatalf("getMore after batchSize 0: %d documents, cursor %d", len(r.Cursor.NextBatch), r.Cursor.ID)
	}
}
