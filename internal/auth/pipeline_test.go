package auth

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/agg"
)

// namespaceStages are the stages that read or write a namespace other than
// their input, or need an action of their own: walkStage must know each.
// plainStages only transform the documents they are given. Every stage
// Cairn runs must be in one of the two, so that a stage added later is
// classified by whoever adds it.
var (
	namespaceStages = []string{"$collStats", "$facet", "$graphLookup", "$indexStats", "$listLocalSessions", "$listSessions",
		"$lookup", "$merge", "$out", "$planCacheStats", "$unionWith"}
	plainStages = []string{"$addFields", "$bucket", "$bucketAuto", "$count", "$densify", "$documents", "$fill",
		"$group", "$limit", "$match", "$project", "$redact", "$replaceRoot", "$replaceWith", "$sample", "$set",
		"$setWindowFields", "$skip", "$sort", "$sortByCount", "$unset", "$unwind", "$_internalUnpackBucket"}
)

func TestEveryStageIsClassifiedForAuthorization(t *testing.T) {
	for _, name := range agg.StageNames() {
		if !slices.Contains(namespaceStages, name) && !slices.Contains(plainStages, name) {
			t.Errorf("stage %s is neither in namespaceStages nor in plainStages: say whether it reads another namespace (and teach walkStage)", name)
		}
	}
}

func TestPipelineNeeds(t *testing.T) {
	for _, tc := range []struct {
		name, pipeline string
		want           string // "db:actions" sorted, space-separated
	}{
		{"plain", `[{"$match": {"a": 1}}, {"$group": {"_id": "$a"}}]`, ""},
		{"lookupLocal", `[{"$lookup": {"from": "o", "localField": "a", "foreignField": "b", "as": "x"}}]`, "app:find"},
		{"lookupOtherDB", `[{"$lookup": {"from": {"db": "secret", "coll": "s"}, "pipeline": [], "as": "x"}}]`, "secret:find"},
		{"lookupDuplicateFrom", `[{"$lookup": {"from": "o", "from": {"db": "secret", "coll": "s"}, "as": "x"}}]`, "app:find secret:find"},
		{"subPipelineRunsOnForeignDB", `[{"$lookup": {"from": {"db": "secret", "coll": "s"}, "pipeline": [{"$unionWith": "t"}], "as": "x"}}]`, "secret:find secret:find"},
		{"graphLookupInForeignSubPipeline", `[{"$lookup": {"from": {"db": "s2", "coll": "s"}, "as": "x", "pipeline": [{"$graphLookup": {"from": "t"}}]}}]`, "s2:find s2:find"},
		{"facet", `[{"$facet": {"a": [{"$lookup": {"from": {"db": "secret", "coll": "s"}, "as": "x", "pipeline": []}}], "b": [{"$unionWith": {"coll": "u", "pipeline": [{"$lookup": {"from": {"db": "deep", "coll": "d"}, "as": "y", "pipeline": []}}]}}]}}]`,
			"app:find deep:find secret:find"},
		{"outOtherDB", `[{"$out": {"db": "w", "coll": "c"}}]`, "w:insert,remove"},
		{"outSameDB", `[{"$out": "c"}]`, "app:insert,remove"},
		{"mergeInto", `[{"$merge": {"into": {"db": "w", "coll": "c"}}}]`, "w:insert,update,remove"},
		{"mergeIntoColl", `[{"$merge": {"into": "c"}}]`, "app:insert,update,remove"},
		{"mergeString", `[{"$merge": "c"}]`, "app:insert,update,remove"},
		{"stats", `[{"$collStats": {}}, {"$indexStats": {}}, {"$planCacheStats": {}}]`, "app:collStats app:indexStats app:planCacheRead"},
		{"sessionsOfOthers", `[{"$listLocalSessions": {"allUsers": true}}]`, ":listSessions"},
		{"ownSessions", `[{"$listLocalSessions": {}}]`, ""},
		{"persistedSessionsOfOthers", `[{"$listSessions": {"users": []}}]`, ":listSessions"},
		{"notAnArray", `{"$lookup": 1}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := bson.UnmarshalExtJSON([]byte(`{"p": `+tc.pipeline+`}`), false)
			if err != nil {
				t.Fatal(err)
			}
			p, _ := doc.Lookup("p")
			var got []string
			for _, n := range PipelineNeeds("app", p) {
				got = append(got, fmt.Sprintf("%s:%s", n.DB, n.Actions))
			}
			slices.Sort(got)
			got = slices.Compact(got)
			want := strings.Fields(tc.want)
			slices.Sort(want)
			want = slices.Compact(want)
			if !slices.Equal(got, want) {
				t.Errorf("needs = %v, want %v", got, want)
			}
		})
	}
}

// TestPipelineNeedsDeepNesting: the walk reaches a namespace however deep
// (beyond the parser's limit too) without running away on the stack.
func TestPipelineNeedsDeepNesting(t *testing.T) {
	p := `[{"$lookup": {"from": {"db": "bottom", "coll": "b"}, "as": "x", "pipeline": []}}]`
	for range 25 {
		p = `[{"$facet": {"f": ` + p + `}}]`
	}
	doc, err := bson.UnmarshalExtJSON([]byte(`{"p": `+p+`}`), false)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := doc.Lookup("p")
	needs := PipelineNeeds("app", v)
	if !slices.Contains(needs, Need{DB: "bottom", Actions: Find}) {
		t.Errorf("needs = %v, want bottom:find", needs)
	}
}
