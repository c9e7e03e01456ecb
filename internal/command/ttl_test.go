package command

import (
	"context"
	"testing"
	"time"

	dbson "go.mongodb.org/mongo-driver/v2/bson"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/index"
	"github.com/cairndb/cairn/kv"
)

func TestTTLPass(t *testing.T) {
	env := memEnv(t)
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	raw, _ := dbson.Marshal(dbson.D{{Key: "key", Value: dbson.D{{Key: "at", Value: 1}}}, {Key: "expireAfterSeconds", Value: 3600}})
	spec, err := index.Parse(bson.Doc(raw))
	if err != nil {
		t.Fatal(err)
	}
	docs := []dbson.D{
		{{Key: "_id", Value: 1}, {Key: "at", Value: now.Add(-2 * time.Hour)}},    // expired
		{{Key: "_id", Value: 2}, {Key: "at", Value: now.Add(-30 * time.Minute)}}, // not yet
		{{Key: "_id", Value: 3}, {Key: "at", Value: "not a date"}},               // never
		{{Key: "_id", Value: 4}}, // never
		{{Key: "_id", Value: 5}, {Key: "at", Value: dbson.A{now.Add(time.Hour), now.Add(-3 * time.Hour)}}},         // earliest expired
		{{Key: "_id", Value: 6}, {Key: "at", Value: dbson.A{now.Add(time.Hour), now.Add(-10 * time.Minute), "x"}}}, // not yet
	}
	err = env.KV.Update(context.Background(), func(tx *kv.Tx) error {
		coll, err := catalog.Create(tx, "app", "sessions", nil)
		if err != nil {
			return err
		}
		coll.Indexes = append(coll.Indexes, catalog.Index{Name: spec.Name, Spec: spec.Raw, Ready: true})
		if _, err := tx.CreateTree(coll.IndexTree(spec.Name)); err != nil {
			return err
		}
		if err := catalog.Put(tx, coll); err != nil {
			return err
		}
		w, err := exec.OpenWriter(tx, coll)
		if err != nil {
			return err
		}
		for _, d := range docs {
			b, _ := dbson.Marshal(d)
			if _, _, err := w.Insert(bson.Doc(b)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	n, err := exec.TTLPass(context.Background(), &env.Engine, now)
	if err != nil || n != 2 {
		t.Fatalf("TTLPass deleted %d, %v; want 2", n, err)
	}
	env.KV.View(func(tx *kv.Tx) error {
		coll, _ := catalog.Get(tx, "app", "sessions")
		data, _ := tx.Tree(coll.DataTree())
		ix, _ := tx.Tree(coll.IndexTree(spec.Name))
		if data.Len() != 4 {
			t.Fatalf("%d documents left, want 4", data.Len())
		}
		// Index entries went with the documents: 4 docs, doc 6 has 3 values, doc 2 one, docs 3 and 4 one each.
		if ix.Len() != 6 {
			t.Fatalf("%d index entries left, want 6", ix.Len())
		}
		return nil
	})
}
