package index

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/extsort"
	"github.com/cairndb/cairn/kv"
)

// BuildTarget is one index to build: its spec and its kv tree's name.
type BuildTarget struct {
	Spec     *Spec
	TreeName string
	// Set by BuildAll:
	Multikey bool
	Entries  int64
	// NumTypes is the numeric types of each key field (numtypes.go), nil
	// for a spec that does not track them.
	NumTypes []byte
}

// BuildOptions tune BuildAll. The zero value is the default.
type BuildOptions struct {
	// FillFactor is how full the bulk loader packs pages (0: the
	// engine's default).
	FillFactor float64
	// Workers is how many goroutines extract keys (0: GOMAXPROCS, at
	// most 4; collections under parallelMinDocs documents use one).
	Workers int
	// MemoryBudget bounds the memory the entries take (0:
	// DefaultBuildMemory); beyond it sorted runs spill to files.
	MemoryBudget int
	// TempDir is where spilled runs go (default: os.TempDir()); their
	// files are unlinked as soon as they are made (extsort.Spill).
	TempDir string
	// Spill, if set, counts the runs spilled.
	Spill *extsort.Stats
	// Progress, if set, is kept up to date for currentOp.
	Progress *Progress
}

// Build creates one index; see BuildAll.
func Build(ctx context.Context, tx *kv.Tx, data *kv.Tree, treeName, ns string, spec *Spec, fillFactor float64) (multikey bool, n int64, err error) {
	t := []*BuildTarget{{Spec: spec, TreeName: treeName}}
	if err := BuildAll(ctx, tx, data, ns, t, fillFactor); err != nil {
		return false, 0, err
	}
	return t[0].Multikey, t[0].Entries, nil
}

// BuildAll creates the targets' index trees in tx from the documents in
// data (see BuildAllWith).
func BuildAll(ctx context.Context, tx *kv.Tx, data *kv.Tree, ns string, targets []*BuildTarget, fillFactor float64) error {
	return BuildAllWith(ctx, tx, data, ns, targets, BuildOptions{FillFactor: fillFactor})
}

// parallelMinDocs is the collection size below which one goroutine
// extracts the keys.
const parallelMinDocs = 20000

// entry is one index entry in a run: its kv key is arena[off:off+klen]
// and its value (the _id, or a column store's cell) the vlen bytes ending
// at off+klen+vlen for a unique or column store index, at off+klen
// otherwise. pfx holds the key's first 8 bytes
// big-endian, so most comparisons never touch the arena. The lengths are
// stored minus one (neither is ever empty), so an entry takes 16 bytes.
// A key or _id of 64 KiB or more (kv takes keys up to kv.MaxKeySize) is
// a long entry: klen and vlen both hold longLen, and the two lengths are
// in the arena as little-endian uint32s in the 8 bytes before off.
type entry struct {
	pfx        uint64
	off        uint32
	klen, vlen uint16
}

// longLen marks a long entry (see entry).
const longLen = 0xFFFF

// longHeader is the size of a long entry's lengths in the arena.
const longHeader = 8

func (e entry) long() bool { return e.klen == longLen && e.vlen == longLen }

// lens returns the key and value lengths of e.
func (r *run) lens(e entry) (k, v uint32) {
	if e.long() {
		h := r.arena[e.off-longHeader : e.off]
		return binary.LittleEndian.Uint32(h), binary.LittleEndian.Uint32(h[4:])
	}
	return uint32(e.klen) + 1, uint32(e.vlen) + 1
}

// run is one worker's entries of one index.
type run struct {
	arena []byte
	es    []entry
	// ordered is set when the entries, sorted, lie in order in the arena.
	ordered bool
}

func (r *run) key(e entry) []byte {
	kl, _ := r.lens(e)
	return r.arena[e.off : e.off+kl]
}

func (r *run) value(e entry, unique bool) []byte {
	kl, vl := r.lens(e)
	end := e.off + kl
	if unique {
		end += vl
	}
	return r.arena[end-vl : end]
}

