package agg

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cairndb/cairn/bson"
)

func TestReadFields(t *testing.T) {
	for pl, want := range map[string]string{
		`[{"$match": {"a.b": 1, "$or": [{"c": 2}, {"$expr": {"$gt": ["$d", "$e.f"]}}]}}, {"$group": {"_id": "$g", "s": {"$sum": "$h"}}}]`: "[_id a c d e g h]",
		`[{"$project": {"_id": 0, "r": {"$toLong": "$w"}}}, {"$group": {"_id": null, "s": {"$sum": "$r"}}}]`:                              "[_id r w]",
		`[{"$set": {"k": {"$cond": ["$x", "$y", ""]}}}, {"$unset": "z"}, {"$group": {"_id": "$k"}}]`:                                      "[_id k x y]",
		`[{"$match": {"$where": "1"}}, {"$group": {"_id": "$g"}}]`:                                                                        "[]",
		`[{"$group": {"_id": "$$ROOT"}}]`:                             "[]",
		`[{"$match": {"$alwaysTrue": 1}}, {"$group": {"_id": "$g"}}]`: "[]",
	} {
		p, err := Parse(&Context{DB: "test", Coll: "c"}, parseJSONArray(t, pl))
		if err != nil {
			if strings.Contains(pl, "$where") {
				continue // not supported: nothing to cut
			}
			t.Fatalf("%s: %v", pl, err)
		}
		got := readFields(p.stages, p.stageSpecs)
		names := append([]string(nil), got...)
		slices.Sort(names)
		if s := fmt.Sprint(names); s != want {
			t.Errorf("%s: reads %s, want %s", pl, s, want)
		}
	}
}

func TestFieldCutter(t *testing.T) {
	d := parseJSONArray(t, `[{"_id": 1, "a": "x", "b": [1, {"c": 2}], "cc": null, "d": {"e": 1}, "f": 2.5}]`)[0]
	c := newFieldCutter([]string{"_id", "d", "b", "zz"})
	got, err := c.cut(d).MarshalExtJSON(false)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"_id":1,"b":[1,{"c":2}],"d":{"e":1}}`; string(got) != want {
		t.Fatalf("cut %s, want %s", got, want)
	}
	if got := c.cut(bson.Doc{1, 2}); len(got) != 2 {
		t.Fatalf("a malformed document is returned as is, got %v", got)
	}
}
