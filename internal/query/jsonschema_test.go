package query

import "testing"

func TestJSONSchemaMatch(t *testing.T) {
	js := func(schema string) string { return `{"$jsonSchema": ` + schema + `}` }
	runMatchCases(t, []matchCase{
		// required, properties, types
		{js(`{"required": ["a", "b"]}`), `{"a": 1, "b": null}`, true},
		{js(`{"required": ["a", "b"]}`), `{"a": 1}`, false},
		{js(`{"properties": {"a": {"bsonType": "string"}}}`), `{"b": 1}`, true},
		{js(`{"properties": {"a": {"bsonType": "string"}}}`), `{"a": 1}`, false},
		{js(`{"properties": {"a": {"bsonType": ["int", "string"]}}}`), `{"a": 1}`, true},
		{js(`{"properties": {"a": {"bsonType": "number"}}}`), `{"a": {"$numberDecimal": "1.5"}}`, true},
		{js(`{"properties": {"a": {"bsonType": "array"}}}`), `{"a": [1]}`, true},
		{js(`{"properties": {"a": {"type": "number"}}}`), `{"a": 2.5}`, true},
		{js(`{"properties": {"a": {"type": "object"}}}`), `{"a": [1]}`, false},
		{js(`{"properties": {"a": {"type": ["null", "boolean"]}}}`), `{"a": false}`, true},
		{js(`{"bsonType": "object"}`), `{"a": 1}`, true},
		{js(`{"bsonType": "string"}`), `{"a": 1}`, false},
		// arrays are values, not traversed: a string schema fails an array of strings
		{js(`{"properties": {"a": {"bsonType": "string"}}}`), `{"a": ["x"]}`, false},
		// numbers: restrictions apply to numbers only
		{js(`{"properties": {"n": {"minimum": 5, "maximum": 10}}}`), `{"n": 5}`, true},
		{js(`{"properties": {"n": {"minimum": 5, "exclusiveMinimum": true}}}`), `{"n": 5}`, false},
		{js(`{"properties": {"n": {"maximum": 10, "exclusiveMaximum": true}}}`), `{"n": 9.99}`, true},
		{js(`{"properties": {"n": {"maximum": 10}}}`), `{"n": {"$numberLong": "11"}}`, false},
		{js(`{"properties": {"n": {"minimum": 5}}}`), `{"n": "a string"}`, true},
		{js(`{"properties": {"n": {"multipleOf": 3}}}`), `{"n": 12}`, true},
		{js(`{"properties": {"n": {"multipleOf": 3}}}`), `{"n": 13}`, false},
		{js(`{"properties": {"n": {"multipleOf": 0.5}}}`), `{"n": 2.5}`, true},
		// strings: lengths in code points, pattern unanchored
		{js(`{"properties": {"s": {"minLength": 2, "maxLength": 3}}}`), `{"s": "héé"}`, true},
		{js(`{"properties": {"s": {"maxLength": 2}}}`), `{"s": "héé"}`, false},
		{js(`{"properties": {"s": {"pattern": "^[a-z]+@"}}}`), `{"s": "ann@example.org"}`, true},
		{js(`{"properties": {"s": {"pattern": "^[a-z]+@"}}}`), `{"s": "Ann@example.org"}`, false},
		{js(`{"properties": {"s": {"pattern": "x"}}}`), `{"s": 5}`, true},
		// arrays
		{js(`{"properties": {"a": {"minItems": 1, "maxItems": 2}}}`), `{"a": []}`, false},
		{js(`{"properties": {"a": {"items": {"bsonType": "int"}}}}`), `{"a": [1, 2]}`, true},
		{js(`{"properties": {"a": {"items": {"bsonType": "int"}}}}`), `{"a": [1, "x"]}`, false},
		{js(`{"properties": {"a": {"items": [{"bsonType": "string"}, {"bsonType": "int"}]}}}`), `{"a": ["x", 1, true]}`, true},
		{js(`{"properties": {"a": {"items": [{"bsonType": "string"}], "additionalItems": false}}}`), `{"a": ["x", 1]}`, false},
		{js(`{"properties": {"a": {"items": [{"bsonType": "string"}], "additionalItems": {"bsonType": "int"}}}}`), `{"a": ["x", 1, 2]}`, true},
		{js(`{"properties": {"a": {"uniqueItems": true}}}`), `{"a": [1, 2, 1.0]}`, false},
		{js(`{"properties": {"a": {"uniqueItems": true}}}`), `{"a": [1, 2, {"b": 1}]}`, true},
		// objects
		{js(`{"additionalProperties": false, "properties": {"_id": {}, "a": {}}}`), `{"_id": 1, "a": 2}`, true},
		{js(`{"additionalProperties": false, "properties": {"_id": {}, "a": {}}}`), `{"_id": 1, "b": 2}`, false},
		{js(`{"patternProperties": {"^x_": {"bsonType": "int"}}, "additionalProperties": {"bsonType": "string"}}`), `{"x_a": 1, "y": "s"}`, true},
		{js(`{"patternProperties": {"^x_": {"bsonType": "int"}}, "additionalProperties": {"bsonType": "string"}}`), `{"x_a": "1"}`, false},
		{js(`{"patternProperties": {"^x_": {"bsonType": "int"}}, "additionalProperties": {"bsonType": "string"}}`), `{"y": 2}`, false},
		{js(`{"minProperties": 2}`), `{"a": 1}`, false},
		{js(`{"maxProperties": 2}`), `{"a": 1, "b": 2}`, true},
		{js(`{"properties": {"o": {"required": ["k"], "properties": {"k": {"enum": ["x", "y"]}}}}}`), `{"o": {"k": "y"}}`, true},
		{js(`{"properties": {"o": {"required": ["k"]}}}`), `{"o": {"j": 1}}`, false},
		{js(`{"properties": {"o": {"required": ["k"]}}}`), `{"o": 5}`, true},
		{js(`{"dependencies": {"card": ["billing"]}}`), `{"card": 1}`, false},
		{js(`{"dependencies": {"card": ["billing"]}}`), `{"name": 1}`, true},
		{js(`{"dependencies": {"card": {"required": ["cvv"]}}}`), `{"card": 1, "cvv": 2}`, true},
		// logic and enum
		{js(`{"properties": {"a": {"anyOf": [{"bsonType": "int"}, {"bsonType": "string"}]}}}`), `{"a": true}`, false},
		{js(`{"properties": {"a": {"oneOf": [{"minimum": 1}, {"maximum": 5}]}}}`), `{"a": 3}`, false},
		{js(`{"properties": {"a": {"oneOf": [{"minimum": 1}, {"maximum": 5}]}}}`), `{"a": 7}`, true},
		{js(`{"properties": {"a": {"allOf": [{"minimum": 1}, {"maximum": 5}]}}}`), `{"a": 7}`, false},
		{js(`{"properties": {"a": {"not": {"bsonType": "null"}}}}`), `{"a": null}`, false},
		{js(`{"properties": {"a": {"enum": [1, "x", [2]]}}}`), `{"a": 1.0}`, true},
		{js(`{"properties": {"a": {"enum": [1, "x", [2]]}}}`), `{"a": [2]}`, true},
		{js(`{"properties": {"a": {"enum": [1, "x", [2]]}}}`), `{"a": 2}`, false},
		{js(`{"enum": [{"_id": 1}]}`), `{"_id": 1}`, true},
		{js(`{"title": "t", "description": "d"}`), `{}`, true},
		// inside $and/$or with other operators
		{`{"$or": [{"a": 1}, ` + js(`{"required": ["b"]}`) + `]}`, `{"b": 1}`, true},
	})
}

