package agg

import (
	"testing"

	"github.com/cairndb/cairn/bson"
)

const orders = `[
 {"_id":1,"item":"a","qty":2},
 {"_id":2,"item":"b","qty":1},
 {"_id":3,"item":["a","c"],"qty":4},
 {"_id":4,"qty":9}
]`

var inventory = map[string]string{"inv": `[
 {"_id":10,"sku":"a","stock":5},
 {"_id":11,"sku":"b","stock":0},
 {"_id":12,"sku":"c","stock":7},
 {"_id":13,"stock":1},
 {"_id":14,"sku":null,"stock":2}
]`}

func TestLookup(t *testing.T) {
	runCases(t, []pipeCase{
		{name: "equality", input: orders, colls: inventory,
			pipeline: `[{"$lookup":{"from":"inv","localField":"item","foreignField":"sku","as":"inv"}},{"$project":{"ids":"$inv._id"}}]`,
			want:     `[{"_id":1,"ids":[10]},{"_id":2,"ids":[11]},{"_id":3,"ids":[10,12]},{"_id":4,"ids":[13,14]}]`},
		{name: "pipeline let", input: orders, colls: inventory,
			pipeline: `[{"$lookup":{"from":"inv","let":{"q":"$qty"},"pipeline":[{"$match":{"$expr":{"$gte":["$stock","$$q"]}}},{"$project":{"_id":1}}],"as":"ok"}}]`,
			want:     `[{"_id":1,"item":"a","qty":2,"ok":[{"_id":10},{"_id":12},{"_id":14}]},{"_id":2,"item":"b","qty":1,"ok":[{"_id":10},{"_id":12},{"_id":13},{"_id":14}]},{"_id":3,"item":["a","c"],"qty":4,"ok":[{"_id":10},{"_id":12}]},{"_id":4,"qty":9,"ok":[]}]`},
		{name: "uncorrelated", input: `[{"_id":1},{"_id":2}]`, colls: inventory,
			pipeline: `[{"$lookup":{"from":"inv","pipeline":[{"$count":"n"}],"as":"c"}}]`,
			want:     `[{"_id":1,"c":[{"n":5}]},{"_id":2,"c":[{"n":5}]}]`},
		{name: "local foreign and pipeline", input: orders, colls: inventory,
			pipeline: `[{"$match":{"_id":3}},{"$lookup":{"from":"inv","localField":"item","foreignField":"sku","pipeline":[{"$match":{"stock":{"$gt":6}}}],"as":"x"}},{"$project":{"x._id":1}}]`,
			want:     `[{"_id":3,"x":[{"_id":12}]}]`},
		{name: "missing collection", input: `[{"_id":1,"a":1}]`,
			pipeline: `[{"$lookup":{"from":"none","localField":"a","foreignField":"a","as":"x"}}]`,
			want:     `[{"_id":1,"a":1,"x":[]}]`},
		{name: "dotted as", input: `[{"_id":1,"a":1}]`, colls: map[string]string{"o": `[{"_id":5,"a":1}]`},
			pipeline: `[{"$lookup":{"from":"o","localField":"a","foreignField":"a","as":"x.y"}}]`,
			want:     `[{"_id":1,"a":1,"x":{"y":[{"_id":5,"a":1}]}}]`},
		{name: "documents source", input: `[{"_id":1,"a":2}]`,
			pipeline: `[{"$lookup":{"let":{"a":"$a"},"pipeline":[{"$documents":[{"v":1},{"v":2}]},{"$match":{"$expr":{"$eq":["$v","$$a"]}}}],"as":"m"}}]`,
			want:     `[{"_id":1,"a":2,"m":[{"v":2}]}]`},
		{name: "no as", input: orders, pipeline: `[{"$lookup":{"from":"inv","localField":"a","foreignField":"b"}}]`, code: 9},
		{name: "only local", input: orders, pipeline: `[{"$lookup":{"from":"inv","localField":"a","as":"x"}}]`, code: 9},
		{name: "unknown field", input: orders, pipeline: `[{"$lookup":{"from":"inv","x":"a","as":"x"}}]`, code: 9},
		{name: "out inside", input: orders, pipeline: `[{"$lookup":{"from":"inv","pipeline":[{"$out":"z"}],"as":"x"}}]`, code: 51047},
	})
}