func keyPrefix(k []byte) uint64 {
	if len(k) >= 8 {
		return binary.BigEndian.Uint64(k)
	}
	var b [8]byte
	copy(b[:], k)
	return binary.BigEndian.Uint64(b[:])
}

func (r *run) compare(a, b entry) int {
	if a.pfx != b.pfx {
		if a.pfx < b.pfx {
			return -1
		}
		return 1
	}
	return bytes.Compare(r.key(a), r.key(b))
}

// reorder copies the run's entries into a new arena in their sorted
// order, if copyAllowed (the memory budget has room for a second arena)
// and they are not in order already. Sorted entries point all over the arena (in scan order): the
// load, which runs alone with the writer lock held, would meet a cache
// miss at almost every entry; reorder takes those misses instead, with
// the workers in parallel, and the load reads memory in sequence.
func (r *run) reorder(unique, copyAllowed bool) {
	inOrder := true
	for i := 1; i < len(r.es) && inOrder; i++ {
		inOrder = r.es[i-1].off < r.es[i].off
	}
	if inOrder {
		r.ordered = true // an ascending key over the scan order
		return
	}
	if !copyAllowed {
		return // no room in the memory budget: the load reads ahead instead
	}
	arena := make([]byte, 0, len(r.arena))
	for i, e := range r.es {
		kl, vl := r.lens(e)
		n, from := kl, e.off
		if unique {
			n += vl
		}
		if e.long() {
			n, from = n+longHeader, from-longHeader
		}
		arena = append(arena, r.arena[from:from+n]...)
		r.es[i].off = uint32(len(arena)) - kl
		if unique {
			r.es[i].off -= vl
		}
	}
	r.arena, r.ordered = arena, true
}

// extractor extracts the entries of every target from the documents one
// worker is given.
type extractor struct {
	targets  []*BuildTarget
	runs     []run
	cell     []byte // scratch: a column store entry's cell
	multikey []bool
	numTypes [][]byte // per target, as BuildTarget.NumTypes
	kb       keyBuf
	// budget is this worker's share of the memory budget; files are its
	// spilled runs, per target.
	budget  int
	files   [][]*extsort.Run
	spilled []int64 // entries in files, per target
	spillTo *extsort.Spill
	// expect is how many documents this worker should see; after
	// sampleDocs of them, the runs are sized for the rest (see reserve).
	expect, seen int
}

// sampleDocs is how many documents a worker extracts before it sizes its
// runs for the documents it expects.
const sampleDocs = 512

// reserve grows each run, once sampleDocs documents are in, to hold the
// entries the worker's expected documents will make at the sample's
// rate (plus a margin, within the worker's memory budget), so that the
// arenas and entry lists are not copied again and again as they double.
func (x *extractor) reserve() {
	if x.seen >= x.expect {
		return
	}
	scale := float64(x.expect) / float64(x.seen) * 1.1
	for ti := range x.runs {
		r := &x.runs[ti]
		es, bytes := int(float64(len(r.es))*scale), int(float64(len(r.arena))*scale)
		if mem := bytes + entryOverhead*es; mem > x.budget {
			// Spills will keep the runs under the budget.
			es, bytes = es*x.budget/mem, bytes*x.budget/mem
		}
		r.es = slices.Grow(r.es, max(es-len(r.es), 0))
		r.arena = slices.Grow(r.arena, max(bytes-len(r.arena), 0))
	}
}

