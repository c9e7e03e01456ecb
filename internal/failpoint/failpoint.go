// Package failpoint holds the server's fail points: named hooks that
// configureFailPoint (a test command, on only with --setParameter
// enableTestCommands=1) turns on to make commands fail, stall or drop
// their connection, as mongod's fail points do for drivers' tests.
//
// # Cost when nothing is configured
//
// Every command asks the registry whether any point is on before doing
// anything else with fail points: Registry.Active is one atomic load of a
// counter of the points that are not off. Only when it is non-zero does a
// command look a point up and evaluate it.
//
// # Semantics (mongod 7.0's FailPoint)
//
// A point holds its configuration behind an atomic pointer (nil when off);
// configureFailPoint swaps in a new one and answers the number of times the
// point had fired before (mongod's timesEntered, never reset). An
// evaluation first asks the caller's predicate (for failCommand: is this
// command one the data names, from this appName...); a predicate that says
// no neither fires nor counts. Then the mode decides:
//
//   - alwaysOn fires every time;
//   - {times: n} fires n times and then turns itself off ({times: 0}
//     fires once, as mongod's counter reaches zero only after firing);
//   - {skip: n} lets n matching evaluations pass and fires on every one
//     after them;
//   - {activationProbability: p} fires with probability p.
//
// Each firing adds one to the point's count. A {times: n} point that
// concurrent commands evaluate fires exactly n times: the remaining count is
// decremented atomically and only a decrement from a positive value fires.
package failpoint

import (
	"math"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// Mode is how a configured point decides to fire.
type Mode uint8

// The modes of configureFailPoint's mode argument.
const (
	Off Mode = iota
	AlwaysOn
	Times
	Skip
	Random
)

func (m Mode) String() string {
	switch m {
	case AlwaysOn:
		return "alwaysOn"
	case Times:
		return "times"
	case Skip:
		return "skip"
	case Random:
		return "activationProbability"
	}
	return "off"
}

// Config is a point's configuration while it is on.
type Config struct {
	Mode Mode
	// Data is the configuration's data document (empty if none).
	Data bson.Doc
	// Parsed is what the point's parser made of Data (nil if the point
	// has none).
	Parsed any
	// left counts the firings (Times) or passes (Skip) still to come.
	left atomic.Int64
	// p is the activation probability (Random).
	p float64
}

// Point is one named fail point.
type Point struct {
	name  string
	parse func(data bson.Doc) (any, error)
	reg   *Registry
	state atomic.Pointer[Config]
	hits  atomic.Int64
	// mu serializes configurations, so that the count a configuration
	// answers is the one just before it took effect.
	mu sync.Mutex
}

// Name is the point's name.
func (p *Point) Name() string { return p.name }

// Hits is the number of times the point has fired (mongod's timesEntered).
func (p *Point) Hits() int64 { return p.hits.Load() }

// Eval evaluates the point: it returns the configuration and true if the
// point fires. pred, if not nil, is asked first; when it answers false the
// evaluation neither fires nor counts toward times or skip.
func (p *Point) Eval(pred func(*Config) bool) (*Config, bool) {
	cfg := p.state.Load()
	if cfg == nil {
		return nil, false
	}
	if pred != nil && !pred(cfg) {
		return nil, false
	}
	switch cfg.Mode {
	case AlwaysOn:
	case Times:
		n := cfg.left.Add(-1)
		if n < 0 {
			return nil, false // another evaluation took the last firing
		}
		if n == 0 {
			p.turnOff(cfg)
		}
	case Skip:
		if cfg.left.Load() > 0 && cfg.left.Add(-1) >= 0 {
			return nil, false
		}
	case Random:
		if rand.Float64() >= cfg.p {
			return nil, false
		}
	default:
		return nil, false
	}
	p.hits.Add(1)
	return cfg, true
}

// turnOff turns the point off if cfg is still its configuration.
func (p *Point) turnOff(cfg *Config) {
	if p.state.CompareAndSwap(cfg, nil) {
		p.reg.active.Add(-1)
	}
}

// set installs cfg (nil: off) and returns the count before it.
func (p *Point) set(cfg *Config) int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	hits := p.hits.Load()
	if cfg != nil {
		p.reg.active.Add(1)
	}
	if old := p.state.Swap(cfg); old != nil {
		p.reg.active.Add(-1)
	}
	return hits
}

// Registry is the server's set of fail points, fixed when it is made.
type Registry struct {
	active atomic.Int32
	points map[string]*Point
}

// Def defines a fail point: its name and the parser of its data (nil: any
// data document is accepted and kept as it is).
type Def struct {
	Name  string
	Parse func(data bson.Doc) (any, error)
}

