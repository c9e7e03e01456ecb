package agg

import (
	"sort"
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
)

// Pipeline is a parsed aggregation pipeline.
type Pipeline struct {
	stages []stage
	// Filter is the leading $match, which the caller may use to select the
	// input (it is still applied by the pipeline).
	Filter *query.Filter
}

type stage interface {
	wrap(in Iterator) Iterator
}

// knownStages are MongoDB stages Cairn does not run yet: they answer a
// clear error rather than "unrecognized".
var knownStages = map[string]bool{
	"$addFields": true, "$set": true, "$unset": true, "$unwind": true, "$lookup": true, "$unionWith": true,
	"$facet": true, "$bucket": true, "$bucketAuto": true, "$sortByCount": true, "$replaceRoot": true,
	"$replaceWith": true, "$sample": true, "$out": true, "$merge": true, "$documents": true,
	"$setWindowFields": true, "$densify": true, "$fill": true, "$redact": true, "$collStats": true,
	"$indexStats": true, "$geoNear": true, "$graphLookup": true, "$currentOp": true, "$listSessions": true,
	"$planCacheStats": true, "$changeStream": true, "$search": true, "$listLocalSessions": true,
}

// Parse compiles a pipeline.
func Parse(stages []bson.Doc, opts *query.Options) (*Pipeline, error) {
	p := &Pipeline{}
	for i, sd := range stages {
		if sd.Len() != 1 {
			return nil, mongoerr.New(40323, "A pipeline stage specification object must contain exactly one field.")
		}
		it := sd.Iter()
		it.Next()
		e := it.Element()
		st, err := parseStage(e.Key, e.Value, opts)
		if err != nil {
			return nil, err
		}
		if m, ok := st.(*matchStage); ok && i == 0 {
			p.Filter = m.f
		}
		p.stages = append(p.stages, st)
	}
	return p, nil
}

func parseStage(name string, v bson.Value, opts *query.Options) (stage, error) {
	switch name {
	case "$match":
		if v.Type != bson.TypeDocument {
			return nil, mongoerr.New(15959, "the match filter must be an expression in an object")
		}
		f, err := query.ParseFilter(v.Document(), opts)
		if err != nil {
			return nil, err
		}
		return &matchStage{f: f}, nil
	case "$project":
		if v.Type != bson.TypeDocument {
			return nil, mongoerr.New(15969, "$project specification must be an object")
		}
		if v.Document().Len() == 0 {
			return nil, mongoerr.New(51272, "Invalid $project :: caused by :: projection specification must have at least one field")
		}
		p, err := query.ParseProjection(v.Document(), opts)
		if err != nil {
			return nil, err
		}
		return &projectStage{p: p}, nil
	case "$sort":
		if v.Type != bson.TypeDocument {
			return nil, mongoerr.New(15973, "the $sort key specification must be an object")
		}
		if v.Document().Len() == 0 {
			return nil, mongoerr.New(15976, "$sort stage must have at least one sort key")
		}
		s, err := query.ParseSort(v.Document(), opts)
		if err != nil {
			return nil, err
		}
		return &sortStage{s: s}, nil
	case "$skip", "$limit":
		n, ok := v.AsInt64()
		if !ok {
			return nil, mongoerr.New(15972, "invalid argument to %s stage: Expected a number", name)
		}
		if name == "$skip" {
			if n < 0 {
				return nil, mongoerr.New(15956, "invalid argument to $skip stage: Expected a non-negative number")
			}
			return &skipStage{n: n}, nil
		}
		if n <= 0 {
			return nil, mongoerr.New(15958, "invalid argument to $limit stage: Expected a positive number")
		}
		return &limitStage{n: n}, nil
	case "$count":
		if v.Type != bson.TypeString {
			return nil, mongoerr.New(40156, "the count field must be a non-empty string")
		}
		s := v.StringValue()
		if s == "" {
			return nil, mongoerr.New(40156, "the count field must be a non-empty string")
		}
		if strings.HasPrefix(s, "$") {
			return nil, mongoerr.New(40158, "the count field cannot be a $-prefixed path")
		}
		if strings.Contains(s, ".") {
			return nil, mongoerr.New(40160, "the count field cannot contain '.'")
		}
		return &countStage{field: strings.Clone(s)}, nil
	case "$group":
		return parseGroup(v)
	}
	if knownStages[name] {
		return nil, mongoerr.New(mongoerr.NotImplemented, "pipeline stage %s is not supported by Cairn yet", name)
	}
	return nil, mongoerr.New(40324, "Unrecognized pipeline stage name: '%s'", name)
}

// Run connects the pipeline to its input.
func (p *Pipeline) Run(in Iterator) Iterator {
	for _, s := range p.stages {
		in = s.wrap(in)
	}
	return in
}

type matchStage struct{ f *query.Filter }

func (m *matchStage) wrap(in Iterator) Iterator {
	return FuncIterator(func() (bson.Doc, error) {
		for {
			d, err := in.Next()
			if d == nil || err != nil {
				return nil, err
			}
			if m.f.Match(d) {
				return d, nil
			}
		}
	})
}

type projectStage struct{ p *query.Projection }

func (s *projectStage) wrap(in Iterator) Iterator {
	var buf []byte
	return FuncIterator(func() (bson.Doc, error) {
		d, err := in.Next()
		if d == nil || err != nil {
			return nil, err
		}
		out, err := s.p.Apply(buf[:0], d, nil)
		buf = out
		return out, err
	})
}

type skipStage struct{ n int64 }

func (s *skipStage) wrap(in Iterator) Iterator {
	left := s.n
	return FuncIterator(func() (bson.Doc, error) {
		for left > 0 {
			d, err := in.Next()
			if d == nil || err != nil {
				return nil, err
			}
			left--
		}
		return in.Next()
	})
}

type limitStage struct{ n int64 }

func (s *limitStage) wrap(in Iterator) Iterator {
	left := s.n
	return FuncIterator(func() (bson.Doc, error) {
		if left <= 0 {
			return nil, nil
		}
		left--
		return in.Next()
	})
}

type sortStage struct{ s *query.Sort }

func (s *sortStage) wrap(in Iterator) Iterator {
	var out *SliceIterator
	return FuncIterator(func() (bson.Doc, error) {
		if out == nil {
			type item struct {
				key []byte
				doc bson.Doc
			}
			var items []item
			for {
				d, err := in.Next()
				if err != nil {
					return nil, err
				}
				if d == nil {
					break
				}
				doc := bson.Doc(append([]byte(nil), d...))
				items = append(items, item{s.s.Key(nil, doc), doc})
			}
			sort.SliceStable(items, func(i, j int) bool { return string(items[i].key) < string(items[j].key) })
			out = &SliceIterator{}
			for _, it := range items {
				out.Docs = append(out.Docs, it.doc)
			}
		}
		return out.Next()
	})
}

type countStage struct{ field string }

func (s *countStage) wrap(in Iterator) Iterator {
	done := false
	return FuncIterator(func() (bson.Doc, error) {
		if done {
			return nil, nil
		}
		done = true
		var n int64
		for {
			d, err := in.Next()
			if err != nil {
				return nil, err
			}
			if d == nil {
				break
			}
			n++
		}
		if n == 0 {
			return nil, nil
		}
		var b bson.Builder
		if n <= 2147483647 {
			b.AppendInt32(s.field, int32(n))
		} else {
			b.AppendInt64(s.field, n)
		}
		return b.Finish(), nil
	})
}
