package expr

import (
	"testing"

	"github.com/cairndb/cairn/internal/mongoerr"
)

// TestNamedArgsRefusals checks the operators that read an object of named
// arguments through namedArgs or namedValues: an argument that is not an
// object, a name the operator does not take (refused before its value is
// read, as mongod does: {$bogus: 1} there is not reported as an unknown
// operator), and the document order in which the values are read (an
// invalid value before an unknown name is reported first).
func TestNamedArgsRefusals(t *testing.T) {
	const bad = `{"$bogus": 1}`
	runCases(t, []evalCase{
		{expr: `{"$regexMatch": 1}`, code: mongoerr.RegexExprNotObject, msg: "$regexMatch expects an object of named arguments but found: int"},
		{expr: `{"$regexFind": {"input": "a", "regex": "a", "x": ` + bad + `}}`, code: mongoerr.RegexUnknownArgument, msg: "$regexFind found an unknown argument: x"},
		{expr: `{"$regexFind": {"input": ` + bad + `, "x": 1}}`, code: mongoerr.InvalidPipelineOperator},
		{expr: `{"$regexMatch": {"input": "abc", "regex": "b"}}`, want: "bool true"},

		{expr: `{"$ltrim": []}`, code: mongoerr.TrimNotObject, msg: "$ltrim only supports an object as an argument, found array"},
		{expr: `{"$trim": {"input": " a ", "x": ` + bad + `}}`, code: mongoerr.TrimUnknownArgument, msg: "$trim found an unknown argument: x"},
		{expr: `{"$trim": {"input": " a ", "chars": " "}}`, want: `string "a"`},

		{expr: `{"$replaceAll": "a"}`, code: mongoerr.ReplaceNotObject, msg: "$replaceAll requires an object as an argument, found: string"},
		{expr: `{"$replaceOne": {"input": "a", "find": "a", "replacement": "b", "x": ` + bad + `}}`, code: mongoerr.ReplaceUnknownArgument},
		{expr: `{"$replaceOne": {"input": "aa", "find": "a", "replacement": "b"}}`, want: `string "ba"`},

		{expr: `{"$convert": 1}`, code: mongoerr.FailedToParse, msg: "$convert expects an object of named arguments but found: int"},
		{expr: `{"$convert": {"input": 1, "to": "string", "x": ` + bad + `}}`, code: mongoerr.FailedToParse, msg: "$convert found an unknown argument: x"},
		{expr: `{"$convert": {"input": 1, "to": "string"}}`, want: `string "1"`},

		{expr: `{"$firstN": 1}`, code: mongoerr.TopNSpecNotObject, msg: "specification must be an object; found 1"},
		{expr: `{"$firstN": {"input": [1], "n": 1, "x": ` + bad + `}}`, code: mongoerr.NUnknownArgument, msg: "Unknown argument for 'n' operator: x"},

		{expr: `{"$cond": {"if": true, "then": 1, "else": 2, "x": ` + bad + `}}`, code: mongoerr.CondUnknownParameter, msg: "Unrecognized parameter to $cond: x"},
		{expr: `{"$cond": {"if": ` + bad + `, "x": 1}}`, code: mongoerr.InvalidPipelineOperator},
		{expr: `{"$cond": {"if": false, "then": 1, "else": 2}}`, want: "int 2"},

		{expr: `{"$switch": {"branches": [{"case": true, "then": 1, "x": ` + bad + `}]}}`, code: mongoerr.SwitchBranchUnknownArgument, msg: "$switch found an unknown argument to a branch: x"},
		{expr: `{"$switch": {"branches": [{"case": true, "then": 1}]}}`, want: "int 1"},

		{expr: `{"$year": {"date": 1, "x": ` + bad + `}}`, code: mongoerr.DateUnknownOption, msg: `unrecognized option to $year: "x"`},
		{expr: `{"$dateToString": 1}`, code: mongoerr.DateToStringNotObject, msg: "$dateToString only supports an object as its argument"},
		{expr: `{"$dateToString": {"date": 1, "x": ` + bad + `}}`, code: mongoerr.DateToStringUnknownArgument, msg: "Unrecognized argument to $dateToString: x"},
		{expr: `{"$dateFromString": 1}`, code: mongoerr.DateFromStringNotObject, msg: "$dateFromString only supports an object as an argument, found: int"},
		{expr: `{"$dateAdd": 1}`, code: mongoerr.DateArithNotObject, msg: "$dateAdd expects an object as its argument"},
		{expr: `{"$dateSubtract": {"x": 1}}`, code: mongoerr.DateArithUnknownArgument, msg: "Unrecognized argument to $dateSubtract: x. Expected arguments are startDate, unit, amount, and optionally timezone."},

		{expr: `{"$filter": 1}`, code: mongoerr.FilterNotObject, msg: "$filter only supports an object as its argument"},
		{expr: `{"$filter": {"input": [1], "cond": true, "x": 1}}`, code: mongoerr.FilterUnknownParameter, msg: "Unrecognized parameter to $filter: x"},
		{expr: `{"$map": 1}`, code: mongoerr.MapNotObject, msg: "$map only supports an object as its argument"},
		{expr: `{"$map": {"input": [1], "in": 1, "x": 1}}`, code: mongoerr.MapUnknownParameter, msg: "Unrecognized parameter to $map: x"},
		{expr: `{"$map": {"input": [1, 2], "in": {"$add": ["$$this", 1]}}}`, want: "array [2,3]"},
		{expr: `{"$reduce": 1}`, code: mongoerr.ReduceNotObject, msg: "$reduce requires an object as an argument, found: int"},
		{expr: `{"$reduce": {"input": [1], "initialValue": 0, "in": 1, "x": 1}}`, code: mongoerr.ReduceUnknownArgument, msg: "$reduce found an unknown argument: x"},
		{expr: `{"$let": 1}`, code: mongoerr.LetNotObject, msg: "$let only supports an object as its argument"},
		{expr: `{"$unsetField": 1}`, code: mongoerr.SetFieldNotObject, msg: "$unsetField only supports an object as its argument"},
		{expr: `{"$unsetField": {"field": "a", "input": {}, "value": 1}}`, code: mongoerr.SetFieldUnknownArgument, msg: "$unsetField found an unknown argument: value"},
		{expr: `{"$setField": {"field": "a", "input": {}, "value": 1}}`, want: `object {"a":1}`},
	})
}

