package catalog

import (
	"context"
	"testing"

	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/kv"
	"github.com/cairndb/cairn/kv/vfs"
)

func openDB(t *testing.T) *kv.DB {
	t.Helper()
	db, err := kv.Open("/db", &kv.Options{FS: vfs.NewMem(), Durability: kv.NoSync, JournalSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestCatalogLifecycle(t *testing.T) {
	db := openDB(t)
	ctx := context.Background()
	var first *Collection
	err := db.Update(ctx, func(tx *kv.Tx) error {
		var err error
		if first, err = Create(tx, "app", "users", nil); err != nil {
			return err
		}
		if _, err := Create(tx, "app", "orders", nil); err != nil {
			return err
		}
		_, err = Create(tx, "other", "x", nil)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// Creating again is NamespaceExists.
	err = db.Update(ctx, func(tx *kv.Tx) error { _, err := Create(tx, "app", "users", nil); return err })
	if e := mongoerr.As(err); e.Code != mongoerr.NamespaceExists {
		t.Fatalf("second create: %v", err)
	}
	err = db.View(func(tx *kv.Tx) error {
		c, err := Get(tx, "app", "users")
		if err != nil || c == nil || c.UUID != first.UUID || len(c.Indexes) != 1 || c.Indexes[0].Name != "_id_" {
			t.Fatalf("Get = %+v, %v", c, err)
		}
		if _, err := tx.Tree(c.DataTree()); err != nil {
			t.Fatalf("data tree: %v", err)
		}
		all, err := List(tx, "app")
		if err != nil || len(all) != 2 || all[0].Name != "orders" || all[1].Name != "users" {
			t.Fatalf("List(app) = %v, %v", all, err)
		}
		every, _ := List(tx, "")
		if len(every) != 3 {
			t.Fatalf("List() = %d collections", len(every))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Rename keeps the data tree; drop removes the entry and the tree.
	err = db.Update(ctx, func(tx *kv.Tx) error {
		c, _ := Get(tx, "app", "users")
		n, err := Rename(tx, c, "app", "people")
		if err != nil {
			return err
		}
		if n.DataTree() != c.DataTree() {
			t.Fatal("rename changed the data tree")
		}
		if old, _ := Get(tx, "app", "users"); old != nil {
			t.Fatal("old name still present")
		}
		return Drop(tx, n)
	})
	if err != nil {
		t.Fatal(err)
	}
	db.View(func(tx *kv.Tx) error {
		if c, _ := Get(tx, "app", "people"); c != nil {
			t.Fatal("dropped collection still present")
		}
		if _, err := tx.Tree(first.DataTree()); err == nil {
			t.Fatal("dropped collection's tree still present")
		}
		return nil
	})
}

func TestNameValidation(t *testing.T) {
	cases := []struct {
		db, coll string
		ok       bool
	}{
		{"app", "users", true},
		{"app", "a.b", true},
		{"app", "system.js", true},
		{"", "c", false},
		{"a b", "c", false},
		{"a.b", "c", false},
		{"a$b", "c", false},
		{"app", "", false},
		{"app", "bad$name", false},
		{"app", "system.foo", false},
		{"app", ".lead", false},
		{"app", string(make([]byte, 260)), false},
		{string(make([]byte, 64)), "c", false},
	}
	for _, tc := range cases {
		err := ValidateCollectionName(tc.db, tc.coll)
		if (err == nil) != tc.ok {
			t.Errorf("ValidateCollectionName(%q, %q) = %v, want ok=%v", tc.db, tc.coll, err, tc.ok)
		}
		if err != nil && mongoerr.As(err).Code != mongoerr.InvalidNamespace {
			t.Errorf("%q.%q: code %d", tc.db, tc.coll, mongoerr.As(err).Code)
		}
	}
}
