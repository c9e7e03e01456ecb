package conformance

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/cairndb/cairn/internal/testutil/cairndtest"
)

// TestRunnerSelfCheck makes sure the runner fails tests whose expectations
// are wrong: it takes one corpus test that passes and breaks its expected
// result, events, outcome and error in turn.
func TestRunnerSelfCheck(t *testing.T) {
	path := filepath.Join(crudDir(), "find.json")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("MongoDB's CRUD spec tests are not available: %v", err)
	}
	f, err := loadSpecFile(path, "find")
	if err != nil {
		t.Fatal(err)
	}
	const name = "find with multiple batches works"
	var orig *specTest
	for i := range f.Tests {
		if f.Tests[i].Description == name {
			orig = &f.Tests[i]
		}
	}
	if orig == nil {
		t.Skipf("find.json has no test %q", name)
	}
	srv := cairndtest.Start(t)
	ctx := context.Background()
	r, err := NewRunner(ctx, srv.URI)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(ctx)

	if res := r.Run(ctx, f, orig); res.Status != Passed {
		t.Skipf("the unmodified test does not pass (%v: %s); cannot self-check", res.Status, res.Reason)
	}
	doc := func(s string) bson.Raw { return ej(t, s).Document() }
	mutations := map[string]func(tc *specTest){
		"wrong value in result": func(tc *specTest) {
			tc.Operations[0].ExpectResult = ej(t, `[{"_id": 2, "x": 23}, {"_id": 3, "x": 33}, {"_id": 4, "x": 44}, {"_id": 5, "x": 55}, {"_id": 6, "x": 66}]`)
		},
		"missing document in result": func(tc *specTest) {
			tc.Operations[0].ExpectResult = ej(t, `[{"_id": 2}, {"_id": 3}, {"_id": 4}, {"_id": 5}]`)
		},
		"error expected": func(tc *specTest) {
			tc.Operations[0].ExpectResult = missing
			tc.Operations[0].ExpectError = doc(`{"isError": true}`)
		},
		"fewer events expected": func(tc *specTest) {
			ev := newArgs(tc.ExpectEvents[0])
			events := ev.docs("events")
			list := bson.A{}
			for _, e := range events[:len(events)-1] {
				list = append(list, e)
			}
			raw, err := bson.Marshal(bson.D{{Key: "client", Value: ev.str("client")}, {Key: "events", Value: list}})
			if err != nil {
				t.Fatal(err)
			}
			tc.ExpectEvents = []bson.Raw{raw}
		},
		"wrong command in event": func(tc *specTest) {
			tc.ExpectEvents = []bson.Raw{doc(`{"client": "client0", "events": [{"commandStartedEvent": {"command": {"find": "coll0", "batchSize": 3}}}], "ignoreExtraEvents": true}`)}
		},
		"wrong outcome": func(tc *specTest) {
			tc.Outcome = []collData{{CollectionName: "coll0", DatabaseName: "find-tests", Documents: []bson.Raw{doc(`{"_id": 1, "x": 11}`)}}}
		},
	}
	for what, mutate := range mutations {
		tc := *orig
		tc.Operations = append([]operation(nil), orig.Operations...)
		mutate(&tc)
		if res := r.Run(ctx, f, &tc); res.Status != Failed {
			t.Errorf("%s: the runner reported %v (%s), want failed", what, res.Status, res.Reason)
		}
	}
}

// TestRunnerSelfCheckGridFS makes sure a GridFS download's bytes are
// compared: the corpus test passes, and fails once its expected bytes or its
// outcome change.
func TestRunnerSelfCheckGridFS(t *testing.T) {
	path := filepath.Join(suiteDir("gridfs-unified"), "download.json")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("MongoDB's GridFS spec tests are not available: %v", err)
	}
	f, err := loadSpecFile(path, "download")
	if err != nil {
		t.Fatal(err)
	}
	f.Suite = "gridfs-unified"
	const name = "download when there is one chunk"
	var orig *specTest
	for i := range f.Tests {
		if f.Tests[i].Description == name {
			orig = &f.Tests[i]
		}
	}
	if orig == nil {
		t.Skipf("download.json has no test %q", name)
	}
	srv := cairndtest.Start(t)
	ctx := context.Background()
	r, err := NewRunner(ctx, srv.URI)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(ctx)
	if res := r.Run(ctx, f, orig); res.Status != Passed {
		t.Fatalf("the unmodified test: %v: %s", res.Status, res.Reason)
	}
	for what, mutate := range map[string]func(tc *specTest){
		"other bytes": func(tc *specTest) {
			tc.Operations[0].ExpectResult = ej(t, `{"$$matchesHexBytes": "1123"}`)
		},
		"fewer bytes": func(tc *specTest) {
			tc.Operations[0].ExpectResult = ej(t, `{"$$matchesHexBytes": "11"}`)
		},
		"error expected": func(tc *specTest) {
			tc.Operations[0].ExpectResult = missing
			tc.Operations[0].ExpectError = ej(t, `{"isClientError": true}`).Document()
		},
	} {
		tc := *orig
		tc.Operations = append([]operation(nil), orig.Operations...)
		mutate(&tc)
		if res := r.Run(ctx, f, &tc); res.Status != Failed {
			t.Errorf("%s: the runner reported %v (%s), want failed", what, res.Status, res.Reason)
		}
	}
}
