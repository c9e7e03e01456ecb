package index

import (
	"context"
	"fmt"
	"testing"

	dbson "go.mongodb.org/mongo-driver/v2/bson"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/kv"
	"github.com/cairndb/cairn/kv/vfs"
)

func doc(t testing.TB, v any) bson.Doc {
	t.Helper()
	b, err := dbson.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return bson.Doc(b)
}

func TestParseSpec(t *testing.T) {
	cases := []struct {
		spec dbson.D
		name string
		code int32
	}{
		{dbson.D{{Key: "key", Value: dbson.D{{Key: "a", Value: 1}}}}, "a_1", 0},
		{dbson.D{{Key: "key", Value: dbson.D{{Key: "a", Value: 1}, {Key: "b.c", Value: -1}}}}, "a_1_b.c_-1", 0},
		{dbson.D{{Key: "key", Value: dbson.D{{Key: "h", Value: "hashed"}}}}, "h_hashed", 0},
		{dbson.D{{Key: "key", Value: dbson.D{{Key: "a", Value: 1.0}}}, {Key: "name", Value: "mine"}, {Key: "unique", Value: true}}, "mine", 0},
		{dbson.D{{Key: "key", Value: dbson.D{{Key: "a", Value: 0}}}}, "", mongoerr.CannotCreateIndex},
		{dbson.D{{Key: "key", Value: dbson.D{}}}, "", mongoerr.CannotCreateIndex},
		{dbson.D{{Key: "key", Value: dbson.D{{Key: "a", Value: "bogus"}}}}, "", mongoerr.CannotCreateIndex},
		{dbson.D{{Key: "key", Value: dbson.D{{Key: "a", Value: 1}}}, {Key: "bogus", Value: 1}}, "", mongoerr.InvalidIndexSpecificationOption},
		{dbson.D{{Key: "name", Value: "x"}}, "", mongoerr.FailedToParse},
		{dbson.D{{Key: "key", Value: dbson.D{{Key: "a", Value: 1}}}, {Key: "sparse", Value: true}, {Key: "partialFilterExpression", Value: dbson.D{{Key: "a", Value: 1}}}}, "", mongoerr.CannotCreateIndex},
		{dbson.D{{Key: "key", Value: dbson.D{{Key: "h", Value: "hashed"}}}, {Key: "unique", Value: true}}, "", mongoerr.CannotCreateIndex},
		{dbson.D{{Key: "key", Value: dbson.D{{Key: "t", Value: "text"}}}}, "t_text", 0},
		{dbson.D{{Key: "key", Value: dbson.D{{Key: "a", Value: 1}, {Key: "t", Value: "text"}, {Key: "u", Value: "text"}, {Key: "z", Value: -1}}}}, "a_1_t_text_u_text_z_-1", 0},
		{dbson.D{{Key: "key", Value: dbson.D{{Key: "t", Value: "text"}, {Key: "a", Value: 1}, {Key: "u", Value: "text"}}}}, "", mongoerr.CannotCreateIndex},
		{dbson.D{{Key: "key", Value: dbson.D{{Key: "t", Value: "text"}}}, {Key: "weights", Value: dbson.D{{Key: "t", Value: 0}}}}, "", mongoerr.CannotCreateIndex},
		{dbson.D{{Key: "key", Value: dbson.D{{Key: "t", Value: "text"}}}, {Key: "default_language", Value: "klingon"}}, "", mongoerr.CannotCreateIndex},
		{dbson.D{{Key: "key", Value: dbson.D{{Key: "t", Value: "text"}}}, {Key: "language_override", Value: "a.b"}}, "", mongoerr.CannotCreateIndex},
		{dbson.D{{Key: "key", Value: dbson.D{{Key: "a", Value: 1}}}, {Key: "weights", Value: dbson.D{{Key: "a", Value: 1}}}}, "", mongoerr.InvalidIndexSpecificationOption},
	}
	for _, tc := range cases {
		s, err := Parse(doc(t, tc.spec))
		if tc.code != 0 {
			if err == nil || mongoerr.As(err).Code != tc.code {
				t.Errorf("Parse(%v) = %v, want code %d", tc.spec, err, tc.code)
			}
			continue
		}
		if err != nil || s.Name != tc.name {
			t.Errorf("Parse(%v) = %v, %v; want name %q", tc.spec, s, err, tc.name)
		}
	}
}

