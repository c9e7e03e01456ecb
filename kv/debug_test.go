package kv

import (
	"context"
	"fmt"
	"os"
)

func init() {
	debugPrefixes = true
	if os.Getenv("KV_DEBUG_CKPT") == "" {
		return
	}
	debugRelease = func(db *DB, exts []extent, oldest uint64) {
		rel := map[uint64]bool{}
		for _, e := range exts {
			for i := uint64(0); i < uint64(e.npages); i++ {
				rel[e.pgid+i] = true
			}
		}
		for _, s := range db.snaps {
			var walk func(r *childRef, h int, path string)
			walk = func(r *childRef, h int, path string) {
				pg, np := r.extent()
				for i := uint64(0); i < uint64(np); i++ {
					if rel[pg+i] {
						n := r.ptr.Load()
						panic(fmt.Sprintf("releasing page %d reachable from snapshot %d (refs %d, oldest %d) at %s; node loaded=%v txid=%v", pg+i, s.txid, s.refs.Load(), oldest, path, n != nil, func() uint64 {
							if n != nil {
								return n.txid
							}
							return 0
						}()))
					}
				}
				if n := r.ptr.Load(); n != nil && !n.leaf {
					for i, k := range n.kids {
						walk(k, h-1, fmt.Sprintf("%s/%d", path, i))
					}
				}
			}
			for name, tr := range s.trees {
				walk(tr.root, tr.height, name)
			}
		}
	}
	debugCheckpoint = func(db *DB) {
		if err := checkFile(context.Background(), &pager{f: db.pager.f, pageSize: db.pageSize}); err != nil {
			panic(fmt.Sprintf("checkpoint %d produced a bad file: %v", db.meta.ckptID, err))
		}
		free := map[uint64]bool{}
		for _, p := range db.alloc.free {
			if free[p] {
				panic(fmt.Sprintf("page %d twice in free list", p))
			}
			free[p] = true
		}
		for _, f := range db.freedAt {
			for _, e := range f.pages {
				for i := uint64(0); i < uint64(e.npages); i++ {
					if free[e.pgid+i] {
						panic(fmt.Sprintf("page %d both free and pending (freed by tx %d)", e.pgid+i, f.txid))
					}
				}
			}
		}
		// No page reachable from the current tree may be free or pending.
		snap := db.current.Load()
		var walk func(r *childRef, h int)
		walk = func(r *childRef, h int) {
			pg, np := r.extent()
			for i := uint64(0); i < uint64(np); i++ {
				if free[pg+i] {
					panic(fmt.Sprintf("live page %d is in the free list", pg+i))
				}
			}
			if h > 1 {
				n, err := db.load(r)
				if err != nil {
					panic(err)
				}
				for _, k := range n.kids {
					walk(k, h-1)
				}
			}
		}
		for _, tr := range snap.trees {
			walk(tr.root, tr.height)
		}
	}
}
