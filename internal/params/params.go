// Package params holds the server's parameters as getParameter and
// setParameter see them, and the Stable API's checks (api.go).
//
// A Registry lists the parameters getParameter reports: each reads its
// value from the layer that owns it (the command layer builds the
// registry over its state, so no parameter is a package variable), and
// the ones mongod changes at run time also have a setter with mongod's
// bounds and messages. setParameter answers each changed parameter's
// previous value as "was", as mongod does; a listed parameter without a
// setter is startup-only (BadValue), an unlisted one InvalidOptions.
package params

import (
	"sort"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// Param is one server parameter.
type Param struct {
	Name string
	// Get appends the parameter's value under key.
	Get func(b *bson.Builder, key string)
	// Set, for a parameter changed at run time (nil: startup only),
	// checks v, appends the previous value as "was" to r and applies v.
	Set func(r *bson.Builder, v bson.Value) error
}

// Registry is the set of parameters getParameter lists.
type Registry struct {
	byName map[string]*Param
}

// NewRegistry holds ps.
func NewRegistry(ps ...Param) *Registry {
	r := &Registry{byName: make(map[string]*Param, len(ps))}
	for i := range ps {
		r.byName[ps[i].Name] = &ps[i]
	}
	return r
}

// Lookup returns parameter name (nil: none).
func (r *Registry) Lookup(name string) *Param { return r.byName[name] }

// Get answers getParameter: arg is its first field's value ("*" or
// {allParameters: true}: every parameter, in name order), otherwise the
// parameters named by body's other fields (generic: the fields every
// command may carry, skipped).
func (r *Registry) Get(b *bson.Builder, arg bson.Value, body bson.Doc, generic func(string) bool) error {
	all := arg.Type == bson.TypeString && arg.StringValue() == "*"
	if arg.Type == bson.TypeDocument {
		if v, ok := arg.Document().Lookup("allParameters"); ok && v.Truthy() {
			all = true
		}
	}
	if all {
		names := make([]string, 0, len(r.byName))
		for n := range r.byName {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			r.byName[n].Get(b, n)
		}
		return nil
	}
	found := 0
	it := body.Iter()
	it.Next()
	for it.Next() {
		k := it.Element().Key
		if generic(k) {
			continue
		}
		if p, ok := r.byName[k]; ok {
			p.Get(b, k)
			found++
		}
	}
	if found == 0 {
		return mongoerr.New(mongoerr.InvalidOptions, "no option found to get")
	}
	return nil
}

// Set answers setParameter: every field of body but its first and the
// generic ones names a parameter to set; startupOnly names those set at
// startup only that getParameter does not list (mongod's
// enableTestCommands is one when the registry omits it).
func (r *Registry) Set(b *bson.Builder, body bson.Doc, generic func(string) bool, startupOnly ...string) error {
	set := 0
	it := body.Iter()
	it.Next()
	for it.Next() {
		e := it.Element()
		if generic(e.Key) {
			continue
		}
		p, listed := r.byName[e.Key]
		switch {
		case listed && p.Set != nil:
			if err := p.Set(b, e.Value); err != nil {
				return err
			}
			set++
			continue
		case listed:
		default:
			known := false
			for _, n := range startupOnly {
				known = known || n == e.Key
			}
			if !known {
				return mongoerr.New(mongoerr.InvalidOptions, "unrecognized parameter: %s", e.Key)
			}
		}
		// Listed by getParameter but set at startup only, as in mongod.
		return mongoerr.New(mongoerr.BadValue, "not allowed to change [%s] at runtime", e.Key)
	}
	if set == 0 {
		return mongoerr.New(mongoerr.InvalidOptions, "no option found to set, use help:true to see options ")
	}
	return nil
}

// Int is a parameter holding an integer in [Min, Max], reported as a
// 32-bit integer (Wide: 64-bit), whose value Load reads and Store
// changes (nil: startup only). Msg is the BadValue message of a value
// out of range or not a number.
type Int struct {
	Name     string
	Min, Max int64
	Wide     bool
	Msg      string
	Load     func() int64
	Store    func(n int64)
}

// Param is the parameter i describes.
func (i Int) Param() Param {
	p := Param{Name: i.Name, Get: func(b *bson.Builder, key string) { i.appendValue(b, key, i.Load()) }}
	if i.Store != nil {
		p.Set = func(b *bson.Builder, v bson.Value) error {
			n, ok := v.AsInt64()
			if !ok || n < i.Min || n > i.Max {
				return mongoerr.New(mongoerr.BadValue, "%s", i.Msg)
			}
			i.appendValue(b, "was", i.Load())
			i.Store(n)
			return nil
		}
	}
	return p
}

func (i Int) appendValue(b *bson.Builder, key string, n int64) {
	if i.Wide {
		b.AppendInt64(key, n)
	} else {
		b.AppendInt32(key, int32(n))
	}
}

// Fixed is a startup-only parameter whose value get appends.
func Fixed(name string, get func(b *bson.Builder, key string)) Param {
	return Param{Name: name, Get: get}
}
