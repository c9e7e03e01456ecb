package expr

import "testing"

func TestArrays(t *testing.T) {
	runCases(t, []evalCase{
		{expr: `{"$arrayElemAt": [[1, 2, 3], 0]}`, want: `int 1`},
		{expr: `{"$arrayElemAt": [[1, 2, 3], -1]}`, want: `int 3`},
		{expr: `{"$arrayElemAt": [[1, 2, 3], 5]}`, want: `missing`},
		{expr: `{"$arrayElemAt": [[1, 2, 3], -4]}`, want: `missing`},
		{expr: `{"$arrayElemAt": ["$a", 0]}`, want: `null null`},
		{expr: `{"$arrayElemAt": [1, 0]}`, code: 28689},
		{expr: `{"$arrayElemAt": [[1], "0"]}`, code: 28690},
		{expr: `{"$arrayElemAt": [[1], 0.5]}`, code: 28691},
		{expr: `{"$first": [[1, 2]]}`, want: `int 1`},
		{expr: `{"$last": [[1, 2]]}`, want: `int 2`},
		{expr: `{"$first": [[]]}`, want: `missing`},
		{expr: `{"$first": "$missing"}`, want: `null null`},
		{expr: `{"$last": 1}`, code: 28689},
		{expr: `{"$size": [[1, 2]]}`, want: `int 2`},
		{expr: `{"$size": "$missing"}`, code: 17124},
		{expr: `{"$isArray": [[1]]}`, want: `bool true`},
		{expr: `{"$isArray": [1]}`, want: `bool false`},
		{expr: `{"$concatArrays": [[1], [2, [3]], []]}`, want: `array [1,2,[3]]`},
		{expr: `{"$concatArrays": [[1], null]}`, want: `null null`},
		{expr: `{"$concatArrays": [[1], 1]}`, code: 28664},
		{expr: `{"$reverseArray": [[1, 2, 3]]}`, want: `array [3,2,1]`},
		{expr: `{"$reverseArray": 1}`, code: 34435},
		{expr: `{"$slice": [[1, 2, 3, 4], 2]}`, want: `array [1,2]`},
		{expr: `{"$slice": [[1, 2, 3, 4], -2]}`, want: `array [3,4]`},
		{expr: `{"$slice": [[1, 2, 3, 4], 1, 2]}`, want: `array [2,3]`},
		{expr: `{"$slice": [[1, 2, 3, 4], -3, 2]}`, want: `array [2,3]`},
		{expr: `{"$slice": [[1, 2, 3, 4], 10, 2]}`, want: `array []`},
		{expr: `{"$slice": [[1], 1, 0]}`, code: 28729},
		{expr: `{"$slice": [1, 1]}`, code: 28724},
		{expr: `{"$slice": [[1]]}`, code: 28667},
		{expr: `{"$in": [2, [1, 2]]}`, want: `bool true`},
		{expr: `{"$in": [2.0, [1, {"$numberLong": "2"}]]}`, want: `bool true`},
		{expr: `{"$in": [3, [1, 2]]}`, want: `bool false`},
		{expr: `{"$in": [3, "$missing"]}`, code: 40081},
		{expr: `{"$indexOfArray": [[1, 2, 3, 2], 2]}`, want: `int 1`},
		{expr: `{"$indexOfArray": [[1, 2, 3, 2], 2, 2]}`, want: `int 3`},
		{expr: `{"$indexOfArray": [[1, 2, 3, 2], 2, 2, 3]}`, want: `int -1`},
		{expr: `{"$indexOfArray": [null, 2]}`, want: `null null`},
		{expr: `{"$indexOfArray": [1, 2]}`, code: 40090},
		{expr: `{"$range": [0, 5]}`, want: `array [0,1,2,3,4]`},
		{expr: `{"$range": [0, 10, 3]}`, want: `array [0,3,6,9]`},
		{expr: `{"$range": [5, 0, -2]}`, want: `array [5,3,1]`},
		{expr: `{"$range": [0, 5, -1]}`, want: `array []`},
		{expr: `{"$range": [0, 5, 0]}`, code: 34449},
		{expr: `{"$range": [0.5, 5]}`, code: 34444},
		{expr: `{"$range": ["a", 5]}`, code: 34443},
		{expr: `{"$range": [0, 2000000000]}`, code: 146},
		{expr: `{"$zip": {"inputs": [[1, 2], ["a", "b", "c"]]}}`, want: `array [[1,"a"],[2,"b"]]`},
		{expr: `{"$zip": {"inputs": [[1, 2], ["a", "b", "c"]], "useLongestLength": true, "defaults": [0, "z"]}}`, want: `array [[1,"a"],[2,"b"],[0,"c"]]`},
		{expr: `{"$zip": {"inputs": [[1], null]}}`, want: `null null`},
		{expr: `{"$zip": {"inputs": [[1], 1]}}`, code: 34468},
		{expr: `{"$zip": {"inputs": [[1]], "defaults": [1]}}`, code: 34466},
		{expr: `{"$sortArray": {"input": [3, 1, 2], "sortBy": 1}}`, want: `array [1,2,3]`},
		{expr: `{"$sortArray": {"input": [3, "a", 1], "sortBy": -1}}`, want: `array ["a",3,1]`},
		{expr: `{"$sortArray": {"input": [{"a": 2}, {"a": 1}, {}], "sortBy": {"a": 1}}}`, want: `array [{},{"a":1},{"a":2}]`},
		{expr: `{"$sortArray": {"input": 1, "sortBy": 1}}`, code: 2942504},
		{expr: `{"$filter": {"input": [1, 2, 3, 4], "cond": {"$gt": ["$$this", 2]}}}`, want: `array [3,4]`},
		{expr: `{"$filter": {"input": [1, 2, 3, 4], "as": "x", "cond": {"$gt": ["$$x", 1]}, "limit": 2}}`, want: `array [2,3]`},
		{expr: `{"$filter": {"input": null, "cond": true}}`, want: `null null`},
		{expr: `{"$filter": {"input": 1, "cond": true}}`, code: 28651},
		{expr: `{"$filter": {"input": [1], "cond": true, "limit": 0}}`, code: 327392},
		{expr: `{"$filter": {"input": [1]}}`, code: 28650},
		{expr: `{"$filter": {"input": [1], "as": "x", "cond": "$$this"}}`, code: 17276},
		{expr: `{"$map": {"input": [1, 2], "as": "x", "in": {"$multiply": ["$$x", 10]}}}`, want: `array [10,20]`},
		{expr: `{"$map": {"input": "$a", "in": "$$this.b"}}`, doc: `{"a": [{"b": 1}, {}]}`, want: `array [1,null]`},
		{expr: `{"$map": {"input": [[1, 2], [3]], "as": "o", "in": {"$map": {"input": "$$o", "in": {"$add": ["$$this", 1]}}}}}`, want: `array [[2,3],[4]]`},
		{expr: `{"$map": {"input": 1, "in": 1}}`, code: 16883},
		{expr: `{"$map": {"input": [1], "in": 1, "x": 1}}`, code: 16879},
		{expr: `{"$reduce": {"input": [1, 2, 3], "initialValue": 0, "in": {"$add": ["$$value", "$$this"]}}}`, want: `int 6`},
		{expr: `{"$reduce": {"input": ["a", "b"], "initialValue": "", "in": {"$concat": ["$$value", "$$this"]}}}`, want: `string "ab"`},
		{expr: `{"$reduce": {"input": [[1], [2, 3]], "initialValue": [], "in": {"$concatArrays": ["$$value", "$$this"]}}}`, want: `array [1,2,3]`},
		{expr: `{"$reduce": {"input": null, "initialValue": 0, "in": 1}}`, want: `null null`},
		{expr: `{"$reduce": {"input": 1, "initialValue": 0, "in": 1}}`, code: 40080},
		{expr: `{"$reduce": {"input": [], "in": 1}}`, code: 40078},
		{expr: `{"$arrayToObject": [[["a", 1], ["b", 2], ["a", 3]]]}`, want: `object {"a":3,"b":2}`},
		{expr: `{"$arrayToObject": [[{"k": "a", "v": 1}]]}`, want: `object {"a":1}`},
		{expr: `{"$arrayToObject": [[["a", 1], {"k": "a", "v": 1}]]}`, code: 40396},
		{expr: `{"$arrayToObject": [[{"k": "a", "v": 1}, ["a", 1]]]}`, code: 40391},
		{expr: `{"$arrayToObject": [[["a"]]]}`, code: 40397},
		{expr: `{"$arrayToObject": [[[1, 1]]]}`, code: 40395},
		{expr: `{"$arrayToObject": [[{"k": "a"}]]}`, code: 40392},
		{expr: `{"$arrayToObject": [[1]]}`, code: 40398},
		{expr: `{"$arrayToObject": null}`, want: `null null`},
		{expr: `{"$objectToArray": {"a": 1, "b": {"c": 2}}}`, want: `array [{"k":"a","v":1},{"k":"b","v":{"c":2}}]`},
		{expr: `{"$objectToArray": [1]}`, code: 40390},
	})
}