func TestJSONSchemaErrors(t *testing.T) {
	cases := []struct {
		schema string
		code   int32
		msg    string
	}{
		{`{"foo": 1}`, 9, "Unknown $jsonSchema keyword: foo"},
		{`{"format": "email"}`, 9, "$jsonSchema keyword 'format' is not currently supported"},
		{`{"properties": {"a": {"$ref": "#/x"}}}`, 9, "$jsonSchema keyword '$ref' is not currently supported"},
		{`{"type": "integer"}`, 9, "$jsonSchema type 'integer' is not currently supported."},
		{`{"type": "object", "bsonType": "object"}`, 9, "Cannot specify both $jsonSchema keywords 'type' and 'bsonType'"},
		{`{"bsonType": "bogus"}`, 2, "Unknown type name alias: bogus"},
		{`{"bsonType": 3}`, 14, "$jsonSchema keyword 'bsonType' must be either a string or an array of strings"},
		{`{"bsonType": ["int", "int"]}`, 9, "$jsonSchema keyword 'bsonType' has duplicate value: int"},
		{`{"required": []}`, 9, "$jsonSchema keyword 'required' cannot be an empty array"},
		{`{"required": ["a", "a"]}`, 9, "$jsonSchema keyword 'required' array cannot contain duplicate values"},
		{`{"required": [1]}`, 14, ""},
		{`{"minimum": "x"}`, 14, "$jsonSchema keyword 'minimum' must be a number"},
		{`{"exclusiveMinimum": true}`, 9, "$jsonSchema keyword 'minimum' must be a present if exclusiveMinimum is present"},
		{`{"maximum": 1, "exclusiveMaximum": 1}`, 14, "$jsonSchema keyword 'exclusiveMaximum' must be a boolean"},
		{`{"multipleOf": 0}`, 9, "$jsonSchema keyword 'multipleOf' must have a positive value"},
		{`{"minLength": -1}`, 9, "Expected a positive number in: minLength: -1"},
		{`{"minLength": 1.5}`, 9, ""},
		{`{"pattern": "("}`, 51091, ""},
		{`{"properties": {"a": 1}}`, 14, "Nested schema for $jsonSchema property 'a' must be an object"},
		{`{"anyOf": []}`, 2, "$jsonSchema keyword 'anyOf' must be a non-empty array"},
		{`{"enum": [1, 1.0]}`, 9, "$jsonSchema keyword 'enum' array cannot contain duplicate values."},
		{`{"items": 1}`, 14, ""},
		{`{"additionalProperties": 1}`, 14, "$jsonSchema keyword 'additionalProperties' must be an object or a boolean"},
		{`{"dependencies": {"a": []}}`, 9, "property 'a' in $jsonSchema keyword 'dependencies' cannot be an empty array"},
		{`{"description": 1}`, 14, "$jsonSchema keyword 'description' must be of type string"},
		{`{"minimum": 1, "minimum": 2}`, 9, "Duplicate $jsonSchema keyword: minimum"},
	}
	for _, c := range cases {
		filter := `{"$jsonSchema": ` + c.schema + `}`
		_, err := ParseFilter(d(t, filter), nil)
		if err == nil {
			t.Errorf("%s: parsed, want code %d", c.schema, c.code)
			continue
		}
		if errCode(err) != c.code || (c.msg != "" && err.Error() != c.msg) {
			t.Errorf("%s = %d %q, want %d %q", c.schema, errCode(err), err, c.code, c.msg)
		}
	}
}
