package exec

import (
	"context"
	"sync/atomic"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/extsort"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
)

// Find's sort is an extsort.Sorter over documents keyed by their sort
// keys (query.Sort.Key: byte order is MongoDB's order), holding at most
// sortMemoryBudget in memory; with a limit it keeps only the best
// skip+limit documents (a top-k, which never spills). Ties keep scan
// order.

// DefaultSortMemoryBudget is internalQueryMaxBlockingSortMemoryUsageBytes'
// default, as mongod's.
const DefaultSortMemoryBudget = 100 * 1024 * 1024

// sortMemoryBudget is MongoDB's internalQueryMaxBlockingSortMemoryUsageBytes
// (0: the default). Like mongod's, it is one setting for the process.
var sortMemoryBudget atomic.Int64

// SortMemoryBudget is the memory a find's blocking sort may use before it
// spills (allowDiskUse) or fails.
func SortMemoryBudget() int64 {
	if n := sortMemoryBudget.Load(); n > 0 {
		return n
	}
	return DefaultSortMemoryBudget
}

// SetSortMemoryBudget sets internalQueryMaxBlockingSortMemoryUsageBytes
// (setParameter; 0 restores the default).
func SetSortMemoryBudget(n int64) { sortMemoryBudget.Store(n) }

type Sorter struct {
	Keep      int64 // top-k size, 0 = all
	AllowDisk bool
	// parent is where the runs go.
	Parent string
	S      *extsort.Sorter
}

func (s *Sorter) sort() *extsort.Sorter {
	if s.S == nil {
		s.S = extsort.New(extsort.Options{Budget: SortMemoryBudget(), AllowDisk: s.AllowDisk, TempDir: s.Parent, Keep: s.Keep,
			OverBudget: func() error {
				return mongoerr.New(mongoerr.QueryExceededMemoryLimitNoDiskUseAllowed, "Executor error during find command :: caused by :: Sort exceeded memory limit of %d bytes, but did not opt in to external sorting.", SortMemoryBudget())
			}})
	}
	return s.S
}

// Add takes a copy of doc with its key.
func (s *Sorter) Add(key []byte, doc bson.Doc) error { return s.sort().Add(key, doc) }

// Spilled reports whether the sort wrote runs to disk.
func (s *Sorter) Spilled() bool { return s.S != nil && s.S.Spilled() }

// Close removes the sort's runs.
func (s *Sorter) Close() {
	if s.S != nil {
		s.S.Close()
	}
}

// Finish returns the documents in order.
func (s *Sorter) Finish() (SortedStream, error) {
	it, err := s.sort().Finish()
	if err != nil {
		return nil, err
	}
	return &sortStream{it: it, s: s.S}, nil
}

// SortedStream yields sorted documents; a document is valid until the next
// call.
type SortedStream interface {
	Next() (bson.Doc, error) // nil at the end
	Close()
}

type sortStream struct {
	it *extsort.Iter
	s  *extsort.Sorter
}

func (m *sortStream) Next() (bson.Doc, error) {
	_, doc, ok, err := m.it.Next()
	if !ok || err != nil {
		return nil, err
	}
	return bson.Doc(doc), nil
}

func (m *sortStream) Close() { m.s.Close() }

// SortedSource serves a finished sort to a cursor: skip, limit, projection.
type SortedSource struct {
	Stream SortedStream
	Spec   *FindSpec
	Skip   int64
	// Projected: the sorted documents are already shaped (projection,
	// returnKey, showRecordId applied before the sort).
	Projected bool
	pending   bson.Doc // a document the last batch could not take
	buf       []byte
}

func (s *SortedSource) Close() { s.Stream.Close() }

func (s *SortedSource) Fill(ctx context.Context, emit func(bson.Doc) bool) (bool, error) {
	for {
		d := s.pending
		s.pending = nil
		if d == nil {
			var err error
			if d, err = s.Stream.Next(); err != nil {
				return false, err
			}
			if d == nil {
				return true, nil
			}
			if s.Skip > 0 {
				s.Skip--
				continue
			}
			if s.Spec.Proj != nil && !s.Projected {
				var md query.MatchDetails
				s.Spec.Filter.MatchDetails(d, &md)
				out, err := s.Spec.Proj.Apply(s.buf[:0], d, &md)
				if err != nil {
					return false, err
				}
				s.buf = out
				d = out
			}
		}
		if !emit(d) {
			s.pending = bson.Doc(append([]byte(nil), d...))
			return false, nil
		}
	}
}