func TestUnionWith(t *testing.T) {
	runCases(t, []pipeCase{
		{name: "string", input: `[{"_id":1}]`, colls: map[string]string{"o": `[{"_id":2},{"_id":3}]`},
			pipeline: `[{"$unionWith":"o"}]`, want: `[{"_id":1},{"_id":2},{"_id":3}]`},
		{name: "pipeline", input: `[{"_id":1}]`, colls: map[string]string{"o": `[{"_id":2},{"_id":3}]`},
			pipeline: `[{"$unionWith":{"coll":"o","pipeline":[{"$match":{"_id":3}},{"$set":{"from":"o"}}]}}]`,
			want:     `[{"_id":1},{"_id":3,"from":"o"}]`},
		{name: "documents", input: `[{"_id":1}]`, pipeline: `[{"$unionWith":{"pipeline":[{"$documents":[{"x":1}]}]}}]`,
			want: `[{"_id":1},{"x":1}]`},
		{name: "bad field", input: `[]`, pipeline: `[{"$unionWith":{"coll":"o","x":1}}]`, code: 40415},
		{name: "no coll", input: `[]`, pipeline: `[{"$unionWith":{"pipeline":[]}}]`, code: 9},
	})
}

func TestFacet(t *testing.T) {
	runCases(t, []pipeCase{
		{name: "two facets", input: sales,
			pipeline: `[{"$facet":{"n":[{"$count":"c"}],"cheap":[{"$match":{"price":{"$lt":10}}},{"$project":{"_id":1}}]}}]`,
			want:     `[{"n":[{"c":5}],"cheap":[{"_id":4}]}]`},
		{name: "empty input", input: `[]`, pipeline: `[{"$facet":{"a":[{"$limit":1}]}}]`, want: `[{"a":[]}]`},
		{name: "not array", input: sales, pipeline: `[{"$facet":{"a":1}}]`, code: 40170},
		{name: "empty spec", input: sales, pipeline: `[{"$facet":{}}]`, code: 40169},
		{name: "nested facet", input: sales, pipeline: `[{"$facet":{"a":[{"$facet":{"b":[{"$limit":1}]}}]}}]`, code: 40600},
		{name: "out in facet", input: sales, pipeline: `[{"$facet":{"a":[{"$out":"x"}]}}]`, code: 40600},
	})
}

