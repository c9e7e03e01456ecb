package query

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// updatePipeline is an update given as an aggregation pipeline.
type updatePipeline struct {
	stages bson.Doc
}

func parseUpdatePipeline(stages bson.Doc, opts *Options) (*updatePipeline, error) {
	return nil, mongoerr.New(mongoerr.NotImplemented, "pipeline-style updates are not supported by Cairn yet")
}

func (p *updatePipeline) apply(dst []byte, doc bson.Doc, opts *Options) (bson.Doc, error) {
	return nil, mongoerr.New(mongoerr.NotImplemented, "pipeline-style updates are not supported by Cairn yet")
}
