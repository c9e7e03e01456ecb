package kv

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/cairndb/cairn/kv/vfs"
)

// bigKeySet returns keys of up to 16 MiB and more: unrelated big keys,
// big keys sharing a 100,000-byte prefix and differing only in their last
// byte, one that is a proper prefix of others, and small keys between
// them, each with its value.
func bigKeySet() (keys [][]byte, vals map[string][]byte) {
	vals = map[string][]byte{}
	add := func(k []byte, v string) {
		keys = append(keys, k)
		vals[string(k)] = []byte(v)
	}
	shared := strings.Repeat("S", 100000)
	for i, n := range []int{70000, 1 << 20, 16<<20 + 100, 65537, 200000} {
		add([]byte(fmt.Sprintf("big%d-", i)+strings.Repeat(string(rune('a'+i)), n)), fmt.Sprintf("big %d", i))
	}
	for i := 0; i < 40; i++ {
		add([]byte(shared+fmt.Sprintf("%02d", i)), fmt.Sprintf("shared %d", i))
	}
	add([]byte(shared), "shared prefix itself")
	add([]byte(shared[:99999]+"T"), "after the shared keys")
	for i := 0; i < 300; i++ {
		add([]byte(fmt.Sprintf("small%04d", i)), fmt.Sprintf("small %d", i))
	}
	slices.SortFunc(keys, bytes.Compare)
	return keys, vals
}

