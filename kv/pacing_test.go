package kv

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/cairndb/cairn/kv/vfs"
)

// writebackFS wraps a file system so that its data file records the
// writeback calls kv makes (vfs.WritebackStarter).
type writebackFS struct {
	vfs.FS
	mu     sync.Mutex
	starts []int64 // lengths passed to StartWriteback
	waits  []int64 // lengths passed to WaitWriteback
	active bool    // record only while set
}

type writebackFile struct {
	vfs.File
	fs *writebackFS
}

func (w *writebackFS) OpenFile(name string, flag int, perm os.FileMode) (vfs.File, error) {
	f, err := w.FS.OpenFile(name, flag, perm)
	if err != nil || !strings.HasSuffix(name, dataFileName) {
		return f, err
	}
	return writebackFile{f, w}, nil
}

func (f writebackFile) StartWriteback(off, n int64) error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.fs.active {
		f.fs.starts = append(f.fs.starts, n)
	}
	return nil
}

func (f writebackFile) WaitWriteback(off, n int64) error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.fs.active {
		f.fs.waits = append(f.fs.waits, n)
	}
	return nil
}

// TestBackgroundCheckpointPacesWriteback checks the pacing of a background
// checkpoint's page writes: it starts no writeback while it writes its
// pages, then waits for them a chunk of at most pacedChunk at a time, all
// of them, so that a journal fdatasync issued meanwhile queues behind one
// chunk, not the whole checkpoint. A checkpoint run under the writer lock
// (here: the one Close runs) starts the writeback of each run at once
// instead.
func TestBackgroundCheckpointPacesWriteback(t *testing.T) {
	wfs := &writebackFS{FS: vfs.NewMem()}
	opts := memOpts(wfs)
	opts.JournalSize = 64 << 20
	db := mustOpen(t, wfs, opts)
	ctx := context.Background()
	val := make([]byte, 300)
	err := db.Update(ctx, func(tx *Tx) error {
		tr, err := tx.CreateTreeIfNotExists("t")
		if err != nil {
			return err
		}
		for i := 0; i < 20000; i++ { // about 7 MiB of leaves
			if err := tr.Put(fmt.Appendf(nil, "k%06d", i), val); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	wfs.active = true
	pages := db.st.ckptPages.Load()
	if err := db.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	wfs.active = false
	// The tree's pages and the catalog's.
	written := int64(db.st.ckptPages.Load()-pages+uint64(db.meta.catalog.npages)) * int64(db.pageSize)
	if len(wfs.starts) != 0 {
		t.Errorf("background checkpoint started writeback %d times while writing; want none", len(wfs.starts))
	}
	var waited int64
	for _, n := range wfs.waits {
		if n > pacedChunk {
			t.Errorf("waited for a chunk of %d bytes; want at most %d", n, pacedChunk)
		}
		waited += n
	}
	if written < 4*pacedChunk {
		t.Fatalf("checkpoint wrote %d bytes; the test needs several chunks", written)
	}
	if waited != written {
		t.Errorf("waited for %d bytes of writeback; the checkpoint wrote %d", waited, written)
	}
	if len(wfs.waits) < int(written/pacedChunk) {
		t.Errorf("%d waits for %d bytes; want one per chunk of %d", len(wfs.waits), written, pacedChunk)
	}

	// A checkpoint under the writer lock does not pace.
	err = db.Update(ctx, func(tx *Tx) error {
		tr, err := tx.Tree("t")
		if err != nil {
			return err
		}
		return tr.Put([]byte("k000000"), []byte("changed"))
	})
	if err != nil {
		t.Fatal(err)
	}
	wfs.starts, wfs.waits = nil, nil
	wfs.active = true
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if len(wfs.starts) == 0 || len(wfs.waits) != 0 {
		t.Errorf("checkpoint under the writer lock: %d writeback starts, %d waits; want starts and no waits", len(wfs.starts), len(wfs.waits))
	}
}