// NewRegistry makes a registry of the defined points, all off.
func NewRegistry(defs ...Def) *Registry {
	r := &Registry{points: make(map[string]*Point, len(defs))}
	for _, d := range defs {
		r.points[d.Name] = &Point{name: d.Name, parse: d.Parse, reg: r}
	}
	return r
}

// Active reports whether any point is on: one atomic load, the whole cost
// of fail points to a command while none is configured.
func (r *Registry) Active() bool { return r.active.Load() != 0 }

// Point returns the named point, or nil.
func (r *Registry) Point(name string) *Point { return r.points[name] }

// Names lists the points, sorted.
func (r *Registry) Names() []string {
	names := make([]string, 0, len(r.points))
	for n := range r.points {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Configure runs configureFailPoint's request: its first element names the
// point, mode and data configure it. It returns the number of times the
// point had fired before.
func (r *Registry) Configure(cmd bson.Doc) (int64, error) {
	it := cmd.Iter()
	if !it.Next() {
		return 0, mongoerr.New(mongoerr.FailedToParse, "no fail point name found in request")
	}
	first := it.Element().Value
	name := ""
	if first.Type == bson.TypeString {
		name = first.StringValue()
	}
	p := r.points[name]
	if p == nil {
		return 0, mongoerr.New(mongoerr.FailPointSetFailed, "%s not found", name)
	}
	cfg, err := parseConfig(cmd, p.parse)
	if err != nil {
		return 0, err
	}
	return p.set(cfg), nil
}

// parseConfig reads mode and data as mongod's FailPoint::parseBSON does
// (same codes and messages); nil means off.
func parseConfig(cmd bson.Doc, parse func(bson.Doc) (any, error)) (*Config, error) {
	cfg := &Config{Data: bson.EmptyDoc}
	mv, ok := cmd.Lookup("mode")
	switch {
	case !ok:
		return nil, mongoerr.New(mongoerr.IllegalOperation, "When setting a failpoint, you must supply a 'mode'")
	case mv.Type == bson.TypeString:
		switch mv.StringValue() {
		case "off":
			cfg.Mode = Off
		case "alwaysOn":
			cfg.Mode = AlwaysOn
		default:
			return nil, mongoerr.New(mongoerr.BadValue, "unknown mode: %s", mv.StringValue())
		}
	case mv.Type == bson.TypeDocument:
		m := mv.Document()
		if v, ok := m.Lookup("times"); ok {
			n, err := modeCount(v, "times")
			if err != nil {
				return nil, err
			}
			cfg.Mode = Times
			cfg.left.Store(max(n, 1))
		} else if v, ok := m.Lookup("skip"); ok {
			n, err := modeCount(v, "skip")
			if err != nil {
				return nil, err
			}
			cfg.Mode = Skip
			cfg.left.Store(n)
		} else if v, ok := m.Lookup("activationProbability"); ok {
			f, ok := v.AsFloat64()
			if !ok {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "the 'activationProbability' option to 'mode' must be a double between 0 and 1")
			}
			if f < 0 || f > 1 || math.IsNaN(f) {
				return nil, mongoerr.New(mongoerr.BadValue, "activationProbability must be between 0.0 and 1.0; found %v", f)
			}
			cfg.Mode = Random
			cfg.p = f
		} else {
			return nil, mongoerr.New(mongoerr.BadValue, "'mode' must be one of 'off', 'alwaysOn', '{times:n}', '{skip:n}' or '{activationProbability:p}'")
		}
	default:
		return nil, mongoerr.New(mongoerr.TypeMismatch, "'mode' must be a string or JSON object")
	}
	if dv, ok := cmd.Lookup("data"); ok {
		if dv.Type != bson.TypeDocument && dv.Type != bson.TypeArray {
			return nil, mongoerr.New(mongoerr.TypeMismatch, "the 'data' option must be a JSON object")
		}
		cfg.Data = bson.Doc(append([]byte(nil), dv.Document()...))
	}
	if cfg.Mode == Off {
		return nil, nil
	}
	if parse != nil {
		parsed, err := parse(cfg.Data)
		if err != nil {
			return nil, err
		}
		cfg.Parsed = parsed
	}
	return cfg, nil
}

// modeCount reads times or skip: an integer from 0 to 2^31-1.
func modeCount(v bson.Value, field string) (int64, error) {
	n, ok := v.AsInt64()
	if !ok {
		return 0, mongoerr.New(mongoerr.TypeMismatch, "'%s' option to 'mode' must be a number, not %s", field, v.Type)
	}
	if n < 0 {
		return 0, mongoerr.New(mongoerr.BadValue, "'%s' option to 'mode' must be positive", field)
	}
	if n > math.MaxInt32 {
		return 0, mongoerr.New(mongoerr.BadValue, "'%s' option to 'mode' is too large", field)
	}
	return n, nil
}