// checkBigKeys compares tree "t" with keys/vals: gets, both cursor
// directions, and seeks to each key, just before and just after it.
func checkBigKeys(t *testing.T, db *DB, keys [][]byte, vals map[string][]byte) {
	t.Helper()
	err := db.View(func(tx *Tx) error {
		tr, err := tx.Tree("t")
		if err != nil {
			return err
		}
		if tr.Len() != int64(len(keys)) {
			return fmt.Errorf("Len %d, want %d", tr.Len(), len(keys))
		}
		for _, k := range keys {
			if v, err := tr.Get(k); err != nil || !bytes.Equal(v, vals[string(k)]) {
				return fmt.Errorf("Get %s: %q, %v", keyString(k), v, err)
			}
		}
		c := tr.Cursor()
		i := 0
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if i >= len(keys) || !bytes.Equal(k, keys[i]) || !bytes.Equal(v, vals[string(k)]) {
				return fmt.Errorf("forward entry %d: %s", i, keyString(k))
			}
			i++
		}
		if i != len(keys) {
			return fmt.Errorf("forward walk saw %d entries, want %d", i, len(keys))
		}
		for k, _ := c.Last(); k != nil; k, _ = c.Prev() {
			i--
			if !bytes.Equal(k, keys[i]) {
				return fmt.Errorf("backward entry %d: %s", i, keyString(k))
			}
		}
		for i, k := range keys {
			if got, _ := c.Seek(k); !bytes.Equal(got, k) {
				return fmt.Errorf("Seek %s: %s", keyString(k), keyString(got))
			}
			// Just after k (k+0x00) the next key is keys[i+1]; just before
			// it (k less its last byte, if that is not keys[i-1]) k itself.
			got, _ := c.Seek(append(k[:len(k):len(k)], 0))
			if want := []byte(nil); i+1 < len(keys) {
				want = keys[i+1]
				if !bytes.Equal(got, want) {
					return fmt.Errorf("Seek after %s: %s", keyString(k), keyString(got))
				}
			} else if got != nil {
				return fmt.Errorf("Seek after the last key: %s", keyString(got))
			}
			if got, _ := c.SeekLE(append(k[:len(k):len(k)], 0)); !bytes.Equal(got, k) {
				return fmt.Errorf("SeekLE after %s: %s", keyString(k), keyString(got))
			}
			if before := k[:len(k)-1]; i == 0 || bytes.Compare(keys[i-1], before) < 0 {
				if got, _ := c.Seek(before); !bytes.Equal(got, k) {
					return fmt.Errorf("Seek before %s: %s", keyString(k), keyString(got))
				}
			}
		}
		return c.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
}

// branchSeparators returns the separators of every branch of tree "t".
func branchSeparators(t *testing.T, db *DB) (seps [][]byte, branchBytes int) {
	t.Helper()
	err := db.View(func(tx *Tx) error {
		tr, err := tx.Tree("t")
		if err != nil {
			return err
		}
		var walk func(r *childRef, h int) error
		walk = func(r *childRef, h int) error {
			if h == 1 {
				return nil
			}
			n, err := db.load(r)
			if err != nil {
				return err
			}
			branchBytes += n.size
			seps = append(seps, n.keys[1:]...)
			for _, k := range n.kids {
				if err := walk(k, h-1); err != nil {
					return err
				}
			}
			return nil
		}
		return walk(tr.tr.root, tr.tr.height)
	})
	if err != nil {
		t.Fatal(err)
	}
	return seps, branchBytes
}

// TestLargeKeys stores keys from 64 KiB to past 16 MiB (kv keys were
// limited to 64 KiB) through the journal, a crash, checkpoints, updates,
// deletes and compaction, and checks order, seeks, the checker, that
// branches hold short separators, and that every page is accounted for.
func TestLargeKeys(t *testing.T) {
	keys, vals := bigKeySet()
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		bulk bool // load with BulkLoad instead of puts
	}{{"puts", false}, {"bulk", true}} {
		t.Run(tc.name, func(t *testing.T) {
			mem := vfs.NewMem()
			opts := &Options{FS: mem, PageSize: 4096, JournalSize: 8 << 20, CheckpointInterval: -1,
				testing: &testingKnobs{verifyCheckpoints: true}}
			db := mustOpen(t, mem, opts)
			defer func() { db.Close() }()
			// Everything but the 16 MiB key fits the journal: commit it
			// in a few transactions so that most of it is replayed.
			var huge []byte
			err := db.Update(ctx, func(tx *Tx) error {
				if tc.bulk {
					i := 0
					_, err := tx.BulkLoad("t", func() ([]byte, []byte, bool, error) {
						if i == len(keys) {
							return nil, nil, false, nil
						}
						i++
						return keys[i-1], vals[string(keys[i-1])], true, nil
					}, 0)
					return err
				}
				_, err := tx.CreateTree("t")
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if !tc.bulk {
				// The huge key first (its commit checkpoints), then the
				// rest through the journal.
				for _, k := range keys {
					if len(k) > 8<<20 {
						huge = k
					}
				}
				if err := db.Update(ctx, func(tx *Tx) error {
					tr, _ := tx.Tree("t")
					return tr.Put(huge, vals[string(huge)])
				}); err != nil {
					t.Fatal(err)
				}
				for from := 0; from < len(keys); from += 10 {
					err := db.Update(ctx, func(tx *Tx) error {
						tr, _ := tx.Tree("t")
						for _, k := range keys[from:min(from+10, len(keys))] {
							if len(k) > 8<<20 {
								continue
							}
							if err := tr.Put(k, vals[string(k)]); err != nil {
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
			checkBigKeys(t, db, keys, vals)

			// Separators carry the bytes that tell neighbours apart, not
			// whole keys: a separator s between the adjacent keys x < s <= y
			// is at most one byte longer than their common prefix (a key
			// inserted after the split that made s lies between the two
			// keys s was made from, so it shares their common prefix).
			seps, branchBytes := branchSeparators(t, db)
			if len(seps) == 0 {
				t.Fatal("tree has no branch")
			}
			t.Logf("%d separators, %d bytes of branches", len(seps), branchBytes)
			for _, s := range seps {
				i, _ := slices.BinarySearchFunc(keys, s, bytes.Compare)
				if i == 0 || i == len(keys) {
					t.Fatalf("separator %s outside the keys", keyString(s))
				}
				if l := commonPrefixLen(keys[i-1], keys[i]); len(s) > l+1 {
					t.Errorf("separator of %d bytes between keys sharing %d", len(s), l)
				}
			}

			// Power loss: the journal (and, for the huge key, the
			// checkpoint its commit went through) brings everything back.
			mem.Crash(vfs.CrashOptions{})
			db.Close()
			db = mustOpen(t, mem, opts)
			if !tc.bulk && db.Stats().ReplayedRecords == 0 {
				t.Error("nothing replayed: the journal path was not taken")
			}
			checkBigKeys(t, db, keys, vals)
			if err := db.Check(ctx); err != nil {
				t.Fatal(err)
			}

			// Update half the big keys' values, delete the other half.
			kept := map[string][]byte{}
			var left [][]byte
			err = db.Update(ctx, func(tx *Tx) error {
				tr, _ := tx.Tree("t")
				for i, k := range keys {
					switch {
					case len(k) < 1000:
						kept[string(k)] = vals[string(k)]
						left = append(left, k)
					case i%2 == 0:
						v := []byte(fmt.Sprintf("updated %d", i))
						if err := tr.Put(k, v); err != nil {
							return err
						}
						kept[string(k)] = v
						left = append(left, k)
					default:
						if ok, err := tr.Delete(k); !ok || err != nil {
							return fmt.Errorf("delete %s: %v %v", keyString(k), ok, err)
						}
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			checkBigKeys(t, db, left, kept)
			for range 2 {
				if err := db.Checkpoint(ctx); err != nil {
					t.Fatal(err)
				}
			}
			checkPageAccounting(t, db)

			// Delete every big key: compaction gives their pages back.
			err = db.Update(ctx, func(tx *Tx) error {
				tr, _ := tx.Tree("t")
				for _, k := range left {
					if len(k) >= 1000 {
						if _, err := tr.Delete(k); err != nil {
							return err
						}
						delete(kept, string(k))
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			left = slices.DeleteFunc(left, func(k []byte) bool { return len(k) >= 1000 })
			if err := db.Compact(ctx); err != nil {
				t.Fatal(err)
			}
			checkPageAccounting(t, db)
			checkBigKeys(t, db, left, kept)
			if st := db.Stats(); st.DataFileBytes > 256<<10 {
				t.Errorf("data file of %d bytes after the big keys were deleted and compacted", st.DataFileBytes)
			}
			db.Close()
			if err := Check("/db", opts); err != nil {
				t.Fatal(err)
			}
			db = mustOpen(t, mem, opts)
			checkBigKeys(t, db, left, kept)
		})
	}
}

// TestKeySizeLimit checks the limit's edges and that a refused key
// changes nothing.
func TestKeySizeLimit(t *testing.T) {
	mem := vfs.NewMem()
	db := mustOpen(t, mem, nil)
	defer db.Close()
	ctx := context.Background()
	tooBig := make([]byte, MaxKeySize+1)
	tooBig[0] = 'z'
	err := db.Update(ctx, func(tx *Tx) error {
		tr, err := tx.CreateTree("t")
		if err != nil {
			return err
		}
		for _, tc := range []struct {
			key  []byte
			want error
		}{
			{nil, ErrEmptyKey},
			{tooBig, ErrKeyTooLarge},
			{tooBig[:64<<10+1], nil},
			{tooBig[:1], nil},
		} {
			if err := tr.Put(tc.key, []byte("v")); !errors.Is(err, tc.want) {
				return fmt.Errorf("Put of a %d-byte key: %v, want %v", len(tc.key), err, tc.want)
			}
		}
		if ok, err := tr.Delete(tooBig); ok || err != nil {
			return fmt.Errorf("Delete of a key past the limit: %v %v", ok, err)
		}
		if tr.Len() != 2 {
			return fmt.Errorf("Len %d, want 2", tr.Len())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// largeBenchKeys returns n keys of size bytes, random in their first 8
// bytes and then all 'k'.
func largeBenchKeys(n, size int) [][]byte {
	rng := rand.New(rand.NewPCG(11, 12))
	keys := make([][]byte, n)
	for i := range keys {
		k := bytes.Repeat([]byte{'k'}, size)
		binary.BigEndian.PutUint64(k, rng.Uint64())
		keys[i] = k
	}
	return keys
}

// BenchmarkPutLargeKey: durable single-put commits of 1 MiB keys into a
// tree of 64 of them.
func BenchmarkPutLargeKey(b *testing.B) {
	db := openBenchDB(b)
	ctx := context.Background()
	keys := largeBenchKeys(64+b.N, 1<<20)
	put := func(k []byte) {
		if err := db.Update(ctx, func(tx *Tx) error {
			tr, err := tx.CreateTreeIfNotExists("t")
			if err != nil {
				return err
			}
			return tr.Put(k, []byte("v"))
		}); err != nil {
			b.Fatal(err)
		}
	}
	for _, k := range keys[:64] {
		put(k)
	}
	b.SetBytes(1 << 20)
	b.ResetTimer()
	for _, k := range keys[64:] {
		put(k)
	}
}

// BenchmarkGetLargeKey: point reads in a tree of 256 keys of 1 MiB.
func BenchmarkGetLargeKey(b *testing.B) {
	db := openBenchDB(b)
	keys := largeBenchKeys(256, 1<<20)
	if err := db.Update(context.Background(), func(tx *Tx) error {
		tr, err := tx.CreateTree("t")
		if err != nil {
			return err
		}
		for _, k := range keys {
			if err := tr.Put(k, []byte("v")); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	if err := db.Checkpoint(context.Background()); err != nil {
		b.Fatal(err)
	}
	tx, err := db.BeginRead()
	if err != nil {
		b.Fatal(err)
	}
	defer tx.Rollback()
	tr, err := tx.Tree("t")
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if v, err := tr.Get(keys[i%len(keys)]); err != nil || v == nil {
			b.Fatalf("get: %q %v", v, err)
		}
	}
}
