package conformance

import (
	"fmt"
	"sort"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// args reads a document of named arguments and remembers which ones were
// used, so that an argument the runner does not understand is reported
// instead of silently ignored.
type args struct {
	vals map[string]bson.RawValue
	used map[string]bool
	err  error
}

func newArgs(d bson.Raw) *args {
	a := &args{vals: map[string]bson.RawValue{}, used: map[string]bool{}}
	elems, err := d.Elements()
	if err != nil {
		a.err = err
		return a
	}
	for _, e := range elems {
		a.vals[e.Key()] = e.Value()
	}
	return a
}

func (a *args) has(k string) bool {
	_, ok := a.vals[k]
	return ok
}

// raw returns the argument (missing if absent) and marks it used.
func (a *args) raw(k string) bson.RawValue {
	v, ok := a.vals[k]
	if !ok {
		return missing
	}
	a.used[k] = true
	return v
}

func (a *args) fail(k, want string, v bson.RawValue) {
	if a.err == nil {
		a.err = fmt.Errorf("argument %s: want %s, got %s", k, want, v.Type)
	}
}

// typedArg reads argument k with get, recording a type error (want names
// the type) when get refuses the value; an absent argument is T's zero.
func typedArg[T any](a *args, k, want string, get func(bson.RawValue) (T, bool)) T {
	v := a.raw(k)
	if isMissing(v) {
		var zero T
		return zero
	}
	x, ok := get(v)
	if !ok {
		a.fail(k, want, v)
	}
	return x
}

func (a *args) str(k string) string { return typedArg(a, k, "string", bson.RawValue.StringValueOK) }

func (a *args) bool(k string) bool { return typedArg(a, k, "boolean", bson.RawValue.BooleanOK) }

func (a *args) int(k string) int64 {
	v := a.raw(k)
	if isMissing(v) {
		return 0
	}
	if !isNumber(v) {
		a.fail(k, "number", v)
		return 0
	}
	if v.Type == bson.TypeDouble {
		return int64(v.Double())
	}
	return v.AsInt64()
}

// doc returns a document argument; ok is false when it is absent or null.
func (a *args) doc(k string) (bson.Raw, bool) {
	v := a.raw(k)
	if isMissing(v) || v.Type == bson.TypeNull {
		return nil, false
	}
	d, ok := v.DocumentOK()
	if !ok {
		a.fail(k, "document", v)
		return nil, false
	}
	return d, true
}

// array returns the elements of an array argument; ok is false when it
// is absent or not an array.
func (a *args) array(k string) (vals []bson.RawValue, ok bool) {
	v := a.raw(k)
	if isMissing(v) {
		return nil, false
	}
	arr, ok := v.ArrayOK()
	if !ok {
		a.fail(k, "array", v)
		return nil, false
	}
	vals, _ = arr.Values()
	return vals, true
}

// docs returns an array-of-documents argument.
func (a *args) docs(k string) []bson.Raw {
	vals, ok := a.array(k)
	if !ok {
		return nil
	}
	out := make([]bson.Raw, 0, len(vals))
	for _, e := range vals {
		d, ok := e.DocumentOK()
		if !ok {
			a.fail(k, "array of documents", e)
			return nil
		}
		out = append(out, d)
	}
	return out
}

func (a *args) strings(k string) []string {
	vals, ok := a.array(k)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(vals))
	for _, e := range vals {
		out = append(out, e.StringValue())
	}
	return out
}

// done reports a type error or any argument that was never read.
func (a *args) done() error {
	if a.err != nil {
		return a.err
	}
	var extra []string
	for k := range a.vals {
		if !a.used[k] {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		return fmt.Errorf("unsupported argument %s", strings.Join(extra, ", "))
	}
	return nil
}

// rawData passes the rawData argument through the driver's internal options
// API (the driver itself omits it for servers older than 8.2).
func rawData[T any](a *args, opts T, set func(T, string, any) error) {
	if !a.has("rawData") {
		return
	}
	if err := set(opts, "rawData", a.bool("rawData")); err != nil && a.err == nil {
		a.err = err
	}
}
