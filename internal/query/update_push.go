package query

import (
	"sort"

	"github.com/cairndb/cairn/bson"
)

// pushOp is $push with its $each, $position, $sort and $slice modifiers,
// applied in that order.
type pushOp struct {
	each        []bson.Value
	position    int64
	hasPosition bool
	slice       int64
	hasSlice    bool
	sort        *pushSort
}

type pushSort struct {
	whole   bool
	desc    bool
	coll    bson.StringComparer
	pattern *Sort
}

func (s *pushSort) less(a, b bson.Value) bool {
	if s.whole {
		r := bson.CompareCollated(a, b, s.coll)
		if s.desc {
			return r > 0
		}
		return r < 0
	}
	return s.pattern.Compare(asDoc(a), asDoc(b)) < 0
}

// asDoc returns v as a document for pattern sorts; other values sort as
// documents without the fields.
func asDoc(v bson.Value) bson.Doc {
	if v.Type == bson.TypeDocument {
		return bson.Doc(v.Data)
	}
	return bson.EmptyDoc
}

func (o *pushOp) build(c *applyCtx, b *bson.Builder, key string, existing []bson.Value) error {
	vals := make([]bson.Value, 0, len(existing)+len(o.each))
	pos := int64(len(existing))
	if o.hasPosition {
		pos = o.position
		if pos < 0 {
			pos = max(0, int64(len(existing))+pos)
		}
		pos = min(pos, int64(len(existing)))
	}
	vals = append(vals, existing[:pos]...)
	vals = append(vals, o.each...)
	vals = append(vals, existing[pos:]...)
	if o.sort != nil {
		// The sort cannot stop half way: check before it and after.
		if err := c.interrupted(); err != nil {
			return err
		}
		sort.SliceStable(vals, func(i, j int) bool { return o.sort.less(vals[i], vals[j]) })
		if err := c.interrupted(); err != nil {
			return err
		}
	}
	if o.hasSlice {
		n := int64(len(vals))
		switch {
		case o.slice >= 0 && o.slice < n:
			vals = vals[:o.slice]
		case o.slice < 0 && -o.slice < n:
			vals = vals[n+o.slice:]
		}
	}
	appendArray(b, key, vals)
	return nil
}

func (o *pushOp) apply(c *applyCtx, b *bson.Builder, key string, old bson.Value, _ []string, _ bool) error {
	if old.Type != bson.TypeArray {
		return badValue("The field '%s' must be an array but is of type %s in document %s", key, typeNameForMessage(old.Type), c.idString())
	}
	return o.build(c, b, key, bson.Doc(old.Data).Values())
}

func (o *pushOp) create(c *applyCtx, b *bson.Builder, key string, _ []string) error {
	return o.build(c, b, key, nil)
}

func (o *pushOp) creates(*applyCtx) bool { return true }
