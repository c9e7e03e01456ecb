package query

// $jsonSchema: MongoDB's JSON Schema (draft 4 with bsonType) as a query
// operator, and so as a collection validator.
//
// A schema is compiled into a tree of schemaNodes and evaluated directly
// against values, rather than translated into match expressions as
// mongod does; the semantics are mongod's:
//
//   - A restriction keyword applies only to values of its type: minimum,
//     maximum and multipleOf to numbers, minLength, maxLength and pattern
//     to strings, items, minItems, maxItems and uniqueItems to arrays,
//     properties, required, minProperties, maxProperties,
//     patternProperties, additionalProperties and dependencies to
//     objects. A value of another type passes them (type or bsonType
//     constrain the type).
//   - A property the schema names but the document lacks passes its
//     subschema unless required lists it.
//   - Values are taken as they are: a property holding an array is
//     checked as an array, never element by element as query paths
//     traverse arrays.
//   - The top-level schema applies to the document itself (an object).
//
// Keywords: bsonType, type (JSON types; "integer" is refused as mongod
// refuses it), enum, minimum, maximum, exclusiveMinimum, exclusiveMaximum,
// multipleOf, minLength, maxLength, pattern, items, additionalItems,
// minItems, maxItems, uniqueItems, properties, required, minProperties,
// maxProperties, patternProperties, additionalProperties, dependencies,
// allOf, anyOf, oneOf, not, title, description. $ref, $schema, default,
// definitions, format and id are refused ("not currently supported"),
// anything else is an unknown keyword (FailedToParse, 9).

