// Package agg owns Cairn's aggregation pipeline: parsing stages, evaluating
// expressions and accumulators, and running a pipeline over a stream of
// documents.
//
// Stages pull documents from the stage before them (Iterator), so a pipeline
// such as $match/$project/$limit streams without materialising its input;
// blocking stages ($sort, $group) collect what they need.
package agg

import "github.com/cairndb/cairn/bson"

// Iterator yields documents one at a time. Next returns nil at the end. A
// returned document is valid until the following call to Next.
type Iterator interface {
	Next() (bson.Doc, error)
}

// SliceIterator serves documents from memory.
type SliceIterator struct {
	Docs []bson.Doc
	pos  int
}

// Next implements Iterator.
func (s *SliceIterator) Next() (bson.Doc, error) {
	if s.pos >= len(s.Docs) {
		return nil, nil
	}
	d := s.Docs[s.pos]
	s.pos++
	return d, nil
}

// FuncIterator adapts a function to Iterator.
type FuncIterator func() (bson.Doc, error)

// Next implements Iterator.
func (f FuncIterator) Next() (bson.Doc, error) { return f() }
