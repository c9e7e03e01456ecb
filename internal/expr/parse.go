package expr

import (
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// maxParseDepth bounds expression nesting (MongoDB's BSON depth limit makes
// deeper expressions impossible anyway).
const maxParseDepth = 200

type scopeVar struct {
	name string
	slot int
}

type parser struct {
	opts    *Options
	scope   []scopeVar
	nslots  int
	letMode bool // parsing command-level let: no field paths or $$ROOT
	depth   int
}

// opParser compiles the argument of one operator.
type opParser func(p *parser, name string, arg bson.Value) (node, error)

var operators map[string]opParser

func register(name string, f opParser) {
	if operators == nil {
		operators = map[string]opParser{}
	}
	operators[name] = f
}

// Parse compiles an expression: a field path ("$a.b"), a variable
// ("$$x.y"), a literal, an operator document ({$op: args}), an object of
// expressions or an array of expressions.
func Parse(v bson.Value, opts *Options) (Expr, error) {
	p, err := newParser(opts)
	if err != nil {
		return nil, err
	}
	n, err := p.parse(v)
	if err != nil {
		return nil, err
	}
	return &compiled{n: n, nslots: p.nslots}, nil
}

// ParseObject compiles a document whose fields are expressions, as an
// object expression ({a: "$x", b: {c: 1}} builds a new document; missing
// values are left out). Field names must not start with '$' or contain
// '.'. Stages whose specifications are field trees rather than object
// expressions ($addFields' dotted names and merging into embedded
// documents) parse the tree themselves and call Parse for each value.
func ParseObject(d bson.Doc, opts *Options) (Expr, error) {
	p, err := newParser(opts)
	if err != nil {
		return nil, err
	}
	n, err := p.parseObjectFields(d)
	if err != nil {
		return nil, err
	}
	return &compiled{n: n, nslots: p.nslots}, nil
}

func newParser(opts *Options) (*parser, error) {
	if opts == nil {
		opts = &Options{}
	}
	opts.now()
	if err := opts.prepareLet(); err != nil {
		return nil, err
	}
	return &parser{opts: opts}, nil
}

// prepareLet evaluates the command-level let variables once.
func (o *Options) prepareLet() error {
	if o.letDone {
		return nil
	}
	vals := map[string]bson.Value{}
	it := o.Let.Iter()
	for it.Next() {
		el := it.Element()
		if err := validateVarWrite(el.Key); err != nil {
			return err
		}
		p := &parser{opts: o, letMode: true}
		// earlier let variables are visible to later ones
		o.letVals = vals
		n, err := p.parse(el.Value)
		if err != nil {
			return err
		}
		env := NewEnv(o)
		v, err := env.checked((&compiled{n: n, nslots: p.nslots}).evalKeep(bson.EmptyDoc, env))
		if err != nil {
			return err
		}
		vals[strings.Clone(el.Key)] = copyValue(v)
	}
	o.letVals = vals
	o.letDone = true
	return nil
}

// LetValues returns the evaluated command-level let variables (after the
// first Parse with o).
func (o *Options) LetValues() (map[string]bson.Value, error) {
	if err := o.prepareLet(); err != nil {
		return nil, err
	}
	return o.letVals, nil
}

func (p *parser) parse(v bson.Value) (node, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxParseDepth {
		return nil, errf(mongoerr.Overflow, "expression nesting exceeds the maximum depth of %d", maxParseDepth)
	}
	switch v.Type {
	case bson.TypeString:
		s := v.StringValue()
		if strings.HasPrefix(s, "$") {
			return p.parsePath(s)
		}
		return constNode{v}, nil
	case bson.TypeDocument:
		d := v.Document()
		it := d.Iter()
		if !it.Next() {
			return constNode{emptyObj}, nil
		}
		first := it.Element()
		if strings.HasPrefix(first.Key, "$") {
			if d.Len() != 1 {
				return nil, errf(mongoerr.ExpressionObjectNotOneField, "An object representing an expression must have exactly one field: %s", d.String())
			}
			f, ok := operators[first.Key]
			if !ok {
				return nil, errf(mongoerr.InvalidPipelineOperator, "Unrecognized expression '%s'", first.Key)
			}
			return f(p, first.Key, first.Value)
		}
		return p.parseObjectFields(d)
	case bson.TypeArray:
		var elems []node
		allConst := true
		it := v.Document().Iter()
		for it.Next() {
			n, err := p.parse(it.Element().Value)
			if err != nil {
				return nil, err
			}
			if _, ok := n.(constNode); !ok {
				allConst = false
			}
			elems = append(elems, n)
		}
		if allConst {
			return constNode{v}, nil
		}
		return &arrayNode{elems: elems}, nil
	}
	return constNode{v}, nil
}

// parseObjectFields compiles {a: expr, b: {c: expr}}.
func (p *parser) parseObjectFields(d bson.Doc) (node, error) {
	o := &objectNode{}
	seen := map[string]bool{}
	it := d.Iter()
	for it.Next() {
		el := it.Element()
		if err := validateFieldName(el.Key); err != nil {
			return nil, err
		}
		if seen[el.Key] {
			return nil, errf(mongoerr.ObjectLiteralDuplicateField, "duplicate field name specified in object literal: %s", d.String())
		}
		seen[el.Key] = true
		n, err := p.parse(el.Value)
		if err != nil {
			return nil, err
		}
		o.keys = append(o.keys, strings.Clone(el.Key))
		o.vals = append(o.vals, n)
	}
	return o, nil
}

func validateFieldName(k string) error {
	switch {
	case k == "":
		return errf(mongoerr.FieldPathEmptyName, "FieldPath field names may not be empty strings.")
	case k[0] == '$':
		return errf(mongoerr.FieldPathDollarPrefix, "FieldPath field names may not start with '$'. Consider using $getField or $setField.")
	case strings.IndexByte(k, '.') >= 0:
		return errf(mongoerr.FieldPathContainsDot, "FieldPath field names may not contain '.'. Consider using $getField or $setField.")
	case strings.IndexByte(k, 0) >= 0:
		return errf(mongoerr.FieldPathEmbeddedNull, "FieldPath field names may not contain embedded nulls")
	}
	return nil
}

// parsePath compiles "$a.b" or "$$var.a.b".
func (p *parser) parsePath(s string) (node, error) {
	if strings.IndexByte(s, 0) >= 0 {
		return nil, errf(mongoerr.FieldPathNullCharacter, "field path must not contain embedded null characters")
	}
	if strings.HasPrefix(s, "$$") {
		rest := s[2:]
		name, path, _ := strings.Cut(rest, ".")
		parts, err := splitPath(path, strings.Contains(rest, "."))
		if err != nil {
			return nil, err
		}
		return p.variable(name, parts)
	}
	if s == "$" {
		return nil, errf(mongoerr.FieldPathDollarOnly, "'$' by itself is not a valid FieldPath")
	}
	if p.letMode {
		return nil, errf(mongoerr.CommandLetFieldAccess, "Command let Expression tried to access a field, but this is not allowed because command let expressions run before the query examines any documents.")
	}
	parts, err := splitPath(s[1:], true)
	if err != nil {
		return nil, err
	}
	return p.variable("CURRENT", parts) // $$CURRENT may be rebound by $let
}

func splitPath(path string, present bool) ([]string, error) {
	if !present {
		return nil, nil
	}
	parts := strings.Split(strings.Clone(path), ".")
	for _, part := range parts {
		if part == "" {
			return nil, errf(mongoerr.FieldPathEmptyName, "FieldPath field names may not be empty strings.")
		}
		if part[0] == '$' {
			return nil, errf(mongoerr.FieldPathDollarPrefix, "FieldPath field names may not start with '$'. Consider using $getField or $setField.")
		}
	}
	return parts, nil
}

// variable resolves $$name(.parts).
func (p *parser) variable(name string, parts []string) (node, error) {
	if err := validateVarRead(name); err != nil {
		return nil, err
	}
	for i := len(p.scope) - 1; i >= 0; i-- {
		if p.scope[i].name == name {
			return &pathNode{slot: p.scope[i].slot, parts: parts}, nil
		}
	}
	switch name {
	case "CURRENT":
		if p.letMode {
			return nil, errf(mongoerr.CommandLetFieldAccess, "Command let Expression tried to access a field, but this is not allowed because command let expressions run before the query examines any documents.")
		}
		return &pathNode{slot: 0, parts: parts}, nil
	case "ROOT":
		if p.letMode {
			return nil, errf(mongoerr.CommandLetFieldAccess, "Command let Expression tried to access a field, but this is not allowed because command let expressions run before the query examines any documents.")
		}
		return &pathNode{slot: -1, parts: parts}, nil
	case "REMOVE":
		return constNode{missing}, nil
	case "NOW":
		v := heapBuild(func(b *bson.Builder) { b.AppendDateTime("v", p.opts.Now.UnixMilli()) })
		return constPath(v, parts), nil
	case "CLUSTER_TIME":
		return errNode{errf(mongoerr.ClusterTimeUnavailable, "Builtin variable '$$CLUSTER_TIME' is not available")}, nil
	case "USER_ROLES", "SEARCH_META", "JS_SCOPE", "IS_MR":
		return nil, errf(mongoerr.NotImplemented, "system variable $$%s is not supported by Cairn", name)
	}
	if v, ok := p.opts.letVals[name]; ok {
		return constPath(v, parts), nil
	}
	return nil, errf(mongoerr.UndefinedVariable, "Use of undefined variable: %s", name)
}

func constPath(v bson.Value, parts []string) node {
	if len(parts) == 0 {
		return constNode{v}
	}
	return &constPathNode{v: v, parts: parts}
}

// declare adds a variable to the scope and returns its slot.
func (p *parser) declare(name string) int {
	p.nslots++
	p.scope = append(p.scope, scopeVar{name: name, slot: p.nslots})
	return p.nslots
}

func (p *parser) popScope(n int) { p.scope = p.scope[:len(p.scope)-n] }

// validateVarRead checks a referenced variable name: user variables start
// with a lower-case letter or non-ASCII; system variables are upper case.
func validateVarRead(name string) error {
	if name == "" {
		return errf(mongoerr.VariableNameEmpty, "empty variable names are not allowed")
	}
	c := name[0]
	if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80) {
		return errf(mongoerr.VariableNameBadStart, "'%s' starts with an invalid character for a variable name", name)
	}
	return validateVarChars(name, mongoerr.VariableNameBadChar)
}

