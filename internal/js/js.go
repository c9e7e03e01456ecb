// Package js runs server-side JavaScript as mongod does — $where,
// $function, $accumulator and mapReduce — on goja, a JavaScript engine
// written in Go.
//
// # Sandbox
//
// A script sees ECMAScript's built-ins and mongod's helpers (helpers.go:
// ObjectId, ISODate, NumberLong, NumberInt, NumberDecimal, BinData, HexData,
// UUID, Timestamp, MinKey, MaxKey, DBRef, tojson, Array.sum, Array.avg,
// Object.bsonsize, emit for mapReduce) and nothing else. goja itself has no
// require, no file, network, process or timer access unless the host gives
// them; this package gives none (TestSandbox checks that require, process,
// load, setTimeout... are undefined).
//
// # One runtime per operation
//
// A Session is one operation's interpreter: a fresh goja.Runtime created on
// first use and dropped when the operation ends. goja cannot reset a
// runtime's global object, so a pooled runtime would leak a script's
// globals into the next operation (mongod pools scopes per user and resets
// them; a leak between users is what it guards against). Only what is
// immutable is shared: the helpers are compiled once (a *goja.Program) and
// each runtime runs that program, and compiled user functions are cached per
// session by source text, so a $where evaluated over 100,000 documents
// compiles once. A Session is used by one goroutine at a time (a mutex
// enforces it, because a filter may be shared by a plan race's branches).
//
// # Interruption
//
// Every call checks its operation's context first, and while a call runs
// the session's watchdog timer (armed for the call, every 25 ms, no
// goroutine of its own) checks it again: when maxTimeMS has expired, or
// killOp, a disconnect or shutdown has cancelled it, the running script is
// stopped with goja's Interrupt at its next instruction and the call
// answers the context's error as mongod's code (MaxTimeMSExpired 50,
// Interrupted 11601, ClientDisconnect 279, ...). A script blocked in
// sleep() wakes when the context ends. A Session holds nothing that
// outlives it (Close only stops the timer early).
//
// # Memory
//
// goja has no heap limit, so memory is bounded where it can be observed:
//   - every value a script hands back (a $where's boolean aside: a
//     $function's result, an accumulator's state, an emitted key or value,
//     a reduce's or finalize's result) is converted to BSON and refused past
//     16 MiB (BSONObjectTooLarge, 10334) or 150 levels (17279, mongod's
//     "Do you have a cycle?");
//   - the session's heap watchdog (a timer armed while a call runs)
//     samples the process's live heap every 25 ms and interrupts the script with
//     ExceededMemoryLimit (146) once the heap has grown by more than
//     MaxHeapGrowth (512 MiB) since the call started: this bounds
//     `s += s` and `a.push(...)` loops, but it measures the process, so
//     another operation allocating heavily at the same time counts too;
//   - the JavaScript call stack is limited to MaxCallStackSize frames
//     (infinite recursion answers JSInterpreterFailure, 139);
//   - the callers bound what they keep: mapReduce's emitted data is counted
//     against its own limit (internal/command).
//
// Not bounded: memory a script allocates and drops again within 25 ms, and
// CPU time other than by maxTimeMS and killOp (as in mongod, a script
// without maxTimeMS runs until it ends or is killed).
package js

import (
	"context"
	"errors"
	"fmt"
	"runtime/metrics"
	"strings"
	"sync"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/dop251/goja"
)

// MaxCallStackSize is the deepest JavaScript call stack a script may build.
const MaxCallStackSize = 2000

// MaxHeapGrowth is how far the process's live heap may grow during one
// script call before the call is interrupted with ExceededMemoryLimit.
var MaxHeapGrowth uint64 = 512 << 20 // a variable so tests can lower it

// watchdogPeriod is how often the heap watchdog samples the heap.
const watchdogPeriod = 25 * time.Millisecond

// ErrDisabled is returned where mongod has no script engine (--noscripting).
// Each feature answers its own code, as mongod; see the Disabled* helpers.
var ErrDisabled = errors.New("server-side JavaScript is disabled")

// Engine is the server's script engine: whether scripting is enabled.
// The zero Engine is enabled.
type Engine struct {
	disabled bool
}

// On and Off are the two engines (they hold no state).
var (
	On  = &Engine{}
	Off = &Engine{disabled: true}
)

