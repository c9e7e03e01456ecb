package e2e

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// TestGraphLookup runs $graphLookup through the server, with and without
// an index on connectToField.
func TestGraphLookup(t *testing.T) {
	_, client := connect(t)
	db := client.Database("graph")
	emp := db.Collection("employees")
	if _, err := emp.InsertMany(ctx(t), []any{
		bson.D{{Key: "_id", Value: int32(1)}, {Key: "name", Value: "Dev"}},
		bson.D{{Key: "_id", Value: int32(2)}, {Key: "name", Value: "Eliot"}, {Key: "reportsTo", Value: "Dev"}},
		bson.D{{Key: "_id", Value: int32(3)}, {Key: "name", Value: "Ron"}, {Key: "reportsTo", Value: "Eliot"}},
		bson.D{{Key: "_id", Value: int32(4)}, {Key: "name", Value: "Andrew"}, {Key: "reportsTo", Value: "Eliot"}},
		bson.D{{Key: "_id", Value: int32(5)}, {Key: "name", Value: "Asya"}, {Key: "reportsTo", Value: "Ron"}},
		bson.D{{Key: "_id", Value: int32(6)}, {Key: "name", Value: "Dan"}, {Key: "reportsTo", Value: "Andrew"}},
	}); err != nil {
		t.Fatal(err)
	}
	pipeline := bson.A{
		bson.D{{Key: "$graphLookup", Value: bson.D{{Key: "from", Value: "employees"}, {Key: "startWith", Value: "$reportsTo"},
			{Key: "connectFromField", Value: "reportsTo"}, {Key: "connectToField", Value: "name"}, {Key: "as", Value: "chain"}}}},
		bson.D{{Key: "$project", Value: bson.D{{Key: "n", Value: bson.D{{Key: "$size", Value: "$chain"}}}}}},
		bson.D{{Key: "$sort", Value: bson.D{{Key: "_id", Value: 1}}}},
	}
	check := func(when string) {
		t.Helper()
		cur, err := emp.Aggregate(ctx(t), pipeline)
		if err != nil {
			t.Fatal(err)
		}
		var got []struct {
			ID int32 `bson:"_id"`
			N  int32 `bson:"n"`
		}
		if err := cur.All(ctx(t), &got); err != nil {
			t.Fatal(err)
		}
		want := []int32{0, 1, 2, 2, 3, 3} // managers above each employee
		if len(got) != len(want) {
			t.Fatalf("%s: %+v", when, got)
		}
		for i, w := range want {
			if got[i].N != w {
				t.Errorf("%s: employee %d has %d managers, want %d", when, got[i].ID, got[i].N, w)
			}
		}
	}
	check("without an index")
	if _, err := emp.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "name", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	check("with an index on name")
}