func (x *extractor) add(id []byte, d bson.Doc) error {
	for ti, t := range x.targets {
		spec := t.Spec
		if !spec.Applies(d) {
			continue
		}
		r := &x.runs[ti]
		var emitErr error
		arena, mk, err := spec.appendKeys(&x.kb, r.arena, d, func(dst []byte, start int) []byte {
			var klen, vlen int
			if spec.Column != nil {
				// Column store: the column prefix and the _id, then the
				// cell as the value (entryOf).
				prefix, cell := splitColumnKey(dst[start:])
				x.cell = append(x.cell[:0], cell...)
				dst = append(append(dst[:start+len(prefix)], id...), x.cell...)
				klen, vlen = len(prefix)+len(id), len(x.cell)
			} else {
				// Non-unique keys end with the _id; every value is the _id.
				klen, vlen = len(dst)-start, len(id)
				dst = append(dst, id...)
				if !spec.Unique {
					klen += len(id)
				}
			}
			e := entry{off: uint32(start), klen: uint16(klen - 1), vlen: uint16(vlen - 1)}
			if klen-1 >= longLen || vlen-1 >= longLen {
				// A long entry: its lengths go before it.
				n := len(dst) - start
				dst = append(dst, make([]byte, longHeader)...)
				copy(dst[start+longHeader:], dst[start:start+n])
				binary.LittleEndian.PutUint32(dst[start:], uint32(klen))
				binary.LittleEndian.PutUint32(dst[start+4:], uint32(vlen))
				start += longHeader
				e = entry{off: uint32(start), klen: longLen, vlen: longLen}
			}
			if emitErr == nil {
				switch {
				case len(dst) > 1<<32-1:
					emitErr = fmt.Errorf("index %s: more than 4 GiB of entries in one build run", spec.Name)
				case klen > kv.MaxKeySize:
					emitErr = fmt.Errorf("index %s: %w: %d bytes (max %d)", spec.Name, kv.ErrKeyTooLarge, klen, kv.MaxKeySize)
				}
			}
			e.pfx = keyPrefix(dst[start : start+klen])
			r.es = append(r.es, e)
			return dst
		})
		r.arena = arena
		if err != nil {
			return err
		}
		if emitErr != nil {
			return emitErr
		}
		x.multikey[ti] = x.multikey[ti] || mk
		if nt := x.numTypes[ti]; nt != nil {
			spec.AddNumTypes(d, nt)
		}
	}
	if x.seen++; x.seen == sampleDocs {
		x.reserve()
	}
	if x.memSize() > x.budget {
		return x.spill()
	}
	return nil
}

// BuildAllWith creates the targets' index trees in tx from the documents
// in data, the collection's tree (keyed by encoded _id), the way a
// foreground index build should be done: Extract, then Load each target.
// A unique index's duplicate fails the build with DuplicateKey.
func BuildAllWith(ctx context.Context, tx *kv.Tx, data *kv.Tree, ns string, targets []*BuildTarget, o BuildOptions) error {
	s, err := Extract(ctx, data, ns, targets, o)
	if err != nil {
		return err
	}
	defer s.Close()
	for i := range targets {
		if err := s.Load(tx, i, nil); err != nil {
			return err
		}
	}
	return nil
}

// Sorted holds a build's extracted entries, sorted in runs (in memory
// and spilled), from Extract until every target is loaded or Close.
type Sorted struct {
	ns       string
	targets  []*BuildTarget
	xs       []*extractor
	spill    *extsort.Spill
	fill     float64
	progress *Progress
}