// NewEngine returns an engine; enabled false is --noscripting.
func NewEngine(enabled bool) *Engine { return &Engine{disabled: !enabled} }

// Enabled reports whether scripts may run. A nil engine is disabled.
func (e *Engine) Enabled() bool { return e != nil && !e.disabled }

// Session is one operation's interpreter. Its methods may be called from
// one goroutine at a time each (they lock).
type Session struct {
	ctx context.Context
	mu  sync.Mutex
	rt  *goja.Runtime
	h   *helpers
	fns map[string]goja.Callable

	running     bool // guarded by wdMu, as heapStart and memExceeded
	heapStart   uint64
	memExceeded bool
	wd          *time.Timer // the heap watchdog, armed while a call runs
}

// NewSession returns an interpreter bound to ctx (nil: never interrupted).
// The runtime is created on first use.
func (e *Engine) NewSession(ctx context.Context) (*Session, error) {
	if !e.Enabled() {
		return nil, ErrDisabled
	}
	if ctx == nil {
		ctx = context.Background()
	}
	return &Session{ctx: ctx, fns: map[string]goja.Callable{}}, nil
}

// Close stops the watchdog and drops the runtime.
func (s *Session) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wd != nil {
		s.wd.Stop()
	}
	s.rt = nil
}

// runtime returns the session's runtime, creating it on first use.
func (s *Session) runtime() (*goja.Runtime, error) {
	if s.rt != nil {
		return s.rt, nil
	}
	rt := goja.New()
	rt.SetMaxCallStackSize(MaxCallStackSize)
	h, err := installHelpers(rt, s.ctx)
	if err != nil {
		return nil, fmt.Errorf("js: installing helpers: %w", err)
	}
	s.rt, s.h = rt, h
	return rt, nil
}

// heapBytes reads the live heap's size.
func heapBytes() uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return sample[0].Value.Uint64()
}

var errMemory = mongoerr.New(mongoerr.ExceededMemoryLimit, "JavaScript execution exceeded its memory limit: the heap grew by more than the per-operation bound while a script ran")

// wdCheck runs on the watchdog's timer while a call runs: it interrupts
// the script once the call has grown the heap past MaxHeapGrowth, and
// re-arms itself while the call goes on.
func (s *Session) wdCheck(rt *goja.Runtime) {
	wdMu.Lock()
	defer wdMu.Unlock()
	if !s.running {
		return
	}
	if s.ctx.Err() != nil {
		rt.Interrupt(s.ctx)
		return
	}
	if h := heapBytes(); h > s.heapStart && h-s.heapStart > MaxHeapGrowth {
		s.memExceeded = true
		rt.Interrupt(errMemory)
		return
	}
	s.wd.Reset(watchdogPeriod)
}

// wdMu guards the watchdog's view of the sessions (running, heapStart,
// memExceeded): held only for a few loads and stores.
var wdMu sync.Mutex

// call runs f with the runtime, translating goja's errors to mongod's.
func (s *Session) call(f func(rt *goja.Runtime) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.ctx.Err(); err != nil {
		return mongoerr.FromContext(context.Cause(s.ctx))
	}
	rt, err := s.runtime()
	if err != nil {
		return err
	}
	wdMu.Lock()
	s.running, s.heapStart = true, heapBytes()
	if s.wd == nil {
		s.wd = time.AfterFunc(watchdogPeriod, func() { s.wdCheck(rt) })
	} else {
		s.wd.Reset(watchdogPeriod)
	}
	wdMu.Unlock()
	err = f(rt)
	wdMu.Lock()
	s.running = false
	s.wd.Stop()
	mem := s.memExceeded
	s.memExceeded = false
	wdMu.Unlock()
	if err == nil {
		return nil
	}
	return s.translate(rt, err, mem)
}

