package exec

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/query"
)

// OrPlan plans a filter whose top level holds a $or (and no other index
// plan) as a union: each branch is planned as a filter of its own, and
// when every branch has an index plan their walks are joined,
// each document reached once (MongoDB's OR stage). A branch without an
// index would need a collection scan anyway: then there is no union plan.
// The whole filter is applied to every fetched document, so the union only
// needs to be a superset of the matches.
func OrPlan(coll *catalog.Collection, filter bson.Doc, opts *query.Options) *Plan {
	v, ok := filter.Lookup("$or")
	if !ok || v.Type != bson.TypeArray {
		return nil
	}
	var branches []*Plan
	score := 4
	it := v.Document().Iter()
	for it.Next() {
		b := it.Element().Value
		if b.Type != bson.TypeDocument {
			return nil
		}
		p := ChooseIndex(coll, b.Document(), opts)
		if p == nil {
			p = OrPlan(coll, b.Document(), opts) // a nested $or
		}
		if p == nil {
			return nil
		}
		score = min(score, p.Score)
		if p.Or != nil {
			branches = append(branches, p.Or...)
			continue
		}
		p.Dedupe = true
		branches = append(branches, p)
	}
	if len(branches) == 0 {
		return nil
	}
	return &Plan{Or: branches, Dedupe: true, Score: score}
}