func TestBucket(t *testing.T) {
	runCases(t, []pipeCase{
		{name: "bucket", input: sales,
			pipeline: `[{"$bucket":{"groupBy":"$price","boundaries":[0,10,20],"default":"other","output":{"n":{"$sum":1},"ids":{"$push":"$_id"}}}}]`,
			want:     `[{"_id":0,"n":1,"ids":[4]},{"_id":10,"n":2,"ids":[1,3]},{"_id":"other","n":2,"ids":[2,5]}]`},
		{name: "bucket default count", input: sales, pipeline: `[{"$bucket":{"groupBy":"$qty","boundaries":[0,5,100],"default":-1}}]`,
			want: `[{"_id":-1,"count":1},{"_id":0,"count":2},{"_id":5,"count":2}]`},
		{name: "no default", input: sales, pipeline: `[{"$bucket":{"groupBy":"$price","boundaries":[0,10]}}]`, code: 40066},
		{name: "unsorted", input: sales, pipeline: `[{"$bucket":{"groupBy":"$price","boundaries":[10,0]}}]`, code: 40194},
		{name: "one boundary", input: sales, pipeline: `[{"$bucket":{"groupBy":"$price","boundaries":[10]}}]`, code: 40192},
		{name: "mixed types", input: sales, pipeline: `[{"$bucket":{"groupBy":"$price","boundaries":[1,"a"]}}]`, code: 40193},
		{name: "default inside", input: sales, pipeline: `[{"$bucket":{"groupBy":"$price","boundaries":[0,10],"default":5}}]`, code: 40199},
		{name: "groupBy literal", input: sales, pipeline: `[{"$bucket":{"groupBy":"price","boundaries":[0,10]}}]`, code: 40202},
		{name: "bucketAuto", input: `[{"v":1},{"v":2},{"v":3},{"v":4},{"v":5},{"v":6}]`,
			pipeline: `[{"$bucketAuto":{"groupBy":"$v","buckets":3}}]`,
			want:     `[{"_id":{"min":1,"max":3},"count":2},{"_id":{"min":3,"max":5},"count":2},{"_id":{"min":5,"max":6},"count":2}]`},
		{name: "bucketAuto equal values together", input: `[{"v":1},{"v":1},{"v":1},{"v":2}]`,
			pipeline: `[{"$bucketAuto":{"groupBy":"$v","buckets":2,"output":{"s":{"$sum":"$v"}}}}]`,
			want:     `[{"_id":{"min":1,"max":2},"s":3},{"_id":{"min":2,"max":2},"s":2}]`},
		{name: "bucketAuto more buckets than docs", input: `[{"v":1},{"v":2}]`,
			pipeline: `[{"$bucketAuto":{"groupBy":"$v","buckets":5}}]`,
			want:     `[{"_id":{"min":1,"max":2},"count":1},{"_id":{"min":2,"max":2},"count":1}]`},
		{name: "bucketAuto zero", input: `[]`, pipeline: `[{"$bucketAuto":{"groupBy":"$v","buckets":0}}]`, code: 40243},
		{name: "bucketAuto powers of two", input: `[{"v":1},{"v":2},{"v":3},{"v":4},{"v":5},{"v":6},{"v":7},{"v":8}]`,
			pipeline: `[{"$bucketAuto":{"groupBy":"$v","buckets":2,"granularity":"POWERSOF2"}}]`,
			want:     `[{"_id":{"min":0.5,"max":8},"count":7},{"_id":{"min":8,"max":16},"count":1}]`},
		{name: "bucketAuto R5", input: `[{"v":1},{"v":3},{"v":12},{"v":70}]`,
			pipeline: `[{"$bucketAuto":{"groupBy":"$v","buckets":2,"granularity":"R5"}}]`,
			want:     `[{"_id":{"min":0.63,"max":4.0},"count":2},{"_id":{"min":4.0,"max":100.0},"count":2}]`},
		{name: "bucketAuto granularity negative", input: `[{"v":-1}]`, pipeline: `[{"$bucketAuto":{"groupBy":"$v","buckets":2,"granularity":"R5"}}]`, code: 40260},
		{name: "bucketAuto granularity string", input: `[{"v":"a"}]`, pipeline: `[{"$bucketAuto":{"groupBy":"$v","buckets":2,"granularity":"E6"}}]`, code: 40258},
		{name: "bucketAuto granularity unknown", input: `[]`, pipeline: `[{"$bucketAuto":{"groupBy":"$v","buckets":2,"granularity":"R7"}}]`, code: 40257},
	})
}

