package kv_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/cairndb/cairn/kv"
)

// openExample opens a fresh database in a temporary directory; close
// removes it. (The small journal keeps the examples fast: the default
// preallocates two files of 64 MiB.)
func openExample() (db *kv.DB, dir string, close func()) {
	dir, err := os.MkdirTemp("", "kv-example")
	if err != nil {
		log.Fatal(err)
	}
	db, err = kv.Open(dir, &kv.Options{JournalSize: 1 << 20})
	if err != nil {
		log.Fatal(err)
	}
	return db, dir, func() {
		db.Close()
		os.RemoveAll(dir)
	}
}

func ExampleOpen() {
	dir, err := os.MkdirTemp("", "kv-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "db")

	// A nil *Options means every default; here a smaller journal and a
	// default durability of Lazy (durable within CommitInterval).
	opts := &kv.Options{JournalSize: 4 << 20, Durability: kv.Lazy}
	db, err := kv.Open(path, opts)
	if err != nil {
		log.Fatal(err)
	}
	err = db.Update(context.Background(), func(tx *kv.Tx) error {
		users, err := tx.CreateTree("users")
		if err != nil {
			return err
		}
		return users.Put([]byte("ada"), []byte("Ada Lovelace"))
	})
	if err != nil {
		log.Fatal(err)
	}
	// A second Open of the same directory fails while it is open.
	if _, err := kv.Open(path, opts); err != nil {
		fmt.Println("second open refused")
	}
	if err := db.Close(); err != nil { // checkpoints
		log.Fatal(err)
	}

	db, err = kv.Open(path, opts)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	for _, t := range db.Stats().Trees {
		fmt.Printf("tree %s: %d key(s)\n", t.Name, t.Len)
	}
	// Output:
	// second open refused
	// tree users: 1 key(s)
}

func ExampleDB_Update() {
	db, _, done := openExample()
	defer done()
	ctx := context.Background()

	// Update commits if the function returns nil and rolls back otherwise.
	err := db.Update(ctx, func(tx *kv.Tx) error {
		t, err := tx.CreateTreeIfNotExists("counters")
		if err != nil {
			return err
		}
		if err := t.Put([]byte("a"), []byte("1")); err != nil {
			return err
		}
		return t.Put([]byte("b"), []byte("2"))
	})
	if err != nil {
		log.Fatal(err)
	}

	errStop := errors.New("changed my mind")
	err = db.Update(ctx, func(tx *kv.Tx) error {
		t, err := tx.Tree("counters")
		if err != nil {
			return err
		}
		if _, err := t.Delete([]byte("a")); err != nil {
			return err
		}
		return errStop // rolls the delete back
	})
	fmt.Println(err)

	db.View(func(tx *kv.Tx) error {
		t, err := tx.Tree("counters")
		if err != nil {
			return err
		}
		fmt.Println("keys:", t.Len())
		return nil
	})
	// Output:
	// changed my mind
	// keys: 2
}

func ExampleDB_View() {
	db, _, done := openExample()
	defer done()
	ctx := context.Background()
	put := func(v string) {
		err := db.Update(ctx, func(tx *kv.Tx) error {
			t, err := tx.CreateTreeIfNotExists("config")
			if err != nil {
				return err
			}
			return t.Put([]byte("mode"), []byte(v))
		})
		if err != nil {
			log.Fatal(err)
		}
	}
	put("fast")

	// A read transaction sees the snapshot of its start, whatever is
	// committed meanwhile, and never waits for the writer.
	err := db.View(func(tx *kv.Tx) error {
		put("safe")
		t, err := tx.Tree("config")
		if err != nil {
			return err
		}
		v, err := t.Get([]byte("mode"))
		if err != nil {
			return err
		}
		fmt.Printf("in the old snapshot: %s\n", v) // valid until the transaction ends
		missing, err := t.Get([]byte("colour"))
		fmt.Println("absent key:", missing == nil, err)
		_, err = tx.Tree("nope")
		fmt.Println("absent tree:", errors.Is(err, kv.ErrTreeNotFound))
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}

	// BeginRead is the unmanaged form: end it with Rollback.
	tx, err := db.BeginRead()
	if err != nil {
		log.Fatal(err)
	}
	defer tx.Rollback()
	t, err := tx.Tree("config")
	if err != nil {
		log.Fatal(err)
	}
	v, _ := t.Get([]byte("mode"))
	fmt.Printf("now: %s\n", v)
	// Output:
	// in the old snapshot: fast
	// absent key: true <nil>
	// absent tree: true
	// now: safe
}

func ExampleCursor() {
	db, _, done := openExample()
	defer done()
	err := db.Update(context.Background(), func(tx *kv.Tx) error {
		t, err := tx.CreateTree("events")
		if err != nil {
			return err
		}
		for _, day := range []string{"2026-01-03", "2026-01-01", "2026-02-10", "2026-01-20", "2026-03-05"} {
			if err := t.Put([]byte(day), []byte("event of "+day)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}

	db.View(func(tx *kv.Tx) error {
		t, err := tx.Tree("events")
		if err != nil {
			return err
		}
		// The range [start, end): Seek, then Next while below end.
		start, end := []byte("2026-01"), []byte("2026-02")
		c := t.Cursor()
		for k, v := c.Seek(start); k != nil && bytes.Compare(k, end) < 0; k, v = c.Next() {
			fmt.Printf("%s: %s\n", k, v)
		}
		if err := c.Err(); err != nil {
			return err
		}
		// Backwards from the last key <= "2026-02-28".
		var back []string
		for k, _ := c.SeekLE([]byte("2026-02-28")); k != nil; k, _ = c.Prev() {
			back = append(back, string(k))
		}
		fmt.Println(back)
		first, _ := c.First()
		last, _ := c.Last()
		fmt.Printf("first %s, last %s\n", first, last)
		return c.Err()
	})
	// Output:
	// 2026-01-01: event of 2026-01-01
	// 2026-01-03: event of 2026-01-03
	// 2026-01-20: event of 2026-01-20
	// [2026-02-10 2026-01-20 2026-01-03 2026-01-01]
	// first 2026-01-01, last 2026-03-05
}

func ExampleTx_CommitWith() {
	db, _, done := openExample()
	defer done()
	ctx := context.Background()

	tx, err := db.BeginWrite(ctx) // waits for the writer lock, or ctx
	if err != nil {
		log.Fatal(err)
	}
	defer tx.Rollback() // does nothing once committed
	t, err := tx.CreateTree("log")
	if err != nil {
		log.Fatal(err)
	}
	if err := t.Put([]byte("1"), []byte("cheap to lose")); err != nil {
		log.Fatal(err)
	}
	// Lazy: returns once the record is written; it is durable within
	// Options.CommitInterval. Sync (the default) would wait for the
	// fdatasync, shared with concurrent committers.
	if err := tx.CommitWith(kv.Lazy); err != nil {
		log.Fatal(err)
	}
	// Sync makes every commit so far durable now.
	if err := db.Sync(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("commits:", db.Stats().Commits)
	// Output:
	// commits: 1
}

func ExampleTx_BulkLoad() {
	db, _, done := openExample()
	defer done()
	i := 0
	err := db.Update(context.Background(), func(tx *kv.Tx) error {
		// The entries must come in strictly ascending key order.
		next := func() (key, value []byte, ok bool, err error) {
			if i == 10000 {
				return nil, nil, false, nil
			}
			i++
			return fmt.Appendf(nil, "key%06d", i), []byte("value"), true, nil
		}
		_, err := tx.BulkLoad("big", next, 0) // 0: Options.FillFactor
		return err
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range db.Stats().Trees {
		fmt.Printf("%s: %d keys, %d levels\n", t.Name, t.Len, t.Height)
	}
	// Output:
	// big: 10000 keys, 2 levels
}

func ExampleDB_Compact() {
	db, _, done := openExample()
	defer done()
	ctx := context.Background()
	value := bytes.Repeat([]byte("x"), 200)
	err := db.Update(ctx, func(tx *kv.Tx) error {
		t, err := tx.CreateTree("t")
		if err != nil {
			return err
		}
		for i := range 20000 {
			if err := t.Put(fmt.Appendf(nil, "%08d", i), value); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	// Delete most of it: the file keeps its size, its pages become free.
	err = db.Update(ctx, func(tx *kv.Tx) error {
		t, err := tx.Tree("t")
		if err != nil {
			return err
		}
		_, err = t.DeleteRange([]byte("00001000"), nil)
		return err
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := db.Checkpoint(ctx); err != nil {
		log.Fatal(err)
	}
	before := db.Stats().DataFileBytes
	if err := db.Compact(ctx); err != nil {
		log.Fatal(err)
	}
	after := db.Stats().DataFileBytes
	fmt.Println("smaller by more than half:", after < before/2)
	// Output:
	// smaller by more than half: true
}

func ExampleCheck() {
	db, dir, done := openExample()
	defer done()
	ctx := context.Background()
	err := db.Update(ctx, func(tx *kv.Tx) error {
		t, err := tx.CreateTree("t")
		if err != nil {
			return err
		}
		return t.Put([]byte("k"), []byte("v"))
	})
	if err != nil {
		log.Fatal(err)
	}
	// Online: checks the last checkpoint, so checkpoint first.
	if err := db.Checkpoint(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("online:", db.Check(ctx))

	// Offline: the database must be closed (Check takes its lock).
	if err := db.Close(); err != nil {
		log.Fatal(err)
	}
	err = kv.Check(dir, nil)
	var corrupt *kv.CorruptionError
	fmt.Println("offline:", err, errors.As(err, &corrupt))
	// Output:
	// online: <nil>
	// offline: <nil> false
}

func ExampleDB_Stats() {
	db, _, done := openExample()
	defer done()
	for i := range 3 {
		err := db.Update(context.Background(), func(tx *kv.Tx) error {
			t, err := tx.CreateTreeIfNotExists("t")
			if err != nil {
				return err
			}
			return t.Put(fmt.Appendf(nil, "k%d", i), nil)
		})
		if err != nil {
			log.Fatal(err)
		}
	}
	s := db.Stats()
	fmt.Println("page size:", s.PageSize)
	fmt.Println("commits:", s.Commits)
	fmt.Println("fsyncs at most one per commit:", s.JournalFsyncs <= s.Commits)
	fmt.Println("trees:", s.Trees)
	// Output:
	// page size: 8192
	// commits: 3
	// fsyncs at most one per commit: true
	// trees: [{t 3 1}]
}
