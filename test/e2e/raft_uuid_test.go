package e2e

// Collections have the same UUID on every member of a set: a member
// applying the primary's create entry takes its ui (catalog.UUIDSource).

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readpref"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"
)

// catalogOf lists member c's collections of db with their UUIDs and
// indexes, one line each, in name order.
func catalogOf(c *mongo.Client, db string) (string, error) {
	cx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	d := c.Database(db, options.Database().SetReadPreference(readpref.SecondaryPreferred()))
	cur, err := d.ListCollections(cx, bson.D{})
	if err != nil {
		return "", err
	}
	var colls []struct {
		Name string `bson:"name"`
		Info struct {
			UUID bson.Binary `bson:"uuid"`
		} `bson:"info"`
	}
	if err := cur.All(cx, &colls); err != nil {
		return "", err
	}
	var lines []string
	for _, coll := range colls {
		ic, err := d.Collection(coll.Name).Indexes().List(cx)
		if err != nil {
			return "", err
		}
		var idx []bson.M
		if err := ic.All(cx, &idx); err != nil {
			return "", err
		}
		var names []string
		for _, x := range idx {
			names = append(names, fmt.Sprint(x["name"], x["key"], x["unique"]))
		}
		sort.Strings(names)
		lines = append(lines, fmt.Sprintf("%s %x %v", coll.Name, coll.Info.UUID.Data, names))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n"), nil
}

// TestRaftSetCollectionUUIDs: after create, an insert's implicit create,
// createIndexes (creating its collection, and on an existing one),
// renameCollection and a drop and re-create, listCollections' info.uuid
// and listIndexes agree on every member.
func TestRaftSetCollectionUUIDs(t *testing.T) {
	s := startRaftSet(t, 3, nil)
	c := s.client()
	db := c.Database("uu", options.Database().SetWriteConcern(writeconcern.Majority()))
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%v\n%s", err, s.logs())
		}
	}
	must(db.CreateCollection(ctx(t), "created"))
	_, err := db.Collection("implicit").InsertOne(ctx(t), bson.D{{Key: "_id", Value: 1}})
	must(err)
	_, err = db.Collection("indexed").Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}}})
	must(err)
	_, err = db.Collection("implicit").Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "b", Value: -1}}, Options: options.Index().SetUnique(true)})
	must(err)
	must(db.CreateCollection(ctx(t), "torename"))
	must(c.Database("admin").RunCommand(ctx(t), bson.D{{Key: "renameCollection", Value: "uu.torename"}, {Key: "to", Value: "uu.renamed"}}).Err())
	must(db.Collection("created").Drop(ctx(t)))
	must(db.CreateCollection(ctx(t), "created"))
	p := s.primary()
	want, err := catalogOf(s.direct(p), "uu")
	must(err)
	if strings.Count(want, "\n") != 3 {
		t.Fatalf("primary's collections:\n%s", want)
	}
	for i := range s.members {
		if i == p {
			continue
		}
		d := s.direct(i)
		deadline := time.Now().Add(20 * time.Second)
		for {
			got, err := catalogOf(d, "uu")
			if err == nil && got == want {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("member %d's collections (err %v):\n%s\nthe primary's:\n%s", i, err, got, want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	t.Logf("on every member:\n%s", want)
}
