package expr

import (
	"math/rand/v2"
	"strings"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/js"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// Options configures parsing and evaluation. The first Parse fills in Now
// and evaluates Let, so one Options must not be used by concurrent Parse
// calls; after that it is read-only.
type Options struct {
	// Collation compares strings in comparisons, $in, sets and sorts;
	// nil compares bytewise.
	Collation bson.StringComparer
	// Let holds the command-level let variables: name -> expression. They
	// are evaluated once (constants, no field paths) on the first Parse.
	Let bson.Doc
	// Now is $$NOW. When zero, Parse sets it to the current time so every
	// expression parsed with the same Options sees the same $$NOW.
	Now time.Time
	// TextScore makes {$meta: "textScore"} available: it reads the $text
	// score of the document being evaluated from *TextScore, which the
	// query's text source sets as it hands on each document (so such an
	// expression is evaluated by one goroutine at a time). Nil: the score
	// is not available, and {$meta: "textScore"} is refused (40218).
	TextScore *float64
	// Scripts runs $function and $accumulator (internal/js); nil: the
	// context has no JavaScript engine (31264 when one is evaluated).
	Scripts *js.Scripts

	letVals map[string]bson.Value
	letDone bool
}

func (o *Options) now() time.Time {
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	return o.Now
}

// Expr is a compiled expression. It is immutable and may be evaluated
// concurrently with different Envs.
type Expr interface {
	root() *compiled
}

type compiled struct {
	n      node
	nslots int
}

func (c *compiled) root() *compiled { return c }

// node is one compiled expression node.
type node interface {
	eval(e *Env) (bson.Value, error)
}

// Env is per-goroutine evaluation state: variable slots and the arena
// results are built in. Reuse one Env across documents.
type Env struct {
	opts  *Options
	arena []byte
	vs    []bson.Value
	vars  []bson.Value
	rootD bson.Doc
	rng   *rand.Rand
	work  int // budget for expensive operations, reset per Eval
	// over records that a builder refused to pass maxArena (fits); the
	// evaluation then fails with 146. unlimited lifts the limit
	// (accumulator results, bounded by their own).
	over, unlimited bool
	scratch         []byte // reusable buffer for formatting
	// doc counts NewDocument calls; while it is not zero, memo caches one
	// field path's value in the current document for the numeric fast
	// path of $sum and $avg (numTerm.value).
	doc  uint64
	memo struct {
		doc  uint64
		path string
		v    bson.Value
		ok   bool
	}
	regexMemos []regexMemo // see memoFind
}

// NewDocument tells env that the evaluations that follow read a new
// document, so values it cached from the last one are dropped. A $group
// calls it once per document before its accumulators' Add; an Env never
// told caches nothing.
func (e *Env) NewDocument() { e.doc++ }

// NewEnv returns an Env for expressions parsed with opts (which may be nil).
func NewEnv(opts *Options) *Env {
	if opts == nil {
		opts = &Options{}
	}
	return &Env{opts: opts, arena: make([]byte, 0, 256), vs: make([]bson.Value, 0, 32)}
}

// Eval evaluates x with root as $$ROOT and $$CURRENT. The zero Value means
// missing. The result and anything it references are valid until the next
// Eval with the same env; copy them to keep them longer.
func Eval(x Expr, root bson.Doc, env *Env) (bson.Value, error) {
	c := x.root()
	if cap(env.arena) > retainArena {
		env.arena = nil // let one large evaluation's memory go
	}
	env.arena = env.arena[:0]
	env.vs = env.vs[:0]
	return env.checked(c.evalKeep(root, env))
}

// retainArena is the largest arena an Env keeps from one evaluation to
// the next.
const retainArena = 16 << 20

// checked turns the result of an evaluation that passed the memory limit
// into ExceededMemoryLimit, whatever it returned (a builder that refused
// returned null, which may have failed some operator since).
func (e *Env) checked(v bson.Value, err error) (bson.Value, error) {
	if e.over {
		e.over = false
		return missing, errWork()
	}
	return v, err
}

// EvalKeep is Eval without resetting the arena: earlier results from env
// stay valid. Use it to evaluate several expressions over one document and
// keep all results; call Reset between documents.
func EvalKeep(x Expr, root bson.Doc, env *Env) (bson.Value, error) {
	return env.checked(x.root().evalKeep(root, env))
}

type envMark struct{ arena, vs int }

// mark and release bracket a temporary evaluation: results built after
// mark are discarded by release, earlier ones stay valid.
func (e *Env) mark() envMark { return envMark{len(e.arena), len(e.vs)} }

func (e *Env) release(m envMark) {
	e.arena = e.arena[:m.arena]
	e.vs = e.vs[:m.vs]
}

// Reset discards every result built in env.
func (e *Env) Reset() {
	if cap(e.arena) > retainArena {
		e.arena = nil
	}
	e.arena = e.arena[:0]
	e.vs = e.vs[:0]
	e.over = false
}

func (c *compiled) evalKeep(root bson.Doc, env *Env) (bson.Value, error) {
	if root == nil {
		root = bson.EmptyDoc
	}
	if cap(env.vars) < c.nslots+1 {
		env.vars = make([]bson.Value, c.nslots+1)
	}
	env.vars = env.vars[:c.nslots+1]
	env.rootD = root
	env.vars[0] = bson.Value{Type: bson.TypeDocument, Data: root}
	env.work = 0
	return c.n.eval(env)
}

// Constant reports whether x is a constant expression and its value.
func Constant(x Expr) (bson.Value, bool) {
	if c, ok := x.root().n.(constNode); ok {
		return c.v, true
	}
	return bson.Value{}, false
}

// FieldPath reports whether x is a plain field path "$a.b" (of $$CURRENT)
// and returns its dotted path.
func FieldPath(x Expr) (string, bool) {
	if p, ok := x.root().n.(*pathNode); ok && p.slot == 0 && len(p.parts) > 0 {
		return strings.Join(p.parts, "."), true
	}
	return "", false
}

// Matches evaluates x and coerces the result to boolean, as $expr in a
// filter does.
func Matches(x Expr, root bson.Doc, env *Env) (bool, error) {
	v, err := Eval(x, root, env)
	if err != nil {
		return false, err
	}
	return Truthy(v), nil
}

// Truthy is MongoDB's coercion to boolean: false, null, missing, undefined
// and numeric zero are false; everything else (including empty strings and
// arrays) is true.
func Truthy(v bson.Value) bool {
	switch v.Type {
	case 0, bson.TypeNull, bson.TypeUndefined:
		return false
	case bson.TypeBoolean:
		return v.Boolean()
	case bson.TypeInt32:
		return v.Int32() != 0
	case bson.TypeInt64:
		return v.Int64() != 0
	case bson.TypeDouble:
		return v.Double() != 0
	case bson.TypeDecimal128:
		d := decOf(v)
		return d.kind == decNaN || d.kind == decInf || d.coef.Sign() != 0
	}
	return true
}

func (e *Env) rand() float64 {
	if e.rng == nil {
		e.rng = rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0x9e3779b97f4a7c15))
	}
	return e.rng.Float64()
}

// maxWork bounds the loop iterations one Eval may run ($map, $filter,
// $reduce, $range, $regexFindAll, ...), standing in for MongoDB's memory
// limits; a variable so tests can lower it.
var maxWork = 50_000_000

func errWork() error {
	return errf(mongoerr.ExceededMemoryLimit, "Exceeded memory limit for expression evaluation")
}
