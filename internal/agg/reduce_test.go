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

func TestKeyEnd(t *testing.T) {
	for _, tc := range []struct {
		s    string
		from int
		want int
	}{
		{"abc\x00", 0, 3}, {"abcdefghijk\x00x", 0, 11}, {"abcdefgh\x00", 0, 8}, {"\x00", 0, 0},
		{"xx\x80\x81\xff\x01\x02\x03\x04\x05\x06\x00", 2, 11}, {"abcdefghijklmnop", 0, -1}, {"a\x00b\x00", 2, 3},
	} {
		if got := keyEnd([]byte(tc.s), tc.from); got != tc.want {
			t.Errorf("keyEnd(%q, %d) = %d, want %d", tc.s, tc.from, got, tc.want)
		}
	}
}

// wideDoc is a document of 105 fields like ClickBench's hits.
func wideDoc(t testing.TB) bson.Doc {
	var b bson.Builder
	for i := 0; i < 105; i++ {
		name := fmt.Sprintf("Field%dName", i)
		switch i % 3 {
		case 0:
			b.AppendInt32(name, int32(i))
		case 1:
			b.AppendString(name, strings.Repeat("v", i%17))
		default:
			b.AppendInt64(name, int64(i))
		}
	}
	return b.Finish()
}

func BenchmarkFieldCutter(b *testing.B) {
	d := wideDoc(b)
	c := newFieldCutter([]string{"_id", "Field40Name", "Field20Name"})
	for b.Loop() {
		c.cut(d)
	}
}
