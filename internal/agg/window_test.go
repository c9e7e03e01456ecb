package agg

import "testing"

const series = `[
 {"_id":1,"g":"a","t":1,"v":10},
 {"_id":2,"g":"a","t":2,"v":null},
 {"_id":3,"g":"a","t":4,"v":30},
 {"_id":4,"g":"b","t":1,"v":5},
 {"_id":5,"g":"b","t":3,"v":5}
]`

func TestSetWindowFields(t *testing.T) {
	runCases(t, []pipeCase{
		{name: "running sum", input: series,
			pipeline: `[{"$setWindowFields":{"partitionBy":"$g","sortBy":{"t":1},"output":{"s":{"$sum":"$v","window":{"documents":["unbounded","current"]}}}}},{"$project":{"s":1}}]`,
			want:     `[{"_id":1,"s":10},{"_id":2,"s":10},{"_id":3,"s":40},{"_id":4,"s":5},{"_id":5,"s":10}]`},
		{name: "whole partition", input: series,
			pipeline: `[{"$setWindowFields":{"partitionBy":"$g","output":{"n":{"$count":{}},"m":{"$max":"$v"}}}},{"$project":{"n":1,"m":1}}]`,
			want:     `[{"_id":1,"n":3,"m":30},{"_id":2,"n":3,"m":30},{"_id":3,"n":3,"m":30},{"_id":4,"n":2,"m":5},{"_id":5,"n":2,"m":5}]`},
		{name: "sliding documents", input: series,
			pipeline: `[{"$setWindowFields":{"sortBy":{"_id":1},"output":{"p":{"$push":"$_id","window":{"documents":[-1,1]}}}}},{"$project":{"p":1}}]`,
			want:     `[{"_id":1,"p":[1,2]},{"_id":2,"p":[1,2,3]},{"_id":3,"p":[2,3,4]},{"_id":4,"p":[3,4,5]},{"_id":5,"p":[4,5]}]`},
		{name: "range", input: series,
			pipeline: `[{"$setWindowFields":{"partitionBy":"$g","sortBy":{"t":1},"output":{"p":{"$push":"$_id","window":{"range":[-1,1]}}}}},{"$project":{"p":1}}]`,
			want:     `[{"_id":1,"p":[1,2]},{"_id":2,"p":[1,2]},{"_id":3,"p":[3]},{"_id":4,"p":[4]},{"_id":5,"p":[5]}]`},
		{name: "range current is the document", input: `[{"_id":1,"t":1},{"_id":2,"t":1},{"_id":3,"t":2}]`,
			pipeline: `[{"$setWindowFields":{"sortBy":{"t":1},"output":{"p":{"$push":"$_id","window":{"range":["unbounded","current"]}}}}},{"$project":{"p":1}}]`,
			want:     `[{"_id":1,"p":[1]},{"_id":2,"p":[1,2]},{"_id":3,"p":[1,2,3]}]`},
		{name: "range date without unit", input: `[{"t":{"$date":"2021-01-01T00:00:00Z"}}]`,
			pipeline: `[{"$setWindowFields":{"sortBy":{"t":1},"output":{"p":{"$sum":1,"window":{"range":[-1,0]}}}}}]`, code: 5429413},
		{name: "rank", input: `[{"_id":1,"s":5},{"_id":2,"s":7},{"_id":3,"s":5},{"_id":4,"s":9}]`,
			pipeline: `[{"$setWindowFields":{"sortBy":{"s":1},"output":{"r":{"$rank":{}},"d":{"$denseRank":{}},"n":{"$documentNumber":{}}}}},{"$project":{"r":1,"d":1,"n":1}}]`,
			want:     `[{"_id":1,"r":1,"d":1,"n":1},{"_id":3,"r":1,"d":1,"n":2},{"_id":2,"r":3,"d":2,"n":3},{"_id":4,"r":4,"d":3,"n":4}]`},
		{name: "shift", input: series,
			pipeline: `[{"$setWindowFields":{"partitionBy":"$g","sortBy":{"t":1},"output":{"prev":{"$shift":{"output":"$_id","by":-1,"default":0}}}}},{"$project":{"prev":1}}]`,
			want:     `[{"_id":1,"prev":0},{"_id":2,"prev":1},{"_id":3,"prev":2},{"_id":4,"prev":0},{"_id":5,"prev":4}]`},
		{name: "locf", input: series,
			pipeline: `[{"$setWindowFields":{"partitionBy":"$g","sortBy":{"t":1},"output":{"v":{"$locf":"$v"}}}},{"$project":{"v":1}}]`,
			want:     `[{"_id":1,"v":10},{"_id":2,"v":10},{"_id":3,"v":30},{"_id":4,"v":5},{"_id":5,"v":5}]`},
		{name: "linearFill", input: series,
			pipeline: `[{"$setWindowFields":{"partitionBy":"$g","sortBy":{"t":1},"output":{"v":{"$linearFill":"$v"}}}},{"$project":{"v":1}}]`,
			want:     `[{"_id":1,"v":10},{"_id":2,"v":16.666666666666668},{"_id":3,"v":30},{"_id":4,"v":5},{"_id":5,"v":5}]`},
		{name: "rank without sort", input: series, pipeline: `[{"$setWindowFields":{"output":{"r":{"$rank":{}}}}}]`, code: 5371602},
		{name: "documents window without sort", input: series, pipeline: `[{"$setWindowFields":{"output":{"r":{"$sum":1,"window":{"documents":[-1,0]}}}}}]`, code: 5339901},
		{name: "bad bounds order", input: series, pipeline: `[{"$setWindowFields":{"sortBy":{"t":1},"output":{"r":{"$sum":1,"window":{"documents":[1,0]}}}}}]`, code: 5339900},
		{name: "unknown function", input: series, pipeline: `[{"$setWindowFields":{"output":{"r":{"$nope":1}}}}]`, code: 9},
		{name: "derivative needs window", input: series, pipeline: `[{"$setWindowFields":{"sortBy":{"t":1},"output":{"r":{"$derivative":{"input":"$v"}}}}}]`, code: 5624901},
		{name: "derivative", input: `[{"_id":1,"t":0,"v":0},{"_id":2,"t":2,"v":4},{"_id":3,"t":4,"v":4}]`,
			pipeline: `[{"$setWindowFields":{"sortBy":{"t":1},"output":{"d":{"$derivative":{"input":"$v"},"window":{"documents":[-1,0]}}}}},{"$project":{"d":1}}]`,
			want:     `[{"_id":1,"d":null},{"_id":2,"d":2.0},{"_id":3,"d":0.0}]`},
		{name: "integral", input: `[{"_id":1,"t":0,"v":0},{"_id":2,"t":2,"v":4},{"_id":3,"t":4,"v":4}]`,
			pipeline: `[{"$setWindowFields":{"sortBy":{"t":1},"output":{"i":{"$integral":{"input":"$v"},"window":{"documents":["unbounded","current"]}}}}},{"$project":{"i":1}}]`,
			want:     `[{"_id":1,"i":0.0},{"_id":2,"i":4.0},{"_id":3,"i":12.0}]`},
		{name: "integral dates", input: `[{"_id":1,"t":{"$date":"2021-01-01T00:00:00Z"},"v":1},{"_id":2,"t":{"$date":"2021-01-01T02:00:00Z"},"v":3}]`,
			pipeline: `[{"$setWindowFields":{"sortBy":{"t":1},"output":{"i":{"$integral":{"input":"$v","unit":"hour"}}}}},{"$project":{"i":1}}]`,
			want:     `[{"_id":1,"i":4.0},{"_id":2,"i":4.0}]`},
		{name: "covariance", input: `[{"x":1,"y":2},{"x":2,"y":4},{"x":3,"y":6}]`,
			pipeline: `[{"$setWindowFields":{"output":{"p":{"$covariancePop":["$x","$y"]},"s":{"$covarianceSamp":["$x","$y"]}}}},{"$project":{"_id":0,"p":1,"s":1}}]`,
			want:     `[{"p":1.3333333333333333,"s":2.0},{"p":1.3333333333333333,"s":2.0},{"p":1.3333333333333333,"s":2.0}]`},
		{name: "expMovingAvg", input: `[{"t":1,"v":10},{"t":2,"v":20},{"t":3,"v":"x"},{"t":4,"v":40}]`,
			pipeline: `[{"$setWindowFields":{"sortBy":{"t":1},"output":{"e":{"$expMovingAvg":{"input":"$v","alpha":0.5}}}}},{"$project":{"_id":0,"e":1}}]`,
			want:     `[{"e":10.0},{"e":15.0},{"e":null},{"e":27.5}]`},
		{name: "expMovingAvg both", input: series, pipeline: `[{"$setWindowFields":{"sortBy":{"t":1},"output":{"e":{"$expMovingAvg":{"input":"$v","N":2,"alpha":0.5}}}}}]`, code: 9},
		{name: "no output", input: series, pipeline: `[{"$setWindowFields":{"sortBy":{"t":1}}}]`, code: 40414},
	})
}

