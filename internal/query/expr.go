package query

import (
	"math"
	"strings"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// A small aggregation-expression evaluator: enough for $expr filters,
// computed projection fields and pipeline-style updates until the
// aggregation framework owns expressions. It covers field paths,
// variables ($$ROOT, $$CURRENT, $$REMOVE, $$NOW and let variables),
// literals, object and array construction, comparisons ($eq $ne $gt $gte
// $lt $lte $cmp), logic ($and $or $not $cond $ifNull), $in, $literal,
// $getField, $setField, $add, $subtract, $multiply, $concat, $size,
// $isArray and $type. Other operators fail with NotImplemented.

type expr interface {
	eval(c *evalCtx) (bson.Value, error)
}

type evalCtx struct {
	root bson.Doc
	vars map[string]bson.Value
	coll bson.StringComparer
	now  time.Time
}

// exprParser compiles expressions, checking variable references.
type exprParser struct {
	vars map[string]bool
	coll bson.StringComparer
}

var missing = bson.Value{}

func exprErr(format string, args ...any) error {
	return mongoerr.New(168, format, args...)
}

// compileLet evaluates a command's let variables (constant expressions).
func compileLet(opts *Options) (map[string]bson.Value, error) {
	vars := map[string]bson.Value{}
	if opts == nil || len(opts.Let) == 0 {
		return vars, nil
	}
	p := &exprParser{vars: map[string]bool{}, coll: opts.comparer()}
	it := opts.Let.Iter()
	for it.Next() {
		e := it.Element()
		if err := validateVarName(e.Key); err != nil {
			return nil, err
		}
		x, err := p.parse(e.Value)
		if err != nil {
			return nil, err
		}
		v, err := x.eval(&evalCtx{root: bson.EmptyDoc, vars: vars, coll: p.coll, now: time.Now()})
		if err != nil {
			return nil, err
		}
		vars[e.Key] = v
	}
	return vars, nil
}

func validateVarName(name string) error {
	if name == "" {
		return mongoerr.New(16866, "empty variable names are not allowed")
	}
	c := name[0]
	if !(c >= 'a' && c <= 'z' || c >= 0x80) {
		return mongoerr.New(16867, "'%s' starts with an invalid character for a user variable name", name)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c >= 0x80) {
			return mongoerr.New(16868, "'%s' contains an invalid character for a variable name: '%c'", name, c)
		}
	}
	return nil
}

func newExprParser(opts *Options) (*exprParser, map[string]bson.Value, error) {
	vars, err := compileLet(opts)
	if err != nil {
		return nil, nil, err
	}
	p := &exprParser{vars: map[string]bool{}, coll: opts.comparer()}
	for k := range vars {
		p.vars[k] = true
	}
	return p, vars, nil
}

type litExpr struct{ v bson.Value }

func (e litExpr) eval(*evalCtx) (bson.Value, error) { return e.v, nil }

type pathExpr struct {
	variable string // "" for $$CURRENT
	parts    []string
}

func (e *pathExpr) eval(c *evalCtx) (bson.Value, error) {
	var base bson.Value
	switch e.variable {
	case "", "ROOT", "CURRENT":
		base = bson.Value{Type: bson.TypeDocument, Data: c.root}
	case "REMOVE":
		return missing, nil
	case "NOW":
		base = mkValue(func(b *bson.Builder) { b.AppendDateTime("v", c.now.UnixMilli()) })
	default:
		base = c.vars[e.variable]
	}
	return traverseFieldPath(base, e.parts), nil
}

// traverseFieldPath follows an aggregation field path: through documents,
// mapping over arrays (dropping elements where the path is missing).
func traverseFieldPath(v bson.Value, parts []string) bson.Value {
	for i, p := range parts {
		switch v.Type {
		case bson.TypeDocument:
			x, ok := bson.Doc(v.Data).Lookup(p)
			if !ok {
				return missing
			}
			v = x
		case bson.TypeArray:
			rest := parts[i:]
			return mkValue(func(b *bson.Builder) {
				b.StartArray("v")
				n := 0
				it := bson.Doc(v.Data).Iter()
				for it.Next() {
					x := it.Element().Value
					if x.Type != bson.TypeDocument && x.Type != bson.TypeArray {
						continue
					}
					r := traverseFieldPath(x, rest)
					if r.Type == 0 {
						continue
					}
					b.AppendValue(bson.Index(n), r)
					n++
				}
				b.End()
			})
		default:
			return missing
		}
	}
	return v
}

