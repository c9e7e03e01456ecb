package agg

import "testing"

const people = `[
 {"_id":1,"name":"ann","age":30,"city":"paris","tags":["a","b"]},
 {"_id":2,"name":"bob","age":25,"city":"rome","tags":[]},
 {"_id":3,"name":"cid","age":35,"city":"paris"},
 {"_id":4,"name":"dan","age":null,"city":"oslo","tags":"x"}
]`

func TestBasicStages(t *testing.T) {
	runCases(t, []pipeCase{
		{name: "match", input: people, pipeline: `[{"$match":{"city":"paris"}}]`,
			want: `[{"_id":1,"name":"ann","age":30,"city":"paris","tags":["a","b"]},{"_id":3,"name":"cid","age":35,"city":"paris"}]`},
		{name: "match expr", input: people, pipeline: `[{"$match":{"$expr":{"$gt":["$age",{"$add":[20,8]}]}}},{"$project":{"_id":1}}]`,
			want: `[{"_id":1},{"_id":3}]`},
		{name: "match expr and filter", input: people, pipeline: `[{"$match":{"city":"paris","$expr":{"$lt":["$age",32]}}},{"$project":{"name":1,"_id":0}}]`,
			want: `[{"name":"ann"}]`},
		{name: "match not object", input: people, pipeline: `[{"$match":1}]`, code: 15959},
		{name: "project inclusion", input: people, pipeline: `[{"$project":{"name":1}}]`,
			want: `[{"_id":1,"name":"ann"},{"_id":2,"name":"bob"},{"_id":3,"name":"cid"},{"_id":4,"name":"dan"}]`},
		{name: "project computed", input: `[{"_id":1,"a":{"b":2,"c":3},"x":5}]`, pipeline: `[{"$project":{"_id":0,"s":{"$add":["$a.b","$x"]},"a.c":1,"lit":{"$literal":1}}}]`,
			want: `[{"a":{"c":3},"s":7,"lit":1}]`},
		{name: "project exclusion", input: `[{"_id":1,"a":{"b":2,"c":3},"x":5}]`, pipeline: `[{"$project":{"a.b":0,"x":0}}]`,
			want: `[{"_id":1,"a":{"c":3}}]`},
		{name: "project through arrays", input: `[{"_id":1,"a":[{"b":1,"c":2},3,{"c":4},[{"b":5}]]}]`, pipeline: `[{"$project":{"a.b":1}}]`,
			want: `[{"_id":1,"a":[{"b":1},{},[{"b":5}]]}]`},
		{name: "project exclusion arrays", input: `[{"_id":1,"a":[{"b":1,"c":2},3]}]`, pipeline: `[{"$project":{"a.b":0,"_id":0}}]`,
			want: `[{"a":[{"c":2},3]}]`},
		{name: "project nested spec", input: `[{"_id":1,"a":{"b":2,"c":3}}]`, pipeline: `[{"$project":{"a":{"b":1,"d":"$a.c"}}}]`,
			want: `[{"_id":1,"a":{"b":2,"d":3}}]`},
		{name: "project mixed", input: people, pipeline: `[{"$project":{"a":1,"b":0}}]`, code: 31254},
		{name: "project mixed 2", input: people, pipeline: `[{"$project":{"b":0,"a":1}}]`, code: 31253},
		{name: "project collision", input: people, pipeline: `[{"$project":{"a":1,"a.b":1}}]`, code: 31250},
		{name: "project empty", input: people, pipeline: `[{"$project":{}}]`, code: 51272},
		{name: "project remove", input: `[{"_id":1,"a":1}]`, pipeline: `[{"$project":{"a":"$$REMOVE","b":"$a"}}]`,
			want: `[{"_id":1,"b":1}]`},
		{name: "addFields", input: `[{"_id":1,"a":{"b":1},"c":2}]`, pipeline: `[{"$addFields":{"c":{"$multiply":["$c",10]},"a.d":"$c","e":true}}]`,
			want: `[{"_id":1,"a":{"b":1,"d":2},"c":20,"e":true}]`},
		{name: "set into array", input: `[{"_id":1,"a":[{"b":1},2]}]`, pipeline: `[{"$set":{"a.c":7}}]`,
			want: `[{"_id":1,"a":[{"b":1,"c":7},{"c":7}]}]`},
		{name: "set scalar to doc", input: `[{"_id":1,"a":5}]`, pipeline: `[{"$set":{"a.b":1}}]`,
			want: `[{"_id":1,"a":{"b":1}}]`},
		{name: "set nested object spec", input: `[{"_id":1,"a":{"x":1}}]`, pipeline: `[{"$set":{"a":{"y":2}}}]`,
			want: `[{"_id":1,"a":{"x":1,"y":2}}]`},
		{name: "addFields not object", input: people, pipeline: `[{"$addFields":1}]`, code: 40272},
		{name: "unset", input: `[{"_id":1,"a":{"b":1,"c":2},"d":3}]`, pipeline: `[{"$unset":["a.b","d"]}]`,
			want: `[{"_id":1,"a":{"c":2}}]`},
		{name: "unset string", input: `[{"_id":1,"d":3}]`, pipeline: `[{"$unset":"d"}]`, want: `[{"_id":1}]`},
		{name: "unset bad", input: people, pipeline: `[{"$unset":[1]}]`, code: 31120},
		{name: "unset empty", input: people, pipeline: `[{"$unset":[]}]`, code: 31119},
		{name: "limit skip", input: people, pipeline: `[{"$skip":1},{"$limit":2},{"$project":{"_id":1}}]`,
			want: `[{"_id":2},{"_id":3}]`},
		{name: "limit zero", input: people, pipeline: `[{"$limit":0}]`, code: 15958},
		{name: "limit string", input: people, pipeline: `[{"$limit":"a"}]`, code: 15957},
		{name: "skip negative", input: people, pipeline: `[{"$skip":-1}]`, code: 15956},
		{name: "count", input: people, pipeline: `[{"$match":{"city":"paris"}},{"$count":"n"}]`, want: `[{"n":2}]`},
		{name: "count empty", input: people, pipeline: `[{"$match":{"city":"nowhere"}},{"$count":"n"}]`, want: `[]`},
		{name: "count dollar", input: people, pipeline: `[{"$count":"$n"}]`, code: 40158},
		{name: "count dot", input: people, pipeline: `[{"$count":"a.b"}]`, code: 40160},
		{name: "sort", input: people, pipeline: `[{"$sort":{"age":-1}},{"$project":{"_id":1}}]`,
			want: `[{"_id":3},{"_id":1},{"_id":2},{"_id":4}]`},
		{name: "sort stable", input: people, pipeline: `[{"$sort":{"city":1}},{"$project":{"_id":1}}]`,
			want: `[{"_id":4},{"_id":1},{"_id":3},{"_id":2}]`},
		{name: "sort limit topk", input: people, pipeline: `[{"$sort":{"age":1}},{"$limit":2},{"$project":{"_id":1}}]`,
			want: `[{"_id":4},{"_id":2}]`},
		{name: "sort empty", input: people, pipeline: `[{"$sort":{}}]`, code: 15976},
		{name: "unknown stage", input: people, pipeline: `[{"$bogus":{}}]`, code: 40324},
		{name: "two fields", input: people, pipeline: `[{"$match":{},"$limit":1}]`, code: 40323},
		{name: "unsupported stage", input: people, pipeline: `[{"$graphLookup":{}}]`, code: 238},
		{name: "replaceRoot", input: `[{"_id":1,"a":{"x":1}}]`, pipeline: `[{"$replaceRoot":{"newRoot":"$a"}}]`, want: `[{"x":1}]`},
		{name: "replaceWith merge", input: `[{"_id":1,"a":{"x":1}}]`, pipeline: `[{"$replaceWith":{"$mergeObjects":["$a",{"y":2}]}}]`, want: `[{"x":1,"y":2}]`},
		{name: "replaceRoot missing", input: `[{"_id":1}]`, pipeline: `[{"$replaceRoot":{"newRoot":"$a"}}]`, code: 40228},
		{name: "replaceRoot no newRoot", input: `[{"_id":1}]`, pipeline: `[{"$replaceRoot":{}}]`, code: 40414},
		{name: "let variables", input: people, let: `{"min":30,"label":"old"}`,
			pipeline: `[{"$match":{"$expr":{"$gte":["$age","$$min"]}}},{"$project":{"_id":1,"l":"$$label"}}]`,
			want:     `[{"_id":1,"l":"old"},{"_id":3,"l":"old"}]`},
		{name: "let in match query", input: people, let: `{"c":"rome"}`,
			pipeline: `[{"$match":{"$expr":{"$eq":["$city","$$c"]}}},{"$project":{"_id":1}}]`,
			want:     `[{"_id":2}]`},
		{name: "undefined variable", input: people, pipeline: `[{"$project":{"x":"$$nope"}}]`, code: 17276},
		{name: "sample all", input: people, pipeline: `[{"$sample":{"size":10}},{"$count":"n"}]`, want: `[{"n":4}]`},
		{name: "sample some", input: people, pipeline: `[{"$sample":{"size":2}},{"$count":"n"}]`, want: `[{"n":2}]`},
		{name: "sample bad", input: people, pipeline: `[{"$sample":{"size":-1}}]`, code: 28747},
		{name: "sample no size", input: people, pipeline: `[{"$sample":{}}]`, code: 28749},
	})
}

