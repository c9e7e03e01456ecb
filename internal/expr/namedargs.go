package expr

import (
	"slices"

	"github.com/cairndb/cairn/bson"
)

// Operators whose argument is an object of named arguments ($regexMatch's
// {input, regex, options}, $trim's {input, chars}, $dateToString's
// {date, format, timezone, onNull}, ...) read it through one of the two
// functions here, so that every such operator refuses what it does not
// take the way mongod does: a name the operator does not take is refused
// as it is met, before its value is read, and the values before it are
// read in document order.

// namedArgs parses arg, an object of named arguments each of which is an
// expression: the answer maps each name of names that arg has to its
// parsed expression. notObject makes the error for an arg that is not an
// object (nil where the caller has seen that it is one), unknown the one
// for a name not in names.
func namedArgs(p *parser, arg bson.Value, names []string, notObject func() error, unknown func(name string) error) (map[string]node, error) {
	out := make(map[string]node, len(names))
	err := eachNamed(arg, names, notObject, unknown, func(name string, v bson.Value) error {
		x, err := p.parse(v)
		out[name] = x
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// namedValues is namedArgs for an operator that parses its arguments
// itself (in an order of its own, or in a scope it declares first): the
// answer maps each name of names that arg has to its value as given.
func namedValues(arg bson.Value, names []string, notObject func() error, unknown func(name string) error) (map[string]bson.Value, error) {
	out := make(map[string]bson.Value, len(names))
	err := eachNamed(arg, names, notObject, unknown, func(name string, v bson.Value) error {
		out[name] = v
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// eachNamed calls f with each element of arg, in document order, after
// checking its name is one of names.
func eachNamed(arg bson.Value, names []string, notObject func() error, unknown func(name string) error, f func(name string, v bson.Value) error) error {
	if arg.Type != bson.TypeDocument {
		return notObject()
	}
	it := arg.Document().Iter()
	for it.Next() {
		el := it.Element()
		if !slices.Contains(names, el.Key) {
			return unknown(el.Key)
		}
		if err := f(el.Key, el.Value); err != nil {
			return err
		}
	}
	return nil
}
