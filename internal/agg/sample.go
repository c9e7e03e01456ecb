package agg

import (
	"math/rand/v2"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

func init() {
	register("$sample", stageInfo{parse: parseSample})
}

// sampleStage picks size documents uniformly at random (reservoir
// sampling: memory for size documents only), in random order.
type sampleStage struct {
	size int64
	ctx  *Context
}

func parseSample(c *Context, v bson.Value) (stage, error) {
	if v.Type != bson.TypeDocument {
		return nil, mongoerr.New(mongoerr.SampleNotObject, "the $sample stage specification must be an object")
	}
	found := false
	s := &sampleStage{ctx: c}
	it := v.Document().Iter()
	for it.Next() {
		e := it.Element()
		if e.Key != "size" {
			return nil, mongoerr.New(mongoerr.SampleUnknownOption, "unrecognized option to $sample: %s", e.Key)
		}
		if !e.Value.IsNumber() {
			return nil, mongoerr.New(mongoerr.SampleSizeNotNumber, "size argument to $sample must be a number")
		}
		f, _ := e.Value.AsFloat64()
		if f < 0 {
			return nil, mongoerr.New(mongoerr.SampleSizeNegative, "size argument to $sample must not be negative")
		}
		s.size = int64(f)
		found = true
	}
	if !found {
		return nil, mongoerr.New(mongoerr.SampleMissingSize, "$sample stage must specify a size")
	}
	return s, nil
}

func (s *sampleStage) open(in Iterator) (Iterator, error) {
	var out *SliceIterator
	return FuncIterator(func() (bson.Doc, error) {
		if out == nil {
			var res []bson.Doc
			var seen int64
			var mem int64
			for {
				d, err := in.Next()
				if err != nil {
					return nil, err
				}
				if d == nil {
					break
				}
				seen++
				if int64(len(res)) < s.size {
					mem += int64(len(d))
					if mem > s.ctx.memLimit() && !s.ctx.AllowDiskUse {
						return nil, errMemory("$sample")
					}
					res = append(res, cloneDoc(d))
					continue
				}
				if j := rand.Int64N(seen); j < s.size {
					res[j] = cloneDoc(d)
				}
			}
			rand.Shuffle(len(res), func(i, j int) { res[i], res[j] = res[j], res[i] })
			out = &SliceIterator{Docs: res}
		}
		return out.Next()
	}), nil
}
