package oplog

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairndb/cairn/bson"
)

func apply(t *testing.T, pre, diff bson.Doc) bson.Doc {
	t.Helper()
	out, err := ApplyDiff(pre, diff)
	if err != nil {
		t.Fatalf("applying %s to %s: %v", diff.String(), pre.String(), err)
	}
	return out
}

// randValue builds a random value of depth at most d.
func randValue(r *rand.Rand, b *bson.Builder, key string, d int) {
	switch k := r.IntN(8); {
	case k == 0 && d > 0:
		b.StartDocument(key)
		randFields(r, b, d-1)
		b.End()
	case k == 1 && d > 0:
		b.StartArray(key)
		for i := range r.IntN(5) {
			randValue(r, b, bson.Index(i), d-1)
		}
		b.End()
	case k == 2:
		b.AppendString(key, strings.Repeat("x", r.IntN(20)))
	case k == 3:
		b.AppendDouble(key, float64(r.IntN(3)))
	case k == 4:
		b.AppendNull(key)
	default:
		b.AppendInt32(key, int32(r.IntN(4)))
	}
}

func randFields(r *rand.Rand, b *bson.Builder, d int) {
	names := []string{"a", "b", "c", "d", "e", "f"}
	r.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	for _, n := range names[:r.IntN(len(names)+1)] {
		randValue(r, b, n, d)
	}
}

// mutate returns a variant of doc: fields kept, changed, removed, added,
// moved; nested values mutated in turn.
// randPair makes case n's pair of documents with _id n: a random document
// and, one time in ten, another random one, else a mutation of it.
func randPair(r *rand.Rand, n int) (pre, post bson.Doc) {
	var pb bson.Builder
	pb.AppendInt32("_id", int32(n))
	randFields(r, &pb, 3)
	pre = pb.Finish()
	var qb bson.Builder
	if r.IntN(10) == 0 {
		qb.AppendInt32("_id", int32(n))
		randFields(r, &qb, 3)
	} else {
		mutate(r, &qb, pre, 2)
	}
	return pre, qb.Finish()
}

func mutate(r *rand.Rand, b *bson.Builder, doc bson.Doc, d int) {
	els := doc.Elements()
	if r.IntN(6) == 0 && len(els) > 1 {
		i, j := r.IntN(len(els)), r.IntN(len(els))
		els[i], els[j] = els[j], els[i]
	}
	for _, e := range els {
		switch k := r.IntN(10); {
		case k == 0: // removed
		case k == 1:
			randValue(r, b, e.Key, d)
		case k < 5 && e.Value.Type == bson.TypeDocument:
			b.StartDocument(e.Key)
			mutate(r, b, e.Value.Document(), d)
			b.End()
		case k < 5 && e.Value.Type == bson.TypeArray:
			vals := e.Value.Document().Values()
			if r.IntN(3) == 0 && len(vals) > 0 {
				vals = vals[:r.IntN(len(vals))]
			}
			b.StartArray(e.Key)
			for i, v := range vals {
				if r.IntN(3) == 0 {
					randValue(r, b, bson.Index(i), d)
				} else if v.Type == bson.TypeDocument && r.IntN(2) == 0 {
					b.StartDocument(bson.Index(i))
					mutate(r, b, v.Document(), d)
					b.End()
				} else {
					b.AppendValue(bson.Index(i), v)
				}
			}
			for i := len(vals); i < len(vals)+r.IntN(3); i++ {
				randValue(r, b, bson.Index(i), d)
			}
			b.End()
		default:
			b.AppendElement(e)
		}
	}
	if r.IntN(3) == 0 {
		randValue(r, b, "z"+strconv.Itoa(r.IntN(3)), d)
	}
}

// TestDiffAppliesToNew checks, on random pairs of documents, that the
// diff applied to the old document gives exactly the new one (bytes,
// field order included), and that UpdateObject's o is either such a diff
// or the new document.
func TestDiffAppliesToNew(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 7))
	for n := range 20000 {
		pre, post := randPair(r, n)
		d := Diff(pre, post)
		if d == nil {
			if string(pre) != string(post) {
				t.Fatalf("seed %d case %d: no diff for %s -> %s", seed, n, pre.String(), post.String())
			}
			continue
		}
		if got := apply(t, pre, d); string(got) != string(post) {
			t.Fatalf("seed %d case %d:\n pre  %s\n post %s\n diff %s\n got  %s", seed, n, pre.String(), post.String(), d.String(), got.String())
		}
		o := UpdateObject(pre, post)
		if v, ok := o.Lookup("$v"); ok {
			if dd, _ := o.Lookup("diff"); v.Int32() != 2 || string(dd.Data) != string(d) || len(d) >= len(post) {
				t.Fatalf("case %d: o %s for post of %d bytes", n, o.String(), len(post))
			}
		} else if string(o) != string(post) {
			t.Fatalf("case %d: o is neither a diff nor the new document: %s", n, o.String())
		}
	}
}

// TestDiffShapes pins the diff's format on examples (mongod's doc_diff
// sections and order).
func TestDiffShapes(t *testing.T) {
	cases := []struct{ pre, post, want string }{
		{`{"_id": 1, "a": 1}`, `{"_id": 1, "a": 2}`, `{"u": {"a": 2}}`},
		{`{"_id": 1, "a": 1, "b": 2}`, `{"_id": 1, "b": 2}`, `{"d": {"a": false}}`},
		{`{"_id": 1}`, `{"_id": 1, "n": "x"}`, `{"i": {"n": "x"}}`},
		{`{"_id": 1, "a": 1, "b": 2}`, `{"_id": 1, "b": 2, "a": 1}`, `{"i": {"a": 1}}`},
		{`{"_id": 1, "s": {"x": 1, "y": "long string value here"}}`, `{"_id": 1, "s": {"x": 5, "y": "long string value here"}}`, `{"ss": {"u": {"x": 5}}}`},
		{`{"_id": 1, "arr": [1, 2, 3, "a long string element"]}`, `{"_id": 1, "arr": [1, 9, 3, "a long string element", 4]}`, `{"sarr": {"a": true, "u1": 9, "u4": 4}}`},
		{`{"_id": 1, "arr": [1, 2, 3, "a long string element"]}`, `{"_id": 1, "arr": [1, 2, 3]}`, `{"sarr": {"a": true, "l": 3}}`},
		{`{"_id": 1, "a": 1, "b": 1, "c": 1}`, `{"_id": 1, "a": 2, "c": 1, "x": 1}`, `{"d": {"b": false}, "u": {"a": 2}, "i": {"x": 1}}`},
	}
	for _, c := range cases {
		pre, post, want := parse(t, c.pre), parse(t, c.post), parse(t, c.want)
		if got := Diff(pre, post); string(got) != string(want) {
			t.Errorf("Diff(%s, %s) = %s, want %s", c.pre, c.post, got.String(), c.want)
		}
	}
}

func parse(t *testing.T, s string) bson.Doc {
	t.Helper()
	d, err := bson.UnmarshalExtJSON([]byte(s), false)
	if err != nil {
		t.Fatal(fmt.Errorf("%s: %w", s, err))
	}
	return d
}