// TestNamedAccumulatorArgsRefusals is TestNamedArgsRefusals for the
// accumulators whose specification is an object of named arguments.
func TestNamedAccumulatorArgsRefusals(t *testing.T) {
	for _, c := range []struct {
		op, arg string
		code    int32
		msg     string
	}{
		{"$firstN", `1`, mongoerr.TopNSpecNotObject, "specification must be an object; found 1"},
		{"$lastN", `{"input": "$a", "n": 1, "x": 1}`, mongoerr.NUnknownArgument, "Unknown argument for 'n' operator: x"},
		{"$top", `[]`, mongoerr.TopSpecNotObject, "specification must be an object; found []"},
		{"$top", `{"output": "$a", "sortBy": {"a": 1}, "n": 1}`, mongoerr.NAccumulatorUnknownArgument, "Unknown argument to $top 'n'"},
		{"$bottomN", `{"output": "$a", "sortBy": {"a": 1}, "n": 1, "x": 1}`, mongoerr.TopUnknownArgument, "Unknown argument to $bottomN 'x'"},
		{"$topN", `{"sortBy": {"a": 1}, "n": 1}`, mongoerr.TopMissingOutput, "Missing value for 'output'"},
	} {
		_, err := NewAccumulator(c.op, value(t, c.arg), nil)
		if errCode(err) != c.code || err.Error() != c.msg {
			t.Errorf("%s %s: got %v, want %d %q", c.op, c.arg, err, c.code, c.msg)
		}
	}
	acc, err := NewAccumulator("$topN", value(t, `{"output": "$a", "sortBy": {"a": -1}, "n": 2}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	env := NewEnv(nil)
	for _, d := range []string{`{"a": 1}`, `{"a": 3}`, `{"a": 2}`} {
		if err := acc.Add(doc(t, d), env); err != nil {
			t.Fatal(err)
		}
	}
	if got := show(t, acc.Result()); got != "array [3,2]" {
		t.Errorf("$topN: got %s", got)
	}
}