// translate maps an error out of goja to a MongoDB error.
func (s *Session) translate(rt *goja.Runtime, err error, mem bool) error {
	var ie *goja.InterruptedError
	if errors.As(err, &ie) {
		if mem {
			rt.ClearInterrupt()
			return errMemory
		}
		if s.ctx.Err() != nil {
			return mongoerr.FromContext(context.Cause(s.ctx))
		}
		return mongoerr.New(mongoerr.Interrupted, "JavaScript execution interrupted")
	}
	var me *mongoerr.Error
	if errors.As(err, &me) {
		return me
	}
	var ex *goja.Exception
	if errors.As(err, &ex) {
		// A Go error thrown through a helper (a conversion limit) keeps
		// its code.
		if o, ok := ex.Value().(*goja.Object); ok {
			if gv := o.Get("value"); gv != nil {
				if exp, ok := gv.Export().(error); ok && errors.As(exp, &me) {
					return me
				}
			}
		}
		return mongoerr.New(mongoerr.JSInterpreterFailure, "%s", exceptionText(ex))
	}
	var so *goja.StackOverflowError
	if errors.As(err, &so) {
		return mongoerr.New(mongoerr.JSInterpreterFailure, "InternalError: too much recursion")
	}
	return mongoerr.New(mongoerr.JSInterpreterFailure, "%s", err.Error())
}

// exceptionText is "Name: message" and the script position, as mozjs
// reports an uncaught exception ("ReferenceError: x is not defined :\n@...").
func exceptionText(ex *goja.Exception) string {
	msg := ex.Value().String()
	if st := ex.Stack(); len(st) > 0 {
		var b strings.Builder
		for _, f := range st {
			b.WriteString("\n")
			b.WriteString(f.Position().String())
		}
		return msg + " :" + b.String()
	}
	return msg
}

// Func is a compiled user function of one session.
type Func struct {
	s  *Session
	fn goja.Callable
}

// Compile compiles source as mongod's createFunction does: a function
// expression ("function (a) {...}", an arrow function) is that function;
// anything else is the body of a function that returns its last
// expression statement's value ("this.a > 1") or runs as written
// ("return this.a > 1"). Compiling the same source twice in a session
// returns the cached function.
func (s *Session) Compile(source string) (*Func, error) {
	var fn goja.Callable
	err := s.call(func(rt *goja.Runtime) error {
		if f, ok := s.fns[source]; ok {
			fn = f
			return nil
		}
		v, err := rt.RunScript("", functionSource(source))
		if err != nil {
			return err
		}
		f, ok := goja.AssertFunction(v)
		if !ok {
			return mongoerr.New(mongoerr.JSInterpreterFailure, "SyntaxError: not a function: %s", source)
		}
		s.fns[source] = f
		fn = f
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &Func{s: s, fn: fn}, nil
}

// SetGlobals defines scope's fields as global variables (mapReduce's
// scope, CodeWScope's scope).
func (s *Session) SetGlobals(scope bson.Doc) error {
	return s.call(func(rt *goja.Runtime) error {
		it := scope.Iter()
		for it.Next() {
			e := it.Element()
			v, err := s.h.toJS(e.Value)
			if err != nil {
				return err
			}
			if err := rt.Set(e.Key, v); err != nil {
				return err
			}
		}
		return nil
	})
}

// Call calls f with this bound to thisDoc (nil: undefined) and args
// converted to JavaScript, and returns its result as BSON.
func (f *Func) Call(thisDoc bson.Doc, args ...bson.Value) (bson.Value, error) {
	var out bson.Value
	err := f.s.call(func(rt *goja.Runtime) error {
		r, err := f.call(rt, thisDoc, false, args)
		if err != nil {
			return err
		}
		out, err = f.s.h.toBSONValue(r)
		return err
	})
	return out, err
}

// Where calls a $where function: this and the global obj are the
// document; the result is its truth value in JavaScript's sense.
func (f *Func) Where(doc bson.Doc) (bool, error) {
	var ok bool
	err := f.s.call(func(rt *goja.Runtime) error {
		r, err := f.call(rt, doc, true, nil)
		if err != nil {
			return err
		}
		ok = r.ToBoolean()
		return nil
	})
	return ok, err
}

func (f *Func) call(rt *goja.Runtime, thisDoc bson.Doc, setObj bool, args []bson.Value) (goja.Value, error) {
	this := goja.Undefined()
	if thisDoc != nil {
		o, err := f.s.h.docToJS(thisDoc, false)
		if err != nil {
			return nil, err
		}
		this = o
		if setObj {
			if err := rt.Set("obj", o); err != nil {
				return nil, err
			}
		}
	}
	jargs := make([]goja.Value, len(args))
	for i, a := range args {
		v, err := f.s.h.toJS(a)
		if err != nil {
			return nil, err
		}
		jargs[i] = v
	}
	return f.fn(this, jargs...)
}
