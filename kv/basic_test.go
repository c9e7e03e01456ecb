package kv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cairndb/cairn/kv/vfs"
)

// memOpts are small-file options for tests; every checkpoint re-checks
// the file it made durable.
func memOpts(fs vfs.FS) *Options {
	return &Options{FS: fs, PageSize: 4096, JournalSize: 256 << 10, CheckpointInterval: -1,
		testing: &testingKnobs{verifyCheckpoints: true}}
}

func mustOpen(t testing.TB, fs vfs.FS, opts *Options) *DB {
	t.Helper()
	if opts == nil {
		opts = memOpts(fs)
	} else if opts.FS == nil {
		// Options without a file system would open /db on the host.
		opts.FS = fs
	}
	db, err := Open("/db", opts)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return db
}

func key(i int) []byte { return []byte(fmt.Sprintf("key%08d", i)) }
func val(i int) []byte { return []byte(fmt.Sprintf("value-%d-%s", i, bytes.Repeat([]byte{'x'}, i%50))) }

func TestBasicPutGetReopen(t *testing.T) {
	fs := vfs.NewMem()
	db := mustOpen(t, fs, nil)
	ctx := context.Background()
	const n = 5000
	err := db.Update(ctx, func(tx *Tx) error {
		tr, err := tx.CreateTree("t")
		if err != nil {
			return err
		}
		for i := 0; i < n; i++ {
			if err := tr.Put(key(i), val(i)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	check := func(db *DB) {
		t.Helper()
		err := db.View(func(tx *Tx) error {
			tr, err := tx.Tree("t")
			if err != nil {
				return err
			}
			if tr.Len() != n {
				return fmt.Errorf("len %d", tr.Len())
			}
			for i := 0; i < n; i++ {
				v, err := tr.Get(key(i))
				if err != nil {
					return err
				}
				if !bytes.Equal(v, val(i)) {
					return fmt.Errorf("key %d: got %q", i, v)
				}
			}
			c := tr.Cursor()
			i := 0
			for k, v := c.First(); k != nil; k, v = c.Next() {
				if !bytes.Equal(k, key(i)) || !bytes.Equal(v, val(i)) {
					return fmt.Errorf("cursor at %d: %q", i, k)
				}
				i++
			}
			if i != n {
				return fmt.Errorf("cursor saw %d", i)
			}
			for k, _ := c.Last(); k != nil; k, _ = c.Prev() {
				i--
				if !bytes.Equal(k, key(i)) {
					return fmt.Errorf("reverse cursor at %d: %q", i, k)
				}
			}
			return c.Err()
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	check(db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = mustOpen(t, fs, nil)
	check(db)
	if err := db.Check(ctx); err != nil {
		t.Fatal(err)
	}
	// Delete half, reopen after a crash (journal replay).
	err = db.Update(ctx, func(tx *Tx) error {
		tr, _ := tx.Tree("t")
		for i := 0; i < n; i += 2 {
			if ok, err := tr.Delete(key(i)); err != nil || !ok {
				return fmt.Errorf("delete %d: %v %v", i, ok, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	fs.Crash(vfs.CrashOptions{})
	db.Close()
	db = mustOpen(t, fs, nil)
	db.View(func(tx *Tx) error {
		tr, _ := tx.Tree("t")
		if tr.Len() != n/2 {
			t.Fatalf("len after crash %d", tr.Len())
		}
		for i := 0; i < n; i++ {
			v, _ := tr.Get(key(i))
			if (i%2 == 0) != (v == nil) {
				t.Fatalf("key %d after crash: %q", i, v)
			}
		}
		return nil
	})
	if err := db.Check(ctx); err != nil {
		t.Fatal(err)
	}
	db.Close()
}

func TestSecondOpenFails(t *testing.T) {
	fs := vfs.NewMem()
	db := mustOpen(t, fs, nil)
	defer db.Close()
	_, err := Open("/db", memOpts(fs))
	if !errors.Is(err, vfs.ErrLocked) {
		t.Fatalf("second open: %v", err)
	}
}

func TestBulkLoadAndCompact(t *testing.T) {
	fs := vfs.NewMem()
	db := mustOpen(t, fs, nil)
	ctx := context.Background()
	const n = 20000
	tx, err := db.BeginWrite(ctx)
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	_, err = tx.BulkLoad("b", func() ([]byte, []byte, bool, error) {
		if i == n {
			return nil, nil, false, nil
		}
		i++
		return key(i - 1), val(i - 1), true, nil
	}, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := db.Check(ctx); err != nil {
		t.Fatal(err)
	}
	sizeBefore := db.Stats().DataFileBytes
	// Reader opened before the deletes must keep working through compaction.
	rtx, _ := db.BeginRead()
	err = db.Update(ctx, func(tx *Tx) error {
		tr, _ := tx.Tree("b")
		_, err := tr.DeleteRange(nil, key(n*3/4))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	rt, _ := rtx.Tree("b")
	for j := 0; j < n; j += 97 {
		v, err := rt.Get(key(j))
		if err != nil || !bytes.Equal(v, val(j)) {
			t.Fatalf("old reader key %d: %q %v", j, v, err)
		}
	}
	rtx.Rollback()
	if err := db.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	sizeAfter := db.Stats().DataFileBytes
	t.Logf("size before %d after %d", sizeBefore, sizeAfter)
	if sizeAfter >= sizeBefore/2 {
		t.Fatalf("compaction did not shrink the file: %d -> %d", sizeBefore, sizeAfter)
	}
	if err := db.Check(ctx); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db = mustOpen(t, fs, nil)
	defer db.Close()
	db.View(func(tx *Tx) error {
		tr, _ := tx.Tree("b")
		if tr.Len() != n/4 {
			t.Fatalf("len %d", tr.Len())
		}
		k, _ := tr.Cursor().First()
		if !bytes.Equal(k, key(n*3/4)) {
			t.Fatalf("first %q", k)
		}
		return nil
	})
}

func TestCompactShrinksAndRegrowsJournal(t *testing.T) {
	fs := vfs.NewMem()
	opts := memOpts(fs)
	opts.JournalSize = 4 << 20
	opts.JournalCompression = NoCompression // the sizes below are uncompressed
	db := mustOpen(t, fs, opts)
	defer db.Close()
	ctx := context.Background()
	put := func(from, to int) {
		t.Helper()
		for i := from; i < to; i += 100 {
			err := db.Update(ctx, func(tx *Tx) error {
				tr, err := tx.CreateTreeIfNotExists("t")
				if err != nil {
					return err
				}
				for j := i; j < i+100 && j < to; j++ {
					if err := tr.Put(key(j), bytes.Repeat([]byte{'v'}, 300)); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	put(0, 2000)
	if got := db.Stats().JournalFileBytes; got != 4<<20 {
		t.Fatalf("journal %d", got)
	}
	if err := db.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	if got := db.Stats().JournalFileBytes; got != compactedJournalSize {
		t.Fatalf("journal after compact %d", got)
	}
	put(2000, 12000) // ~3.5 MB of journal: fills the small journal
	deadline := time.Now().Add(30 * time.Second)
	for db.Stats().JournalFileBytes != 4<<20 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := db.Stats().JournalFileBytes; got != 4<<20 {
		t.Fatalf("journal did not grow back: %d", got)
	}
	db.View(func(tx *Tx) error {
		tr, _ := tx.Tree("t")
		if tr.Len() != 12000 {
			t.Fatalf("len %d", tr.Len())
		}
		return nil
	})
	if err := db.Check(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestBigKeysAndValues(t *testing.T) {
	fs := vfs.NewMem()
	db := mustOpen(t, fs, nil)
	ctx := context.Background()
	bigKey := bytes.Repeat([]byte{'k'}, 64<<10) // TestLargeKeys goes further
	bigVal := make([]byte, 32<<20)
	for i := range bigVal {
		bigVal[i] = byte(i * 7)
	}
	err := db.Update(ctx, func(tx *Tx) error {
		tr, err := tx.CreateTree("big")
		if err != nil {
			return err
		}
		for i := 0; i < 50; i++ {
			if err := tr.Put(key(i), val(i)); err != nil {
				return err
			}
		}
		if err := tr.Put(bigKey, []byte("big key")); err != nil {
			return err
		}
		if err := tr.Put([]byte("bigval"), bigVal); err != nil {
			return err
		}
		if err := tr.Put(make([]byte, MaxKeySize+1), nil); !errors.Is(err, ErrKeyTooLarge) {
			return fmt.Errorf("oversized key: %v", err)
		}
		if err := tr.Put([]byte("x"), make([]byte, MaxValueSize+1)); !errors.Is(err, ErrValueTooLarge) {
			return fmt.Errorf("oversized value: %v", err)
		}
		if err := tr.Put(nil, []byte("x")); !errors.Is(err, ErrEmptyKey) {
			return fmt.Errorf("empty key: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	wantLen := int64(52)
	verify := func(db *DB) {
		t.Helper()
		err := db.View(func(tx *Tx) error {
			tr, err := tx.Tree("big")
			if err != nil {
				return err
			}
			if v, err := tr.Get(bigKey); err != nil || string(v) != "big key" {
				return fmt.Errorf("big key: %q %v", v, err)
			}
			if v, err := tr.Get([]byte("bigval")); err != nil || !bytes.Equal(v, bigVal) {
				return fmt.Errorf("big value: %d bytes %v", len(v), err)
			}
			for i := 0; i < 50; i++ {
				if v, _ := tr.Get(key(i)); !bytes.Equal(v, val(i)) {
					return fmt.Errorf("key %d", i)
				}
			}
			if tr.Len() != wantLen {
				return fmt.Errorf("len %d", tr.Len())
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	verify(db)
	// Overwrite a neighbour of the big value: the big value's extent is not
	// rewritten (it sits alone in its leaf).
	before := db.Stats().CheckpointPages
	if err := db.Update(ctx, func(tx *Tx) error {
		tr, _ := tx.Tree("big")
		return tr.Put([]byte("bigvam"), []byte("neighbour"))
	}); err != nil {
		t.Fatal(err)
	}
	wantLen++
	if err := db.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	if written := db.Stats().CheckpointPages - before; written > 100 {
		t.Fatalf("checkpoint rewrote %d pages for a small neighbour update", written)
	}
	db.Close()
	db = mustOpen(t, fs, nil)
	verify(db)
	if err := db.Check(ctx); err != nil {
		t.Fatal(err)
	}
	db.Close()
}

func TestReadOnly(t *testing.T) {
	fs := vfs.NewMem()
	db := mustOpen(t, fs, nil)
	ctx := context.Background()
	db.Update(ctx, func(tx *Tx) error {
		tr, _ := tx.CreateTree("t")
		return tr.Put([]byte("a"), []byte("1"))
	})
	db.Checkpoint(ctx)
	db.Update(ctx, func(tx *Tx) error { // only in the journal
		tr, _ := tx.Tree("t")
		return tr.Put([]byte("b"), []byte("2"))
	})
	fs.Crash(vfs.CrashOptions{})
	db.Close()
	dataBefore, _ := fs.ReadFile("/db/data")
	opts := memOpts(fs)
	opts.ReadOnly = true
	ro := mustOpen(t, fs, opts)
	if _, err := ro.BeginWrite(ctx); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("write on read-only: %v", err)
	}
	ro.View(func(tx *Tx) error {
		tr, _ := tx.Tree("t")
		if v, _ := tr.Get([]byte("b")); string(v) != "2" {
			t.Fatalf("journal not replayed in memory: %q", v)
		}
		return nil
	})
	ro.Close()
	if dataAfter, _ := fs.ReadFile("/db/data"); !bytes.Equal(dataBefore, dataAfter) {
		t.Fatal("read-only open modified the data file")
	}
}

// TestJournalCompression commits compressible and incompressible records
// with each codec, crashes before any checkpoint and replays them with
// another codec configured.
func TestJournalCompression(t *testing.T) {
	for _, c := range []Compression{NoCompression, Snappy, Zstd, DefaultCompression} {
		t.Run(fmt.Sprintf("%d-%s", int(c), c), func(t *testing.T) {
			fs := vfs.NewMem()
			opts := memOpts(fs)
			opts.JournalCompression = c
			opts.JournalSize = 4 << 20 // no checkpoint before the crash
			db := mustOpen(t, fs, opts)
			rng := rand.New(rand.NewPCG(1, 2))
			want := map[string][]byte{}
			for i := range 200 {
				v := bytes.Repeat([]byte{byte('a' + i%26)}, 1000)
				if i%2 == 1 {
					v = make([]byte, 1000)
					for k := range v {
						v[k] = byte(rng.Uint32())
					}
				}
				k := fmt.Sprintf("k%04d", i)
				want[k] = v
				if err := db.Update(context.Background(), func(tx *Tx) error {
					tr, err := tx.CreateTreeIfNotExists("t")
					if err != nil {
						return err
					}
					return tr.Put([]byte(k), v)
				}); err != nil {
					t.Fatal(err)
				}
			}
			st := db.Stats()
			if st.JournalPayload < 200*1000 {
				t.Fatalf("payload bytes %d, want at least %d", st.JournalPayload, 200*1000)
			}
			ratio := float64(st.JournalWritten) / float64(st.JournalPayload)
			if c == NoCompression && ratio < 1 {
				t.Fatalf("uncompressed journal wrote %d bytes for %d payload bytes", st.JournalWritten, st.JournalPayload)
			}
			if c != NoCompression && ratio > 0.7 {
				t.Fatalf("compressed journal wrote %d bytes for %d payload bytes (ratio %.2f)", st.JournalWritten, st.JournalPayload, ratio)
			}
			fs.Crash(vfs.CrashOptions{})
			db.Close()
			opts.JournalCompression = Zstd - c%2 // a different codec on reopen
			db = mustOpen(t, fs, opts)
			defer db.Close()
			if n := db.Stats().ReplayedRecords; n < 200 {
				t.Fatalf("replayed %d records, want 200", n)
			}
			db.View(func(tx *Tx) error {
				tr, err := tx.Tree("t")
				if err != nil {
					t.Fatal(err)
				}
				for k, v := range want {
					if got, _ := tr.Get([]byte(k)); !bytes.Equal(got, v) {
						t.Fatalf("%s: got %d bytes, want %d", k, len(got), len(v))
					}
				}
				return nil
			})
		})
	}
}

// TestPageCompression stores leaves holding large values: compressible ones
// compressed (a shorter extent), random ones as they are; both read back
// after a reopen (from disk) and pass the checker.
func TestPageCompression(t *testing.T) {
	for _, c := range []Compression{NoCompression, Snappy, Zstd} {
		t.Run(c.String(), func(t *testing.T) {
			fs := vfs.NewMem()
			opts := memOpts(fs)
			opts.PageCompression = c
			db := mustOpen(t, fs, opts)
			rng := rand.New(rand.NewPCG(5, 6))
			want := map[string][]byte{}
			ctx := context.Background()
			if err := db.Update(ctx, func(tx *Tx) error {
				tr, err := tx.CreateTreeIfNotExists("t")
				if err != nil {
					return err
				}
				for i := range 40 {
					v := bytes.Repeat([]byte(fmt.Sprintf("document %d says hello; ", i)), 2000) // ~50 KB, compressible
					if i%4 == 3 {
						v = make([]byte, 20000)
						for k := range v {
							v[k] = byte(rng.Uint32())
						}
					}
					k := fmt.Sprintf("k%02d", i)
					want[k] = v
					if err := tr.Put([]byte(k), v); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if err := db.Checkpoint(ctx); err != nil {
				t.Fatal(err)
			}
			st := db.Stats()
			if c == NoCompression && st.CompressedLeaves != 0 {
				t.Fatalf("%d leaves compressed with compression off", st.CompressedLeaves)
			}
			if c != NoCompression && st.CompressedLeaves < 30 {
				t.Fatalf("%d leaves compressed, want the 30 compressible ones", st.CompressedLeaves)
			}
			size := st.DataFileBytes
			if c != NoCompression && size > 40*20000+int64(opts.PageSize)*64 {
				t.Fatalf("data file %d bytes: the compressible values were not compressed", size)
			}
			db.Close()
			db = mustOpen(t, fs, opts)
			defer db.Close()
			if err := db.Check(ctx); err != nil {
				t.Fatal(err)
			}
			db.View(func(tx *Tx) error {
				tr, err := tx.Tree("t")
				if err != nil {
					t.Fatal(err)
				}
				for k, v := range want {
					if got, err := tr.Get([]byte(k)); err != nil || !bytes.Equal(got, v) {
						t.Fatalf("%s: %d bytes (err %v), want %d", k, len(got), err, len(v))
					}
				}
				return nil
			})
		})
	}
}
