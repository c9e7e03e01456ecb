package query

// Evaluating a compiled $jsonSchema (jsonschema.go compiles it): a value
// against a schemaNode, by the keywords of its type.

import (
	"math"
	"slices"
	"unicode/utf8"

	"github.com/cairndb/cairn/bson"
)

// matches reports whether v satisfies the schema.
func (s *schemaNode) matches(v bson.Value) bool {
	if s.types != nil && !s.types.matchValue(v) {
		return false
	}
	switch {
	case v.IsNumber():
		if !s.matchNumber(v) {
			return false
		}
	case v.Type == bson.TypeString:
		if !s.matchString(v.StringValue()) {
			return false
		}
	case v.Type == bson.TypeArray:
		if !s.matchArray(v.Document()) {
			return false
		}
	case v.Type == bson.TypeDocument:
		if !s.matchObject(v.Document()) {
			return false
		}
	}
	for _, sub := range s.allOf {
		if !sub.matches(v) {
			return false
		}
	}
	if len(s.anyOf) > 0 && !slices.ContainsFunc(s.anyOf, func(sub *schemaNode) bool { return sub.matches(v) }) {
		return false
	}
	if len(s.oneOf) > 0 {
		n := 0
		for _, sub := range s.oneOf {
			if sub.matches(v) {
				n++
			}
		}
		if n != 1 {
			return false
		}
	}
	if s.not != nil && s.not.matches(v) {
		return false
	}
	if len(s.enum) > 0 && !slices.ContainsFunc(s.enum, func(e bson.Value) bool { return bson.Compare(e, v) == 0 }) {
		return false
	}
	return true
}

func (s *schemaNode) matchNumber(v bson.Value) bool {
	if s.minimum != nil {
		c := bson.Compare(v, *s.minimum)
		if c < 0 || (c == 0 && s.exclMin) {
			return false
		}
	}
	if s.maximum != nil {
		c := bson.Compare(v, *s.maximum)
		if c > 0 || (c == 0 && s.exclMax) {
			return false
		}
	}
	if s.multipleOf != nil && !isMultipleOf(v, *s.multipleOf) {
		return false
	}
	return true
}

// isMultipleOf reports whether v divided by m leaves no remainder: in
// integers when both are integers, else in doubles (mongod computes in
// Decimal128).
func isMultipleOf(v, m bson.Value) bool {
	if vi, ok := exactInt(v); ok {
		if mi, ok := exactInt(m); ok {
			return vi%mi == 0
		}
	}
	x, _ := v.AsFloat64()
	y, _ := m.AsFloat64()
	r := math.Mod(x, y)
	return r == 0
}

func exactInt(v bson.Value) (int64, bool) {
	switch v.Type {
	case bson.TypeInt32:
		return int64(v.Int32()), true
	case bson.TypeInt64:
		return v.Int64(), true
	}
	return 0, false
}

func (s *schemaNode) matchString(str string) bool {
	if s.minLength >= 0 || s.maxLength >= 0 {
		n := int64(utf8.RuneCountInString(str))
		if (s.minLength >= 0 && n < s.minLength) || (s.maxLength >= 0 && n > s.maxLength) {
			return false
		}
	}
	return s.pattern == nil || s.pattern.MatchString(str)
}

func (s *schemaNode) matchArray(a bson.Doc) bool {
	elems := a.Values()
	n := int64(len(elems))
	if (s.minItems >= 0 && n < s.minItems) || (s.maxItems >= 0 && n > s.maxItems) {
		return false
	}
	for i, e := range elems {
		switch {
		case s.items != nil:
			if !s.items.matches(e) {
				return false
			}
		case i < len(s.itemList):
			if !s.itemList[i].matches(e) {
				return false
			}
		case s.noAdditionalItems:
			return false
		case s.additionalItems != nil:
			if !s.additionalItems.matches(e) {
				return false
			}
		}
	}
	if s.uniqueItems && len(elems) > 1 {
		sorted := slices.Clone(elems)
		slices.SortFunc(sorted, bson.Compare)
		for i := 1; i < len(sorted); i++ {
			if bson.Compare(sorted[i-1], sorted[i]) == 0 {
				return false
			}
		}
	}
	return true
}

func (s *schemaNode) matchObject(d bson.Doc) bool {
	for _, r := range s.required {
		if _, ok := d.Lookup(r); !ok {
			return false
		}
	}
	for _, p := range s.properties {
		if v, ok := d.Lookup(p.name); ok && !p.s.matches(v) {
			return false
		}
	}
	if s.minProps >= 0 || s.maxProps >= 0 {
		n := int64(d.Len())
		if (s.minProps >= 0 && n < s.minProps) || (s.maxProps >= 0 && n > s.maxProps) {
			return false
		}
	}
	if s.checkAdditional {
		it := d.Iter()
		for it.Next() {
			e := it.Element()
			known := slices.ContainsFunc(s.properties, func(p namedSchema) bool { return p.name == e.Key })
			for _, pp := range s.patternProperties {
				if pp.re.MatchString(e.Key) {
					known = true
					if !pp.s.matches(e.Value) {
						return false
					}
				}
			}
			if known {
				continue
			}
			if s.noAdditionalProps || (s.additionalProperties != nil && !s.additionalProperties.matches(e.Value)) {
				return false
			}
		}
	}
	for _, dep := range s.dependencies {
		if _, ok := d.Lookup(dep.field); !ok {
			continue
		}
		for _, f := range dep.fields {
			if _, ok := d.Lookup(f); !ok {
				return false
			}
		}
		if dep.s != nil && !dep.s.matches(bson.Value{Type: bson.TypeDocument, Data: d}) {
			return false
		}
	}
	return true
}
