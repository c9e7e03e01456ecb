package expr

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// ArgAdder is an accumulator that folds an argument value evaluated
// elsewhere: AddArg(v) does exactly what Add does for a document on which
// the accumulator's argument evaluates to v (Type 0: missing). A column
// scan that reads a field's values without building documents feeds the
// accumulators of "$field" and constant arguments through it.
type ArgAdder interface {
	AddArg(v bson.Value) error
}

// addByArg is Add for an accumulator that folds its argument's value: it
// evaluates spec's argument against root and hands the value to a's
// AddArg, releasing what the evaluation built once a has folded it.
func addByArg(a ArgAdder, spec *AccumulatorSpec, root bson.Doc, env *Env) error {
	defer env.release(env.mark())
	v, err := spec.eval(spec.arg, root, env)
	if err != nil {
		return err
	}
	return a.AddArg(v)
}

// Arg returns the accumulator's argument expression (nil for $count).
func (s *AccumulatorSpec) Arg() Expr { return s.arg }

// AddArg implements ArgAdder.
func (a *sumAcc) AddArg(v bson.Value) error { a.s.add(v); return nil }

// AddArg implements ArgAdder.
func (a *countAcc) AddArg(bson.Value) error { a.n++; return nil }

// AddArg implements ArgAdder.
func (a *avgAcc) AddArg(v bson.Value) error {
	if a.s.add(v) {
		a.count++
	}
	return nil
}

// AddArg implements ArgAdder.
func (a *minMaxAcc) AddArg(v bson.Value) error {
	if nullish(v) {
		return nil
	}
	if a.cur.Type == 0 || a.sign*bson.CompareCollated(v, a.cur, a.spec.opts.Collation) > 0 {
		a.cur = copyValue(v)
	}
	return nil
}

// AddArg implements ArgAdder.
func (a *firstLastAcc) AddArg(v bson.Value) error {
	if a.first && a.seen {
		return nil
	}
	a.seen = true
	if a.first && a.al != nil {
		a.cur = a.al.Value(v)
	} else {
		a.cur = copyValue(v)
	}
	return nil
}

// AddArg implements ArgAdder.
func (a *pushAcc) AddArg(v bson.Value) error {
	if v.Type == 0 {
		return nil
	}
	if a.set && !a.insertKey(v) {
		return nil
	}
	a.bytes += len(v.Data) + 16
	if a.bytes > maxAccumulatorBytes {
		name := "$push"
		if a.set {
			name = "$addToSet"
		}
		return errf(mongoerr.ExceededMemoryLimit, "%s used too much memory and cannot spill to disk. Memory limit: %d bytes", name, maxAccumulatorBytes)
	}
	a.vals = append(a.vals, copyValue(v))
	return nil
}