import (
	"regexp"
	"slices"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// jsonSchemaNode is the $jsonSchema operator in a filter.
type jsonSchemaNode struct{ s *schemaNode }

func (n jsonSchemaNode) match(d bson.Doc, _ *MatchDetails) bool {
	return n.s.matches(bson.Value{Type: bson.TypeDocument, Data: d})
}

// schemaNode is one compiled (sub)schema.
type schemaNode struct {
	types *typeMatcher // nil: any type

	// numbers
	minimum, maximum *bson.Value
	exclMin, exclMax bool
	multipleOf       *bson.Value
	// strings (lengths in code points; -1: none)
	minLength, maxLength int64
	pattern              *regexp.Regexp
	// arrays
	minItems, maxItems int64
	uniqueItems        bool
	items              *schemaNode   // every element
	itemList           []*schemaNode // element i matches itemList[i]
	additionalItems    *schemaNode   // elements past itemList (nil: any)
	noAdditionalItems  bool          // additionalItems: false
	// objects
	required             []string
	properties           []namedSchema
	patternProperties    []patternSchema
	additionalProperties *schemaNode // other fields (nil: any)
	noAdditionalProps    bool        // additionalProperties: false
	checkAdditional      bool        // patternProperties or additionalProperties given
	minProps, maxProps   int64
	dependencies         []dependency
	// logic
	allOf, anyOf, oneOf []*schemaNode
	not                 *schemaNode
	enum                []bson.Value
}

type namedSchema struct {
	name string
	s    *schemaNode
}

type patternSchema struct {
	re *regexp.Regexp
	s  *schemaNode
}

// dependency is one entry of dependencies: when field is present, the
// object must have every field of fields, or match s.
type dependency struct {
	field  string
	fields []string
	s      *schemaNode
}

// unsupportedSchemaKeywords are JSON Schema keywords mongod names as not
// supported.
var unsupportedSchemaKeywords = map[string]bool{
	"$ref": true, "$schema": true, "default": true, "definitions": true, "format": true, "id": true,
}

var schemaKeywords = map[string]bool{
	"additionalItems": true, "additionalProperties": true, "allOf": true, "anyOf": true,
	"bsonType": true, "dependencies": true, "description": true, "enum": true,
	"exclusiveMaximum": true, "exclusiveMinimum": true, "items": true, "maxItems": true,
	"maxLength": true, "maxProperties": true, "maximum": true, "minItems": true,
	"minLength": true, "minProperties": true, "minimum": true, "multipleOf": true,
	"not": true, "oneOf": true, "pattern": true, "patternProperties": true,
	"properties": true, "required": true, "title": true, "type": true, "uniqueItems": true,
}

func schemaErr(code int32, format string, args ...any) error {
	return mongoerr.New(code, format, args...)
}

// parseJSONSchema compiles the argument of $jsonSchema.
func parseJSONSchema(v bson.Value) (node, error) {
	if v.Type != bson.TypeDocument {
		return nil, mongoerr.New(mongoerr.TypeMismatch, "$jsonSchema must be an object")
	}
	s, err := compileSchema(v.Document(), 0)
	if err != nil {
		return nil, err
	}
	return jsonSchemaNode{s}, nil
}

// maxSchemaDepth bounds the nesting of subschemas (documents are bounded
// by BSON's depth anyway; this keeps recursion shallow on crafted input).
const maxSchemaDepth = 150

func compileSchema(d bson.Doc, depth int) (*schemaNode, error) {
	if depth > maxSchemaDepth {
		return nil, schemaErr(mongoerr.FailedToParse, "$jsonSchema is nested too deeply")
	}
	kw := map[string]bson.Value{}
	it := d.Iter()
	for it.Next() {
		e := it.Element()
		if !schemaKeywords[e.Key] {
			if unsupportedSchemaKeywords[e.Key] {
				return nil, schemaErr(mongoerr.FailedToParse, "$jsonSchema keyword '%s' is not currently supported", e.Key)
			}
			return nil, schemaErr(mongoerr.FailedToParse, "Unknown $jsonSchema keyword: %s", e.Key)
		}
		if _, dup := kw[e.Key]; dup {
			return nil, schemaErr(mongoerr.FailedToParse, "Duplicate $jsonSchema keyword: %s", e.Key)
		}
		kw[e.Key] = e.Value
	}
	for _, k := range []string{"description", "title"} {
		if v, ok := kw[k]; ok && v.Type != bson.TypeString {
			return nil, schemaErr(mongoerr.TypeMismatch, "$jsonSchema keyword '%s' must be of type string", k)
		}
	}
	s := &schemaNode{minLength: -1, maxLength: -1, minItems: -1, maxItems: -1, minProps: -1, maxProps: -1}
	tv, hasType := kw["type"]
	bv, hasBSONType := kw["bsonType"]
	var err error
	switch {
	case hasType && hasBSONType:
		return nil, schemaErr(mongoerr.FailedToParse, "Cannot specify both $jsonSchema keywords 'type' and 'bsonType'")
	case hasType:
		s.types, err = parseSchemaTypes("type", tv, true)
	case hasBSONType:
		s.types, err = parseSchemaTypes("bsonType", bv, false)
	}
	if err != nil {
		return nil, err
	}
	if err := s.compileScalar(kw); err != nil {
		return nil, err
	}
	if err := s.compileArray(kw, depth); err != nil {
		return nil, err
	}
	if err := s.compileObject(kw, depth); err != nil {
		return nil, err
	}
	if err := s.compileLogic(kw, depth); err != nil {
		return nil, err
	}
	return s, nil
}

// parseSchemaTypes parses type (JSON type names) or bsonType ($type
// aliases): a string or an array of distinct strings.
func parseSchemaTypes(keyword string, v bson.Value, jsonTypes bool) (*typeMatcher, error) {
	var names []string
	switch v.Type {
	case bson.TypeString:
		names = []string{v.StringValue()}
	case bson.TypeArray:
		it := v.Document().Iter()
		for it.Next() {
			ev := it.Element().Value
			if ev.Type != bson.TypeString {
				return nil, schemaErr(mongoerr.TypeMismatch, "$jsonSchema keyword '%s' array elements must be strings", keyword)
			}
			if slices.Contains(names, ev.StringValue()) {
				return nil, schemaErr(mongoerr.FailedToParse, "$jsonSchema keyword '%s' has duplicate value: %s", keyword, ev.StringValue())
			}
			names = append(names, ev.StringValue())
		}
	default:
		return nil, schemaErr(mongoerr.TypeMismatch, "$jsonSchema keyword '%s' must be either a string or an array of strings", keyword)
	}
	m := &typeMatcher{}
	for _, n := range names {
		if jsonTypes {
			if n == "integer" {
				return nil, schemaErr(mongoerr.FailedToParse, "$jsonSchema type 'integer' is not currently supported.")
			}
			t, ok := map[string]bson.Type{"object": bson.TypeDocument, "array": bson.TypeArray, "boolean": bson.TypeBoolean,
				"string": bson.TypeString, "null": bson.TypeNull}[n]
			switch {
			case n == "number":
				m.allNumbers = true
			case ok:
				m.types[t] = true
			default:
				return nil, badValue("Unknown type name alias: %s", n)
			}
			continue
		}
		if err := m.add(bson.Value{Type: bson.TypeString, Data: stringData(n)}); err != nil {
			return nil, err
		}
	}
	if len(names) == 0 {
		return nil, schemaErr(mongoerr.FailedToParse, "$jsonSchema keyword '%s' must name at least one type", keyword)
	}
	return m, nil
}

// stringData is the BSON encoding of a string value.
func stringData(s string) []byte {
	var b bson.Builder
	b.AppendString("s", s)
	v, _ := b.Finish().Lookup("s")
	return v.Data
}

// countKeyword is a keyword taking a non-negative integer (minLength, ...)
// and where its value goes.
type countKeyword struct {
	name string
	dst  *int64
}

// parseCounts parses the count keywords present in kw.
func parseCounts(kw map[string]bson.Value, keywords ...countKeyword) error {
	for _, c := range keywords {
		v, ok := kw[c.name]
		if !ok {
			continue
		}
		e := bson.Element{Key: c.name, Value: v}
		n, err := parseIntegerLong(e)
		if err != nil {
			return err
		}
		if n < 0 {
			return schemaErr(mongoerr.FailedToParse, "Expected a positive number in: %s", elemString(e))
		}
		*c.dst = n
	}
	return nil
}

func (s *schemaNode) compileScalar(kw map[string]bson.Value) error {
	if v, ok := kw["pattern"]; ok {
		if v.Type != bson.TypeString {
			return schemaErr(mongoerr.TypeMismatch, "$jsonSchema keyword 'pattern' must be a string")
		}
		re, err := compileRegex(v.StringValue(), "")
		if err != nil {
			return err
		}
		s.pattern = re
	}
	if err := parseCounts(kw, countKeyword{"maxLength", &s.maxLength}, countKeyword{"minLength", &s.minLength}); err != nil {
		return err
	}
	if v, ok := kw["multipleOf"]; ok {
		if !v.IsNumber() {
			return schemaErr(mongoerr.TypeMismatch, "$jsonSchema keyword 'multipleOf' must be a number")
		}
		if f, _ := v.AsFloat64(); !(f > 0) {
			return schemaErr(mongoerr.FailedToParse, "$jsonSchema keyword 'multipleOf' must have a positive value")
		}
		s.multipleOf = &v
	}
	for _, b := range []struct {
		bound, excl string
		dst         **bson.Value
		exclDst     *bool
	}{{"maximum", "exclusiveMaximum", &s.maximum, &s.exclMax}, {"minimum", "exclusiveMinimum", &s.minimum, &s.exclMin}} {
		v, ok := kw[b.bound]
		ev, hasExcl := kw[b.excl]
		if !ok {
			if hasExcl {
				return schemaErr(mongoerr.FailedToParse, "$jsonSchema keyword '%s' must be a present if %s is present", b.bound, b.excl)
			}
			continue
		}
		if hasExcl {
			if ev.Type != bson.TypeBoolean {
				return schemaErr(mongoerr.TypeMismatch, "$jsonSchema keyword '%s' must be a boolean", b.excl)
			}
			*b.exclDst = ev.Boolean()
		}
		if !v.IsNumber() {
			return schemaErr(mongoerr.TypeMismatch, "$jsonSchema keyword '%s' must be a number", b.bound)
		}
		*b.dst = &v
	}
	return nil
}

// subschema compiles the object value of keyword.
func subschema(keyword string, v bson.Value, depth int) (*schemaNode, error) {
	if v.Type != bson.TypeDocument {
		return nil, schemaErr(mongoerr.TypeMismatch, "$jsonSchema keyword '%s' must be an object", keyword)
	}
	return compileSchema(v.Document(), depth+1)
}

// schemaMap compiles properties and patternProperties: an object whose
// fields are schemas (notObject is the message for one that is not).
func schemaMap(keyword string, v bson.Value, depth int, notObject string) ([]namedSchema, error) {
	if v.Type != bson.TypeDocument {
		return nil, schemaErr(mongoerr.TypeMismatch, "$jsonSchema keyword '%s' must be an object", keyword)
	}
	var out []namedSchema
	it := v.Document().Iter()
	for it.Next() {
		e := it.Element()
		if e.Value.Type != bson.TypeDocument {
			return nil, schemaErr(mongoerr.TypeMismatch, notObject, e.Key)
		}
		sub, err := compileSchema(e.Value.Document(), depth+1)
		if err != nil {
			return nil, err
		}
		out = append(out, namedSchema{e.Key, sub})
	}
	return out, nil
}

// schemaList compiles allOf, anyOf, oneOf: a non-empty array of schemas.
func schemaList(keyword string, v bson.Value, depth int) ([]*schemaNode, error) {
	if v.Type != bson.TypeArray {
		return nil, schemaErr(mongoerr.TypeMismatch, "$jsonSchema keyword '%s' must be an array", keyword)
	}
	var out []*schemaNode
	it := v.Document().Iter()
	for it.Next() {
		ev := it.Element().Value
		if ev.Type != bson.TypeDocument {
			return nil, schemaErr(mongoerr.TypeMismatch, "$jsonSchema keyword '%s' must be an array of objects, but found an element of type %s", keyword, ev.Type)
		}
		sub, err := compileSchema(ev.Document(), depth+1)
		if err != nil {
			return nil, err
		}
		out = append(out, sub)
	}
	if len(out) == 0 {
		return nil, schemaErr(mongoerr.BadValue, "$jsonSchema keyword '%s' must be a non-empty array", keyword)
	}
	return out, nil
}

func (s *schemaNode) compileArray(kw map[string]bson.Value, depth int) error {
	if err := parseCounts(kw, countKeyword{"minItems", &s.minItems}, countKeyword{"maxItems", &s.maxItems}); err != nil {
		return err
	}
	if v, ok := kw["uniqueItems"]; ok {
		if v.Type != bson.TypeBoolean {
			return schemaErr(mongoerr.TypeMismatch, "$jsonSchema keyword 'uniqueItems' must be a boolean")
		}
		s.uniqueItems = v.Boolean()
	}
	listed := false
	if v, ok := kw["items"]; ok {
		switch v.Type {
		case bson.TypeDocument:
			sub, err := compileSchema(v.Document(), depth+1)
			if err != nil {
				return err
			}
			s.items = sub
		case bson.TypeArray:
			it := v.Document().Iter()
			for it.Next() {
				ev := it.Element().Value
				if ev.Type != bson.TypeDocument {
					return schemaErr(mongoerr.TypeMismatch, "$jsonSchema keyword 'items' requires that each element of the array is an object, but found a %s", ev.Type)
				}
				sub, err := compileSchema(ev.Document(), depth+1)
				if err != nil {
					return err
				}
				s.itemList = append(s.itemList, sub)
			}
			listed = true
		default:
			return schemaErr(mongoerr.TypeMismatch, "$jsonSchema keyword 'items' must be an array or an object, not %s", v.Type)
		}
	}
	if v, ok := kw["additionalItems"]; ok {
		var sub *schemaNode
		switch v.Type {
		case bson.TypeBoolean:
		case bson.TypeDocument:
			var err error
			if sub, err = compileSchema(v.Document(), depth+1); err != nil {
				return err
			}
		default:
			return schemaErr(mongoerr.TypeMismatch, "$jsonSchema keyword 'additionalItems' must be either an object or a boolean, but got a %s", v.Type)
		}
		// additionalItems only means something after an items array.
		if listed {
			s.additionalItems = sub
			s.noAdditionalItems = v.Type == bson.TypeBoolean && !v.Boolean()
		}
	}
	return nil
}

func (s *schemaNode) compileObject(kw map[string]bson.Value, depth int) error {
	if v, ok := kw["required"]; ok {
		if v.Type != bson.TypeArray {
			return schemaErr(mongoerr.TypeMismatch, "$jsonSchema keyword 'required' must be an array, but found an element of type %s", v.Type)
		}
		it := v.Document().Iter()
		for it.Next() {
			ev := it.Element().Value
			if ev.Type != bson.TypeString {
				return schemaErr(mongoerr.TypeMismatch, "$jsonSchema keyword 'required' must be an array of strings, but found an element of type: %s", ev.Type)
			}
			if slices.Contains(s.required, ev.StringValue()) {
				return schemaErr(mongoerr.FailedToParse, "$jsonSchema keyword 'required' array cannot contain duplicate values")
			}
			s.required = append(s.required, ev.StringValue())
		}
		if len(s.required) == 0 {
			return schemaErr(mongoerr.FailedToParse, "$jsonSchema keyword 'required' cannot be an empty array")
		}
	}
	if v, ok := kw["properties"]; ok {
		props, err := schemaMap("properties", v, depth, "Nested schema for $jsonSchema property '%s' must be an object")
		if err != nil {
			return err
		}
		s.properties = props
	}
	if v, ok := kw["patternProperties"]; ok {
		props, err := schemaMap("patternProperties", v, depth, "$jsonSchema keyword 'patternProperties' has property '%s' which is not an object")
		if err != nil {
			return err
		}
		for _, p := range props {
			re, err := compileRegex(p.name, "")
			if err != nil {
				return err
			}
			s.patternProperties = append(s.patternProperties, patternSchema{re, p.s})
		}
		s.checkAdditional = true
	}
	if v, ok := kw["additionalProperties"]; ok {
		switch v.Type {
		case bson.TypeBoolean:
			s.noAdditionalProps = !v.Boolean()
		case bson.TypeDocument:
			sub, err := compileSchema(v.Document(), depth+1)
			if err != nil {
				return err
			}
			s.additionalProperties = sub
		default:
			return schemaErr(mongoerr.TypeMismatch, "$jsonSchema keyword 'additionalProperties' must be an object or a boolean")
		}
		s.checkAdditional = true
	}
	if err := parseCounts(kw, countKeyword{"minProperties", &s.minProps}, countKeyword{"maxProperties", &s.maxProps}); err != nil {
		return err
	}
	if v, ok := kw["dependencies"]; ok {
		if v.Type != bson.TypeDocument {
			return schemaErr(mongoerr.TypeMismatch, "$jsonSchema keyword 'dependencies' must be an object")
		}
		it := v.Document().Iter()
		for it.Next() {
			e := it.Element()
			dep := dependency{field: e.Key}
			switch e.Value.Type {
			case bson.TypeDocument:
				sub, err := compileSchema(e.Value.Document(), depth+1)
				if err != nil {
					return err
				}
				dep.s = sub
			case bson.TypeArray:
				fit := e.Value.Document().Iter()
				for fit.Next() {
					fv := fit.Element().Value
					if fv.Type != bson.TypeString {
						return schemaErr(mongoerr.TypeMismatch, "array '%s' in $jsonSchema keyword 'dependencies' can only contain strings, but found element of type: %s", e.Key, fv.Type)
					}
					if slices.Contains(dep.fields, fv.StringValue()) {
						return schemaErr(mongoerr.FailedToParse, "array '%s' in $jsonSchema keyword 'dependencies' contains duplicate element: %s", e.Key, fv.StringValue())
					}
					dep.fields = append(dep.fields, fv.StringValue())
				}
				if len(dep.fields) == 0 {
					return schemaErr(mongoerr.FailedToParse, "property '%s' in $jsonSchema keyword 'dependencies' cannot be an empty array", e.Key)
				}
			default:
				return schemaErr(mongoerr.TypeMismatch, "property '%s' in $jsonSchema keyword 'dependencies' must be either an object or an array", e.Key)
			}
			s.dependencies = append(s.dependencies, dep)
		}
	}
	return nil
}

func (s *schemaNode) compileLogic(kw map[string]bson.Value, depth int) error {
	var err error
	for _, c := range []struct {
		name string
		dst  *[]*schemaNode
	}{{"allOf", &s.allOf}, {"anyOf", &s.anyOf}, {"oneOf", &s.oneOf}} {
		if v, ok := kw[c.name]; ok {
			if *c.dst, err = schemaList(c.name, v, depth); err != nil {
				return err
			}
		}
	}
	if v, ok := kw["not"]; ok {
		if v.Type != bson.TypeDocument {
			return schemaErr(mongoerr.TypeMismatch, "$jsonSchema keyword 'not' must be an object, but found an element of type %s", v.Type)
		}
		if s.not, err = subschema("not", v, depth); err != nil {
			return err
		}
	}
	if v, ok := kw["enum"]; ok {
		if v.Type != bson.TypeArray {
			return schemaErr(mongoerr.TypeMismatch, "$jsonSchema keyword 'enum' must be an array, but found an element of type %s", v.Type)
		}
		it := v.Document().Iter()
		for it.Next() {
			ev := it.Element().Value
			for _, have := range s.enum {
				if bson.Compare(have, ev) == 0 {
					return schemaErr(mongoerr.FailedToParse, "$jsonSchema keyword 'enum' array cannot contain duplicate values.")
				}
			}
			s.enum = append(s.enum, ev)
		}
		if len(s.enum) == 0 {
			return schemaErr(mongoerr.FailedToParse, "$jsonSchema keyword 'enum' cannot be an empty array")
		}
	}
	return nil
}
