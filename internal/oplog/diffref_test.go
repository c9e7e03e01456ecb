package oplog

import (
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/cairndb/cairn/bson"
)

// The update entries' o is built in one pass into a pooled buffer
// (diff.go); the entries must stay byte for byte what the first
// implementation, kept here as the reference, built: a diff in its own
// builder, copied into {$v: 2, diff}, sub-diffs in builders of their own.

func refModifierObject(old, updated bson.Doc) bson.Doc {
	if string(old) == string(updated) {
		return nil
	}
	var db bson.Builder
	if !refDocDiff(&db, old, updated, true) {
		return nil
	}
	var b bson.Builder
	b.AppendInt32("$v", 2)
	b.AppendDocument("diff", db.Finish())
	return b.Finish()
}

// TestModifierObjectAsReference compares ModifierObject and the pooled
// buffer's modifierObject (reused across cases, as Log.Update reuses it)
// with the reference on random pairs of documents, and Diff with the
// reference's non-exact diff.
func TestModifierObjectAsReference(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 11))
	d := getDiffBuf()
	defer putDiffBuf(d)
	for n := range 20000 {
		pre, post := randPair(r, n)
		want := refModifierObject(pre, post)
		if got := ModifierObject(pre, post); string(got) != string(want) {
			t.Fatalf("seed %d case %d: ModifierObject(%s, %s) = %s, want %s", seed, n, pre.String(), post.String(), got.String(), want.String())
		}
		if got := d.modifierObject(pre, post); string(got) != string(want) {
			t.Fatalf("seed %d case %d: pooled modifierObject(%s, %s) = %s, want %s", seed, n, pre.String(), post.String(), got.String(), want.String())
		}
		var rb bson.Builder
		var wantDiff bson.Doc
		if refDocDiff(&rb, pre, post, false) {
			wantDiff = rb.Finish()
		}
		if got := Diff(pre, post); string(got) != string(wantDiff) {
			t.Fatalf("seed %d case %d: Diff(%s, %s) = %s, want %s", seed, n, pre.String(), post.String(), got.String(), wantDiff.String())
		}
	}
}

// TestModifierObjectAllocs pins the one-pass build: a $set of one field
// of a YCSB-like record allocates nothing once the buffer is warm.
func TestModifierObjectAllocs(t *testing.T) {
	var pb, qb bson.Builder
	for f := range 10 {
		k := "field" + strconv.Itoa(f)
		pb.AppendString(k, string(make([]byte, 100)))
		if f == 3 {
			qb.AppendString(k, "zzzz")
		} else {
			qb.AppendString(k, string(make([]byte, 100)))
		}
	}
	pre, post := pb.Finish(), qb.Finish()
	d := getDiffBuf()
	defer putDiffBuf(d)
	if n := testing.AllocsPerRun(100, func() { d.modifierObject(pre, post) }); n != 0 {
		t.Errorf("modifierObject allocates %v times per update, want 0", n)
	}
}

type refSubDiff struct {
	key  string
	diff bson.Doc
}

func refDocDiff(b *bson.Builder, pre, post bson.Doc, exact bool) bool {
	var deletes []string
	var updates, inserts []bson.Element
	var subs []refSubDiff
	pi, qi := pre.Iter(), post.Iter()
	pok, qok := pi.Next(), qi.Next()
	for pok && qok {
		p, q := pi.Element(), qi.Element()
		if p.Key != q.Key {
			deletes = append(deletes, p.Key)
			pok = pi.Next()
			continue
		}
		if sub, ok := refValueDiff(p.Value, q.Value, exact); ok {
			if sub != nil {
				subs = append(subs, refSubDiff{"s" + q.Key, sub})
			} else {
				updates = append(updates, q)
			}
		}
		pok, qok = pi.Next(), qi.Next()
	}
	for ; pok; pok = pi.Next() {
		deletes = append(deletes, pi.Element().Key)
	}
	for ; qok; qok = qi.Next() {
		q := qi.Element()
		for i, d := range deletes {
			if d == q.Key { // re-inserted: the insert moves it
				deletes = append(deletes[:i], deletes[i+1:]...)
				break
			}
		}
		inserts = append(inserts, q)
	}
	if len(deletes)+len(updates)+len(inserts)+len(subs) == 0 {
		return false
	}
	if len(deletes) > 0 {
		b.StartDocument("d")
		for _, d := range deletes {
			b.AppendBool(d, false)
		}
		b.End()
	}
	if len(updates) > 0 {
		b.StartDocument("u")
		for _, e := range updates {
			b.AppendElement(e)
		}
		b.End()
	}
	if len(inserts) > 0 {
		b.StartDocument("i")
		for _, e := range inserts {
			b.AppendElement(e)
		}
		b.End()
	}
	for _, s := range subs {
		b.AppendDocument(s.key, s.diff)
	}
	return true
}

func refValueDiff(pre, post bson.Value, exact bool) (sub bson.Doc, changed bool) {
	if pre.Type == post.Type && string(pre.Data) == string(post.Data) {
		return nil, false
	}
	if pre.Type != post.Type {
		return nil, true
	}
	var b bson.Builder
	switch pre.Type {
	case bson.TypeDocument:
		refDocDiff(&b, pre.Document(), post.Document(), exact)
	case bson.TypeArray:
		refArrayDiff(&b, pre.Document(), post.Document(), exact)
	default:
		return nil, true
	}
	d := b.Finish()
	if !exact && len(d) >= len(post.Data) {
		return nil, true
	}
	return d, true
}

func refArrayDiff(b *bson.Builder, pre, post bson.Doc, exact bool) {
	pv, qv := pre.Values(), post.Values()
	b.AppendBool("a", true)
	if len(qv) < len(pv) {
		b.AppendInt32("l", int32(len(qv)))
	}
	for i, q := range qv {
		if i >= len(pv) {
			b.AppendValue("u"+strconv.Itoa(i), q)
			continue
		}
		sub, changed := refValueDiff(pv[i], q, exact)
		switch {
		case !changed:
		case sub != nil:
			b.AppendDocument("s"+strconv.Itoa(i), sub)
		default:
			b.AppendValue("u"+strconv.Itoa(i), q)
		}
	}
}
