package oplog

// Update entries as mongod 5.0+ records them: o is {$v: 2, diff: D}, D a
// delta of the old document into the new one in mongod's doc_diff format.
//
// An object diff has up to three sections and any number of sub-diffs, in
// this order: d {field: false} (fields deleted), u {field: value} (fields
// whose value is replaced in place), i {field: value} (fields appended at
// the end, in this order; an inserted field that exists is moved there),
// and s<field>: D' (a field whose object or array value changes by the
// diff D'). An array diff is {a: true[, l: newLength], then u<index>:
// value and s<index>: D' in index order}: l truncates (or pads with
// nulls), u<index> sets an element (past the end: appends, padding with
// nulls), s<index> applies a sub-diff to an element.
//
// The diff is computed as mongod's computeOplogDiff computes it: the two
// documents are walked together; a field present at the same place in
// both is kept, updated, or diffed (two objects, two arrays); a field of
// the old document that is not at the new one's place is deleted, and
// once either walk ends, the old document's remaining fields are deleted
// and the new one's remaining fields inserted (so a reordered field is
// inserted again, which moves it). Applying the diff to the old document
// gives exactly the new one, field order included (diff_test.go checks it
// on random documents). As mongod does, an update whose diff is not
// smaller than the new document is logged as a replacement instead, and a
// sub-diff not smaller than the new value as an update of the value.

import (
	"strconv"
	"sync"

	"github.com/cairndb/cairn/bson"
)

// UpdateObject returns an update entry's o for the update of old into
// updated: {$v: 2, diff}, or updated itself when the diff would not be
// smaller; nil when the documents are the same.
func UpdateObject(old, updated bson.Doc) bson.Doc {
	if string(old) == string(updated) {
		return nil
	}
	d := Diff(old, updated)
	if d == nil {
		return nil
	}
	if len(d) >= len(updated) {
		return updated
	}
	var b bson.Builder
	b.AppendInt32("$v", 2)
	b.AppendDocument("diff", d)
	return b.Finish()
}

// ModifierObject returns an update entry's o for an update with operators
// (or a pipeline) of old into updated: always {$v: 2, diff}, whose
// sub-diffs descend into every object and array that changed, as mongod
// logs the paths an update's operators change (so that a change stream's
// updateDescription names "a.1" for {$set: {"a.1": 2}}); nil when the
// documents are the same. (mongod logs an operator's $set of a whole
// array as the new array; here it is the array's element changes.)
func ModifierObject(old, updated bson.Doc) bson.Doc {
	var d diffBuf // not reused: the result may keep its buffer
	return d.modifierObject(old, updated)
}

// diffBuf builds update entries' o in one pass into a buffer kept across
// updates (a sync.Pool's: Log.Update runs under kv's writer and, in
// multi-document transactions, concurrently).
type diffBuf struct {
	b   bson.Builder
	buf []byte
}

var diffBufs = sync.Pool{New: func() any { return &diffBuf{buf: make([]byte, 0, 512)} }}

func getDiffBuf() *diffBuf { return diffBufs.Get().(*diffBuf) }

// putDiffBuf returns d to the pool, unless an unusually large diff grew
// its buffer.
func putDiffBuf(d *diffBuf) {
	if cap(d.buf) <= 64<<10 {
		diffBufs.Put(d)
	}
}

// modifierObject is ModifierObject in d's buffer: the result is valid
// until d's next use.
func (d *diffBuf) modifierObject(old, updated bson.Doc) bson.Doc {
	if string(old) == string(updated) {
		return nil
	}
	b := &d.b
	b.Reset(d.buf)
	b.AppendInt32("$v", 2)
	b.StartDocument("diff")
	changed := docDiff(b, old, updated, true)
	b.End()
	o := b.Finish()
	d.buf = o[:0]
	if !changed {
		return nil
	}
	return o
}

// Diff returns the doc_diff of old into updated, nil when they are equal.
func Diff(old, updated bson.Doc) bson.Doc {
	var b bson.Builder
	if !docDiff(&b, old, updated, false) {
		return nil
	}
	return b.Finish()
}

type subDiff struct {
	key  string
	diff bson.Doc
	// pre and post are the two values of an exact sub-diff, written into
	// the builder in place (diff nil).
	pre, post bson.Value
}

// docDiff appends the object diff of pre into post to b and reports
// whether it has anything. The fields are gathered first (sections d, u
// and i come before the sub-diffs), in slices backed by arrays on the
// stack for the usual handful of changed fields.
func docDiff(b *bson.Builder, pre, post bson.Doc, exact bool) bool {
	var (
		deleteArr [4]string
		updateArr [4]bson.Element
		insertArr [4]bson.Element
		subArr    [4]subDiff
		deletes   = deleteArr[:0]
		updates   = updateArr[:0]
		inserts   = insertArr[:0]
		subs      = subArr[:0]
	)
	pi, qi := pre.Iter(), post.Iter()
	pok, qok := pi.Next(), qi.Next()
	for pok && qok {
		p, q := pi.Element(), qi.Element()
		if p.Key != q.Key {
			deletes = append(deletes, p.Key)
			pok = pi.Next()
			continue
		}
		switch {
		case p.Value.Type == q.Value.Type && string(p.Value.Data) == string(q.Value.Data):
		case exact && p.Value.Type == q.Value.Type && (p.Value.Type == bson.TypeDocument || p.Value.Type == bson.TypeArray):
			// Kept whatever its size: written in place below.
			subs = append(subs, subDiff{key: q.Key, pre: p.Value, post: q.Value})
		default:
			if sub, ok := valueDiff(p.Value, q.Value, exact); ok {
				if sub != nil {
					subs = append(subs, subDiff{key: q.Key, diff: sub})
				} else {
					updates = append(updates, q)
				}
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
		if s.diff != nil {
			b.AppendDocument("s"+s.key, s.diff)
			continue
		}
		b.StartDocument("s" + s.key)
		if s.pre.Type == bson.TypeDocument {
			docDiff(b, s.pre.Document(), s.post.Document(), true)
		} else {
			arrayDiff(b, s.pre.Document(), s.post.Document(), true)
		}
		b.End()
	}
	return true
}

// valueDiff compares two values at the same place: changed is false when
// they are the same (type and bytes); otherwise sub is their sub-diff
// (two objects or two arrays whose diff is smaller than post) or nil
// (post replaces pre). exact keeps every sub-diff, whatever its size.
func valueDiff(pre, post bson.Value, exact bool) (sub bson.Doc, changed bool) {
	if pre.Type == post.Type && string(pre.Data) == string(post.Data) {
		return nil, false
	}
	if pre.Type != post.Type {
		return nil, true
	}
	var b bson.Builder
	switch pre.Type {
	case bson.TypeDocument:
		docDiff(&b, pre.Document(), post.Document(), exact)
	case bson.TypeArray:
		arrayDiff(&b, pre.Document(), post.Document(), exact)
	default:
		return nil, true
	}
	d := b.Finish()
	if !exact && len(d) >= len(post.Data) {
		return nil, true
	}
	return d, true
}

// arrayDiff appends the array diff of pre into post to b.
func arrayDiff(b *bson.Builder, pre, post bson.Doc, exact bool) {
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
		sub, changed := valueDiff(pv[i], q, exact)
		switch {
		case !changed:
		case sub != nil:
			b.AppendDocument("s"+strconv.Itoa(i), sub)
		default:
			b.AppendValue("u"+strconv.Itoa(i), q)
		}
	}
}
