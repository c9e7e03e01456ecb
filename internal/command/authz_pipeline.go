package command

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/auth"
)

// Privileges of an aggregation pipeline.
//
// An aggregation reads more than the collection it is sent to: $lookup,
// $graphLookup and $unionWith read other collections (a $lookup even of
// another database, from: {db, coll}), $facet, $lookup and $unionWith
// carry sub-pipelines that may do the same at any depth, $out and $merge
// write, and a few stages need an action of their own ($collStats,
// $indexStats, $planCacheStats, $listLocalSessions of other users). As
// mongod's LiteParsedPipeline does, pipelineNeeds walks the pipeline's
// BSON before anything is parsed or run and lists every (database,
// actions) pair it involves; the command is refused with Unauthorized
// (13) unless the user holds all of them.
//
// The walk is deliberately conservative: it looks at every key of every
// stage document and every value a namespace field takes (a stage with a
// duplicated "from" needs find on both), so that no spelling the parser
// might accept can name a namespace the walk missed. Nesting deeper than
// the parser allows (maxSubPipelineDepth) is still walked, bounded by
// BSON's own depth; the parser refuses such pipelines anyway.
//
// Views are checked as mongod checks them: creating or modifying a view
// needs find on every namespace its definition reads (viewNeeds), and a
// query on a view needs find on the view alone — the point of a view
// being that it can expose part of collections its readers cannot read.

// pipelineNeeds lists what running pipeline (an array of stages) on
// database db requires.
func pipelineNeeds(db string, pipeline bson.Value) []need {
	var out []need
	walkPipeline(db, pipeline, 0, &out)
	return out
}

// walkPipelineDepth bounds the walk far beyond what the parser accepts
// (and BSON's nesting limit makes deeper input impossible anyway).
const walkPipelineDepth = 200

func walkPipeline(db string, pipeline bson.Value, depth int, out *[]need) {
	if pipeline.Type != bson.TypeArray || depth > walkPipelineDepth {
		return
	}
	it := pipeline.Document().Iter()
	for it.Next() {
		st := it.Element().Value
		if st.Type != bson.TypeDocument {
			continue
		}
		sit := st.Document().Iter()
		for sit.Next() {
			walkStage(db, sit.Element(), depth, out)
		}
	}
}

// walkStage adds what one stage involves.
func walkStage(db string, e bson.Element, depth int, out *[]need) {
	add := func(db string, a auth.Action) { *out = append(*out, need{db, a}) }
	spec, isDoc := bson.Doc(nil), e.Value.Type == bson.TypeDocument
	if isDoc {
		spec = e.Value.Document()
	}
	switch e.Key {
	case "$lookup", "$graphLookup":
		// from: "coll" reads db; from: {db, coll} reads that database, and
		// a $lookup's sub-pipeline then runs there.
		dbs := []string{db}
		if isDoc {
			dbs = namespaceDBs(spec, "from", db)
		}
		for _, d := range dbs {
			add(d, auth.Find)
		}
		if isDoc {
			forEach(spec, "pipeline", func(p bson.Value) {
				for _, d := range dbs {
					walkPipeline(d, p, depth+1, out)
				}
			})
		}
	case "$unionWith":
		add(db, auth.Find)
		if isDoc {
			for _, d := range namespaceDBs(spec, "db", db) {
				add(d, auth.Find)
			}
			forEach(spec, "pipeline", func(p bson.Value) { walkPipeline(db, p, depth+1, out) })
		}
	case "$facet":
		if isDoc {
			fit := spec.Iter()
			for fit.Next() {
				walkPipeline(db, fit.Element().Value, depth+1, out)
			}
		}
	case "$out":
		acts := auth.Insert | auth.Remove
		add(db, acts)
		if isDoc {
			for _, d := range namespaceDBs(spec, "db", db) {
				add(d, acts)
			}
		}
	case "$merge":
		acts := auth.Insert | auth.Update | auth.Remove
		add(db, acts)
		if isDoc {
			forEach(spec, "into", func(v bson.Value) {
				if v.Type == bson.TypeDocument {
					for _, d := range namespaceDBs(v.Document(), "db", db) {
						add(d, acts)
					}
				}
			})
		}
	case "$collStats":
		add(db, auth.CollStats)
	case "$indexStats":
		add(db, auth.IndexStats)
	case "$planCacheStats":
		add(db, auth.PlanCacheRead)
	case "$listLocalSessions":
		// Another user's sessions need listSessions on the cluster.
		if isDoc {
			if v, ok := spec.Lookup("allUsers"); ok && v.Truthy() {
				add("", auth.ListSessions)
			}
			if _, ok := spec.Lookup("users"); ok {
				add("", auth.ListSessions)
			}
		}
	}
}

// namespaceDBs returns the databases field names in spec: every string
// value of field, and the "db" of every document value of it (a
// $lookup's from: {db, coll}); def when it names none.
func namespaceDBs(spec bson.Doc, field, def string) []string {
	var dbs []string
	it := spec.Iter()
	for it.Next() {
		e := it.Element()
		if e.Key != field {
			continue
		}
		switch e.Value.Type {
		case bson.TypeString:
			if field == "db" {
				dbs = append(dbs, e.Value.StringValue())
			}
		case bson.TypeDocument:
			dit := e.Value.Document().Iter()
			for dit.Next() {
				if d := dit.Element(); d.Key == "db" && d.Value.Type == bson.TypeString {
					dbs = append(dbs, d.Value.StringValue())
				}
			}
		}
	}
	if len(dbs) == 0 {
		return []string{def}
	}
	return dbs
}

// forEach calls fn with every value of field in spec (duplicates too).
func forEach(spec bson.Doc, field string, fn func(bson.Value)) {
	it := spec.Iter()
	for it.Next() {
		if e := it.Element(); e.Key == field {
			fn(e.Value)
		}
	}
}

// viewNeeds: creating or modifying a view reading viewOn through pipeline
// needs find on its source and on every namespace its pipeline reads, as
// mongod checks at create and collMod (a view could otherwise read what
// its creator cannot).
func viewNeeds(c *Ctx, base []need) []need {
	_, hasViewOn := c.Body.Lookup("viewOn")
	pipeline, hasPipeline := c.Body.Lookup("pipeline")
	if !hasViewOn && !hasPipeline {
		return base
	}
	out := append(base, need{c.DB, auth.Find})
	return append(out, pipelineNeeds(c.DB, pipeline)...)
}
