package agg

import (
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/timeseries"
)

// $_internalUnpackBucket turns time-series buckets into their
// measurements (internal/timeseries): it is the pipeline of a time-series
// collection's view. The optimizer lets it build only the fields the rest
// of the pipeline reads, when that is known (a $group or $count ends what
// is read), and Parse puts a $match on the buckets in front of it for the
// time and meta predicates of the $match after it (timeseries.Rewrite).

func init() {
	register(timeseries.UnpackStage, stageInfo{parse: parseUnpack})
}

type unpackStage struct {
	spec    timeseries.UnpackSpec
	include map[string]bool // nil: every field
}

func parseUnpack(c *Context, v bson.Value) (stage, error) {
	spec, ok := timeseries.ParseUnpackSpec(v)
	if !ok {
		return nil, mongoerr.New(mongoerr.FailedToParse, "invalid $_internalUnpackBucket specification: %s", v.String())
	}
	return &unpackStage{spec: spec}, nil
}

func (u *unpackStage) open(in Iterator) (Iterator, error) {
	up := &timeseries.Unpacker{TimeField: u.spec.TimeField, MetaField: u.spec.MetaField, Include: u.include}
	var queue []bson.Doc
	return FuncIterator(func() (bson.Doc, error) {
		for len(queue) == 0 {
			b, err := in.Next()
			if err != nil || b == nil {
				return nil, err
			}
			queue = queue[:0]
			if err := up.Unpack(b, func(d bson.Doc) bool {
				queue = append(queue, d)
				return true
			}); err != nil {
				return nil, err
			}
		}
		d := queue[0]
		queue = queue[1:]
		return d, nil
	}), nil
}

// narrowUnpacks lets each unpack stage build only the fields the stages
// after it read.
func (p *Pipeline) narrowUnpacks() {
	for i, s := range p.stages {
		if u, ok := s.(*unpackStage); ok {
			u.include = fieldsRead(p.stages[i+1:], p.specs[i+1:])
		}
	}
}

// fieldsRead returns the top-level fields that stages read of their
// input documents, up to a stage that replaces them ($group, $count), or
// nil when they may read any field or hand the documents on.
func fieldsRead(stages []stage, specs []bson.Doc) map[string]bool {
	seen := map[string]bool{}
	add := func(f string) { seen[f] = true }
	for i, s := range stages {
		if i >= len(specs) {
			return nil
		}
		key, v := firstKey(specs[i]), bson.Value{}
		if sv, ok := specs[i].Lookup(key); ok {
			v = sv
		}
		switch st := s.(type) {
		case *matchStage:
			if v.Type != bson.TypeDocument || matchDeps(v.Document(), add) {
				return nil
			}
		case *groupStage:
			if st.deps == nil {
				return nil
			}
			for _, d := range st.deps {
				add(d)
			}
			return seen
		case *countStage:
			return seen
		case *limitStage, *skipStage:
		case *sortStage:
			if v.Type != bson.TypeDocument {
				return nil
			}
			it := v.Document().Iter()
			for it.Next() {
				if !it.Element().Value.IsNumber() {
					return nil
				}
				f, _, _ := strings.Cut(it.Element().Key, ".")
				add(f)
			}
		case *projectStage:
			if key == "$unset" || projectionDeps(v, add) {
				return nil
			}
		default:
			return nil
		}
	}
	return nil
}
