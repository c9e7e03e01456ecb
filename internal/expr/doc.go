// Package expr implements MongoDB's aggregation expression language: field
// paths, variables, literals, object and array construction and the
// expression operators ($add, $cond, $map, $dateToString, ...), together
// with the $group/window accumulators ($sum, $avg, $topN, ...).
//
// Expressions are compiled once with Parse (or ParseObject) into a tree of
// nodes with field paths pre-split and variables resolved to slots, then
// evaluated per document with Eval and an Env. An Env holds an arena that
// evaluation results are built in; results (and everything they reference)
// stay valid until the next Eval with the same Env, so a caller that keeps a
// result longer must copy it. Reusing one Env across documents makes
// evaluation of the common expressions (field paths, comparisons,
// arithmetic) allocation-free in steady state.
//
// Semantics, result types and error codes and messages follow MongoDB 7.0.
// Errors are *mongoerr.Error values.
package expr