// Extract reads data (the collection's tree, keyed by encoded _id) once
// for all the targets: the scan hands the documents in batches to Workers
// extractors, each appending every entry to an arena per index; each
// worker's runs are then sorted (in parallel) on the entries' 8-byte
// prefixes and then bytes. data may belong to a read transaction, which
// can end once Extract returns: the entries are copies.
//
// Entries cost 16 bytes besides their keys; when the workers' entries
// outgrow the memory budget, each worker sorts its runs and spills them to
// temporary files, which Load merges with the rest (an external merge
// sort). Close removes the files.
func Extract(ctx context.Context, data *kv.Tree, ns string, targets []*BuildTarget, o BuildOptions) (_ *Sorted, err error) {
	workers := o.Workers
	if workers <= 0 {
		workers = min(runtime.GOMAXPROCS(0), 4)
		if data.Len() < parallelMinDocs {
			workers = 1
		}
	}
	budget := o.MemoryBudget
	if budget <= 0 {
		budget = DefaultBuildMemory
	}
	s := &Sorted{ns: ns, targets: targets, spill: extsort.NewSpill(o.TempDir, o.Spill), fill: o.FillFactor, progress: o.Progress}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	s.xs = make([]*extractor, workers)
	for i := range s.xs {
		nts := make([][]byte, len(targets))
		for ti, t := range targets {
			nts[ti] = t.Spec.NewNumTypes()
		}
		s.xs[i] = &extractor{targets: targets, runs: make([]run, len(targets)), multikey: make([]bool, len(targets)), numTypes: nts,
			budget: budget / workers, files: make([][]*extsort.Run, len(targets)), spilled: make([]int64, len(targets)), spillTo: s.spill,
			expect: int((data.Len() + int64(workers) - 1) / int64(workers))}
	}
	o.Progress.Start(PhaseScan, data.Len())
	if err := scan(ctx, data, ns, s.xs, o.Progress); err != nil {
		return nil, err
	}
	// Sort each worker's runs, one goroutine per worker, and lay their
	// entries out in order.
	var wg sync.WaitGroup
	for _, x := range s.xs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ti := range x.runs {
				r := &x.runs[ti]
				r.sort()
				r.reorder(targets[ti].Spec.valueAfterKey(), x.memSize()+len(r.arena) <= x.budget)
			}
		}()
	}
	wg.Wait()
	for ti, t := range targets {
		t.NumTypes = t.Spec.NewNumTypes()
		for _, x := range s.xs {
			t.Multikey = t.Multikey || x.multikey[ti]
			for f, bits := range x.numTypes[ti] {
				t.NumTypes[f] |= bits
			}
		}
	}
	return s, nil
}

// Entries is how many entries the targets have in all (Load's progress
// total).
func (s *Sorted) Entries() int64 {
	var n int64
	for _, x := range s.xs {
		for ti := range x.runs {
			n += int64(len(x.runs[ti].es)) + x.spilled[ti]
		}
	}
	return n
}

// Load merges target i's sorted runs and loads its tree bottom-up in tx
// (the tree must not exist) — never inserting key by key. A unique
// index's entries are checked between neighbours: an entry whose key
// repeats the previous one is passed to dup, whose error (if any) ends
// the load; with dup nil the build fails with DuplicateKey.
func (s *Sorted) Load(tx *kv.Tx, i int, dup func(key, val []byte) error) error {
	t := s.targets[i]
	n, err := func() (int64, error) {
		// Runs in scan order and spilled runs are read ahead
		// (extsort.Prefetcher).
		pf := extsort.NewPrefetcher()
		defer pf.Stop()
		var srcs []extsort.Source
		for _, x := range s.xs {
			var src extsort.Source = &memSource{r: &x.runs[i], unique: t.Spec.valueAfterKey()}
			if !x.runs[i].ordered {
				var err error
				if src, err = pf.Start(src); err != nil {
					return 0, err
				}
			}
			srcs = append(srcs, src)
			for _, f := range x.files[i] {
				fs, err := f.Open(fileReadBuffer, false)
				if err != nil {
					return 0, err
				}
				pfs, err := pf.Start(fs)
				if err != nil {
					return 0, err
				}
				srcs = append(srcs, pfs)
			}
		}
		return load(tx, s.ns, t, srcs, s.fill, dup, s.progress)
	}()
	if err != nil {
		return err
	}
	t.Entries = n
	for _, x := range s.xs {
		x.runs[i] = run{} // release before the next load
		for _, f := range x.files[i] {
			f.Close()
		}
		x.files[i] = nil
	}
	return nil
}

// Close releases the entries and removes the spilled runs.
func (s *Sorted) Close() {
	for _, x := range s.xs {
		x.runs, x.files = nil, nil
	}
	s.spill.Close()
}
