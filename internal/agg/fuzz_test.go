package agg

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cairndb/cairn/bson"
)

// gen draws choices from fuzz input bytes (zeros once exhausted).
type gen struct {
	data []byte
	pos  int
}

func (g *gen) n(k int) int {
	if g.pos >= len(g.data) || k <= 0 {
		return 0
	}
	b := g.data[g.pos]
	g.pos++
	return int(b) % k
}

func (g *gen) pick(opts ...string) string { return opts[g.n(len(opts))] }

var fuzzFields = []string{"a", "b", "c", "a.x", "arr", "s", "_id"}

func (g *gen) field() string { return fuzzFields[g.n(len(fuzzFields))] }

func (g *gen) value() string {
	return g.pick(`1`, `-2.5`, `"s"`, `null`, `true`, `[1,2,{"x":3}]`, `{"x":1}`, `{"$numberLong":"9"}`,
		`{"$date":"2020-01-01T00:00:00Z"}`, `[]`, `"$`+g.field()+`"`, `{"$numberDecimal":"1.5"}`)
}

func (g *gen) expr(depth int) string {
	if depth > 2 {
		return g.value()
	}
	switch g.n(8) {
	case 0:
		return `"$` + g.field() + `"`
	case 1:
		return fmt.Sprintf(`{"$%s":[%s,%s]}`, g.pick("add", "multiply", "eq", "gt", "concat", "subtract", "divide", "cmp"), g.expr(depth+1), g.expr(depth+1))
	case 2:
		return fmt.Sprintf(`{"$cond":[%s,%s,%s]}`, g.expr(depth+1), g.expr(depth+1), g.expr(depth+1))
	case 3:
		return fmt.Sprintf(`{"$size":%s}`, g.expr(depth+1))
	case 4:
		return `"$$ROOT"`
	default:
		return g.value()
	}
}

func (g *gen) accumulator() string {
	op := g.pick("$sum", "$avg", "$min", "$max", "$first", "$last", "$push", "$addToSet", "$stdDevPop", "$mergeObjects")
	if g.n(6) == 0 {
		return `{"$count":{}}`
	}
	return fmt.Sprintf(`{"%s":%s}`, op, g.expr(1))
}

