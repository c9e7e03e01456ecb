package expr

import (
	"sync"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/js"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// $function and $accumulator: user functions in JavaScript, run by the
// operation's interpreter (Options.Scripts, internal/js). As mongod, the
// functions' source must be a constant string or code, the interpreter is
// needed only when one is evaluated (31264 without one:
// --noscripting, or a context that has none), and the function is
// compiled on first use. The interpreter serializes calls, so a function
// evaluated by parallel workers runs one call at a time.

// jsFunc is a lazily compiled function of one Options' interpreter.
type jsFunc struct {
	src     string
	scripts *js.Scripts
	noJS    func() error // the error without an interpreter

	once sync.Once
	f    *js.Func
	err  error
}

func (j *jsFunc) get() (*js.Func, error) {
	j.once.Do(func() {
		if !j.scripts.Enabled() {
			j.err = j.noJS()
			return
		}
		s, err := j.scripts.Session()
		if err != nil {
			j.err = err
			return
		}
		j.f, j.err = s.Compile(j.src)
	})
	return j.f, j.err
}

// functionNode is {$function: {body, args, lang: "js"}}.
type functionNode struct {
	fn   *jsFunc
	args node
}

func parseFunction(p *parser, _ string, arg bson.Value) (node, error) {
	if arg.Type != bson.TypeDocument {
		return nil, errf(mongoerr.FunctionNotObject, "$function requires an object as an argument, found: %s", arg.Type)
	}
	d := arg.Document()
	body, ok := d.Lookup("body")
	if !ok {
		return nil, errf(mongoerr.FunctionBodyMissing, "The body function must be specified.")
	}
	bn, err := p.parse(body)
	if err != nil {
		return nil, err
	}
	c, ok := bn.(constNode)
	if !ok {
		return nil, errf(mongoerr.FunctionBodyNotConstant, "The body function must be a constant expression")
	}
	if c.v.Type != bson.TypeString && c.v.Type != bson.TypeJavaScript {
		return nil, errf(mongoerr.FunctionBodyNotCode, "The body function must evaluate to type string or code")
	}
	args, ok := d.Lookup("args")
	if !ok {
		return nil, errf(mongoerr.FunctionArgsMissing, "The args field must be specified.")
	}
	an, err := p.parse(args)
	if err != nil {
		return nil, err
	}
	lang, ok := d.Lookup("lang")
	if !ok {
		return nil, errf(mongoerr.FunctionLangMissing, "The lang field must be specified.")
	}
	if lang.Type != bson.TypeString || lang.StringValue() != "js" {
		return nil, errf(mongoerr.FunctionLangNotJS, "Currently the only supported language specifier is 'js'.")
	}
	return &functionNode{args: an, fn: &jsFunc{src: c.v.StringValue(), scripts: p.opts.Scripts, noJS: func() error {
		return errf(mongoerr.ScriptingDisabled, "Cannot run server-side javascript without the javascript engine enabled")
	}}}, nil
}

func (n *functionNode) eval(e *Env) (bson.Value, error) {
	f, err := n.fn.get()
	if err != nil {
		return missing, err
	}
	av, err := n.args.eval(e)
	if err != nil {
		return missing, err
	}
	if av.Type != bson.TypeArray {
		return missing, errf(mongoerr.FunctionArgsNotArray, "The args field must be of type array")
	}
	var args []bson.Value
	it := av.Document().Iter()
	for it.Next() {
		args = append(args, it.Element().Value)
	}
	return f.Call(nil, args...)
}

// ---- $accumulator ----

// jsAccSpec is the parsed {$accumulator: {...}} of an AccumulatorSpec.
type jsAccSpec struct {
	init, accumulate, merge, finalize *jsFunc
	initArgs, accumulateArgs          Expr

	mu     sync.Mutex
	failed error // a finalize that failed (Result cannot return it): Err
}

func (s *AccumulatorSpec) parseJS(arg bson.Value) error {
	if arg.Type != bson.TypeDocument {
		return errf(mongoerr.AccumulatorNotObject, "$accumulator expects an object as an argument; found: %s", arg.Type)
	}
	j := &jsAccSpec{}
	noJS := func() error {
		return errf(mongoerr.ScriptingDisabled, "Cannot run server-side javascript without the javascript engine enabled")
	}
	fn := func(name string, v bson.Value) (*jsFunc, error) {
		x, err := Parse(v, s.opts)
		if err != nil {
			return nil, err
		}
		c, ok := Constant(x)
		if !ok {
			return nil, errf(mongoerr.AccumulatorFieldNotConstant, "$accumulator '%s' must be a constant expression", name)
		}
		if c.Type != bson.TypeString && c.Type != bson.TypeJavaScript {
			return nil, errf(mongoerr.AccumulatorFieldNotCode, "$accumulator '%s' must be a String or Code", name)
		}
		return &jsFunc{src: c.StringValue(), scripts: s.opts.Scripts, noJS: noJS}, nil
	}
	var err error
	it := arg.Document().Iter()
	for it.Next() && err == nil {
		e := it.Element()
		switch e.Key {
		case "init":
			j.init, err = fn("init", e.Value)
		case "accumulate":
			j.accumulate, err = fn("accumulate", e.Value)
		case "merge":
			j.merge, err = fn("merge", e.Value)
		case "finalize":
			j.finalize, err = fn("finalize", e.Value)
		case "initArgs":
			j.initArgs, err = Parse(e.Value, s.opts)
		case "accumulateArgs":
			j.accumulateArgs, err = Parse(e.Value, s.opts)
		case "lang":
			if e.Value.Type != bson.TypeString {
				return errf(mongoerr.AccumulatorLangNotString, "$accumulator lang must be a string; found: %s", e.Value.Type)
			}
			if e.Value.StringValue() != "js" {
				return errf(mongoerr.AccumulatorLangNotJS, "$accumulator only supports lang: 'js'")
			}
		default:
			return errf(mongoerr.AccumulatorUnknownField, "$accumulator got an unexpected field: %s", e.Key)
		}
	}
	switch {
	case err != nil:
		return err
	case j.init == nil || j.init.src == "":
		return errf(mongoerr.AccumulatorInitMissing, "$accumulator missing required argument 'init'")
	case j.accumulate == nil || j.accumulate.src == "":
		return errf(mongoerr.AccumulatorAccumulateMissing, "$accumulator missing required argument 'accumulate'")
	case j.merge == nil || j.merge.src == "":
		return errf(mongoerr.AccumulatorMergeMissing, "$accumulator missing required argument 'merge'")
	case j.accumulateArgs == nil:
		return errf(mongoerr.AccumulatorAccumulateArgsMissing, "$accumulator missing required argument 'accumulateArgs'")
	}
	s.js = j
	return nil
}

// Err returns the error of an accumulator's Result that could not return
// it ($accumulator's finalize); the stage reading results checks it.
func (s *AccumulatorSpec) Err() error {
	if s.js == nil {
		return nil
	}
	s.js.mu.Lock()
	defer s.js.mu.Unlock()
	return s.js.failed
}

// jsAcc is one group's $accumulator: its state is the value init
// returned, then accumulate's and merge's; Result calls finalize.
type jsAcc struct {
	spec  *AccumulatorSpec
	state bson.Value
	have  bool
}

func argsArray(x Expr, root bson.Doc, env *Env, code int32, what string) ([]bson.Value, error) {
	v, err := EvalKeep(x, root, env)
	if err != nil {
		return nil, err
	}
	if v.Type != bson.TypeArray {
		return nil, errf(code, "$accumulator %s must evaluate to an array: %s", what, v.String())
	}
	var out []bson.Value
	it := v.Document().Iter()
	for it.Next() {
		out = append(out, CopyValue(it.Element().Value))
	}
	return out, nil
}

func (a *jsAcc) Add(root bson.Doc, env *Env) error {
	j := a.spec.js
	defer env.release(env.mark())
	if !a.have {
		// initArgs is evaluated against the group's first document (mongod
		// evaluates it once per group, against the group key).
		var args []bson.Value
		if j.initArgs != nil {
			var err error
			if args, err = argsArray(j.initArgs, root, env, mongoerr.AccumulatorInitArgsNotArray, "initArgs"); err != nil {
				return err
			}
		}
		f, err := j.init.get()
		if err != nil {
			return err
		}
		if a.state, err = f.Call(nil, args...); err != nil {
			return err
		}
		a.have = true
	}
	args, err := argsArray(j.accumulateArgs, root, env, mongoerr.AccumulatorAccumulateArgsNotArray, "accumulateArgs")
	if err != nil {
		return err
	}
	f, err := j.accumulate.get()
	if err != nil {
		return err
	}
	a.state, err = f.Call(nil, append([]bson.Value{a.state}, args...)...)
	return err
}

// Merge folds another group's partial state with the merge function.
func (a *jsAcc) Merge(other Accumulator) error {
	o := other.(*jsAcc)
	if !o.have {
		return nil
	}
	if !a.have {
		a.state, a.have = o.state, true
		return nil
	}
	f, err := a.spec.js.merge.get()
	if err != nil {
		return err
	}
	a.state, err = f.Call(nil, a.state, o.state)
	return err
}

func (a *jsAcc) Result() bson.Value {
	j := a.spec.js
	if !a.have {
		return vNull
	}
	if j.finalize == nil {
		return a.state
	}
	f, err := j.finalize.get()
	var v bson.Value
	if err == nil {
		v, err = f.Call(nil, a.state)
	}
	if err != nil {
		j.mu.Lock()
		if j.failed == nil {
			j.failed = err
		}
		j.mu.Unlock()
		return vNull
	}
	return v
}
