package kv

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/cairndb/cairn/kv/vfs"
)

var (
	fuzzOnce     sync.Once
	fuzzData     []byte
	fuzzJournal  []byte
	fuzzPageSize = 4096
)

const fuzzJournalSize = 512 << 10

// fuzzBigKey returns key i of the template's tree "big": 70,000-byte keys
// (past the 64 KiB keys once were limited to) sharing all but their last
// bytes, so their separators are long too.
// (Random bytes: a compressed leaf would not be a long extent.)
func fuzzBigKey(i int) []byte {
	rng := rand.New(rand.NewPCG(7, 7))
	k := make([]byte, 70000, 70002)
	for j := range k {
		k[j] = byte(rng.Uint32())
	}
	return append(k, fmt.Sprintf("%02d", i)...)
}

// fuzzTemplate builds a small database with several trees, multi-page keys
// and values, keys past 64 KiB, a checkpoint, and journal records after
// it.
func fuzzTemplate(tb testing.TB) ([]byte, []byte) {
	fuzzOnce.Do(func() {
		mem := vfs.NewMem()
		opts := &Options{FS: mem, PageSize: fuzzPageSize, JournalSize: fuzzJournalSize, CheckpointInterval: -1}
		db, err := Open("/db", opts)
		if err != nil {
			tb.Fatal(err)
		}
		ctx := context.Background()
		for round := 0; round < 3; round++ {
			err := db.Update(ctx, func(tx *Tx) error {
				for _, name := range []string{"a", "b"} {
					tr, err := tx.CreateTreeIfNotExists(name)
					if err != nil {
						return err
					}
					for i := 0; i < 300; i++ {
						if err := tr.Put([]byte(fmt.Sprintf("%s%05d", name, i*3+round)), []byte(fmt.Sprintf("v%d", i))); err != nil {
							return err
						}
					}
				}
				big, err := tx.CreateTreeIfNotExists("big")
				if err != nil {
					return err
				}
				for i := round; i < 6; i += 2 {
					if err := big.Put(fuzzBigKey(i), []byte(fmt.Sprintf("big %d", round))); err != nil {
						return err
					}
				}
				if round == 2 {
					if _, err := big.Delete(fuzzBigKey(1)); err != nil {
						return err
					}
				}
				tr, _ := tx.Tree("a")
				return tr.Put(make([]byte, 5000+round), make([]byte, 9000))
			})
			if err != nil {
				tb.Fatal(err)
			}
			if round == 1 {
				if err := db.Checkpoint(ctx); err != nil {
					tb.Fatal(err)
				}
			}
		}
		mem.Crash(vfs.CrashOptions{}) // leave journal records to replay
		db.Close()
		fuzzData, _ = mem.ReadFile("/db/data")
		fuzzJournal, _ = mem.ReadFile("/db/journal")
	})
	return fuzzData, fuzzJournal
}

// FuzzOpenDamaged damages the data file or the journal and opens the
// database: it must fail with an error or work (reads, checker, a write,
// close), never panic or hang.
func FuzzOpenDamaged(f *testing.F) {
	data, _ := fuzzTemplate(f)
	pages := uint32(len(data) / fuzzPageSize)
	f.Add(uint32(0), []byte{0xff}, false)                    // meta 0
	f.Add(uint32(fuzzPageSize+8), []byte("XX"), false)       // meta 1 magic
	f.Add(uint32(2*fuzzPageSize+40), []byte{1, 2, 3}, false) // first node
	f.Add(uint32((pages-1)*uint32(fuzzPageSize)+30), []byte{0, 0, 0, 0}, false)
	f.Add(uint32(100), []byte{0xde, 0xad}, true) // journal record
	f.Add(uint32(2*fuzzPageSize+24), binary.LittleEndian.AppendUint32(nil, 1<<30), false)
	// The extents of leaves holding a key past 64 KiB: their header, the
	// key's length, the middle and the end of the key.
	for pg := 2; (pg+1)*fuzzPageSize <= len(data); pg++ {
		h := data[pg*fuzzPageSize:]
		if h[4] != pageTypeLeaf || binary.LittleEndian.Uint32(h[16:]) < 16 {
			continue
		}
		o := uint32(pg * fuzzPageSize)
		f.Add(o+16, []byte{0x7f}, false)                   // npages
		f.Add(o+24, []byte{0x01, 0x01}, false)             // used length
		f.Add(o+pageHeaderSize, []byte{0x80, 0x80}, false) // key length
		f.Add(o+pageHeaderSize+35000, []byte{'C'}, false)
		f.Add(o+pageHeaderSize+70001, []byte{1}, false)
	}
	f.Add(uint32(fuzzJournalSize/8), []byte{0x55}, true) // inside the journal's big keys
	f.Fuzz(func(t *testing.T, off uint32, junk []byte, journal bool) {
		data, jdata := fuzzTemplate(t)
		target := append([]byte(nil), data...)
		if journal {
			target = append([]byte(nil), jdata...)
		}
		if len(target) == 0 {
			return
		}
		o := int(off) % len(target)
		for i, b := range junk {
			if o+i >= len(target) {
				break
			}
			target[o+i] ^= b | 1
		}
		mem := vfs.NewMem()
		mem.MkdirAll("/db", 0o755)
		if journal {
			mem.WriteFile("/db/data", data)
			mem.WriteFile("/db/journal", target)
		} else {
			mem.WriteFile("/db/data", target)
			mem.WriteFile("/db/journal", jdata)
		}
		opts := &Options{FS: mem, PageSize: fuzzPageSize, JournalSize: fuzzJournalSize, CheckpointInterval: -1}
		_ = Check("/db", opts)
		db, err := Open("/db", opts)
		if err != nil {
			return
		}
		ctx := context.Background()
		_ = db.View(func(tx *Tx) error {
			return tx.ForEachTree(func(name string) error {
				tr, err := tx.Tree(name)
				if err != nil {
					return err
				}
				c := tr.Cursor()
				for k, _ := c.First(); k != nil; k, _ = c.Next() {
					tr.Get(k)
				}
				for k, _ := c.Last(); k != nil; k, _ = c.Prev() {
				}
				return c.Err()
			})
		})
		_ = db.Check(ctx)
		_ = db.Update(ctx, func(tx *Tx) error {
			tr, err := tx.CreateTreeIfNotExists("a")
			if err != nil {
				return err
			}
			for i := 0; i < 50; i++ {
				if err := tr.Put([]byte(fmt.Sprintf("a%05d", i*7)), []byte("new")); err != nil {
					return err
				}
				if _, err := tr.Delete([]byte(fmt.Sprintf("a%05d", i*5))); err != nil {
					return err
				}
			}
			return nil
		})
		_ = db.Compact(ctx)
		_ = db.Close()
	})
}
