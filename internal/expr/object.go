package expr

import (
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// $let, $literal, $rand and the object operators.

func init() {
	register("$let", parseLet)
	register("$literal", func(p *parser, name string, arg bson.Value) (node, error) { return constNode{arg}, nil })
	register("$const", func(p *parser, name string, arg bson.Value) (node, error) { return constNode{arg}, nil })
	register("$expr", func(p *parser, name string, arg bson.Value) (node, error) { return p.parse(arg) })
	register("$rand", parseRand)
	register("$getField", parseGetField)
	register("$setField", parseSetField("$setField"))
	register("$unsetField", parseSetField("$unsetField"))
	regNary("$mergeObjects", 0, -1, mergeObjects)
	regUnary("$objectToArray", objectToArray)
	regUnary("$arrayToObject", arrayToObject)
}

type letNode struct {
	slots []int
	vals  []node
	in    node
}

func parseLet(p *parser, name string, arg bson.Value) (node, error) {
	m, err := namedValues(arg, []string{"vars", "in"}, func() error {
		return errf(mongoerr.LetNotObject, "$let only supports an object as its argument")
	}, func(key string) error {
		return errf(mongoerr.LetUnknownParameter, "Unrecognized parameter to $let: %s", key)
	})
	if err != nil {
		return nil, err
	}
	vars, in := m["vars"], m["in"]
	if vars.Type == 0 {
		return nil, errf(mongoerr.LetMissingVars, "Missing 'vars' parameter to $let")
	}
	if in.Type == 0 {
		return nil, errf(mongoerr.LetMissingIn, "Missing 'in' parameter to $let")
	}
	if vars.Type != bson.TypeDocument {
		return nil, errf(mongoerr.GeoNearNotObject, "invalid parameter: expected an object (vars)")
	}
	n := &letNode{}
	var names []string
	vi := vars.Document().Iter()
	for vi.Next() {
		el := vi.Element()
		if err := validateVarWrite(el.Key); err != nil {
			return nil, err
		}
		x, err := p.parse(el.Value)
		if err != nil {
			return nil, err
		}
		n.vals = append(n.vals, x)
		names = append(names, strings.Clone(el.Key))
	}
	for _, nm := range names {
		n.slots = append(n.slots, p.declare(nm))
	}
	body, err := p.parse(in)
	p.popScope(len(names))
	if err != nil {
		return nil, err
	}
	n.in = body
	return n, nil
}

func (n *letNode) eval(e *Env) (bson.Value, error) {
	start, err := e.pushEvals(n.vals)
	if err != nil {
		return missing, err
	}
	for i, s := range n.slots {
		e.vars[s] = e.vs[start+i]
	}
	e.vs = e.vs[:start]
	return n.in.eval(e)
}

type randNode struct{}

func (randNode) eval(e *Env) (bson.Value, error) { return e.double(e.rand()), nil }

func parseRand(p *parser, name string, arg bson.Value) (node, error) {
	if arg.Type != bson.TypeDocument {
		return nil, errf(mongoerr.GeoNearNotObject, "invalid parameter: expected an object (%s)", name)
	}
	if arg.Document().Len() != 0 {
		return nil, errf(mongoerr.RandTakesNoArguments, "$rand does not currently accept arguments")
	}
	return randNode{}, nil
}

// ---- $getField / $setField / $unsetField ----

type getFieldNode struct {
	field string
	input node
}

func parseGetField(p *parser, name string, arg bson.Value) (node, error) {
	var fieldV bson.Value
	var input node
	switch {
	case arg.Type == bson.TypeDocument && isOperatorDoc(arg.Document()):
		// {$getField: {$literal: "a.b"}}: the object is the field expression
		fieldV, input = arg, &pathNode{slot: 0}
	case arg.Type == bson.TypeDocument:
		it := arg.Document().Iter()
		for it.Next() {
			el := it.Element()
			switch el.Key {
			case "field":
				fieldV = el.Value
			case "input":
				x, err := p.parse(el.Value)
				if err != nil {
					return nil, err
				}
				input = x
			default:
				return nil, errf(mongoerr.GetFieldUnknownArgument, "$getField found an unknown argument: %s", el.Key)
			}
		}
	default:
		fieldV, input = arg, &pathNode{slot: 0}
	}
	if fieldV.Type == 0 {
		return nil, errf(mongoerr.GetFieldMissingField, "$getField requires 'field' to be specified")
	}
	if input == nil {
		return nil, errf(mongoerr.GetFieldMissingInput, "$getField requires 'input' to be specified")
	}
	f, err := constantField(p, "$getField", fieldV, mongoerr.GetFieldFieldNotConstant, mongoerr.GetFieldFieldNotString, mongoerr.GetFieldFieldIsPath)
	if err != nil {
		return nil, err
	}
	return &getFieldNode{field: f, input: input}, nil
}

// constantField reads the 'field' argument of $getField/$setField: a
// constant string (possibly via $literal), not a field path.
func constantField(p *parser, op string, v bson.Value, nonConstCode, typeCode, pathCode int32) (string, error) {
	if v.Type == bson.TypeString && strings.HasPrefix(v.StringValue(), "$") && !strings.HasPrefix(v.StringValue(), "$$") {
		return "", errf(pathCode, "'%s' is a field path reference which is not allowed in this context. Did you mean {$literal: '%s'}?", v.StringValue(), v.StringValue())
	}
	x, err := p.parse(v)
	if err != nil {
		return "", err
	}
	c, ok := x.(constNode)
	if !ok {
		return "", errf(nonConstCode, "%s requires 'field' to evaluate to a constant, but got a non-constant argument", op)
	}
	if c.v.Type != bson.TypeString {
		return "", errf(typeCode, "%s requires 'field' to evaluate to type String, but got %s", op, typeName(c.v))
	}
	if strings.IndexByte(c.v.StringValue(), 0) >= 0 {
		return "", errf(mongoerr.FieldNameEmbeddedNull, "%s: 'field' cannot contain an embedded null byte", op)
	}
	return strings.Clone(c.v.StringValue()), nil
}

func (n *getFieldNode) eval(e *Env) (bson.Value, error) {
	in, err := n.input.eval(e)
	if err != nil {
		return missing, err
	}
	if nullish(in) {
		if in.Type == 0 {
			return missing, nil
		}
		return vNull, nil
	}
	if in.Type != bson.TypeDocument {
		return missing, errf(mongoerr.GetFieldInputNotObject, "$getField requires 'input' to evaluate to type Object, but got %s", typeName(in))
	}
	v, _ := in.Document().Lookup(n.field)
	return v, nil
}

type setFieldNode struct {
	op    string
	field string
	input node
	value node // nil for $unsetField
}

func parseSetField(op string) opParser {
	names := []string{"field", "input"} // $unsetField's
	if op == "$setField" {
		names = append(names, "value")
	}
	return func(p *parser, name string, arg bson.Value) (node, error) {
		m, err := namedValues(arg, names, func() error {
			return errf(mongoerr.SetFieldNotObject, "%s only supports an object as its argument", op)
		}, func(key string) error {
			return errf(mongoerr.SetFieldUnknownArgument, "%s found an unknown argument: %s", op, key)
		})
		if err != nil {
			return nil, err
		}
		fieldV, inV, valV := m["field"], m["input"], m["value"]
		if fieldV.Type == 0 {
			return nil, errf(mongoerr.SetFieldMissingField, "%s requires 'field' to be specified", op)
		}
		if op == "$setField" && valV.Type == 0 {
			return nil, errf(mongoerr.SetFieldMissingValue, "$setField requires 'value' to be specified")
		}
		if inV.Type == 0 {
			return nil, errf(mongoerr.SetFieldMissingInput, "%s requires 'input' to be specified", op)
		}
		f, err := constantField(p, "$setField", fieldV, mongoerr.SetFieldFieldNotConstant, mongoerr.SetFieldFieldNotString, mongoerr.SetFieldFieldIsPath)
		if err != nil {
			return nil, err
		}
		n := &setFieldNode{op: op, field: f}
		if n.input, err = p.parse(inV); err != nil {
			return nil, err
		}
		if valV.Type != 0 {
			if n.value, err = p.parse(valV); err != nil {
				return nil, err
			}
		}
		return n, nil
	}
}

func (n *setFieldNode) eval(e *Env) (bson.Value, error) {
	in, err := n.input.eval(e)
	if err != nil {
		return missing, err
	}
	if nullish(in) {
		return vNull, nil
	}
	if in.Type != bson.TypeDocument {
		return missing, errf(mongoerr.SetFieldInputNotObject, "%s requires 'input' to evaluate to type Object", n.op)
	}
	val := missing
	if n.value != nil {
		if val, err = n.value.eval(e); err != nil {
			return missing, err
		}
	}
	return e.setField(in.Document(), n.field, val), nil
}

// setField returns d with key set to v in place (appended when new);
// a missing v removes the key.
func (e *Env) setField(d bson.Doc, key string, v bson.Value) bson.Value {
	keys := make([]string, 0, 8)
	start := len(e.vs)
	found := false
	it := d.Iter()
	for it.Next() {
		el := it.Element()
		if el.Key == key {
			found = true
			if v.Type == 0 {
				continue
			}
			keys = append(keys, el.Key)
			e.vs = append(e.vs, v)
			continue
		}
		keys = append(keys, el.Key)
		e.vs = append(e.vs, el.Value)
	}
	if !found && v.Type != 0 {
		keys = append(keys, key)
		e.vs = append(e.vs, v)
	}
	out := e.document(keys, e.vs[start:])
	e.vs = e.vs[:start]
	return out
}

// ---- $mergeObjects, $objectToArray, $arrayToObject ----

// fieldList is an ordered document under construction with replace-in-place.
type fieldList struct {
	keys []string
	vals []bson.Value
	idx  map[string]int
}

func (f *fieldList) set(k string, v bson.Value) {
	if f.idx == nil {
		f.idx = map[string]int{}
	}
	if i, ok := f.idx[k]; ok {
		f.vals[i] = v
		return
	}
	f.idx[k] = len(f.keys)
	f.keys = append(f.keys, k)
	f.vals = append(f.vals, v)
}

func mergeObjects(e *Env, args []bson.Value) (bson.Value, error) {
	var f fieldList
	for _, v := range args {
		if nullish(v) {
			continue
		}
		if v.Type != bson.TypeDocument {
			return missing, errf(mongoerr.MergeObjectsNotObject, "$mergeObjects requires object inputs, but input %s is of type %s", v.String(), typeName(v))
		}
		it := v.Document().Iter()
		for it.Next() {
			el := it.Element()
			f.set(el.Key, el.Value)
		}
	}
	return e.document(f.keys, f.vals), nil
}

func objectToArray(e *Env, v bson.Value) (bson.Value, error) {
	if nullish(v) {
		return vNull, nil
	}
	if v.Type != bson.TypeDocument {
		return missing, errf(mongoerr.ObjectToArrayNotDocument, "$objectToArray requires a document input, found: %s", typeName(v))
	}
	start := len(e.vs)
	keys := []string{"k", "v"}
	it := v.Document().Iter()
	for it.Next() {
		el := it.Element()
		kv := [2]bson.Value{e.str(el.Key), el.Value}
		e.vs = append(e.vs, e.document(keys, kv[:]))
	}
	out := e.array(e.vs[start:])
	e.vs = e.vs[:start]
	return out, nil
}

func arrayToObject(e *Env, v bson.Value) (bson.Value, error) {
	if nullish(v) {
		return vNull, nil
	}
	if v.Type != bson.TypeArray {
		return missing, errf(mongoerr.ArrayToObjectNotArray, "$arrayToObject requires an array input, found: %s", typeName(v))
	}
	var f fieldList
	var format bson.Type
	it := v.Document().Iter()
	for it.Next() {
		el := it.Element().Value
		if format == 0 {
			format = el.Type
		}
		if format != bson.TypeArray && format != bson.TypeDocument {
			return missing, errf(mongoerr.ArrayToObjectUnknownFormat, "Unrecognised input type format for $arrayToObject: %s", typeName(el))
		}
		if format == bson.TypeArray && el.Type != bson.TypeArray {
			return missing, errf(mongoerr.ArrayToObjectMixedFormatPairs, "$arrayToObject requires a consistent input format. Elements mustall be arrays or all be objects. Array was detected, now found: %s", typeName(el))
		}
		if format == bson.TypeDocument && el.Type != bson.TypeDocument {
			return missing, errf(mongoerr.ArrayToObjectMixedFormat, "$arrayToObject requires a consistent input format. Elements mustall be arrays or all be objects. Object was detected, now found: %s", typeName(el))
		}
		switch el.Type {
		case bson.TypeArray:
			pair := el.Document().Values()
			if len(pair) != 2 {
				return missing, errf(mongoerr.ArrayToObjectPairSize, "$arrayToObject requires an array of size 2 arrays,found array of size: %d", len(pair))
			}
			if pair[0].Type != bson.TypeString {
				return missing, errf(mongoerr.ArrayToObjectPairKeyNotString, "$arrayToObject requires an array of key-value pairs, where the key must be of type string. Found key type: %s", typeName(pair[0]))
			}
			k := pair[0].StringValue()
			if strings.IndexByte(k, 0) >= 0 {
				return missing, errf(mongoerr.ArrayToObjectKeyEmbeddedNull, "Key field cannot contain an embedded null byte")
			}
			f.set(k, pair[1])
		case bson.TypeDocument:
			d := el.Document()
			if n := d.Len(); n != 2 {
				return missing, errf(mongoerr.ArrayToObjectKeyCount, "$arrayToObject requires an object keys of 'k' and 'v'. Found incorrect number of keys:%d", n)
			}
			k, okK := d.Lookup("k")
			val, okV := d.Lookup("v")
			if !okK || !okV {
				return missing, errf(mongoerr.ArrayToObjectMissingKV, "$arrayToObject requires an object with keys 'k' and 'v'. Missing either or both keys from: %s", d.String())
			}
			if k.Type != bson.TypeString {
				return missing, errf(mongoerr.ArrayToObjectKeyNotString, "$arrayToObject requires an object with keys 'k' and 'v', where the value of 'k' must be of type string. Found type: %s", typeName(k))
			}
			ks := k.StringValue()
			if strings.IndexByte(ks, 0) >= 0 {
				return missing, errf(mongoerr.ArrayToObjectPairKeyEmbeddedNull, "Key field cannot contain an embedded null byte")
			}
			f.set(ks, val)
		default:
			return missing, errf(mongoerr.ArrayToObjectUnknownFormat, "Unrecognised input type format for $arrayToObject: %s", typeName(el))
		}
	}
	return e.document(f.keys, f.vals), nil
}

// isOperatorDoc reports whether d's first field name starts with '$'.
func isOperatorDoc(d bson.Doc) bool {
	it := d.Iter()
	return it.Next() && strings.HasPrefix(it.Element().Key, "$")
}