// validateVarWrite checks the name of a variable a user defines; CURRENT
// is the one system variable that may be rebound.
func validateVarWrite(name string) error {
	if name == "CURRENT" {
		return nil
	}
	if name == "" {
		return errf(mongoerr.UserVariableNameEmpty, "empty variable names are not allowed")
	}
	c := name[0]
	if !(c >= 'a' && c <= 'z' || c >= 0x80) {
		return errf(mongoerr.UserVariableNameBadStart, "'%s' starts with an invalid character for a user variable name", name)
	}
	return validateVarChars(name, mongoerr.UserVariableNameBadChar)
}

func validateVarChars(name string, code int32) error {
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c >= 0x80) {
			return errf(code, "'%s' contains an invalid character for a variable name: '%c'", name, c)
		}
	}
	return nil
}

// args returns the operands of an operator: the elements of an array, or
// the single value itself.
func argList(arg bson.Value) []bson.Value {
	if arg.Type == bson.TypeArray {
		return arg.Document().Values()
	}
	return []bson.Value{arg}
}

func (p *parser) parseAll(vals []bson.Value) ([]node, error) {
	out := make([]node, len(vals))
	for i, v := range vals {
		n, err := p.parse(v)
		if err != nil {
			return nil, err
		}
		out[i] = n
	}
	return out, nil
}