func (g *gen) stage(depth int) string {
	f := g.field()
	switch g.n(26) {
	case 0:
		return fmt.Sprintf(`{"$match":{"%s":%s}}`, f, g.value())
	case 1:
		return fmt.Sprintf(`{"$match":{"$expr":%s}}`, g.expr(0))
	case 2:
		return fmt.Sprintf(`{"$project":{"%s":%s}}`, f, g.pick("1", "0", g.expr(0)))
	case 3:
		return fmt.Sprintf(`{"$addFields":{"%s":%s}}`, g.pick("n", "a.y", "arr.z", f), g.expr(0))
	case 4:
		return fmt.Sprintf(`{"$unset":"%s"}`, f)
	case 5:
		return fmt.Sprintf(`{"$group":{"_id":%s,"v":%s}}`, g.expr(1), g.accumulator())
	case 6:
		return fmt.Sprintf(`{"$sort":{"%s":%s}}`, f, g.pick("1", "-1"))
	case 7:
		return fmt.Sprintf(`{"$limit":%s}`, g.pick("1", "3", "0", "-1", `"x"`))
	case 8:
		return fmt.Sprintf(`{"$skip":%s}`, g.pick("0", "2", "-1"))
	case 9:
		return `{"$count":"n"}`
	case 10:
		return fmt.Sprintf(`{"$unwind":{"path":"$%s","includeArrayIndex":"i","preserveNullAndEmptyArrays":%s}}`, f, g.pick("true", "false"))
	case 11:
		return fmt.Sprintf(`{"$lookup":{"from":"o","localField":"%s","foreignField":"%s","as":"j"}}`, f, g.field())
	case 12:
		if depth > 0 {
			return `{"$limit":1}`
		}
		return fmt.Sprintf(`{"$lookup":{"from":"o","let":{"v":"$%s"},"pipeline":[%s],"as":"j"}}`, f, g.stage(depth+1))
	case 13:
		if depth > 0 {
			return `{"$limit":2}`
		}
		return fmt.Sprintf(`{"$facet":{"x":[%s],"y":[%s]}}`, g.stage(depth+1), g.stage(depth+1))
	case 14:
		return fmt.Sprintf(`{"$bucket":{"groupBy":"$%s","boundaries":[0,1,5],"default":"z"}}`, f)
	case 15:
		return fmt.Sprintf(`{"$bucketAuto":{"groupBy":"$%s","buckets":%d%s}}`, f, g.n(4), g.pick("", `,"granularity":"R5"`, `,"granularity":"POWERSOF2"`, `,"granularity":"1-2-5"`))
	case 16:
		return fmt.Sprintf(`{"$sortByCount":"$%s"}`, f)
	case 17:
		return fmt.Sprintf(`{"$replaceWith":%s}`, g.expr(1))
	case 18:
		return fmt.Sprintf(`{"$sample":{"size":%d}}`, g.n(4))
	case 19:
		return fmt.Sprintf(`{"$setWindowFields":{"partitionBy":"$%s","sortBy":{"%s":1},"output":{"w":{"%s":"$%s","window":{"documents":[%s,%s]}}}}}`,
			f, g.field(), g.pick("$sum", "$push", "$max", "$avg"), g.field(), g.pick(`"unbounded"`, "-1", "0"), g.pick(`"current"`, "1", `"unbounded"`))
	case 20:
		return fmt.Sprintf(`{"$setWindowFields":{"sortBy":{"%s":1},"output":{"r":{"%s":%s%s}}}}`, f,
			g.pick("$rank", "$denseRank", "$documentNumber", "$locf", "$linearFill", "$derivative", "$integral", "$expMovingAvg", "$covariancePop", "$covarianceSamp"),
			g.pick("{}", `"$a"`, `{"input":"$a"}`, `{"input":"$b","unit":"hour"}`, `{"input":"$a","N":2}`, `["$a","$b"]`),
			g.pick("", `,"window":{"documents":[-1,1]}`, `,"window":{"range":[-1,"current"]}`))
	case 21:
		return fmt.Sprintf(`{"$densify":{"field":"%s","range":{"step":%s,"bounds":%s}}}`, f, g.pick("1", "0.5", "0"), g.pick(`"full"`, `"partition"`, `[0,3]`))
	case 22:
		return fmt.Sprintf(`{"$fill":{"sortBy":{"%s":1},"output":{"%s":%s}}}`, f, g.field(), g.pick(`{"value":0}`, `{"method":"locf"}`, `{"method":"linear"}`))
	case 23:
		return fmt.Sprintf(`{"$redact":{"$cond":[%s,"$$DESCEND","$$PRUNE"]}}`, g.expr(1))
	case 24:
		return `{"$unionWith":"o"}`
	default:
		return fmt.Sprintf(`{"$merge":{"into":"t","whenMatched":"%s"}}`, g.pick("merge", "replace", "keepExisting", "fail"))
	}
}

func (g *gen) doc(i int) string {
	var parts []string
	parts = append(parts, fmt.Sprintf(`"_id":%d`, i))
	for _, f := range []string{"a", "b", "c", "arr", "s"} {
		if g.n(4) != 0 {
			parts = append(parts, fmt.Sprintf(`"%s":%s`, f, g.value()))
		}
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func FuzzPipeline(f *testing.F) {
	for _, s := range []string{"", "\x00\x01\x02", "\x05\x05\x05\x05\x05\x05", "\x0b\x03\x0c\x04\x0d\x13\x13", "\x13\x00\x02\x14\x01\x15\x02"} {
		f.Add([]byte(s))
	}
	for i := 0; i < 26; i++ {
		f.Add([]byte{3, 1, 2, 3, 4, 5, 6, 7, 8, 9, byte(i), 1, 2, 3, byte(i), 4, 5})
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &gen{data: data}
		var docs []string
		for i := 0; i < 1+g.n(6); i++ {
			docs = append(docs, g.doc(i))
		}
		var stages []string
		for i := 0; i < 1+g.n(4); i++ {
			stages = append(stages, g.stage(0))
		}
		colls := map[string]string{"o": "[" + g.doc(100) + "," + g.doc(101) + "]"}
		pipeline := "[" + strings.Join(stages, ",") + "]"
		in := parseJSONArray(t, "["+strings.Join(docs, ",")+"]")
		cat := &memCatalog{colls: map[string][]bson.Doc{}}
		for name, d := range colls {
			cat.colls[name] = parseJSONArray(t, d)
		}
		ctx := &Context{DB: "test", Coll: "c", Catalog: cat, MemoryLimit: 1 << 20}
		p, err := Parse(ctx, parseJSONArray(t, pipeline))
		if err != nil {
			return
		}
		it, err := p.Run(&SliceIterator{Docs: in})
		if err != nil {
			return
		}
		out, err := Drain(it)
		if err != nil {
			return
		}
		for _, d := range out {
			if err := bson.Validate(d, 200); err != nil {
				t.Fatalf("pipeline %s produced invalid BSON: %v", pipeline, err)
			}
		}
	})
}
