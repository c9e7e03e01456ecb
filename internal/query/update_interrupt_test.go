package query

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// countdownCtx is a context whose Err counts its calls and reports err
// from the calls-th on (never, when calls is 0).
type countdownCtx struct {
	context.Context
	calls, n int
	err      error
}

func (c *countdownCtx) Err() error {
	c.n++
	if c.calls > 0 && c.n >= c.calls {
		return c.err
	}
	return nil
}

// bigUpdates are updates whose work grows with n: each must check its
// context as it goes.
func bigUpdates(n int) []struct{ name, doc, update string } {
	nums := make([]string, n)
	for i := range nums {
		nums[i] = fmt.Sprint(i)
	}
	arr := "[" + strings.Join(nums, ",") + "]"
	return []struct{ name, doc, update string }{
		{"$addToSet $each", `{"_id": 1, "a": [-1]}`, `{"$addToSet": {"a": {"$each": ` + arr + `}}}`},
		{"$addToSet $each creating", `{"_id": 1}`, `{"$addToSet": {"a": {"$each": ` + arr + `}}}`},
		{"$push $each $sort", `{"_id": 1, "a": []}`, `{"$push": {"a": {"$each": ` + arr + `, "$sort": 1}}}`},
		{"$pull", `{"_id": 1, "a": ` + arr + `}`, `{"$pull": {"a": {"$gte": 5}}}`},
		{"$pullAll", `{"_id": 1, "a": ` + arr + `}`, `{"$pullAll": {"a": ` + arr + `}}`},
		{"$[] over every element", `{"_id": 1, "a": ` + arr + `}`, `{"$inc": {"a.$[]": 1}}`},
		{"backfilled positions", `{"_id": 1, "a": []}`, fmt.Sprintf(`{"$set": {"a.%d": 1}}`, n)},
	}
}

// TestUpdateInterrupted: a long update operator stops at its context's
// cancellation (killOp: Interrupted, 11601) or deadline (maxTimeMS:
// MaxTimeMSExpired, 50), builds no document, and stops at the next check
// after the context is done.
func TestUpdateInterrupted(t *testing.T) {
	const n = 20_000
	for _, tc := range bigUpdates(n) {
		for _, stop := range []struct {
			err  error
			code int32
		}{{context.Canceled, mongoerr.Interrupted}, {context.DeadlineExceeded, mongoerr.MaxTimeMSExpired}} {
			t.Run(fmt.Sprintf("%s/%d", tc.name, stop.code), func(t *testing.T) {
				u, err := parseUpd(t, tc.update, nil)
				if err != nil {
					t.Fatal(err)
				}
				doc := d(t, tc.doc)
				// Never done: it is checked as the work goes.
				free := &countdownCtx{Context: context.Background()}
				if _, _, err := u.ApplyContext(free, nil, doc, &MatchDetails{}, false); err != nil {
					t.Fatal(err)
				}
				if free.n < 2 {
					t.Fatalf("%d checks of the context for %d values", free.n, n)
				}
				// Done at the second check: it answers then.
				ctx := &countdownCtx{Context: context.Background(), calls: 2, err: stop.err}
				out, _, err := u.ApplyContext(ctx, nil, doc, &MatchDetails{}, false)
				if e := mongoerr.As(err); err == nil || e.Code != stop.code {
					t.Fatalf("interrupted update answered %v (%v), want code %d", err, out, stop.code)
				}
				if out != nil || ctx.n != 2 {
					t.Fatalf("interrupted update built %v after %d checks", out, ctx.n)
				}
			})
		}
	}
}

// TestAddToSetEachMany: $addToSet of many values keeps the existing array
// as it is (duplicates included) and appends each new value once, equal
// numbers of any type being one value, strings compared under the
// collation.
func TestAddToSetEachMany(t *testing.T) {
	runUpdateCases(t, []updateCase{
		{`{"_id": 1, "a": [1, 1, "x"]}`, `{"$addToSet": {"a": {"$each": [1.0, {"$numberLong": "2"}, 2, "x", "X", [1], [1.0], {"k": 1}, {"k": 1.0}, null, null]}}}`,
			`{"_id": 1, "a": [1, 1, "x", {"$numberLong": "2"}, "X", [1], {"k": 1}, null]}`, nil},
		{`{"_id": 1}`, `{"$addToSet": {"a": {"$each": [3, 2, 3, 1, 2]}}}`, `{"_id": 1, "a": [3, 2, 1]}`, nil},
		{`{"_id": 1, "a": [1, 2, 3, 2]}`, `{"$pullAll": {"a": [2, 5, {"$numberLong": "3"}]}}`, `{"_id": 1, "a": [1]}`, nil},
	})
	coll, err := ParseCollation(d(t, `{"locale": "en", "strength": 2}`))
	if err != nil {
		t.Fatal(err)
	}
	u, err := ParseUpdate(val(t, `{"$addToSet": {"a": {"$each": ["B", "b", "c", "C", "A"]}}}`), nil, &Options{Collation: coll})
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := u.Apply(nil, d(t, `{"_id": 1, "a": ["a"]}`), nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := js(t, out), normJSON(t, `{"_id": 1, "a": ["a", "B", "c"]}`); got != want {
		t.Fatalf("collated $addToSet: %s, want %s", got, want)
	}
	// A large set: every value once, in first-seen order.
	u, doc, err := addToSetEach(30_000)
	if err != nil {
		t.Fatal(err)
	}
	out, _, err = u.Apply(nil, doc, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := out.Lookup("a")
	i := 0
	for it := bson.Doc(a.Data).Iter(); it.Next(); i++ {
		v := it.Element().Value
		var got int64
		switch v.Type {
		case bson.TypeInt64:
			got = v.Int64()
		case bson.TypeInt32:
			got = int64(v.Int32())
		}
		if got != int64(i) || (v.Type == bson.TypeInt64) != (i < 15_000) {
			t.Fatalf("a.%d = %s", i, v)
		}
	}
	if i != 30_000 {
		t.Fatalf("%d values, want 30000", i)
	}
}
