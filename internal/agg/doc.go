// Package agg owns Cairn's aggregation pipeline: parsing stages and running
// a pipeline over a stream of documents. Expressions and accumulators come
// from internal/expr; filters, sort keys and collations from internal/query.
//
// Stages pull documents from the stage before them (Iterator), so a
// pipeline of streaming stages ($match, $project, $unwind, $limit, ...)
// never materialises its input; blocking stages ($sort, $group, $bucketAuto,
// $setWindowFields, ...) collect what they need within a memory bound
// (100 MiB per stage, MongoDB's default) and, with allowDiskUse, $sort and
// $group spill to temporary files.
package agg

import "github.com/cairndb/cairn/bson"

// Iterator yields documents one at a time. Next returns nil at the end. A
// returned document is valid until the following call to Next (callers
// that keep it longer copy it).
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
	s.Docs[s.pos] = nil
	s.pos++
	return d, nil
}

// FuncIterator adapts a function to Iterator.
type FuncIterator func() (bson.Doc, error)

// Next implements Iterator.
func (f FuncIterator) Next() (bson.Doc, error) { return f() }

// empty is an iterator with no documents.
var empty = FuncIterator(func() (bson.Doc, error) { return nil, nil })

// cloneDoc copies d out of whatever buffer it lives in.
func cloneDoc(d bson.Doc) bson.Doc { return append(bson.Doc(nil), d...) }

// Drain reads every document of it (copies) into a slice.
func Drain(it Iterator) ([]bson.Doc, error) {
	var out []bson.Doc
	for {
		d, err := it.Next()
		if err != nil || d == nil {
			return out, err
		}
		out = append(out, cloneDoc(d))
	}
}

// blocking returns the iterator of a blocking stage: on the first Next it
// runs run over all of in, then hands out the documents run returned.
func blocking(in Iterator, run func(Iterator) ([]bson.Doc, error)) Iterator {
	var out *SliceIterator
	return FuncIterator(func() (bson.Doc, error) {
		if out == nil {
			docs, err := run(in)
			if err != nil {
				return nil, err
			}
			out = &SliceIterator{Docs: docs}
		}
		return out.Next()
	})
}
