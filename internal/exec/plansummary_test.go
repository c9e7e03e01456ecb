package exec

import (
	"testing"

	"github.com/cairndb/cairn/bson"
)

func TestPlanSummary(t *testing.T) {
	var key bson.Builder
	key.AppendInt32("a", 1)
	key.AppendInt32("b", -1)
	key.AppendString("t", "text")
	if got := KeyPatternText(key.Finish()); got != `{ a: 1, b: -1, t: "text" }` {
		t.Errorf("key pattern %s", got)
	}
	if PlanSummary(nil, true) != "IDHACK" || PlanSummary(nil, false) != "COLLSCAN" {
		t.Error("IDHACK / COLLSCAN")
	}
}
