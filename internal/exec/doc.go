// Package exec is Cairn's execution layer: what runs a query once a
// command has parsed it. It holds the parsed query (FindSpec, with its
// $text and $near clauses), the planner's plan choice (plan.go: the
// _id point, _id-range and index plans, the sort given by an index
// walk; planor.go: the union of a $or's branches; covered.go: plans
// answered from index keys alone), MongoDB's plan race among candidate
// plans (planrace.go: Planner, which Engine embeds) with its plan cache
// (plancache.go), the walk that executes a plan over a *kv.Tx
// (WalkState), and executors: the spilling sort (sort.go), answers held
// in one snapshot (held.go), $text (text.go), $near (near.go), the find
// scans (scan.go: ScanSource) and the parallel aggregation scans
// (parallel.go: ParallelPipeline, over the column cache, colscan.go),
// an aggregation's lead $text and $geoNear stages (aggplan.go,
// geonear.go) and its collection scans across snapshots (aggscan.go:
// AggSnapshot, which the command's agg.Catalog embeds).
//
// The storage adapter is here too: the collection writer every write path
// goes through (writer.go: CollWriter, which keeps the indexes in step and
// validates documents, validation.go), the preparation of inserted
// documents (docs.go), the write figures it counts (figures.go), the
// selection of the documents an update or delete writes (match.go:
// Engine.SelectDocs), $out and $merge's writes (aggwrite.go), and the
// execution counters and Observer hooks (observe.go).
//
// Engine is the state executors share: the store, the spill directory,
// the column cache and the planner.
//
// internal/command keeps the handlers: it parses requests into these
// types and calls the planner and executors; exec never imports command
// (internal/lint checks the import graph).
package exec
