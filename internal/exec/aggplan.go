package exec

import (
	"context"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
)

// AggPlanning is what aggregate's planner reads besides the pipeline: the
// command's hint and the leading $match's $text query.
type AggPlanning struct {
	// hint forces the index of the leading $match's scan (zero: none).
	Hint bson.Value
	// text is the leading $match's $text query (nil: none), read through
	// the text index; the pipeline's $match then holds the rest.
	Text *FindSpec
	// geoNear is the leading $geoNear (nil: none), which reads the
	// collection through its 2dsphere index; the stages are the rest.
	GeoNear *GeoNearSpec
}

// SplitAggText takes a $text query out of the pipeline's first stage when
// it is a $match on collection db.coll, as MongoDB allows $text only
// there: the returned stages hold the rest of that $match, and the text
// query reads the collection. $text in a later $match is refused (17313).
func SplitAggText(db, coll string, stages []bson.Doc, qopts *query.Options) ([]bson.Doc, *FindSpec, error) {
	for i, st := range stages {
		m, ok := matchStage(st)
		if !ok || i == 0 {
			continue
		}
		if _, clause, err := SplitText(m); err == nil && clause != nil {
			return nil, nil, mongoerr.New(mongoerr.TextMatchNotFirstStage, "$match with $text is only allowed as the first pipeline stage")
		}
	}
	if len(stages) == 0 || coll == "" {
		return stages, nil, nil
	}
	m, ok := matchStage(stages[0])
	if !ok {
		return stages, nil, nil
	}
	opts := &query.Options{}
	if qopts != nil {
		*opts = *qopts
	}
	opts.NoWhere = true // $where is not allowed in a $match
	// Only a $match with a $text (at the top level, in a top-level $and,
	// or in a branch of a top-level $or) is read through the text index.
	if _, clause, err := SplitText(m); err != nil || clause == nil {
		if err != nil {
			return nil, nil, err
		}
		if _, clause, _, err := SplitTextOr(m, opts); err != nil || clause == nil {
			return stages, nil, err
		}
	}
	spec := &FindSpec{DB: db, Coll: coll, Opts: opts}
	if err := ParseFilterText(spec, m, opts); err != nil {
		return nil, nil, err
	}
	rest := spec.FilterDoc
	var b bson.Builder
	b.AppendDocument("$match", rest)
	out := append([]bson.Doc{b.Finish()}, stages[1:]...)
	return out, spec, nil
}

// matchStage returns the filter of a {$match: filter} stage.
func matchStage(st bson.Doc) (bson.Doc, bool) {
	it := st.Iter()
	if !it.Next() || it.Element().Key != "$match" || it.Element().Value.Type != bson.TypeDocument || it.Next() {
		return nil, false
	}
	v, _ := st.Lookup("$match")
	return v.Document(), true
}

// TextIter serves a text query's documents to a pipeline.
type TextIter struct {
	Ctx context.Context
	Src *TextSource
	// score receives the score of each document Next returns, for
	// {$meta: "textScore"} in the pipeline (nil: not wanted).
	Score *float64
}

func (t *TextIter) Next() (bson.Doc, error) {
	h, err := t.Src.NextHit(t.Ctx)
	if h == nil || err != nil {
		return nil, err
	}
	if t.Score != nil {
		*t.Score = h.Score
	}
	return h.Doc, nil
}
