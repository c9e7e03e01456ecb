package index

import (
	"bytes"
	"testing"

	dbson "go.mongodb.org/mongo-driver/v2/bson"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

func TestWildcardKeys(t *testing.T) {
	d := doc(t, dbson.D{{Key: "_id", Value: 1}, {Key: "a", Value: dbson.D{{Key: "b", Value: dbson.A{2, 1, 2}}, {Key: "e", Value: dbson.D{}}}}, {Key: "c", Value: "x"}, {Key: "n", Value: dbson.A{}}})
	entry := func(path string, v any) []byte {
		raw, _ := dbson.Marshal(dbson.D{{Key: "v", Value: v}})
		val, _ := bson.Doc(raw).Lookup("v")
		return bson.AppendKey(bson.AppendKey(nil, StringValue(path), false), val, false)
	}
	cases := []struct {
		spec dbson.D
		want [][]byte
	}{
		{dbson.D{{Key: "key", Value: dbson.D{{Key: "$**", Value: 1}}}},
			[][]byte{entry("a.b", 1), entry("a.b", 2), entry("a.e", dbson.D{}), entry("c", "x"), entry("n", dbson.Undefined{})}},
		{dbson.D{{Key: "key", Value: dbson.D{{Key: "a.$**", Value: 1}}}},
			[][]byte{entry("a.b", 1), entry("a.b", 2), entry("a.e", dbson.D{})}},
		{dbson.D{{Key: "key", Value: dbson.D{{Key: "$**", Value: 1}}}, {Key: "wildcardProjection", Value: dbson.D{{Key: "a.b", Value: 1}, {Key: "_id", Value: 1}}}},
			[][]byte{entry("_id", 1), entry("a.b", 1), entry("a.b", 2)}},
		{dbson.D{{Key: "key", Value: dbson.D{{Key: "$**", Value: 1}}}, {Key: "wildcardProjection", Value: dbson.D{{Key: "a", Value: 0}}}},
			[][]byte{entry("c", "x"), entry("n", dbson.Undefined{})}},
	}
	for _, tc := range cases {
		s, err := Parse(doc(t, tc.spec))
		if err != nil {
			t.Fatal(err)
		}
		keys, _, err := s.Keys(d)
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) != len(tc.want) {
			t.Errorf("%v: %d keys, want %d", tc.spec, len(keys), len(tc.want))
			continue
		}
		for i := range keys {
			if !bytes.Equal(keys[i], tc.want[i]) {
				t.Errorf("%v: key %d = %x, want %x", tc.spec, i, keys[i], tc.want[i])
			}
		}
	}
	for _, bad := range []dbson.D{
		{{Key: "key", Value: dbson.D{{Key: "a.$**.b", Value: 1}}}},
		{{Key: "key", Value: dbson.D{{Key: "$**", Value: 1}, {Key: "b", Value: 1}}}},
		{{Key: "key", Value: dbson.D{{Key: "a", Value: 1}}}, {Key: "wildcardProjection", Value: dbson.D{{Key: "a", Value: 1}}}},
		{{Key: "key", Value: dbson.D{{Key: "$**", Value: 1}}}, {Key: "wildcardProjection", Value: dbson.D{{Key: "a", Value: 1}, {Key: "b", Value: 0}}}},
	} {
		if _, err := Parse(doc(t, bad)); err == nil || mongoerr.As(err) == nil {
			t.Errorf("Parse(%v) = %v, want an error", bad, err)
		}
	}
}
