package e2e

import (
	"errors"
	"math"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// textFind runs a $text find and returns the _ids in result order.
func textFind(t *testing.T, coll *mongo.Collection, filter any, opts ...options.Lister[options.FindOptions]) []int32 {
	t.Helper()
	cur, err := coll.Find(ctx(t), filter, opts...)
	if err != nil {
		t.Fatalf("find %v: %v", filter, err)
	}
	var docs []bson.M
	if err := cur.All(ctx(t), &docs); err != nil {
		t.Fatal(err)
	}
	var ids []int32
	for _, d := range docs {
		ids = append(ids, d["_id"].(int32))
	}
	return ids
}

func search(s string) bson.D {
	return bson.D{{Key: "$text", Value: bson.D{{Key: "$search", Value: s}}}}
}

func TestTextSearch(t *testing.T) {
	_, client := connect(t)
	db := client.Database("text")
	coll := db.Collection("articles")
	docs := []any{
		bson.D{{Key: "_id", Value: int32(1)}, {Key: "subject", Value: "coffee"}, {Key: "author", Value: "xyz"}, {Key: "views", Value: 50}},
		bson.D{{Key: "_id", Value: int32(2)}, {Key: "subject", Value: "Coffee Shopping"}, {Key: "author", Value: "efg"}, {Key: "views", Value: 5}},
		bson.D{{Key: "_id", Value: int32(3)}, {Key: "subject", Value: "Baking a cake"}, {Key: "author", Value: "abc"}, {Key: "views", Value: 90}},
		bson.D{{Key: "_id", Value: int32(4)}, {Key: "subject", Value: "baking"}, {Key: "author", Value: "xyz"}, {Key: "views", Value: 100}},
		bson.D{{Key: "_id", Value: int32(5)}, {Key: "subject", Value: "Café Con Leche"}, {Key: "author", Value: "abc"}, {Key: "views", Value: 200}},
		bson.D{{Key: "_id", Value: int32(6)}, {Key: "subject", Value: "Сырники"}, {Key: "author", Value: "jkl"}, {Key: "views", Value: 80}},
		bson.D{{Key: "_id", Value: int32(7)}, {Key: "subject", Value: "coffee and cream"}, {Key: "author", Value: "efg"}, {Key: "views", Value: 10}},
		bson.D{{Key: "_id", Value: int32(8)}, {Key: "subject", Value: "Cafe con Leche"}, {Key: "author", Value: "xyz"}, {Key: "views", Value: 10}},
		bson.D{{Key: "_id", Value: int32(9)}, {Key: "subject", Value: "el café con leche"}, {Key: "language", Value: "spanish"}},
	}
	if _, err := coll.InsertMany(ctx(t), docs); err != nil {
		t.Fatal(err)
	}
	// Without a text index: IndexNotFound.
	_, err := coll.Find(ctx(t), search("coffee"))
	cmdErr(t, err, 27)

	name, err := coll.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "subject", Value: "text"}}})
	if err != nil || name != "subject_text" {
		t.Fatalf("createIndex = %q, %v", name, err)
	}
	specs, err := coll.Indexes().ListSpecifications(ctx(t))
	if err != nil || len(specs) != 2 {
		t.Fatal(specs, err)
	}
	var raw bson.D
	if err := bson.Unmarshal(specs[1].KeysDocument, &raw); err != nil || len(raw) != 2 || raw[0].Key != "_fts" || raw[1].Key != "_ftsx" {
		t.Fatalf("text key pattern = %v, %v", raw, err)
	}
	// A second text index is refused.
	_, err = coll.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "author", Value: "text"}}})
	cmdErr(t, err, 67)

	cases := []struct {
		filter bson.D
		want   []int32
	}{
		{search("coffee"), []int32{1, 2, 7}},
		{search("bake coffee cake"), []int32{1, 2, 3, 4, 7}},
		{search(`"coffee shop"`), []int32{2}},
		{search("coffee -shop"), []int32{1, 7}},
		{search("leche"), []int32{5, 8, 9}},
		{search("the"), nil}, // stop words only
		{bson.D{{Key: "$text", Value: bson.D{{Key: "$search", Value: "Coffee"}, {Key: "$caseSensitive", Value: true}}}}, []int32{2}},
		{bson.D{{Key: "$text", Value: bson.D{{Key: "$search", Value: "CAFÉ"}, {Key: "$diacriticSensitive", Value: true}}}}, []int32{5}},
		{search("СЫРНИКИ"), []int32{6}},
		{bson.D{{Key: "$text", Value: bson.D{{Key: "$search", Value: "leche"}, {Key: "$language", Value: "es"}}}}, []int32{5, 8, 9}},
		{bson.D{{Key: "author", Value: "xyz"}, {Key: "$text", Value: bson.D{{Key: "$search", Value: "coffee cafe"}}}}, []int32{1, 8}},
		{bson.D{{Key: "$and", Value: bson.A{bson.D{{Key: "views", Value: bson.D{{Key: "$gte", Value: 50}}}}, search("coffee baking")}}}, []int32{1, 3, 4}},
	}
	for _, tc := range cases {
		got := textFind(t, coll, tc.filter, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
		if !equalIDs(got, tc.want) {
			t.Errorf("find %v = %v, want %v", tc.filter, got, tc.want)
		}
	}

	// Scores: {$meta: "textScore"} in projection and sort. "coffee"
	// alone scores 1 (its stem "coffe" is not the whole field, so no 1.1
	// boost); in "Coffee Shopping" it is one of two terms: 0.5·1/2 + 0.5
	// = 0.75; in "coffee and cream" ("and" is a stop word) also 0.75.
	cur, err := coll.Find(ctx(t), search("coffee"), options.Find().
		SetProjection(bson.D{{Key: "score", Value: bson.D{{Key: "$meta", Value: "textScore"}}}, {Key: "subject", Value: 1}}).
		SetSort(bson.D{{Key: "score", Value: bson.D{{Key: "$meta", Value: "textScore"}}}, {Key: "_id", Value: -1}}))
	if err != nil {
		t.Fatal(err)
	}
	var scored []struct {
		ID    int32   `bson:"_id"`
		Score float64 `bson:"score"`
	}
	if err := cur.All(ctx(t), &scored); err != nil {
		t.Fatal(err)
	}
	wantScores := []struct {
		id    int32
		score float64
	}{{1, 1}, {7, 0.75}, {2, 0.75}}
	if len(scored) != len(wantScores) {
		t.Fatalf("scored = %+v", scored)
	}
	for i, w := range wantScores {
		if scored[i].ID != w.id || math.Abs(scored[i].Score-w.score) > 1e-9 {
			t.Errorf("scored[%d] = %+v, want %+v", i, scored[i], w)
		}
	}
	// $text in a branch of a top-level $or: the text matches and those of
	// the other branches, which need an index (291 without one).
	textOr := bson.D{{Key: "$or", Value: bson.A{search("coffee"), bson.D{{Key: "author", Value: "abc"}}}}}
	_, err = coll.Find(ctx(t), textOr)
	cmdErr(t, err, 291)
	if _, err := coll.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "author", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	if got := textFind(t, coll, textOr, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}})); !equalIDs(got, []int32{1, 2, 3, 5, 7}) {
		t.Errorf("$text under $or: %v", got)
	}
	withRest := bson.D{{Key: "views", Value: bson.D{{Key: "$gte", Value: 50}}}, textOr[0]}
	if got := textFind(t, coll, withRest, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}})); !equalIDs(got, []int32{1, 3, 5}) {
		t.Errorf("$text under $or with another condition: %v", got)
	}
	if n, err := coll.CountDocuments(ctx(t), textOr); err != nil || n != 5 {
		t.Errorf("count $text under $or = %d, %v", n, err)
	}
	// A dotted path gets the score inside an embedded document.
	var nested struct {
		M struct {
			S float64 `bson:"s"`
		} `bson:"m"`
	}
	if err := coll.FindOne(ctx(t), search("coffee"), options.FindOne().SetSort(bson.D{{Key: "_id", Value: 1}}).
		SetProjection(bson.D{{Key: "subject", Value: 1}, {Key: "m.s", Value: bson.D{{Key: "$meta", Value: "textScore"}}}})).Decode(&nested); err != nil || nested.M.S != 1 {
		t.Errorf("dotted $meta: %+v, %v", nested, err)
	}
	// $meta without $text: 40218.
	_, err = coll.Find(ctx(t), bson.D{}, options.Find().SetProjection(bson.D{{Key: "s", Value: bson.D{{Key: "$meta", Value: "textScore"}}}}))
	cmdErr(t, err, 40218)
	// count, writes keep the index in step.
	var cnt struct{ N int32 }
	if err := db.RunCommand(ctx(t), bson.D{{Key: "count", Value: "articles"}, {Key: "query", Value: search("coffee")}}).Decode(&cnt); err != nil || cnt.N != 3 {
		t.Fatalf("count = %d, %v", cnt.N, err)
	}
	if _, err := coll.UpdateOne(ctx(t), bson.D{{Key: "_id", Value: 3}}, bson.D{{Key: "$set", Value: bson.D{{Key: "subject", Value: "coffee cake"}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.DeleteOne(ctx(t), bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	if got := textFind(t, coll, search("coffee"), options.Find().SetSort(bson.D{{Key: "_id", Value: 1}})); !equalIDs(got, []int32{2, 3, 7}) {
		t.Errorf("after writes: %v", got)
	}
	// An unsupported language in a document is refused (17262).
	_, err = coll.InsertOne(ctx(t), bson.D{{Key: "subject", Value: "x"}, {Key: "language", Value: "klingon"}})
	var we mongo.WriteException
	if !errors.As(err, &we) || we.WriteErrors[0].Code != 17262 {
		t.Errorf("klingon: %v", err)
	}
	// Explain: TEXT_MATCH over FETCH over TEXT_OR.
	var ex bson.Raw
	ex, err = db.RunCommand(ctx(t), bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: "articles"}, {Key: "filter", Value: search("coffee -shop")}}}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	wp := ex.Lookup("queryPlanner", "winningPlan")
	if s1, s2, s3 := wp.Document().Lookup("stage").StringValue(), wp.Document().Lookup("inputStage", "stage").StringValue(), wp.Document().Lookup("inputStage", "inputStage", "stage").StringValue(); s1 != "TEXT_MATCH" || s2 != "FETCH" || s3 != "TEXT_OR" {
		t.Errorf("winningPlan = %v", wp)
	}
	st := ex.Lookup("executionStats").Document()
	// "coffee" has three entries; document 2 has "shop" and is dropped.
	if n, k := st.Lookup("nReturned").AsInt64(), st.Lookup("totalKeysExamined").AsInt64(); n != 2 || k != 3 {
		t.Errorf("executionStats = %v", st)
	}
}

func TestTextIndexOptions(t *testing.T) {
	_, client := connect(t)
	coll := client.Database("text").Collection("weighted")
	if _, err := coll.InsertMany(ctx(t), []any{
		bson.D{{Key: "_id", Value: int32(1)}, {Key: "title", Value: "apple"}, {Key: "body", Value: "pear"}, {Key: "shop", Value: "a"}},
		bson.D{{Key: "_id", Value: int32(2)}, {Key: "title", Value: "pear"}, {Key: "body", Value: "apple"}, {Key: "shop", Value: "a"}},
		bson.D{{Key: "_id", Value: int32(3)}, {Key: "title", Value: "apple"}, {Key: "nested", Value: bson.D{{Key: "deep", Value: "pear"}}}, {Key: "shop", Value: "b"}},
		bson.D{{Key: "_id", Value: int32(4)}, {Key: "title", Value: "le chat"}, {Key: "idioma", Value: "french"}, {Key: "shop", Value: "b"}},
	}); err != nil {
		t.Fatal(err)
	}
	// Compound: a prefix field to pin, wildcard fields, weights, override.
	_, err := coll.Indexes().CreateOne(ctx(t), mongo.IndexModel{Keys: bson.D{{Key: "shop", Value: 1}, {Key: "$**", Value: "text"}},
		Options: options.Index().SetWeights(bson.D{{Key: "title", Value: 10}}).SetLanguageOverride("idioma").SetDefaultLanguage("english")})
	if err != nil {
		t.Fatal(err)
	}
	// Without an equality on the prefix: NoQueryExecutionPlans.
	_, err = coll.Find(ctx(t), search("pear"))
	cmdErr(t, err, 291)
	cur, err := coll.Find(ctx(t), bson.D{{Key: "shop", Value: "a"}, {Key: "$text", Value: bson.D{{Key: "$search", Value: "pear"}}}},
		options.Find().SetProjection(bson.D{{Key: "s", Value: bson.D{{Key: "$meta", Value: "textScore"}}}}).
			SetSort(bson.D{{Key: "s", Value: bson.D{{Key: "$meta", Value: "textScore"}}}}))
	if err != nil {
		t.Fatal(err)
	}
	var got []struct {
		ID int32   `bson:"_id"`
		S  float64 `bson:"s"`
	}
	if err := cur.All(ctx(t), &got); err != nil {
		t.Fatal(err)
	}
	// "pear" as the whole title weighs 10 × 1.1; in body 1 × 1.1.
	if len(got) != 2 || got[0].ID != 2 || math.Abs(got[0].S-11) > 1e-9 || got[1].ID != 1 || math.Abs(got[1].S-1.1) > 1e-9 {
		t.Fatalf("weighted = %+v", got)
	}
	// The wildcard reaches nested strings; the override field picks French
	// stop words ("le") for document 4.
	if ids := textFind(t, coll, bson.D{{Key: "shop", Value: "b"}, {Key: "$text", Value: bson.D{{Key: "$search", Value: "pear chat"}}}}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}})); !equalIDs(ids, []int32{3, 4}) {
		t.Errorf("wildcard = %v", ids)
	}
	if ids := textFind(t, coll, bson.D{{Key: "shop", Value: "b"}, {Key: "$text", Value: bson.D{{Key: "$search", Value: "le"}, {Key: "$language", Value: "none"}}}}); len(ids) != 0 {
		t.Errorf("French stop word indexed: %v", ids)
	}
}

func equalIDs(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