// mkValue builds a standalone value with a builder under key "v".
func mkValue(f func(b *bson.Builder)) bson.Value {
	var b bson.Builder
	f(&b)
	v, _ := b.Finish().Lookup("v")
	return v
}

type objExpr struct {
	keys  []string
	exprs []expr
}

func (e *objExpr) eval(c *evalCtx) (bson.Value, error) {
	vals := make([]bson.Value, len(e.exprs))
	for i, x := range e.exprs {
		v, err := x.eval(c)
		if err != nil {
			return missing, err
		}
		vals[i] = v
	}
	return mkValue(func(b *bson.Builder) {
		b.StartDocument("v")
		for i, v := range vals {
			if v.Type != 0 {
				b.AppendValue(e.keys[i], v)
			}
		}
		b.End()
	}), nil
}

type arrExpr []expr

func (e arrExpr) eval(c *evalCtx) (bson.Value, error) {
	vals, err := evalAll(c, e)
	if err != nil {
		return missing, err
	}
	return arrayValue(vals), nil
}

func arrayValue(vals []bson.Value) bson.Value {
	return mkValue(func(b *bson.Builder) {
		b.StartArray("v")
		for i, v := range vals {
			if v.Type == 0 {
				b.AppendNull(bson.Index(i))
			} else {
				b.AppendValue(bson.Index(i), v)
			}
		}
		b.End()
	})
}

