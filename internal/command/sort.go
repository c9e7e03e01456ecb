package command

import (
	"context"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/extsort"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
)

// Find's sort is an extsort.Sorter over documents keyed by their sort
// keys (query.Sort.Key: byte order is MongoDB's order), holding at most
// sortMemoryBudget in memory; with a limit it keeps only the best
// skip+limit documents (a top-k, which never spills). Ties keep scan
// order.

// sortMemoryBudget is MongoDB's internalQueryMaxBlockingSortMemoryUsageBytes.
var sortMemoryBudget int64 = 100 * 1024 * 1024

type sorter struct {
	keep      int64 // top-k size, 0 = all
	allowDisk bool
	// parent is where the runs go.
	parent string
	s      *extsort.Sorter
}

func (s *sorter) sort() *extsort.Sorter {
	if s.s == nil {
		s.s = extsort.New(extsort.Options{Budget: sortMemoryBudget, AllowDisk: s.allowDisk, TempDir: s.parent, Keep: s.keep,
			OverBudget: func() error {
				return mongoerr.New(mongoerr.QueryExceededMemoryLimitNoDiskUseAllowed, "Executor error during find command :: caused by :: Sort exceeded memory limit of %d bytes, but did not opt in to external sorting.", sortMemoryBudget)
			}})
	}
	return s.s
}

// add takes a copy of doc with its key.
func (s *sorter) add(key []byte, doc bson.Doc) error { return s.sort().Add(key, doc) }

// spilled reports whether the sort wrote runs to disk.
func (s *sorter) spilled() bool { return s.s != nil && s.s.Spilled() }

// close removes the sort's runs.
func (s *sorter) close() {
	if s.s != nil {
		s.s.Close()
	}
}

// finish returns the documents in order.
func (s *sorter) finish() (sortedStream, error) {
	it, err := s.sort().Finish()
	if err != nil {
		return nil, err
	}
	return &sortStream{it: it, s: s.s}, nil
}

// sortedStream yields sorted documents; a document is valid until the next
// call.
type sortedStream interface {
	next() (bson.Doc, error) // nil at the end
	close()
}

type sortStream struct {
	it *extsort.Iter
	s  *extsort.Sorter
}

func (m *sortStream) next() (bson.Doc, error) {
	_, doc, ok, err := m.it.Next()
	if !ok || err != nil {
		return nil, err
	}
	return bson.Doc(doc), nil
}

func (m *sortStream) close() { m.s.Close() }

// sortedSource serves a finished sort to a cursor: skip, limit, projection.
type sortedSource struct {
	stream  sortedStream
	spec    *exec.FindSpec
	skip    int64
	pending bson.Doc // a document the last batch could not take
	buf     []byte
}

func (s *sortedSource) Close() { s.stream.close() }

func (s *sortedSource) Fill(ctx context.Context, emit func(bson.Doc) bool) (bool, error) {
	for {
		d := s.pending
		s.pending = nil
		if d == nil {
			var err error
			if d, err = s.stream.next(); err != nil {
				return false, err
			}
			if d == nil {
				return true, nil
			}
			if s.skip > 0 {
				s.skip--
				continue
			}
			if s.spec.Proj != nil {
				var md query.MatchDetails
				s.spec.Filter.MatchDetails(d, &md)
				out, err := s.spec.Proj.Apply(s.buf[:0], d, &md)
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
