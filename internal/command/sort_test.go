package command

import (
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	dbson "go.mongodb.org/mongo-driver/v2/bson"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
)

// TestExternalSort sorts more than the memory budget: the sorter must
// spill runs, merge them in order (ties in input order), and remove its
// files; without allowDiskUse it must refuse with 292.
func TestExternalSort(t *testing.T) {
	old := exec.SortMemoryBudget()
	exec.SetSortMemoryBudget(4096)
	defer func() { exec.SetSortMemoryBudget(old) }()
	raw, _ := dbson.Marshal(dbson.D{{Key: "k", Value: 1}})
	srt, err := query.ParseSort(bson.Doc(raw), &query.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	tmp := t.TempDir()
	st := &exec.Sorter{AllowDisk: true, Parent: tmp}
	const n = 2000
	for i := 0; i < n; i++ {
		d, _ := dbson.Marshal(dbson.D{{Key: "k", Value: rng.IntN(50)}, {Key: "seq", Value: i}})
		if err := st.Add(srt.Key(nil, bson.Doc(d)), bson.Doc(d)); err != nil {
			t.Fatal(err)
		}
	}
	if runs := st.S.Stats().Runs(); runs < 2 || !st.Spilled() {
		t.Fatalf("%d runs: the sort did not spill", runs)
	}
	stream, err := st.Finish()
	if err != nil {
		t.Fatal(err)
	}
	prevK, prevSeq, count := -1, -1, 0
	for {
		d, err := stream.Next()
		if err != nil {
			t.Fatal(err)
		}
		if d == nil {
			break
		}
		var v struct{ K, Seq int }
		if err := dbson.Unmarshal(d, &v); err != nil {
			t.Fatal(err)
		}
		if v.K < prevK || (v.K == prevK && v.Seq < prevSeq) {
			t.Fatalf("out of order at %d: k=%d seq=%d after k=%d seq=%d", count, v.K, v.Seq, prevK, prevSeq)
		}
		prevK, prevSeq = v.K, v.Seq
		count++
	}
	if count != n {
		t.Fatalf("merged %d documents, want %d", count, n)
	}
	stream.Close()
	if ents, err := os.ReadDir(tmp); err != nil || len(ents) != 0 {
		t.Fatalf("%d files left behind (%v)", len(ents), err)
	}
	// Without disk use, the budget is a hard limit.
	st = &exec.Sorter{}
	for i := 0; ; i++ {
		d, _ := dbson.Marshal(dbson.D{{Key: "k", Value: i}, {Key: "pad", Value: fmt.Sprint(i)}})
		if err = st.Add(srt.Key(nil, bson.Doc(d)), bson.Doc(d)); err != nil {
			break
		}
	}
	if mongoerr.As(err).Code != 292 {
		t.Fatalf("over budget without allowDiskUse: %v", err)
	}
}