// exactArgs parses an operator with exactly n operands.
func (p *parser) exactArgs(name string, arg bson.Value, n int) ([]node, error) {
	vals := argList(arg)
	if len(vals) != n {
		return nil, errf(mongoerr.ExpressionWrongArgCount, "Expression %s takes exactly %d arguments. %d were passed in.", name, n, len(vals))
	}
	return p.parseAll(vals)
}

// rangeArgs parses an operator with min..max operands.
func (p *parser) rangeArgs(name string, arg bson.Value, min, max int) ([]node, error) {
	vals := argList(arg)
	if len(vals) < min || len(vals) > max {
		return nil, errf(mongoerr.ExpressionArgCountOutOfRange, "Expression %s takes at least %d arguments, and at most %d, but %d were passed in.", name, min, max, len(vals))
	}
	return p.parseAll(vals)
}

// optNode parses an optional named argument (nil when absent).
func (p *parser) optNode(m map[string]bson.Value, key string) (node, error) {
	v, ok := m[key]
	if !ok {
		return nil, nil
	}
	return p.parse(v)
}

// IsOperator reports whether name ("$add", "$cond", ...) is an expression
// operator, implemented or not: a projection uses it to tell an expression
// from a sub-projection.
func IsOperator(name string) bool {
	_, ok := operators[name]
	return ok
}
