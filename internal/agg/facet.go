package agg

import (
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

func init() {
	register("$facet", stageInfo{parse: parseFacet})
}

// facetStage runs several sub-pipelines over the same input and outputs
// one document with each sub-pipeline's results as an array.
type facetStage struct {
	names []string
	pipes []*Pipeline
	ctx   *Context
}

var facetForbidden = map[string]bool{
	"$collStats": true, "$facet": true, "$geoNear": true, "$indexStats": true, "$out": true,
	"$merge": true, "$planCacheStats": true, "$documents": true, "$listLocalSessions": true,
	"$changeStream": true, "$search": true,
}

func parseFacet(c *Context, v bson.Value) (stage, error) {
	if v.Type != bson.TypeDocument || v.Document().Len() == 0 {
		return nil, mongoerr.New(mongoerr.FacetNotObject, "the $facet specification must be a non-empty object, but found: %s", v.String())
	}
	s := &facetStage{ctx: c}
	it := v.Document().Iter()
	for it.Next() {
		e := it.Element()
		if e.Key == "" || strings.HasPrefix(e.Key, "$") || strings.Contains(e.Key, ".") {
			return nil, mongoerr.New(mongoerr.FieldPathTrailingDot, "Invalid $facet :: caused by :: FieldPath field names may not start with '$' or contain '.': %s", e.Key)
		}
		if e.Value.Type != bson.TypeArray {
			return nil, mongoerr.New(mongoerr.FacetArgNotArray, "arguments to $facet must be arrays, %s is type %s", e.Key, e.Value.Type)
		}
		sc := *c
		sc.Coll = "x" // sub-pipelines read the facet's input
		var stages []bson.Doc
		sub := e.Value.Document().Iter()
		for sub.Next() {
			sv := sub.Element().Value
			if sv.Type != bson.TypeDocument {
				return nil, mongoerr.New(mongoerr.FacetElementNotObject, "all elements of arguments to $facet must be objects, but %s contains an element of type %s", e.Key, sv.Type)
			}
			if k := firstKey(sv.Document()); facetForbidden[k] {
				return nil, mongoerr.New(mongoerr.StageNotAllowedInFacet, "%s is not allowed to be used within a $facet stage", k)
			}
			stages = append(stages, sv.Document())
		}
		if len(stages) == 0 {
			return nil, mongoerr.New(mongoerr.FacetArgNotArray, "sub-pipeline in $facet stage cannot be empty")
		}
		p, err := Parse(sc.sub("$facet"), stages)
		if err != nil {
			return nil, err
		}
		s.names = append(s.names, e.Key)
		s.pipes = append(s.pipes, p)
	}
	return s, nil
}

func (s *facetStage) open(in Iterator) (Iterator, error) {
	done := false
	return FuncIterator(func() (bson.Doc, error) {
		if done {
			return nil, nil
		}
		done = true
		var docs []bson.Doc
		var mem int64
		for {
			d, err := in.Next()
			if err != nil {
				return nil, err
			}
			if d == nil {
				break
			}
			mem += int64(len(d))
			if mem > s.ctx.memLimit() && !s.ctx.AllowDiskUse {
				return nil, errMemory("$facet")
			}
			docs = append(docs, cloneDoc(d))
		}
		var b bson.Builder
		for i, p := range s.pipes {
			out, err := p.Run(&SliceIterator{Docs: append([]bson.Doc(nil), docs...)})
			if err != nil {
				return nil, err
			}
			b.StartArray(s.names[i])
			for n := 0; ; n++ {
				d, err := out.Next()
				if err != nil {
					return nil, err
				}
				if d == nil {
					break
				}
				b.AppendDocument(bson.Index(n), d)
				if b.Len() > 100*1024*1024 {
					return nil, mongoerr.New(mongoerr.BSONObjectTooLarge, "$facet output exceeds the maximum document size")
				}
			}
			b.End()
		}
		out := b.Finish()
		if len(out) > 16*1024*1024 {
			return nil, mongoerr.New(mongoerr.BSONObjectTooLarge, "BSONObj size: %d (0x%X) is invalid. Size must be between 0 and 16793600(16MB)", len(out), len(out))
		}
		return out, nil
	}), nil
}
