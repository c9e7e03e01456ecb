// Package query implements MongoDB's query language over raw BSON documents:
// filters (ParseFilter, Filter.Match), projections (ParseProjection), sort
// orders (ParseSort) and update specifications (ParseUpdate), with the
// semantics, error codes and messages of MongoDB 7.0.
//
// Every specification is compiled once into a tree of small matcher or
// action nodes; evaluating it against a document walks the raw bytes in
// place and, for equality, range and $in predicates on top-level or dotted
// fields, does not allocate.
//
// Paths follow MongoDB's rules: a dotted path descends through embedded
// documents, traverses arrays implicitly (each element that is a document is
// searched for the rest of the path), and a numeric component names both an
// array position and a field called by that number. A missing field compares
// equal to null.
//
// # Supported
//
// Filters: $eq $ne $gt $gte $lt $lte $in $nin $and $or $nor $not $exists
// $type (codes, aliases, "number", arrays of them) $regex/$options and regex
// literals (options imsxu) $elemMatch (query and value forms) $size $all
// (with $elemMatch) $mod $bitsAllSet $bitsAnySet $bitsAllClear $bitsAnyClear
// $comment $alwaysTrue $alwaysFalse, DBRef fields ($ref $id $db), $expr,
// and $jsonSchema (see jsonschema.go).
//
// Projections: inclusion, exclusion, _id rules, dotted and nested paths,
// $slice, $elemMatch, positional "a.$", literals and expressions.
//
// Sorts: ascending/descending on any path (arrays sort by their smallest or
// largest element, missing as null, [] before null; several keys under one
// array vary together, as MongoDB's key tuples do, and keys on two different
// arrays are an error reported by Sort.Check), $natural (other keys are then
// ignored), and {$meta: "textScore"} (Sort.HasMeta tells the server, which
// orders $text results with Sort.KeyScore).
//
// Updates: $set $unset $inc $mul $min $max $rename $setOnInsert
// $currentDate $push ($each $slice $sort $position) $addToSet ($each) $pop
// $pull $pullAll $bit; positional $, $[] and $[<id>] with arrayFilters;
// replacement documents; pipelines of $set/$addFields, $unset, $project and
// $replaceRoot/$replaceWith; upsert seeding from the filter's equalities.
//
// Expressions ($expr, computed projection fields, update pipelines) are
// MongoDB's full aggregation expression language, compiled and evaluated
// by internal/expr (the evaluator the aggregation pipeline uses too).
//
// # Not supported (errors, never wrong answers)
//
//   - $where (no server-side JavaScript): NotImplemented (238).
//   - $text: IndexNotFound (27); the server takes a $text clause out of
//     find and count filters before compiling them and runs it itself.
//     {$meta: "textScore"} in a projection: 40218 unless Options.TextScore
//     (the value comes from MatchDetails.TextScore).
//   - $near, $nearSphere: BadValue here ("not allowed in this context");
//     the server takes them out of find filters and reads them through a
//     2dsphere index (internal/command/near.go). $geoWithin and
//     $geoIntersects are supported (geo.go).
//   - Expression operators internal/expr does not run ($meta's known
//     names, $toHashedIndexKey): NotImplemented
//     (238); unknown ones: InvalidPipelineOperator (168) as MongoDB.
//   - Regular expressions RE2 cannot run (look-around, back-references,
//     atomic groups, possessive quantifiers, recursion, conditionals, \G):
//     BadValue (2). Other PCRE syntax Go rejects: 51091.
//   - Collations use golang.org/x/text/collate (CLDR tables) in place of
//     ICU 57: caseFirst "upper" is emulated by swapping case, maxVariable
//     "space" is accepted but punctuation stays variable under "shifted".
package query