func TestSets(t *testing.T) {
	runCases(t, []evalCase{
		{expr: `{"$setUnion": [[3, 1], [2, 1, 1.0]]}`, want: `array [1,2,3]`},
		{expr: `{"$setUnion": [[1], null]}`, want: `null null`},
		{expr: `{"$setUnion": [[1], 1]}`, code: 17043},
		{expr: `{"$setIntersection": [[1, 2, 3], [2, 3, 4], [3, 2]]}`, want: `array [2,3]`},
		{expr: `{"$setIntersection": []}`, want: `array []`},
		{expr: `{"$setDifference": [[3, 1, 2, 1], [2]]}`, want: `array [3,1]`},
		{expr: `{"$setDifference": [[1], "a"]}`, code: 17049},
		{expr: `{"$setEquals": [[1, 2, 2], [2, 1]]}`, want: `bool true`},
		{expr: `{"$setEquals": [[1], [2]]}`, want: `bool false`},
		{expr: `{"$setEquals": [[1]]}`, code: 17045},
		{expr: `{"$setIsSubset": [[1], [2, 1]]}`, want: `bool true`},
		{expr: `{"$setIsSubset": [[1, 3], [2, 1]]}`, want: `bool false`},
		{expr: `{"$setIsSubset": [null, [2, 1]]}`, code: 17046},
		{expr: `{"$anyElementTrue": [[0, null, 1]]}`, want: `bool true`},
		{expr: `{"$anyElementTrue": [[]]}`, want: `bool false`},
		{expr: `{"$allElementsTrue": [[1, "a", []]]}`, want: `bool true`},
		{expr: `{"$allElementsTrue": [[1, false]]}`, want: `bool false`},
		{expr: `{"$allElementsTrue": [1]}`, code: 17040},
	})
}