func TestDensifyAndFill(t *testing.T) {
	runCases(t, []pipeCase{
		{name: "densify full", input: `[{"x":1},{"x":4},{"x":6}]`,
			pipeline: `[{"$densify":{"field":"x","range":{"step":2,"bounds":"full"}}}]`,
			want:     `[{"x":1},{"x":3},{"x":4},{"x":5},{"x":6}]`},
		{name: "densify explicit", input: `[{"x":2}]`,
			pipeline: `[{"$densify":{"field":"x","range":{"step":1,"bounds":[0,4]}}}]`,
			want:     `[{"x":0},{"x":1},{"x":2},{"x":3}]`},
		{name: "densify partitions", input: `[{"p":"a","x":1},{"p":"a","x":3},{"p":"b","x":2}]`,
			pipeline: `[{"$densify":{"field":"x","partitionByFields":["p"],"range":{"step":1,"bounds":"partition"}}}]`,
			want:     `[{"p":"a","x":1},{"x":2,"p":"a"},{"p":"a","x":3},{"p":"b","x":2}]`},
		{name: "densify dates", input: `[{"d":{"$date":"2021-01-01T00:00:00Z"}},{"d":{"$date":"2021-01-03T00:00:00Z"}}]`,
			pipeline: `[{"$densify":{"field":"d","range":{"step":1,"unit":"day","bounds":"full"}}}]`,
			want:     `[{"d":{"$date":"2021-01-01T00:00:00Z"}},{"d":{"$date":"2021-01-02T00:00:00Z"}},{"d":{"$date":"2021-01-03T00:00:00Z"}}]`},
		{name: "densify bad step", input: `[]`, pipeline: `[{"$densify":{"field":"x","range":{"step":0,"bounds":"full"}}}]`, code: 5733401},
		{name: "densify non numeric", input: `[{"x":"a"}]`, pipeline: `[{"$densify":{"field":"x","range":{"step":1,"bounds":"full"}}}]`, code: 5733201},
		{name: "fill value", input: `[{"_id":1,"a":null},{"_id":2,"a":3},{"_id":3}]`,
			pipeline: `[{"$fill":{"output":{"a":{"value":0}}}}]`,
			want:     `[{"_id":1,"a":0},{"_id":2,"a":3},{"_id":3,"a":0}]`},
		{name: "fill locf", input: `[{"_id":1,"t":1,"a":1},{"_id":2,"t":2,"a":null},{"_id":3,"t":3}]`,
			pipeline: `[{"$fill":{"sortBy":{"t":1},"output":{"a":{"method":"locf"}}}}]`,
			want:     `[{"_id":1,"t":1,"a":1},{"_id":2,"t":2,"a":1},{"_id":3,"t":3,"a":1}]`},
		{name: "fill linear", input: `[{"_id":1,"t":0,"a":0},{"_id":2,"t":1,"a":null},{"_id":3,"t":2,"a":4}]`,
			pipeline: `[{"$fill":{"sortBy":{"t":1},"output":{"a":{"method":"linear"}}}}]`,
			want:     `[{"_id":1,"t":0,"a":0},{"_id":2,"t":1,"a":2.0},{"_id":3,"t":2,"a":4}]`},
		{name: "fill bad method", input: `[]`, pipeline: `[{"$fill":{"output":{"a":{"method":"x"}}}}]`, code: 6050202},
		{name: "fill linear no sort", input: `[]`, pipeline: `[{"$fill":{"output":{"a":{"method":"linear"}}}}]`, code: 6050201},
	})
}

