// Package expr implements MongoDB's aggregation expression language: field
// paths, variables, literals, object and array construction and the
// expression operators ($add, $cond, $map, $dateToString, ...), together
// with the $group/window accumulators ($sum, $avg, $topN, ...).
//
// # Compiling and evaluating
//
// Parse (or ParseObject, for a document of expressions such as an
// $addFields specification) compiles an expression once: field paths are
// pre-split, variables resolved to slots, $$NOW and command-level let
// variables (Options.Let) bound to constants, and operators whose operands
// are all constants folded. Eval evaluates a compiled Expr against a
// document with an Env:
//
//	x, err := expr.Parse(spec, opts)
//	env := expr.NewEnv(opts)
//	for _, doc := range docs {
//		v, err := expr.Eval(x, doc, env) // zero Value = missing
//	}
//
// An Env holds the variable slots and an arena that results are built in.
// A result, and everything it references, stays valid until the next Eval
// with the same Env; copy it (CopyValue) to keep it longer, or use
// EvalKeep to evaluate several expressions over one document and Reset
// between documents. An Expr is immutable and may be shared by goroutines,
// each with its own Env. Reusing one Env makes the common expressions
// (field paths, comparisons, arithmetic, string concatenation, $map over
// small arrays) allocation-free in steady state.
//
// Variables: $$ROOT, $$CURRENT (which $let may rebind), $$REMOVE, $$NOW,
// command-level let variables, $let variables and $$this/$$value in $map,
// $filter and $reduce. $$CLUSTER_TIME fails as on a standalone server;
// $$USER_ROLES, $$SEARCH_META and $$JS_SCOPE answer NotImplemented.
//
// # Accumulators
//
// ParseAccumulator compiles an accumulator ({$sum: "$x"} as it appears in
// $group); New makes a fresh instance per group. Accumulators that
// implement Merger can combine partial states from parallel partitions.
//
// # Semantics
//
// Results, types, evaluation order, error codes and messages follow
// MongoDB 7.0 (checked against MongoDB's expression sources), with these
// known differences: regular expressions run on Go's RE2 after translation
// from PCRE, and look-around, back-references, atomic groups and
// possessive quantifiers answer NotImplemented (238); decimal
// trigonometric functions are computed in double precision (decimal $exp,
// $ln, $log, $log10, $pow and $sqrt are computed to 34 digits);
// $dateFromString without a format accepts the
// ISO 8601 forms and a trailing time zone name rather than all of
// timelib's formats; $meta's unsupported names and $toHashedIndexKey
// answer NotImplemented ($function and $accumulator run JavaScript: js.go). Errors are *mongoerr.Error
// values; a stage that wraps parse errors (as MongoDB's "Invalid
// $addFields :: caused by :: ...") does so itself.
package expr
