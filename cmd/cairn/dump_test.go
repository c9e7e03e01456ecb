package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// seed fills a server with two databases of assorted types, indexes,
// collection options and a view.
func seed(t *testing.T, client *mongo.Client) {
	t.Helper()
	ctx := context.Background()
	shop := client.Database("shop")
	if err := shop.CreateCollection(ctx, "checked", options.CreateCollection().SetValidator(bson.D{{Key: "qty", Value: bson.D{{Key: "$type", Value: "int"}}}})); err != nil {
		t.Fatal(err)
	}
	var items []any
	for i := range 2500 {
		items = append(items, bson.D{
			{Key: "_id", Value: i}, {Key: "sku", Value: fmt.Sprintf("sku-%05d", i)}, {Key: "qty", Value: int32(i % 17)},
			{Key: "price", Value: float64(i) / 4}, {Key: "big", Value: int64(i) << 40},
			{Key: "when", Value: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i)}, {Key: "tags", Value: bson.A{"a", i % 3, bson.D{{Key: "x", Value: nil}}}},
			{Key: "oid", Value: bson.NewObjectID()}, {Key: "bin", Value: bson.Binary{Subtype: 0, Data: []byte{byte(i), 1, 2}}},
			{Key: "dec", Value: bson.NewDecimal128(uint64(i), 3)}, {Key: "nested", Value: bson.D{{Key: "deep", Value: bson.D{{Key: "v", Value: i}}}}},
		})
	}
	if _, err := shop.Collection("items").InsertMany(ctx, items); err != nil {
		t.Fatal(err)
	}
	if _, err := shop.Collection("checked").InsertOne(ctx, bson.D{{Key: "qty", Value: int32(1)}}); err != nil {
		t.Fatal(err)
	}
	_, err := shop.Collection("items").Indexes().CreateMany(ctx, []mongo.IndexModel{
		{Keys: bson.D{{Key: "sku", Value: 1}}, Options: options.Index().SetUnique(true)},
		{Keys: bson.D{{Key: "qty", Value: 1}, {Key: "price", Value: -1}}, Options: options.Index().SetName("qp")},
		{Keys: bson.D{{Key: "tags", Value: 1}}, Options: options.Index().SetSparse(true)},
		// A TTL index whose documents expire decades from now: the restored
		// server's TTL monitor must not delete them during the test.
		{Keys: bson.D{{Key: "when", Value: 1}}, Options: options.Index().SetExpireAfterSeconds(1 << 30)},
		{Keys: bson.D{{Key: "big", Value: 1}}, Options: options.Index().SetPartialFilterExpression(bson.D{{Key: "qty", Value: bson.D{{Key: "$gt", Value: 5}}}})},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := shop.CreateView(ctx, "cheap", "items", mongo.Pipeline{{{Key: "$match", Value: bson.D{{Key: "price", Value: bson.D{{Key: "$lt", Value: 10}}}}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Database("other").Collection("c.with.dots").InsertOne(ctx, bson.D{{Key: "k", Value: "v"}}); err != nil {
		t.Fatal(err)
	}
}

// snapshot describes a server's user databases: every collection's options
// and indexes and every document, as canonical Extended JSON.
func snapshot(t *testing.T, client *mongo.Client) string {
	t.Helper()
	ctx := context.Background()
	var out strings.Builder
	for _, dbName := range []string{"other", "shop"} {
		db := client.Database(dbName)
		cur, err := db.ListCollections(ctx, bson.D{}, options.ListCollections().SetNameOnly(false))
		if err != nil {
			t.Fatal(err)
		}
		infos := map[string]bson.Raw{}
		var sorted []string
		for cur.Next(ctx) {
			name := cur.Current.Lookup("name").StringValue()
			infos[name] = append(bson.Raw(nil), cur.Current...)
			sorted = append(sorted, name)
		}
		slicesSort(sorted)
		for _, name := range sorted {
			in := infos[name]
			fmt.Fprintf(&out, "%s.%s %s %s\n", dbName, name, in.Lookup("type"), in.Lookup("options"))
			if in.Lookup("type").StringValue() == "view" {
				continue
			}
			ic, err := db.Collection(name).Indexes().List(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for ic.Next(ctx) {
				fmt.Fprintf(&out, "  index %s\n", ic.Current)
			}
			dc, err := db.Collection(name).Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
			if err != nil {
				t.Fatal(err)
			}
			for dc.Next(ctx) {
				fmt.Fprintf(&out, "  doc %s\n", dc.Current)
			}
		}
	}
	return out.String()
}

func slicesSort(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func TestDumpRestore(t *testing.T) {
	src, srcClient := startServer(t)
	seed(t, srcClient)
	want := snapshot(t, srcClient)
	if !strings.Contains(want, "index") || !strings.Contains(want, `"viewOn": "items"`) || strings.Count(want, "  doc ") != 2502 {
		t.Fatalf("seeded server looks wrong:\n%.2000s", want)
	}
	for _, gz := range []bool{false, true} {
		t.Run(fmt.Sprintf("gzip=%v", gz), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "dump")
			args := []string{"dump", "--uri", src.URI, "--out", dir, "--noProgress"}
			if gz {
				args = append(args, "--gzip")
			}
			if rc, stderr := runTool(t, "", args...); rc != 0 || !strings.Contains(stderr, "dumped 2502 document(s) of 3 collection(s) and 1 view(s)") {
				t.Fatalf("dump: rc %d\n%s", rc, stderr)
			}
			ext := ""
			if gz {
				ext = ".gz"
			}
			for _, f := range []string{"shop/items.bson", "shop/items.metadata.json", "shop/cheap.metadata.json", "other/c.with.dots.bson"} {
				if _, err := os.Stat(filepath.Join(dir, f+ext)); err != nil {
					t.Fatalf("dump layout: %v", err)
				}
			}
			if !gz { // the metadata is mongodump's canonical Extended JSON
				meta, _ := os.ReadFile(filepath.Join(dir, "shop", "items.metadata.json"))
				if !bytes.HasPrefix(meta, []byte(`{"options":{},"indexes":[{"v":{"$numberInt":"2"},"key":{"_id":{"$numberInt":"1"}},"name":"_id_"}`)) ||
					!bytes.Contains(meta, []byte(`"collectionName":"items","type":"collection"}`)) {
					t.Fatalf("metadata: %s", meta)
				}
			}
			dst, dstClient := startServer(t)
			if rc, stderr := runTool(t, "", "restore", "--uri", dst.URI, "--noProgress", dir); rc != 0 || !strings.Contains(stderr, "2502 document(s) restored successfully. 0 document(s) failed") {
				t.Fatalf("restore: rc %d\n%s", rc, stderr)
			}
			if got := snapshot(t, dstClient); got != want {
				t.Fatalf("restored server differs\n got: %.3000s\nwant: %.3000s", got, want)
			}
			// Restoring again without --drop fails every document on its
			// _id; with --drop it succeeds.
			if rc, stderr := runTool(t, "", "restore", "--uri", dst.URI, "--noProgress", "--db", "other", dir); rc != 0 || !strings.Contains(stderr, "0 document(s) restored successfully. 1 document(s) failed") {
				t.Fatalf("restore again: rc %d\n%s", rc, stderr)
			}
			if rc, stderr := runTool(t, "", "restore", "--uri", dst.URI, "--noProgress", "--drop", dir); rc != 0 || !strings.Contains(stderr, "2502 document(s) restored successfully") {
				t.Fatalf("restore --drop: rc %d\n%s", rc, stderr)
			}
			if got := snapshot(t, dstClient); got != want {
				t.Fatalf("server restored with --drop differs")
			}
		})
	}
	t.Run("one collection with a query", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "dump")
		if rc, stderr := runTool(t, "", "dump", "--uri", src.URI, "--out", dir, "--noProgress", "--db", "shop", "--collection", "items", "--query", `{"qty": 3}`); rc != 0 {
			t.Fatalf("dump: rc %d\n%s", rc, stderr)
		}
		dst, dstClient := startServer(t)
		file := filepath.Join(dir, "shop", "items.bson")
		if rc, stderr := runTool(t, "", "restore", "--uri", dst.URI, "--noProgress", "--db", "copy", "--collection", "few", file); rc != 0 {
			t.Fatalf("restore: rc %d\n%s", rc, stderr)
		}
		n, err := dstClient.Database("copy").Collection("few").CountDocuments(context.Background(), bson.D{})
		if err != nil || n != 147 { // 2500 / 17 rounded: i%17 == 3 for 147 values of i
			t.Fatalf("restored %d documents, %v", n, err)
		}
		specs, err := dstClient.Database("copy").Collection("few").Indexes().ListSpecifications(context.Background())
		if err != nil || len(specs) != 6 {
			t.Fatalf("restored indexes: %v %v", specs, err)
		}
	})
}
