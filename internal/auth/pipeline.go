package auth

import (
	"github.com/cairndb/cairn/bson"
)

// Privileges of an aggregation pipeline.
//
// An aggregation reads more than the collection it is sent to: $lookup,
// $graphLookup and $unionWith read other collections (a $lookup even of
// another database, from: {db, coll}), $facet, $lookup and $unionWith
// carry sub-pipelines that may do the same at any depth, $out and $merge
// write, and a few stages need an action of their own ($collStats,
// $indexStats, $planCacheStats, $listLocalSessions of other users). As
// mongod's LiteParsedPipeline does, PipelineNeeds walks the pipeline's
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
// needs find on every namespace its definition reads (command's viewNeeds), and a
// query on a view needs find on the view alone — the point of a view
// being that it can expose part of collections its readers cannot read.

// PipelineNeeds lists what running pipeline (an array of stages) on
// database db requires.
func PipelineNeeds(db string, pipeline bson.Value) []Need {
	var out []Need
	for _, r := range PipelineRefs(db, pipeline) {
		out = append(out, Need(r))
	}
	return out
}

// NsRef is one use a pipeline makes of a namespace: the actions it needs
// on database db, and the collection it reads or writes ("" for a stage
// that needs an action on its input's database, or a cluster action, db
// "").
type NsRef struct {
	DB, Coll string
	Actions  Action
}

// PipelineRefs lists every namespace pipeline, run on database db, uses.
func PipelineRefs(db string, pipeline bson.Value) []NsRef {
	var out []NsRef
	walkPipeline(db, pipeline, 0, &out)
	return out
}

// walkPipelineDepth bounds the walk far beyond what the parser accepts
// (and BSON's nesting limit makes deeper input impossible anyway).
const walkPipelineDepth = 200

func walkPipeline(db string, pipeline bson.Value, depth int, out *[]NsRef) {
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
func walkStage(db string, e bson.Element, depth int, out *[]NsRef) {
	add := func(db, coll string, a Action) { *out = append(*out, NsRef{db, coll, a}) }
	spec, isDoc := bson.Doc(nil), e.Value.Type == bson.TypeDocument
	if isDoc {
		spec = e.Value.Document()
	}
	switch e.Key {
	case "$lookup", "$graphLookup":
		// from: "coll" reads db; from: {db, coll} reads that database, and
		// a $lookup's sub-pipeline then runs there.
		var dbs []string
		if isDoc {
			for _, ns := range namespaces(spec, "from", db) {
				add(ns[0], ns[1], Find)
				dbs = append(dbs, ns[0])
			}
			forEach(spec, "pipeline", func(p bson.Value) {
				for _, d := range dbs {
					walkPipeline(d, p, depth+1, out)
				}
			})
		} else {
			add(db, "", Find)
		}
	case "$unionWith":
		switch {
		case e.Value.Type == bson.TypeString:
			add(db, e.Value.StringValue(), Find)
		case isDoc:
			for _, ns := range namespaces(spec, "coll", db) {
				add(ns[0], ns[1], Find)
			}
			forEach(spec, "pipeline", func(p bson.Value) { walkPipeline(db, p, depth+1, out) })
		default:
			add(db, "", Find)
		}
	case "$facet":
		if isDoc {
			fit := spec.Iter()
			for fit.Next() {
				walkPipeline(db, fit.Element().Value, depth+1, out)
			}
		}
	case "$out", "$merge":
		acts := Insert | Remove
		if e.Key == "$merge" {
			acts |= Update
		}
		switch {
		case e.Value.Type == bson.TypeString:
			add(db, e.Value.StringValue(), acts)
		case isDoc && e.Key == "$merge":
			for _, ns := range namespaces(spec, "into", db) {
				add(ns[0], ns[1], acts)
			}
		case isDoc:
			// $out: {db, coll} names its database beside coll.
			dbs, colls := stringValues(spec, "db"), stringValues(spec, "coll")
			if len(dbs) == 0 {
				dbs = []string{db}
			}
			if len(colls) == 0 {
				colls = []string{""}
			}
			for _, d := range dbs {
				for _, c := range colls {
					add(d, c, acts)
				}
			}
		default:
			add(db, "", acts)
		}
	case "$collStats":
		add(db, "", CollStats)
	case "$indexStats":
		add(db, "", IndexStats)
	case "$planCacheStats":
		add(db, "", PlanCacheRead)
	case "$listLocalSessions", "$listSessions":
		// Another user's sessions need listSessions on the cluster.
		if isDoc {
			if v, ok := spec.Lookup("allUsers"); ok && v.Truthy() {
				add("", "", ListSessions)
			}
			if _, ok := spec.Lookup("users"); ok {
				add("", "", ListSessions)
			}
		}
	}
}

// namespaces returns the namespaces (database, collection) that field
// names in spec: every string value of it (a collection of def), and every
// document value {db, coll} (a missing db is def); [def, ""] when it
// names none, so that the database is checked all the same.
func namespaces(spec bson.Doc, field, def string) [][2]string {
	var out [][2]string
	forEach(spec, field, func(v bson.Value) {
		switch v.Type {
		case bson.TypeString:
			out = append(out, [2]string{def, v.StringValue()})
		case bson.TypeDocument:
			db, coll := def, ""
			dit := v.Document().Iter()
			for dit.Next() {
				d := dit.Element()
				if d.Value.Type != bson.TypeString {
					continue
				}
				switch d.Key {
				case "db":
					// Every db a duplicated key names is checked (the
					// parser takes the last; the check must not guess).
					db = d.Value.StringValue()
					out = append(out, [2]string{db, coll})
				case "coll":
					coll = d.Value.StringValue()
				}
			}
			out = append(out, [2]string{db, coll})
		}
	})
	if len(out) == 0 {
		return [][2]string{{def, ""}}
	}
	return out
}

// stringValues returns every string value of field in spec.
func stringValues(spec bson.Doc, field string) []string {
	var out []string
	forEach(spec, field, func(v bson.Value) {
		if v.Type == bson.TypeString {
			out = append(out, v.StringValue())
		}
	})
	return out
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
