package exec

import (
	"context"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/kv"
)

// DataSizeOptions are the dataSize command's arguments.
type DataSizeOptions struct {
	// KeyPattern, Min and Max restrict the count to the documents whose
	// key under an index with KeyPattern as prefix lies in [Min, Max)
	// (KeyPattern empty: inferred from Min's fields, each ascending). Min
	// and Max are both set or both empty (the whole collection).
	KeyPattern, Min, Max bson.Doc
	// Estimate counts every document as the collection's average size.
	Estimate bool
	// MaxSize and MaxObjects stop the count once it passes them (0: no
	// limit), reported as MaxReached.
	MaxSize, MaxObjects int64
}

// DataSizeResult is dataSize's answer.
type DataSizeResult struct {
	Size, NumObjects int64
	MaxReached       bool
	// Counted is false when the collection is empty or missing: mongod
	// then answers without estimate.
	Counted bool
}

// DataSize counts the documents of coll (nil: a missing collection) and
// their bytes as mongod's dataSize does: all of them, or those in an
// index key range; interrupted by ctx.
func DataSize(ctx context.Context, tx *kv.Tx, coll *catalog.Collection, o DataSizeOptions) (DataSizeResult, error) {
	var res DataSizeResult
	if coll == nil {
		return res, nil
	}
	if _, _, isView := coll.View(); isView {
		return res, ErrOnView(coll.Namespace())
	}
	t, err := DataTree(tx, coll)
	if err != nil {
		return res, err
	}
	records := t.Len()
	if records == 0 {
		return res, nil
	}
	res.Counted = true
	if (len(o.Min) <= 5) != (len(o.Max) <= 5) {
		return res, mongoerr.New(mongoerr.BadValue, "Only one of min or max specified")
	}
	var kp []keyField
	if len(o.Min) > 5 {
		pattern := o.KeyPattern
		if len(pattern) <= 5 {
			pattern = inferKeyPattern(o.Min)
		}
		if kp = prefixedIndex(coll, pattern); kp == nil {
			return res, mongoerr.New(mongoerr.OperationFailed, "Couldn't find valid index containing key pattern")
		}
	}
	var avg int64
	if o.Estimate {
		_, total, err := CollSizes(tx, coll)
		if err != nil {
			return res, err
		}
		avg = total / records
	}
	min, max := boundValues(o.Min), boundValues(o.Max)
	cur := t.Cursor()
	n := 0
	for k, v := cur.First(); k != nil; k, v = cur.Next() {
		if n++; n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return res, err
			}
		}
		if kp != nil && !inKeyRange(bson.Doc(v), kp, min, max) {
			continue
		}
		if o.Estimate {
			res.Size += avg
		} else {
			res.Size += int64(len(v))
		}
		res.NumObjects++
		if (o.MaxSize > 0 && res.Size > o.MaxSize) || (o.MaxObjects > 0 && res.NumObjects > o.MaxObjects) {
			res.MaxReached = true
			break
		}
	}
	return res, cur.Err()
}

type keyField struct {
	path []string
	desc bool
}

func inferKeyPattern(min bson.Doc) bson.Doc {
	var b bson.Builder
	it := min.Iter()
	for it.Next() {
		b.AppendInt32(it.Element().Key, 1)
	}
	return b.Finish()
}

// prefixedIndex finds a single-key, unfiltered index whose key pattern
// starts with pattern's fields (as mongod's findShardKeyPrefixedIndex) and
// returns its fields.
func prefixedIndex(coll *catalog.Collection, pattern bson.Doc) []keyField {
	for _, ix := range coll.Indexes {
		if !ix.Ready || ix.Multikey {
			continue
		}
		if _, ok := ix.Spec.Lookup("partialFilterExpression"); ok {
			continue
		}
		if v, ok := ix.Spec.Lookup("sparse"); ok && v.Truthy() {
			continue
		}
		if _, ok := ix.Spec.Lookup("collation"); ok {
			continue
		}
		key, ok := ix.Spec.Lookup("key")
		if !ok || key.Type != bson.TypeDocument {
			continue
		}
		var fields []keyField
		kit := key.Document().Iter()
		for kit.Next() {
			e := kit.Element()
			if !e.Value.IsNumber() {
				fields = nil
				break
			}
			f, _ := e.Value.AsFloat64()
			fields = append(fields, keyField{path: splitPath(e.Key), desc: f < 0})
		}
		if fields == nil {
			continue
		}
		if isKeyPrefix(pattern, key.Document()) {
			return fields
		}
	}
	return nil
}

func splitPath(p string) []string {
	var out []string
	start := 0
	for i := 0; i < len(p); i++ {
		if p[i] == '.' {
			out = append(out, p[start:i])
			start = i + 1
		}
	}
	return append(out, p[start:])
}

// isKeyPrefix reports whether pattern's fields and directions begin key.
func isKeyPrefix(pattern, key bson.Doc) bool {
	pit, kit := pattern.Iter(), key.Iter()
	for pit.Next() {
		if !kit.Next() {
			return false
		}
		p, k := pit.Element(), kit.Element()
		if p.Key != k.Key || bson.Compare(p.Value, k.Value) != 0 {
			return false
		}
	}
	return true
}

func boundValues(d bson.Doc) []bson.Value {
	var out []bson.Value
	if len(d) <= 5 {
		return nil
	}
	it := d.Iter()
	for it.Next() {
		out = append(out, it.Element().Value)
	}
	return out
}

// inKeyRange reports whether doc's key lies in [min, max), bounds shorter
// than the key being extended with MinKey (mongod's extendRangeBound).
func inKeyRange(doc bson.Doc, kp []keyField, min, max []bson.Value) bool {
	return compareKey(doc, kp, min) >= 0 && compareKey(doc, kp, max) < 0
}

func compareKey(doc bson.Doc, kp []keyField, bound []bson.Value) int {
	for i, f := range kp {
		v, ok := doc.LookupPath(f.path...)
		if !ok {
			v = bson.Value{Type: bson.TypeNull}
		}
		b := bson.Value{Type: bson.TypeMinKey}
		if i < len(bound) {
			b = bound[i]
		}
		c := bson.Compare(v, b)
		if i >= len(bound) {
			// An extended bound is the lowest key in the index's order.
			c = 1
		} else if f.desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return 0
}
