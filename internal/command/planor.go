package command

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/query"
)

// orPlan plans a filter whose top level holds a $or (and no other index
// plan) as a union: each branch is planned as a filter of its own, and
// when every branch has an index plan their walks are joined,
// each document reached once (MongoDB's OR stage). A branch without an
// index would need a collection scan anyway: then there is no union plan.
// The whole filter is applied to every fetched document, so the union only
// needs to be a superset of the matches.
func orPlan(coll *catalog.Collection, filter bson.Doc, opts *query.Options) *plan {
	v, ok := filter.Lookup("$or")
	if !ok || v.Type != bson.TypeArray {
		return nil
	}
	var branches []*plan
	score := 4
	it := v.Document().Iter()
	for it.Next() {
		b := it.Element().Value
		if b.Type != bson.TypeDocument {
			return nil
		}
		p := chooseIndex(coll, b.Document(), opts)
		if p == nil {
			p = orPlan(coll, b.Document(), opts) // a nested $or
		}
		if p == nil {
			return nil
		}
		score = min(score, p.score)
		if p.or != nil {
			branches = append(branches, p.or...)
			continue
		}
		p.dedupe = true
		branches = append(branches, p)
	}
	if len(branches) == 0 {
		return nil
	}
	return &plan{or: branches, dedupe: true, score: score}
}