func evalAll(c *evalCtx, xs []expr) ([]bson.Value, error) {
	out := make([]bson.Value, len(xs))
	for i, x := range xs {
		v, err := x.eval(c)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// parse compiles an expression.
func (p *exprParser) parse(v bson.Value) (expr, error) {
	switch v.Type {
	case bson.TypeString:
		s := v.StringValue()
		if !strings.HasPrefix(s, "$") {
			return litExpr{v}, nil
		}
		return p.parsePath(s)
	case bson.TypeArray:
		var out arrExpr
		it := bson.Doc(v.Data).Iter()
		for it.Next() {
			x, err := p.parse(it.Element().Value)
			if err != nil {
				return nil, err
			}
			out = append(out, x)
		}
		return out, nil
	case bson.TypeDocument:
		d := bson.Doc(v.Data)
		k := firstKey(d)
		if strings.HasPrefix(k, "$") {
			if n := d.Len(); n != 1 {
				return nil, mongoerr.New(15983, "an expression specification must contain exactly one field, the name of the expression. Found %d fields in %s, while parsing object %s", n, d.String(), d.String())
			}
			arg, _ := d.Lookup(k)
			return p.parseOperator(k, arg)
		}
		o := &objExpr{}
		it := d.Iter()
		for it.Next() {
			e := it.Element()
			if strings.HasPrefix(e.Key, "$") {
				return nil, mongoerr.New(16410, "FieldPath field names may not start with '$'. Consider using $getField or $setField.")
			}
			if strings.Contains(e.Key, ".") {
				return nil, mongoerr.New(16412, "FieldPath field names may not contain '.'. Consider using $getField or $setField.")
			}
			x, err := p.parse(e.Value)
			if err != nil {
				return nil, err
			}
			o.keys = append(o.keys, e.Key)
			o.exprs = append(o.exprs, x)
		}
		return o, nil
	}
	return litExpr{v}, nil
}

func (p *exprParser) parsePath(s string) (expr, error) {
	if s == "$" {
		return nil, mongoerr.New(16872, "'$' by itself is not a valid FieldPath")
	}
	if strings.HasPrefix(s, "$$") {
		parts := splitPath(s[2:])
		name := parts[0]
		switch name {
		case "ROOT", "CURRENT", "REMOVE", "NOW":
		default:
			if !p.vars[name] {
				if err := validateVarName(name); err != nil {
					return nil, err
				}
				return nil, mongoerr.New(17276, "Use of undefined variable: %s", name)
			}
		}
		return &pathExpr{variable: name, parts: parts[1:]}, nil
	}
	parts := splitPath(s[1:])
	for _, c := range parts {
		if c == "" {
			return nil, mongoerr.New(15998, "FieldPath field names may not be empty strings.")
		}
		if strings.HasPrefix(c, "$") {
			return nil, mongoerr.New(16410, "FieldPath field names may not start with '$'. Consider using $getField or $setField.")
		}
	}
	return &pathExpr{parts: parts}, nil
}

// args parses an operator's argument list: an array, or one value.
func (p *exprParser) args(arg bson.Value) ([]expr, error) {
	if arg.Type != bson.TypeArray {
		x, err := p.parse(arg)
		if err != nil {
			return nil, err
		}
		return []expr{x}, nil
	}
	var out []expr
	it := bson.Doc(arg.Data).Iter()
	for it.Next() {
		x, err := p.parse(it.Element().Value)
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, nil
}

func arity(op string, xs []expr, n int) error {
	if len(xs) != n {
		return mongoerr.New(16020, "Expression %s takes exactly %d arguments. %d were passed in.", op, n, len(xs))
	}
	return nil
}

type opExpr struct {
	op   string
	args []expr
	fn   func(c *evalCtx, vals []bson.Value) (bson.Value, error)
	lazy func(c *evalCtx, args []expr) (bson.Value, error)
}

func (e *opExpr) eval(c *evalCtx) (bson.Value, error) {
	if e.lazy != nil {
		return e.lazy(c, e.args)
	}
	vals, err := evalAll(c, e.args)
	if err != nil {
		return missing, err
	}
	return e.fn(c, vals)
}

func boolValue(b bool) bson.Value {
	if b {
		return bson.Value{Type: bson.TypeBoolean, Data: []byte{1}}
	}
	return bson.Value{Type: bson.TypeBoolean, Data: []byte{0}}
}

func int32Value(n int32) bson.Value {
	return mkValue(func(b *bson.Builder) { b.AppendInt32("v", n) })
}

// cmpValues compares as aggregation does: missing equals undefined.
func cmpValues(a, b bson.Value, coll bson.StringComparer) int {
	if a.Type == 0 {
		a = bson.Value{Type: bson.TypeUndefined}
	}
	if b.Type == 0 {
		b = bson.Value{Type: bson.TypeUndefined}
	}
	return bson.CompareCollated(a, b, coll)
}

func nullish(v bson.Value) bool {
	return v.Type == 0 || v.Type == bson.TypeNull || v.Type == bson.TypeUndefined
}

func (p *exprParser) parseOperator(op string, arg bson.Value) (expr, error) {
	switch op {
	case "$literal":
		return litExpr{arg}, nil
	case "$getField":
		return p.parseGetField(arg)
	case "$setField":
		return p.parseSetField(arg)
	}
	xs, err := p.args(arg)
	if err != nil {
		return nil, err
	}
	e := &opExpr{op: op, args: xs}
	switch op {
	case "$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$cmp":
		if err := arity(op, xs, 2); err != nil {
			return nil, err
		}
		e.fn = func(c *evalCtx, v []bson.Value) (bson.Value, error) {
			r := cmpValues(v[0], v[1], c.coll)
			switch op {
			case "$eq":
				return boolValue(r == 0), nil
			case "$ne":
				return boolValue(r != 0), nil
			case "$gt":
				return boolValue(r > 0), nil
			case "$gte":
				return boolValue(r >= 0), nil
			case "$lt":
				return boolValue(r < 0), nil
			case "$lte":
				return boolValue(r <= 0), nil
			}
			return int32Value(int32(max(-1, min(1, r)))), nil
		}
	case "$and", "$or":
		e.lazy = func(c *evalCtx, args []expr) (bson.Value, error) {
			for _, a := range args {
				v, err := a.eval(c)
				if err != nil {
					return missing, err
				}
				if v.Truthy() == (op == "$or") {
					return boolValue(op == "$or"), nil
				}
			}
			return boolValue(op == "$and"), nil
		}
	case "$not":
		if err := arity(op, xs, 1); err != nil {
			return nil, err
		}
		e.fn = func(_ *evalCtx, v []bson.Value) (bson.Value, error) { return boolValue(!v[0].Truthy()), nil }
	case "$cond":
		if arg.Type == bson.TypeDocument {
			return p.parseCondDoc(arg)
		}
		if err := arity(op, xs, 3); err != nil {
			return nil, err
		}
		e.lazy = condEval
	case "$ifNull":
		if len(xs) < 2 {
			return nil, mongoerr.New(1257300, "$ifNull needs at least two arguments, had: %d", len(xs))
		}
		e.lazy = func(c *evalCtx, args []expr) (bson.Value, error) {
			for i, a := range args {
				v, err := a.eval(c)
				if err != nil {
					return missing, err
				}
				if !nullish(v) || i == len(args)-1 {
					return v, nil
				}
			}
			return missing, nil
		}
	case "$in":
		if err := arity(op, xs, 2); err != nil {
			return nil, err
		}
		e.fn = func(c *evalCtx, v []bson.Value) (bson.Value, error) {
			if v[1].Type != bson.TypeArray {
				return missing, mongoerr.New(40081, "$in requires an array as a second argument, found: %s", typeNameOrMissing(v[1]))
			}
			it := bson.Doc(v[1].Data).Iter()
			for it.Next() {
				if cmpValues(v[0], it.Element().Value, c.coll) == 0 {
					return boolValue(true), nil
				}
			}
			return boolValue(false), nil
		}
	case "$add", "$multiply":
		e.fn = func(_ *evalCtx, v []bson.Value) (bson.Value, error) { return arith(op, v) }
	case "$subtract":
		if err := arity(op, xs, 2); err != nil {
			return nil, err
		}
		e.fn = func(_ *evalCtx, v []bson.Value) (bson.Value, error) { return subtract(v[0], v[1]) }
	case "$concat":
		e.fn = func(_ *evalCtx, v []bson.Value) (bson.Value, error) {
			var sb strings.Builder
			for _, x := range v {
				if nullish(x) {
					return bson.Value{Type: bson.TypeNull}, nil
				}
				if x.Type != bson.TypeString {
					return missing, mongoerr.New(16702, "$concat only supports strings, not %s", typeNameOrMissing(x))
				}
				sb.WriteString(x.StringValue())
			}
			return mkValue(func(b *bson.Builder) { b.AppendString("v", sb.String()) }), nil
		}
	case "$size":
		if err := arity(op, xs, 1); err != nil {
			return nil, err
		}
		e.fn = func(_ *evalCtx, v []bson.Value) (bson.Value, error) {
			if v[0].Type != bson.TypeArray {
				return missing, mongoerr.New(17124, "The argument to $size must be an array. Type of argument: %s", typeNameOrMissing(v[0]))
			}
			return int32Value(int32(bson.Doc(v[0].Data).Len())), nil
		}
	case "$isArray":
		if err := arity(op, xs, 1); err != nil {
			return nil, err
		}
		e.fn = func(_ *evalCtx, v []bson.Value) (bson.Value, error) {
			return boolValue(v[0].Type == bson.TypeArray), nil
		}
	case "$type":
		if err := arity(op, xs, 1); err != nil {
			return nil, err
		}
		e.fn = func(_ *evalCtx, v []bson.Value) (bson.Value, error) {
			s := typeNameOrMissing(v[0])
			return mkValue(func(b *bson.Builder) { b.AppendString("v", s) }), nil
		}
	default:
		if knownAggOperators[op] {
			return nil, mongoerr.New(mongoerr.NotImplemented, "Aggregation expression %s is not supported by Cairn yet", op)
		}
		return nil, exprErr("Unrecognized expression '%s'", op)
	}
	return e, nil
}

func typeNameOrMissing(v bson.Value) string {
	if v.Type == 0 {
		return "missing"
	}
	return v.Type.String()
}

func condEval(c *evalCtx, args []expr) (bson.Value, error) {
	v, err := args[0].eval(c)
	if err != nil {
		return missing, err
	}
	if v.Truthy() {
		return args[1].eval(c)
	}
	return args[2].eval(c)
}

func (p *exprParser) parseCondDoc(arg bson.Value) (expr, error) {
	var ifE, thenE, elseE expr
	it := bson.Doc(arg.Data).Iter()
	for it.Next() {
		e := it.Element()
		x, err := p.parse(e.Value)
		if err != nil {
			return nil, err
		}
		switch e.Key {
		case "if":
			ifE = x
		case "then":
			thenE = x
		case "else":
			elseE = x
		default:
			return nil, mongoerr.New(17083, "Unrecognized parameter to $cond: %s", e.Key)
		}
	}
	switch {
	case ifE == nil:
		return nil, mongoerr.New(17080, "Missing 'if' parameter to $cond")
	case thenE == nil:
		return nil, mongoerr.New(17081, "Missing 'then' parameter to $cond")
	case elseE == nil:
		return nil, mongoerr.New(17082, "Missing 'else' parameter to $cond")
	}
	return &opExpr{op: "$cond", args: []expr{ifE, thenE, elseE}, lazy: condEval}, nil
}

func (p *exprParser) parseGetField(arg bson.Value) (expr, error) {
	var field, input expr = nil, &pathExpr{}
	if arg.Type != bson.TypeDocument {
		f, err := p.parse(arg)
		if err != nil {
			return nil, err
		}
		field = f
	} else {
		it := bson.Doc(arg.Data).Iter()
		for it.Next() {
			e := it.Element()
			x, err := p.parse(e.Value)
			if err != nil {
				return nil, err
			}
			switch e.Key {
			case "field":
				field = x
			case "input":
				input = x
			default:
				return nil, mongoerr.New(3041701, "$getField found an unknown argument: %s", e.Key)
			}
		}
	}
	if field == nil {
		return nil, mongoerr.New(3041702, "$getField requires 'field' to be specified")
	}
	return &opExpr{op: "$getField", args: []expr{field, input}, fn: func(_ *evalCtx, v []bson.Value) (bson.Value, error) {
		if v[0].Type != bson.TypeString {
			return missing, mongoerr.New(3041704, "$getField requires 'field' to evaluate to type String, but got %s", typeNameOrMissing(v[0]))
		}
		if v[1].Type != bson.TypeDocument {
			if nullish(v[1]) {
				return bson.Value{Type: bson.TypeNull}, nil
			}
			return missing, mongoerr.New(3041705, "$getField requires 'input' to evaluate to type Object, but got %s", typeNameOrMissing(v[1]))
		}
		x, _ := bson.Doc(v[1].Data).Lookup(v[0].StringValue())
		return x, nil
	}}, nil
}

func (p *exprParser) parseSetField(arg bson.Value) (expr, error) {
	if arg.Type != bson.TypeDocument {
		return nil, mongoerr.New(4161100, "$setField only supports an object as its argument")
	}
	var field, input, value expr
	var fieldName string
	it := bson.Doc(arg.Data).Iter()
	for it.Next() {
		e := it.Element()
		x, err := p.parse(e.Value)
		if err != nil {
			return nil, err
		}
		switch e.Key {
		case "field":
			field = x
			lit, ok := x.(litExpr)
			if !ok || lit.v.Type != bson.TypeString {
				return nil, mongoerr.New(4161106, "$setField requires 'field' to evaluate to a constant, but got a non-constant argument")
			}
			fieldName = lit.v.StringValue()
		case "input":
			input = x
		case "value":
			value = x
		default:
			return nil, mongoerr.New(4161101, "$setField found an unknown argument: %s", e.Key)
		}
	}
	switch {
	case field == nil:
		return nil, mongoerr.New(4161102, "$setField requires 'field' to be specified")
	case value == nil:
		return nil, mongoerr.New(4161103, "$setField requires 'value' to be specified")
	case input == nil:
		return nil, mongoerr.New(4161109, "$setField requires 'input' to be specified")
	}
	return &opExpr{op: "$setField", args: []expr{input, value}, fn: func(_ *evalCtx, v []bson.Value) (bson.Value, error) {
		if nullish(v[0]) {
			return bson.Value{Type: bson.TypeNull}, nil
		}
		if v[0].Type != bson.TypeDocument {
			return missing, mongoerr.New(4161105, "$setField requires 'input' to evaluate to type Object")
		}
		return mkValue(func(b *bson.Builder) {
			b.StartDocument("v")
			found := false
			it := bson.Doc(v[0].Data).Iter()
			for it.Next() {
				e := it.Element()
				if e.Key == fieldName {
					found = true
					if v[1].Type != 0 {
						b.AppendValue(e.Key, v[1])
					}
					continue
				}
				b.AppendElement(e)
			}
			if !found && v[1].Type != 0 {
				b.AppendValue(fieldName, v[1])
			}
			b.End()
		}), nil
	}}, nil
}

func arith(op string, vals []bson.Value) (bson.Value, error) {
	var acc bson.Value
	if op == "$add" {
		acc = int32Value(0)
	} else {
		acc = int32Value(1)
	}
	var date bson.Value
	for _, v := range vals {
		if nullish(v) {
			return bson.Value{Type: bson.TypeNull}, nil
		}
		if op == "$add" && v.Type == bson.TypeDateTime {
			if date.Type != 0 {
				return missing, mongoerr.New(16612, "only one date allowed in an $add expression")
			}
			date = v
			continue
		}
		if !v.IsNumber() {
			if op == "$add" {
				return missing, mongoerr.New(16554, "$add only supports numeric or date types, not %s", v.Type)
			}
			return missing, mongoerr.New(16555, "$multiply only supports numeric types, not %s", v.Type)
		}
		var r numResult
		if op == "$add" {
			r = addNumbers(acc, v)
		} else {
			r = mulNumbers(acc, v)
		}
		if r.overflow {
			x, _ := acc.AsFloat64()
			y, _ := v.AsFloat64()
			if op == "$add" {
				r = numResult{t: bson.TypeDouble, f: x + y}
			} else {
				r = numResult{t: bson.TypeDouble, f: x * y}
			}
		}
		acc = r.value()
	}
	if date.Type != 0 {
		f, _ := acc.AsFloat64()
		ms := date.DateTime() + int64(math.Round(f))
		return mkValue(func(b *bson.Builder) { b.AppendDateTime("v", ms) }), nil
	}
	return acc, nil
}

func subtract(a, b bson.Value) (bson.Value, error) {
	if nullish(a) || nullish(b) {
		return bson.Value{Type: bson.TypeNull}, nil
	}
	switch {
	case a.Type == bson.TypeDateTime && b.Type == bson.TypeDateTime:
		d := a.DateTime() - b.DateTime()
		return mkValue(func(x *bson.Builder) { x.AppendInt64("v", d) }), nil
	case a.Type == bson.TypeDateTime && b.IsNumber():
		f, _ := b.AsFloat64()
		ms := a.DateTime() - int64(math.Round(f))
		return mkValue(func(x *bson.Builder) { x.AppendDateTime("v", ms) }), nil
	case a.IsNumber() && b.IsNumber():
		neg := mulNumbers(b, int32Value(-1))
		if neg.overflow {
			x, _ := a.AsFloat64()
			y, _ := b.AsFloat64()
			return numResult{t: bson.TypeDouble, f: x - y}.value(), nil
		}
		r := addNumbers(a, neg.value())
		if r.overflow {
			x, _ := a.AsFloat64()
			y, _ := b.AsFloat64()
			return numResult{t: bson.TypeDouble, f: x - y}.value(), nil
		}
		return r.value(), nil
	}
	return missing, mongoerr.New(16556, "cant $subtract a %s from a %s", b.Type, a.Type)
}

// knownAggOperators are MongoDB expression operators Cairn does not
// evaluate yet (so they get NotImplemented, not "Unrecognized").
var knownAggOperators = func() map[string]bool {
	m := map[string]bool{}
	for _, s := range strings.Fields(`$abs $acos $acosh $allElementsTrue $anyElementTrue $arrayElemAt
	$arrayToObject $asin $asinh $atan $atan2 $atanh $avg $binarySize $bitAnd $bitNot $bitOr $bitXor
	$bsonSize $ceil $concatArrays $convert $cos $cosh $dateAdd $dateDiff $dateFromParts
	$dateFromString $dateSubtract $dateToParts $dateToString $dateTrunc $dayOfMonth $dayOfWeek
	$dayOfYear $degreesToRadians $divide $exp $filter $first $firstN $floor $function $hour
	$indexOfArray $indexOfBytes $indexOfCP $isNumber $isoDayOfWeek $isoWeek $isoWeekYear $last
	$lastN $let $ln $log $log10 $ltrim $map $max $maxN $median $mergeObjects $meta $millisecond $min
	$minN $minute $mod $month $objectToArray $percentile $pow $radiansToDegrees $rand $range $reduce
	$regexFind $regexFindAll $regexMatch $replaceAll $replaceOne $reverseArray $round $rtrim
	$sampleRate $second $setDifference $setEquals $setIntersection $setIsSubset $setUnion $sin
	$sinh $slice $sortArray $split $sqrt $stdDevPop $stdDevSamp $strLenBytes $strLenCP $strcasecmp
	$substr $substrBytes $substrCP $sum $switch $tan $tanh $toBool $toDate $toDecimal $toDouble
	$toInt $toLong $toLower $toObjectId $toString $toUpper $trim $trunc $tsIncrement $tsSecond
	$unsetField $week $year $zip`) {
		m[s] = true
	}
	return m
}()

// exprNode is $expr in a filter: the document matches when the expression
// is truthy. An evaluation error is reported in MatchDetails.Err.
type exprNode struct {
	e    expr
	vars map[string]bson.Value
	coll bson.StringComparer
}

func (n *exprNode) match(d bson.Doc, md *MatchDetails) bool {
	v, err := n.e.eval(&evalCtx{root: d, vars: n.vars, coll: n.coll, now: time.Now()})
	if err != nil {
		if md != nil && md.Err == nil {
			md.Err = err
		}
		return false
	}
	return v.Truthy()
}