func TestWindowCalendarRange(t *testing.T) {
	runCases(t, []pipeCase{
		{name: "months", input: `[{"_id":1,"d":{"$date":"2021-01-31T00:00:00Z"}},{"_id":2,"d":{"$date":"2021-02-28T00:00:00Z"}},{"_id":3,"d":{"$date":"2021-04-15T00:00:00Z"}}]`,
			pipeline: `[{"$setWindowFields":{"sortBy":{"d":1},"output":{"n":{"$count":{},"window":{"range":[-1,0],"unit":"month"}}}}},{"$project":{"n":1}}]`,
			want:     `[{"_id":1,"n":1},{"_id":2,"n":2},{"_id":3,"n":1}]`},
		{name: "descending days", input: `[{"_id":1,"d":{"$date":"2021-01-01T00:00:00Z"}},{"_id":2,"d":{"$date":"2021-01-02T00:00:00Z"}},{"_id":3,"d":{"$date":"2021-01-05T00:00:00Z"}}]`,
			pipeline: `[{"$setWindowFields":{"sortBy":{"d":-1},"output":{"p":{"$push":"$_id","window":{"range":[-1,0],"unit":"day"}}}}},{"$project":{"p":1}}]`,
			want:     `[{"_id":3,"p":[3]},{"_id":2,"p":[2]},{"_id":1,"p":[2,1]}]`},
	})
}
