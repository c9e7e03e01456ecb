package kv

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/cairndb/cairn/kv/vfs"
)

// fillUntilNoSpace commits Sync puts of incompressible 2 KiB values until
// one is refused, and returns the acknowledged keys. Every refusal must be
// ErrNoSpace, never the failed state.
func fillUntilNoSpace(t *testing.T, db *DB, rng *rand.Rand, from int) []string {
	t.Helper()
	var acked []string
	for i := from; i < from+5000; i++ {
		k := fmt.Sprintf("k%06d", i)
		v := make([]byte, 2048)
		for j := range v {
			v[j] = byte(rng.Uint32())
		}
		err := db.Update(context.Background(), func(tx *Tx) error {
			tr, err := tx.CreateTreeIfNotExists("t")
			if err != nil {
				return err
			}
			return tr.Put([]byte(k), v)
		})
		if err != nil {
			if !errors.Is(err, ErrNoSpace) || errors.Is(err, ErrDatabaseFailed) {
				t.Fatalf("commit %d refused with %v, want ErrNoSpace and not the failed state", i, err)
			}
			if !strings.Contains(err.Error(), "more disk space") {
				t.Fatalf("error does not say how much space is missing: %v", err)
			}
			return acked
		}
		acked = append(acked, k)
	}
	t.Fatal("5000 commits and the disk never filled")
	return nil
}