func TestRedact(t *testing.T) {
	input := `[{"_id":1,"level":1,"a":{"level":2,"x":1},"b":{"level":1,"y":2},"c":[{"level":3},{"level":1,"z":3},4]}]`
	runCases(t, []pipeCase{
		{name: "descend prune", input: input,
			pipeline: `[{"$redact":{"$cond":{"if":{"$lte":["$level",1]},"then":"$$DESCEND","else":"$$PRUNE"}}}]`,
			want:     `[{"_id":1,"level":1,"b":{"level":1,"y":2},"c":[{"level":1,"z":3},4]}]`},
		{name: "keep", input: input, pipeline: `[{"$redact":"$$KEEP"},{"$project":{"_id":1}}]`, want: `[{"_id":1}]`},
		{name: "prune all", input: input, pipeline: `[{"$redact":"$$PRUNE"}]`, want: `[]`},
		{name: "bad value", input: input, pipeline: `[{"$redact":"x"}]`, code: 17053},
	})
}

func TestUnwind(t *testing.T) {
	runCases(t, []pipeCase{
		{name: "string", input: people, pipeline: `[{"$unwind":"$tags"},{"$project":{"tags":1}}]`,
			want: `[{"_id":1,"tags":"a"},{"_id":1,"tags":"b"},{"_id":4,"tags":"x"}]`},
		{name: "preserve", input: people, pipeline: `[{"$unwind":{"path":"$tags","preserveNullAndEmptyArrays":true}},{"$project":{"tags":1}}]`,
			want: `[{"_id":1,"tags":"a"},{"_id":1,"tags":"b"},{"_id":2},{"_id":3},{"_id":4,"tags":"x"}]`},
		{name: "index", input: people, pipeline: `[{"$unwind":{"path":"$tags","includeArrayIndex":"i","preserveNullAndEmptyArrays":true}},{"$project":{"tags":1,"i":1}}]`,
			want: `[{"_id":1,"tags":"a","i":{"$numberLong":"0"}},{"_id":1,"tags":"b","i":{"$numberLong":"1"}},{"_id":2,"i":null},{"_id":3,"i":null},{"_id":4,"tags":"x","i":null}]`},
		{name: "nested path", input: `[{"_id":1,"a":{"b":[1,2]}}]`, pipeline: `[{"$unwind":"$a.b"}]`,
			want: `[{"_id":1,"a":{"b":1}},{"_id":1,"a":{"b":2}}]`},
		{name: "no dollar", input: people, pipeline: `[{"$unwind":"tags"}]`, code: 28818},
		{name: "bad option", input: people, pipeline: `[{"$unwind":{"path":"$a","x":1}}]`, code: 28811},
		{name: "no path", input: people, pipeline: `[{"$unwind":{}}]`, code: 28812},
		{name: "bad type", input: people, pipeline: `[{"$unwind":1}]`, code: 15981},
		{name: "index dollar", input: people, pipeline: `[{"$unwind":{"path":"$a","includeArrayIndex":"$i"}}]`, code: 28822},
	})
}