func TestKeys(t *testing.T) {
	ab, _ := Parse(doc(t, dbson.D{{Key: "key", Value: dbson.D{{Key: "a", Value: 1}, {Key: "b", Value: 1}}}}))
	dotted, _ := Parse(doc(t, dbson.D{{Key: "key", Value: dbson.D{{Key: "x.y", Value: 1}}}}))
	cases := []struct {
		spec     *Spec
		doc      dbson.D
		n        int
		multikey bool
		code     int32
	}{
		{ab, dbson.D{{Key: "a", Value: 1}, {Key: "b", Value: 2}}, 1, false, 0},
		{ab, dbson.D{{Key: "a", Value: dbson.A{1, 2, 2}}, {Key: "b", Value: 2}}, 2, true, 0},
		{ab, dbson.D{{Key: "a", Value: dbson.A{1}}, {Key: "b", Value: dbson.A{2}}}, 0, false, mongoerr.CannotIndexParallelArrays},
		{ab, dbson.D{}, 1, false, 0}, // missing fields index as null
		{dotted, dbson.D{{Key: "x", Value: dbson.A{dbson.D{{Key: "y", Value: 1}}, dbson.D{{Key: "y", Value: 2}}, dbson.D{{Key: "z", Value: 3}}}}}, 3, true, 0},
		{dotted, dbson.D{{Key: "x", Value: dbson.D{{Key: "y", Value: dbson.A{}}}}}, 1, true, 0},
	}
	for i, tc := range cases {
		keys, mk, err := tc.spec.Keys(doc(t, tc.doc))
		if tc.code != 0 {
			if err == nil || mongoerr.As(err).Code != tc.code {
				t.Errorf("case %d: err = %v, want code %d", i, err, tc.code)
			}
			continue
		}
		if err != nil || len(keys) != tc.n || mk != tc.multikey {
			t.Errorf("case %d: %d keys, multikey %v, err %v; want %d, %v", i, len(keys), mk, err, tc.n, tc.multikey)
		}
	}
}

// TestBuildMatchesIncremental builds an index in bulk and by maintenance
// and checks both hold the same entries, and that a unique build finds a
// duplicate.
func TestBuildMatchesIncremental(t *testing.T) {
	db, err := kv.Open("/db", &kv.Options{FS: vfs.NewMem(), Durability: kv.NoSync, JournalSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	spec, _ := Parse(doc(t, dbson.D{{Key: "key", Value: dbson.D{{Key: "g", Value: 1}, {Key: "v", Value: -1}}}}))
	ctx := context.Background()
	err = db.Update(ctx, func(tx *kv.Tx) error {
		data, _ := tx.CreateTree("data")
		inc, _ := tx.CreateTree("inc")
		x := &Tree{Spec: spec, T: inc, ns: "t.c"}
		for i := 0; i < 2000; i++ {
			id := bson.AppendKey(nil, bson.Value{Type: bson.TypeInt32, Data: []byte{byte(i), byte(i >> 8), 0, 0}}, false)
			d := doc(t, dbson.D{{Key: "_id", Value: int32(i)}, {Key: "g", Value: i % 7}, {Key: "v", Value: dbson.A{i, fmt.Sprint(i)}}})
			if err := data.Put(id, d); err != nil {
				return err
			}
			if _, err := x.Insert(d, id); err != nil {
				return err
			}
		}
		mk, n, err := Build(ctx, tx, data, "bulk", "t.c", spec, 0)
		if err != nil {
			return err
		}
		if !mk || n != 4000 || inc.Len() != n {
			t.Fatalf("bulk: multikey %v, %d entries; incremental %d", mk, n, inc.Len())
		}
		bulk, _ := tx.Tree("bulk")
		a, b := bulk.Cursor(), inc.Cursor()
		ka, _ := a.First()
		kb, _ := b.First()
		for ka != nil || kb != nil {
			if string(ka) != string(kb) {
				t.Fatalf("bulk and incremental entries differ: %x vs %x", ka, kb)
			}
			ka, _ = a.Next()
			kb, _ = b.Next()
		}
		uniq, _ := Parse(doc(t, dbson.D{{Key: "key", Value: dbson.D{{Key: "g", Value: 1}}}, {Key: "unique", Value: true}}))
		_, _, err = Build(ctx, tx, data, "uniq", "t.c", uniq, 0)
		if e := mongoerr.As(err); e.Code != mongoerr.DuplicateKey {
			t.Fatalf("unique build over duplicates: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