func checkKeys(t *testing.T, db *DB, keys []string) {
	t.Helper()
	err := db.View(func(tx *Tx) error {
		tr, err := tx.Tree("t")
		if err != nil {
			return err
		}
		for _, k := range keys {
			if v, err := tr.Get([]byte(k)); err != nil || v == nil {
				return fmt.Errorf("acknowledged key %s lost (%v)", k, err)
			}
		}
		if n := tr.Len(); n != int64(len(keys)) {
			return fmt.Errorf("%d keys, want %d", n, len(keys))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func fileSizes(t *testing.T, mem *vfs.Mem) map[string]int {
	t.Helper()
	m := map[string]int{}
	for _, name := range mem.Files() {
		b, err := mem.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		m[name] = len(b)
	}
	return m
}

// TestDiskFull fills a small file system: commits are refused with
// ErrNoSpace (not the failed state) once the next checkpoint does not fit,
// nothing acknowledged is lost, writes resume by themselves once space is
// freed, and a restart on the full disk needs no extra space (after a
// clean close or a power loss).
func TestDiskFull(t *testing.T) {
	for _, restart := range []string{"none", "close", "power loss"} {
		t.Run("restart="+restart, func(t *testing.T) {
			seed := testSeed(t)
			rng := rand.New(rand.NewPCG(seed, 1))
			mem := vfs.NewMem()
			opts := memOpts(mem)
			db := mustOpen(t, mem, opts)
			mem.SetCapacity(mem.Used() + 1<<20)
			acked := fillUntilNoSpace(t, db, rng, 0)
			if len(acked) < 100 {
				t.Fatalf("only %d commits before the disk was full", len(acked))
			}
			if db.Stats().NoSpace == nil {
				t.Fatal("Stats.NoSpace is nil while writes are refused")
			}
			if more := fillUntilNoSpace(t, db, rng, len(acked)); len(more) != 0 {
				t.Fatalf("%d more commits acknowledged while the next checkpoint does not fit", len(more))
			}
			checkKeys(t, db, acked)
			switch restart {
			case "close":
				if err := db.Close(); !errors.Is(err, ErrNoSpace) {
					t.Fatalf("close on a full disk: %v", err)
				}
			case "power loss":
				mem.Crash(vfs.CrashOptions{})
				db.Close()
			}
			if restart != "none" {
				before := fileSizes(t, mem)
				db = mustOpen(t, mem, opts)
				if after := fileSizes(t, mem); after["/db/data"] > before["/db/data"] {
					t.Fatalf("open on a full disk grew the data file %d -> %d", before["/db/data"], after["/db/data"])
				}
				checkKeys(t, db, acked)
				if more := fillUntilNoSpace(t, db, rng, len(acked)); len(more) != 0 {
					t.Fatalf("%d commits acknowledged after a restart on a full disk", len(more))
				}
			}
			mem.SetCapacity(0) // space freed: no restart needed
			more := fillUntilNoSpaceOrN(t, db, rng, len(acked), 50)
			acked = append(acked, more...)
			if db.Stats().NoSpace != nil {
				t.Fatalf("still in the no-space state: %v", db.Stats().NoSpace)
			}
			checkKeys(t, db, acked)
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			db = mustOpen(t, mem, opts)
			defer db.Close()
			checkKeys(t, db, acked)
		})
	}
}

// fillUntilNoSpaceOrN commits n puts, all of which must succeed.
func fillUntilNoSpaceOrN(t *testing.T, db *DB, rng *rand.Rand, from, n int) []string {
	t.Helper()
	var keys []string
	for i := from; i < from+n; i++ {
		k := fmt.Sprintf("k%06d", i)
		err := db.Update(context.Background(), func(tx *Tx) error {
			tr, err := tx.CreateTreeIfNotExists("t")
			if err != nil {
				return err
			}
			return tr.Put([]byte(k), fmt.Appendf(nil, "%d", rng.Uint64()))
		})
		if err != nil {
			t.Fatalf("commit %d after space was freed: %v", i, err)
		}
		keys = append(keys, k)
	}
	return keys
}

// TestDiskFullOpenAfterCrashInCheckpoint loses power in a checkpoint after
// its journal switch, so recovery must checkpoint; on a full disk that
// open fails with ErrNoSpace, says how much space it needs, and leaves
// every file as it was; with space it recovers everything.
func TestDiskFullOpenAfterCrashInCheckpoint(t *testing.T) {
	mem := vfs.NewMem()
	opts := memOpts(mem)
	db := mustOpen(t, mem, opts)
	ctx := context.Background()
	var keys []string
	put := func(db *DB, i int) error {
		k := fmt.Sprintf("k%06d", i)
		err := db.Update(ctx, func(tx *Tx) error {
			tr, err := tx.CreateTreeIfNotExists("t")
			if err != nil {
				return err
			}
			return tr.Put([]byte(k), []byte(strings.Repeat("v", 500)))
		})
		if err == nil {
			keys = append(keys, k)
		}
		return err
	}
	for i := 0; i < 200; i++ {
		if err := put(db, i); err != nil {
			t.Fatal(err)
		}
	}
	db.opts.testing.checkpointUnlocked = func(db *DB) {
		for i := 200; i < 230; i++ {
			if err := put(db, i); err != nil {
				t.Error(err)
			}
		}
		mem.Crash(vfs.CrashOptions{})
	}
	db.Checkpoint(ctx)
	db.opts.testing.checkpointUnlocked = nil
	db.Close()
	mem.SetCapacity(mem.Used())
	before := fileSizes(t, mem)
	_, err := Open("/db", opts)
	if !errors.Is(err, ErrNoSpace) || !strings.Contains(err.Error(), "more disk space") {
		t.Fatalf("open on a full disk after a crash in a checkpoint: %v", err)
	}
	if after := fileSizes(t, mem); !mapsEqual(before, after) {
		t.Fatalf("failed open changed the files: %v -> %v", before, after)
	}
	mem.SetCapacity(0)
	db = mustOpen(t, mem, opts)
	defer db.Close()
	checkKeys(t, db, keys)
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestCreateNoSpace: a new database that does not fit fails to open, says
// how much space it needs and leaves no file behind.
func TestCreateNoSpace(t *testing.T) {
	for _, capacity := range []int64{4 << 10, 1 << 20, 2<<20 - 1} {
		t.Run(fmt.Sprint(capacity), func(t *testing.T) {
			mem := vfs.NewMem()
			mem.SetCapacity(capacity)
			_, err := Open("/db", &Options{FS: mem, PageSize: 4096, JournalSize: 1 << 20})
			if !errors.Is(err, ErrNoSpace) || !strings.Contains(err.Error(), "needs 2.0 MiB") {
				t.Fatalf("open: %v", err)
			}
			files := slices.DeleteFunc(mem.Files(), func(n string) bool { return !strings.HasPrefix(n, "/db/") })
			if len(files) != 0 || mem.Used() != 0 {
				t.Fatalf("left behind %v (%d bytes)", files, mem.Used())
			}
			mem.SetCapacity(0)
			db := mustOpen(t, mem, &Options{FS: mem, PageSize: 4096, JournalSize: 1 << 20})
			db.Close()
		})
	}
}