func TestObjects(t *testing.T) {
	runCases(t, []evalCase{
		{expr: `{"$mergeObjects": [{"a": 1, "b": 1}, null, {"b": 2, "c": 3}]}`, want: `object {"a":1,"b":2,"c":3}`},
		{expr: `{"$mergeObjects": "$missing"}`, want: `object {}`},
		{expr: `{"$mergeObjects": [1]}`, code: 40400},
		{expr: `{"$getField": "a.b"}`, doc: `{"a.b": 1, "a": {"b": 2}}`, want: `int 1`},
		{expr: `{"$getField": {"field": "x", "input": {"x": 5}}}`, want: `int 5`},
		{expr: `{"$getField": {"field": {"$literal": "$p"}, "input": "$$ROOT"}}`, doc: `{"$p": 3}`, want: `int 3`},
		{expr: `{"$getField": {"field": "x", "input": null}}`, want: `null null`},
		{expr: `{"$getField": {"field": "x", "input": 1}}`, code: 3041705},
		{expr: `{"$getField": {"field": "$x", "input": {}}}`, code: 5654600},
		{expr: `{"$getField": {"field": "x"}}`, code: 3041703},
		{expr: `{"$getField": {"$literal": "a"}}`, doc: `{"a": 4}`, want: `int 4`},
		{expr: `{"$expr": {"$add": [1, 1]}}`, want: `int 2`},
		{expr: `{"$toInt": ["1", "2"]}`, code: 50723},
		{expr: `{"$getField": {"field": 1, "input": {}}}`, code: 5654602},
		{expr: `{"$getField": {"input": {}}}`, code: 3041702},
		{expr: `{"$setField": {"field": "b", "input": {"a": 1, "b": 2}, "value": 5}}`, want: `object {"a":1,"b":5}`},
		{expr: `{"$setField": {"field": "c.d", "input": {"a": 1}, "value": "$$REMOVE"}}`, want: `object {"a":1}`},
		{expr: `{"$setField": {"field": "c.d", "input": {"a": 1}, "value": 2}}`, want: `object {"a":1,"c.d":2}`},
		{expr: `{"$unsetField": {"field": "a", "input": {"a": 1, "b": 2}}}`, want: `object {"b":2}`},
		{expr: `{"$setField": {"field": "a", "input": {}}}`, code: 4161103},
		{expr: `{"$rand": 1}`, code: 10065},
		{expr: `{"$rand": {"a": 1}}`, code: 3040501},
	})
}

func TestRand(t *testing.T) {
	x, err := Parse(value(t, `{"$rand": {}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	env := NewEnv(nil)
	for i := 0; i < 100; i++ {
		v, err := Eval(x, nil, env)
		if err != nil || v.Type != 1 || v.Double() < 0 || v.Double() >= 1 {
			t.Fatalf("$rand gave %v, %v", v, err)
		}
	}
}