func TestWrites(t *testing.T) {
	got, cat, err := runPipeline(t, `[{"_id":1,"a":1},{"_id":2,"a":2}]`, `[{"$set":{"b":true}},{"$out":"dst"}]`, nil, "", false)
	if err != nil || len(got) != 0 {
		t.Fatalf("out: %v %v", got, err)
	}
	if g := canonical(t, cat.colls["dst"]); g != canonical(t, parseJSONArray(t, `[{"_id":1,"a":1,"b":true},{"_id":2,"a":2,"b":true}]`)) {
		t.Fatalf("out wrote %s", g)
	}
	for _, tc := range []struct {
		name, spec, want string
		code             int32
	}{
		{"default merge", `"dst"`, `[{"_id":1,"a":1,"x":1},{"_id":2,"a":20},{"_id":3,"a":30}]`, 0},
		{"replace", `{"into":"dst","whenMatched":"replace"}`, `[{"_id":1,"a":1,"x":1},{"_id":2,"a":20},{"_id":3,"a":30}]`, 0},
		{"keepExisting", `{"into":"dst","whenMatched":"keepExisting","whenNotMatched":"discard"}`, `[{"_id":1,"a":1,"x":1},{"_id":2,"a":2}]`, 0},
		{"pipeline", `{"into":"dst","whenMatched":[{"$set":{"a":{"$add":["$a","$$new.a"]}}}]}`, `[{"_id":1,"a":1,"x":1},{"_id":2,"a":22},{"_id":3,"a":30}]`, 0},
		{"pipeline let", `{"into":"dst","let":{"v":"$a"},"whenMatched":[{"$set":{"v":"$$v"}}]}`, `[{"_id":1,"a":1,"x":1},{"_id":2,"a":2,"v":20},{"_id":3,"a":30}]`, 0},
		{"fail", `{"into":"dst","whenMatched":"fail"}`, ``, 11000},
		{"not matched fail", `{"into":"dst","whenNotMatched":"fail"}`, ``, 13113},
		{"bad whenMatched", `{"into":"dst","whenMatched":"x"}`, ``, 2},
		{"on duplicate", `{"into":"dst","on":["a","a"]}`, ``, 31465},
		{"let without pipeline", `{"into":"dst","let":{"a":1}}`, ``, 51199},
		{"unknown", `{"into":"dst","bogus":1}`, ``, 40415},
	} {
		t.Run(tc.name, func(t *testing.T) {
			colls := map[string]string{"dst": `[{"_id":1,"a":1,"x":1},{"_id":2,"a":2}]`}
			_, cat, err := runPipeline(t, `[{"_id":2,"a":20},{"_id":3,"a":30}]`, `[{"$merge":`+tc.spec+`}]`, colls, "", false)
			if tc.code != 0 {
				if code := errCode(err); code != tc.code {
					t.Fatalf("want %d, got %v", tc.code, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if g, w := canonical(t, cat.colls["dst"]), canonical(t, parseJSONArray(t, tc.want)); g != w {
				t.Fatalf("\n got %s\nwant %s", g, w)
			}
		})
	}
	runCases(t, []pipeCase{
		{name: "out not last", input: `[]`, pipeline: `[{"$out":"x"},{"$limit":1}]`, code: 40601},
		{name: "out bad", input: `[]`, pipeline: `[{"$out":1}]`, code: 16990},
		{name: "out system", input: `[]`, pipeline: `[{"$out":"system.x"}]`, code: 73},
		{name: "documents not first", input: `[]`, pipeline: `[{"$limit":1},{"$documents":[]}]`, code: 40602},
		{name: "documents", input: `[{"ignored":1}]`, pipeline: `[{"$documents":[{"a":1},{"a":{"$add":[1,1]}}]}]`, want: `[{"a":1},{"a":2}]`},
		{name: "documents not array", input: `[]`, pipeline: `[{"$documents":1}]`, code: 5858203},
		{name: "collStats", input: `[]`, colls: map[string]string{"c": `[{"_id":1}]`}, pipeline: `[{"$collStats":{"count":{}}}]`, want: `[{"ns":"test.c","count":{"$numberLong":"1"}}]`},
		{name: "collStats bad", input: `[]`, pipeline: `[{"$collStats":{"x":{}}}]`, code: 40415},
		{name: "indexStats", input: `[]`, pipeline: `[{"$indexStats":{}}]`, want: `[{"name":"_id_"}]`},
		{name: "indexStats bad", input: `[]`, pipeline: `[{"$indexStats":{"a":1}}]`, code: 28803},
	})
}

func TestLookupLargeForeignScans(t *testing.T) {
	cat := &memCatalog{colls: map[string][]bson.Doc{"inv": parseJSONArray(t, inventory["inv"])}}
	ctx := &Context{DB: "test", Coll: "c", Catalog: cat, MemoryLimit: 100}
	p, err := Parse(ctx, parseJSONArray(t, `[{"$lookup":{"from":"inv","localField":"item","foreignField":"sku","as":"inv"}},{"$project":{"ids":"$inv._id"}}]`))
	if err != nil {
		t.Fatal(err)
	}
	it, _ := p.Run(&SliceIterator{Docs: parseJSONArray(t, orders)})
	got, err := Drain(it)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := canonical(t, got), canonical(t, parseJSONArray(t, `[{"_id":1,"ids":[10]},{"_id":2,"ids":[11]},{"_id":3,"ids":[10,12]},{"_id":4,"ids":[13,14]}]`)); g != w {
		t.Fatalf("\n got %s\nwant %s", g, w)
	}
}

// The employees of MongoDB's $graphLookup documentation.
var employees = map[string]string{"emp": `[
 {"_id":1,"name":"Dev"},
 {"_id":2,"name":"Eliot","reportsTo":"Dev"},
 {"_id":3,"name":"Ron","reportsTo":"Eliot"},
 {"_id":4,"name":"Andrew","reportsTo":"Eliot"},
 {"_id":5,"name":"Asya","reportsTo":"Ron"},
 {"_id":6,"name":"Dan","reportsTo":"Andrew"}
]`, "air": `[
 {"_id":0,"airport":"JFK","connects":["BOS","ORD"]},
 {"_id":1,"airport":"BOS","connects":["JFK","PWM"]},
 {"_id":2,"airport":"ORD","connects":["JFK"]},
 {"_id":3,"airport":"PWM","connects":["BOS","LHR"]},
 {"_id":4,"airport":"LHR","connects":["PWM"]}
]`}

func TestGraphLookup(t *testing.T) {
	emp := employees["emp"]
	runCases(t, []pipeCase{
		{name: "managers chain", input: emp, colls: employees,
			pipeline: `[{"$match":{"_id":5}},{"$graphLookup":{"from":"emp","startWith":"$reportsTo","connectFromField":"reportsTo","connectToField":"name","as":"chain","depthField":"d"}},{"$project":{"chain.name":1,"chain.d":1}}]`,
			want:     `[{"_id":5,"chain":[{"name":"Ron","d":{"$numberLong":"0"}},{"name":"Eliot","d":{"$numberLong":"1"}},{"name":"Dev","d":{"$numberLong":"2"}}]}]`},
		{name: "reports, maxDepth 0", input: emp, colls: employees,
			pipeline: `[{"$match":{"_id":2}},{"$graphLookup":{"from":"emp","startWith":"$name","connectFromField":"name","connectToField":"reportsTo","as":"r","maxDepth":0}},{"$project":{"r._id":1}}]`,
			want:     `[{"_id":2,"r":[{"_id":3},{"_id":4}]}]`},
		{name: "all reports", input: emp, colls: employees,
			pipeline: `[{"$match":{"_id":2}},{"$graphLookup":{"from":"emp","startWith":"$name","connectFromField":"name","connectToField":"reportsTo","as":"r"}},{"$project":{"n":{"$size":"$r"}}}]`,
			want:     `[{"_id":2,"n":4}]`},
		{name: "array values, cycles, restrict", input: `[{"_id":1,"near":"JFK"}]`, colls: employees,
			pipeline: `[{"$graphLookup":{"from":"air","startWith":"$near","connectFromField":"connects","connectToField":"airport","maxDepth":2,"depthField":"hops","as":"dest","restrictSearchWithMatch":{"airport":{"$ne":"ORD"}}}},{"$project":{"dest.airport":1,"dest.hops":1}}]`,
			want:     `[{"_id":1,"dest":[{"airport":"JFK","hops":{"$numberLong":"0"}},{"airport":"BOS","hops":{"$numberLong":"1"}},{"airport":"PWM","hops":{"$numberLong":"2"}}]}]`},
		{name: "no match", input: `[{"_id":1,"x":"none"}]`, colls: employees,
			pipeline: `[{"$graphLookup":{"from":"emp","startWith":"$x","connectFromField":"reportsTo","connectToField":"name","as":"r"}}]`,
			want:     `[{"_id":1,"x":"none","r":[]}]`},
		{name: "missing field", input: emp, pipeline: `[{"$graphLookup":{"from":"emp","startWith":"$a","connectFromField":"a","as":"r"}}]`, code: 40105},
		{name: "bad maxDepth", input: emp, pipeline: `[{"$graphLookup":{"from":"emp","startWith":"$a","connectFromField":"a","connectToField":"b","as":"r","maxDepth":-1}}]`, code: 40101},
		{name: "unknown argument", input: emp, pipeline: `[{"$graphLookup":{"from":"emp","bogus":1}}]`, code: 40104},
		{name: "bad as", input: emp, pipeline: `[{"$graphLookup":{"from":"emp","startWith":"$a","connectFromField":"a","connectToField":"b","as":"$r"}}]`, code: 16410},
	})
}
