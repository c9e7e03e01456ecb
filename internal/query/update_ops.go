package query

import (
	"strings"
	"sync/atomic"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// leafOp is one operator applied at the end of its path.
type leafOp interface {
	// apply writes the field key (whose current value is old) with the
	// operator applied, or nothing to remove it.
	apply(c *applyCtx, b *bson.Builder, key string, old bson.Value, path []string, inArray bool) error
	// create writes the field for a missing path, if the operator creates.
	create(c *applyCtx, b *bson.Builder, key string, path []string) error
	// creates reports whether create writes anything.
	creates(c *applyCtx) bool
}

type setOp struct {
	v        bson.Value
	onInsert bool
}

func (o *setOp) apply(c *applyCtx, b *bson.Builder, key string, old bson.Value, _ []string, _ bool) error {
	if o.onInsert && !c.upsert {
		b.AppendValue(key, old)
		return nil
	}
	b.AppendValue(key, o.v)
	return nil
}

func (o *setOp) create(c *applyCtx, b *bson.Builder, key string, _ []string) error {
	if o.creates(c) {
		b.AppendValue(key, o.v)
	}
	return nil
}

func (o *setOp) creates(c *applyCtx) bool { return !o.onInsert || c.upsert }

type unsetOp struct{}

func (unsetOp) apply(_ *applyCtx, b *bson.Builder, key string, _ bson.Value, _ []string, inArray bool) error {
	if inArray {
		b.AppendNull(key)
	}
	return nil
}
func (unsetOp) create(*applyCtx, *bson.Builder, string, []string) error { return nil }
func (unsetOp) creates(*applyCtx) bool                                  { return false }

type renameSrcOp struct{ unsetOp }

func (renameSrcOp) apply(c *applyCtx, b *bson.Builder, key string, old bson.Value, path []string, inArray bool) error {
	if inArray {
		return badValue("The source field cannot be an array element, '%s' in doc with %s has an array field called '%s'", strings.Join(path, "."), c.idElemString(), path[len(path)-2])
	}
	return nil
}

// idElemString prints the _id element as MongoDB's $rename messages do.
func (c *applyCtx) idElemString() string {
	if id, ok := c.root.Lookup("_id"); ok {
		return "_id: " + id.String()
	}
	return "no id"
}

type renameDstOp struct {
	from []string
	to   []string
}

// source finds the value being renamed in the original document; numeric
// components index arrays, but a source inside an array is an error.
func (o *renameDstOp) source(c *applyCtx) (bson.Value, bool, error) {
	v := bson.Value{Type: bson.TypeDocument, Data: c.root}
	arrayField := ""
	for i, p := range o.from {
		var x bson.Value
		var ok bool
		switch v.Type {
		case bson.TypeDocument:
			x, ok = bson.Doc(v.Data).Lookup(p)
		case bson.TypeArray:
			if arrayField == "" {
				arrayField = o.from[i-1]
			}
			if isAllDigits(p) {
				x, ok = bson.Doc(v.Data).Lookup(p)
			}
		}
		if !ok {
			return bson.Value{}, false, nil
		}
		v = x
	}
	if arrayField != "" {
		return bson.Value{}, false, badValue("The source field cannot be an array element, '%s' in doc with %s has an array field called '%s'", strings.Join(o.from, "."), c.idElemString(), arrayField)
	}
	return v, true, nil
}

// checkDest rejects a destination path that goes through an array.
func (o *renameDstOp) checkDest(c *applyCtx) error {
	d := c.root
	for _, p := range o.to[:len(o.to)-1] {
		v, ok := d.Lookup(p)
		if !ok {
			return nil
		}
		switch v.Type {
		case bson.TypeArray:
			return badValue("The destination field cannot be an array element, '%s' in doc with %s has an array field called '%s'", strings.Join(o.to, "."), c.idElemString(), p)
		case bson.TypeDocument:
			d = bson.Doc(v.Data)
		default:
			return nil
		}
	}
	return nil
}

func (o *renameDstOp) apply(c *applyCtx, b *bson.Builder, key string, old bson.Value, path []string, inArray bool) error {
	v, ok, err := o.source(c)
	if err != nil {
		return err
	}
	if !ok {
		b.AppendValue(key, old)
		return nil
	}
	if err := o.checkDest(c); err != nil {
		return err
	}
	b.AppendValue(key, v)
	return nil
}

func (o *renameDstOp) create(c *applyCtx, b *bson.Builder, key string, _ []string) error {
	v, ok, err := o.source(c)
	if err != nil || !ok {
		return err
	}
	if err := o.checkDest(c); err != nil {
		return err
	}
	b.AppendValue(key, v)
	return nil
}

func (o *renameDstOp) creates(c *applyCtx) bool {
	_, ok, err := o.source(c)
	return ok || err != nil
}

type arithOp struct {
	v   bson.Value
	mul bool
}

func (o *arithOp) name() string {
	if o.mul {
		return "$mul"
	}
	return "$inc"
}

func (o *arithOp) apply(c *applyCtx, b *bson.Builder, key string, old bson.Value, path []string, _ bool) error {
	if !old.IsNumber() {
		return mongoerr.New(mongoerr.TypeMismatch, "Cannot apply %s to a value of non-numeric type. %s has the field '%s' of non-numeric type %s", o.name(), c.idString(), key, typeNameForMessage(old.Type))
	}
	var r numResult
	if o.mul {
		r = mulNumbers(old, o.v)
	} else {
		r = addNumbers(old, o.v)
	}
	if r.overflow {
		return badValue("Failed to apply %s operations to current value (%s) for document %s", o.name(), safeNumString(old), c.idString())
	}
	// MongoDB keeps the stored value when the result is identical to it by
	// SafeNum's rules: same type and equal (so -0.0 stays, and a decimal
	// keeps its trailing zeros); NaN is never identical, so it counts as a
	// change even when the bytes do not move.
	if r.t == old.Type {
		switch r.t {
		case bson.TypeDouble:
			if r.f == old.Double() {
				b.AppendValue(key, old)
				return nil
			}
			if r.f != r.f {
				c.forceChanged = true
			}
		case bson.TypeDecimal128:
			ohi, olo := old.Decimal128()
			_, _, _, kind := bson.DecimalParts(r.dhi, r.dlo)
			if kind != 2 && bson.CompareDecimal128(r.dhi, r.dlo, ohi, olo) == 0 {
				b.AppendValue(key, old)
				return nil
			}
			if kind == 2 {
				c.forceChanged = true
			}
		}
	}
	r.append(b, key)
	return nil
}

func (o *arithOp) create(_ *applyCtx, b *bson.Builder, key string, _ []string) error {
	if o.mul {
		zero := bson.Value{Type: bson.TypeInt32, Data: []byte{0, 0, 0, 0}}
		mulNumbers(zero, o.v).append(b, key)
		return nil
	}
	b.AppendValue(key, o.v)
	return nil
}

func (o *arithOp) creates(*applyCtx) bool { return true }

type minMaxOp struct {
	v    bson.Value
	max  bool
	coll bson.StringComparer
}

func (o *minMaxOp) apply(_ *applyCtx, b *bson.Builder, key string, old bson.Value, _ []string, _ bool) error {
	r := bson.CompareCollated(o.v, old, o.coll)
	if (o.max && r > 0) || (!o.max && r < 0) {
		b.AppendValue(key, o.v)
	} else {
		b.AppendValue(key, old)
	}
	return nil
}

func (o *minMaxOp) create(_ *applyCtx, b *bson.Builder, key string, _ []string) error {
	b.AppendValue(key, o.v)
	return nil
}

func (o *minMaxOp) creates(*applyCtx) bool { return true }

type currentDateOp struct{ timestamp bool }

var tsIncrement atomic.Uint32

func (o currentDateOp) write(c *applyCtx, b *bson.Builder, key string) {
	if o.timestamp {
		b.AppendTimestamp(key, uint32(c.now.Unix()), tsIncrement.Add(1))
		return
	}
	b.AppendDateTime(key, c.now.UnixMilli())
}

func (o currentDateOp) apply(c *applyCtx, b *bson.Builder, key string, _ bson.Value, _ []string, _ bool) error {
	o.write(c, b, key)
	return nil
}

func (o currentDateOp) create(c *applyCtx, b *bson.Builder, key string, _ []string) error {
	o.write(c, b, key)
	return nil
}

func (currentDateOp) creates(*applyCtx) bool { return true }

type popOp struct{ first bool }

func (o popOp) apply(c *applyCtx, b *bson.Builder, key string, old bson.Value, path []string, _ bool) error {
	if old.Type != bson.TypeArray {
		return mongoerr.New(mongoerr.TypeMismatch, "Path '%s' contains an element of non-array type '%s'", strings.Join(path, "."), typeNameForMessage(old.Type))
	}
	vals := bson.Doc(old.Data).Values()
	if len(vals) > 0 {
		if o.first {
			vals = vals[1:]
		} else {
			vals = vals[:len(vals)-1]
		}
	}
	appendArray(b, key, vals)
	return nil
}

func (popOp) create(*applyCtx, *bson.Builder, string, []string) error { return nil }
func (popOp) creates(*applyCtx) bool                                  { return false }

func appendArray(b *bson.Builder, key string, vals []bson.Value) {
	b.StartArray(key)
	for i, v := range vals {
		b.AppendValue(bson.Index(i), v)
	}
	b.End()
}

type pullMode uint8

const (
	pullEqual pullMode = iota
	pullValue
	pullObject
)

type pullOp struct {
	mode   pullMode
	eq     bson.Value
	preds  []pred
	object node
	coll   bson.StringComparer
}

func (o *pullOp) matches(v bson.Value) bool {
	switch o.mode {
	case pullEqual:
		return bson.CompareCollated(v, o.eq, o.coll) == 0
	case pullValue:
		for _, p := range o.preds {
			if !p.single(v) {
				return false
			}
		}
		return true
	default:
		if v.Type != bson.TypeDocument {
			return false
		}
		return o.object.match(bson.Doc(v.Data), nil)
	}
}

func (o *pullOp) apply(c *applyCtx, b *bson.Builder, key string, old bson.Value, _ []string, _ bool) error {
	if old.Type != bson.TypeArray {
		return badValue("Cannot apply $pull to a non-array value")
	}
	return pullFrom(c, b, key, old, o.matches)
}

// pullFrom writes old, an array, as key without the elements drop picks,
// each element counted against the operation's limits (c.tick).
func pullFrom(c *applyCtx, b *bson.Builder, key string, old bson.Value, drop func(bson.Value) bool) error {
	b.StartArray(key)
	i := 0
	it := bson.Doc(old.Data).Iter()
	for it.Next() {
		if err := c.tick(); err != nil {
			return err
		}
		v := it.Element().Value
		if drop(v) {
			continue
		}
		b.AppendValue(bson.Index(i), v)
		i++
	}
	b.End()
	return nil
}

func (o *pullOp) create(*applyCtx, *bson.Builder, string, []string) error { return nil }
func (o *pullOp) creates(*applyCtx) bool                                  { return false }

type pullAllOp struct {
	vals []bson.Value
	coll bson.StringComparer
}

// apply removes every element equal to one of the values, looked up in a
// set of them (as $addToSet's), so the cost is linear in both.
func (o *pullAllOp) apply(c *applyCtx, b *bson.Builder, key string, old bson.Value, _ []string, _ bool) error {
	if old.Type != bson.TypeArray {
		return badValue("Cannot apply $pull to a non-array value")
	}
	set := bson.NewValueSet(o.coll)
	for _, x := range o.vals {
		if err := c.tick(); err != nil {
			return err
		}
		set.Add(x)
	}
	return pullFrom(c, b, key, old, set.Has)
}

func (o *pullAllOp) create(*applyCtx, *bson.Builder, string, []string) error { return nil }
func (o *pullAllOp) creates(*applyCtx) bool                                  { return false }

type addToSetOp struct {
	each []bson.Value
	coll bson.StringComparer
}

// build writes existing followed by the values of each that are in
// neither: one set of the values seen (bson.ValueSet, keyed by their
// order-preserving encoding under the collation), so n values cost O(n)
// rather than a comparison with every value kept.
func (o *addToSetOp) build(c *applyCtx, b *bson.Builder, key string, existing []bson.Value) error {
	set := bson.NewValueSet(o.coll)
	for _, x := range existing {
		if err := c.tick(); err != nil {
			return err
		}
		set.Add(x)
	}
	vals := existing
	for _, v := range o.each {
		if err := c.tick(); err != nil {
			return err
		}
		if set.Add(v) {
			vals = append(vals, v)
		}
	}
	appendArray(b, key, vals)
	return nil
}

func (o *addToSetOp) apply(c *applyCtx, b *bson.Builder, key string, old bson.Value, _ []string, _ bool) error {
	if old.Type != bson.TypeArray {
		return badValue("Cannot apply $addToSet to non-array field. Field named '%s' has non-array type %s", key, typeNameForMessage(old.Type))
	}
	return o.build(c, b, key, bson.Doc(old.Data).Values())
}

func (o *addToSetOp) create(c *applyCtx, b *bson.Builder, key string, _ []string) error {
	return o.build(c, b, key, nil)
}

func (o *addToSetOp) creates(*applyCtx) bool { return true }

type bitStep struct {
	kind byte
	v    bson.Value
}

type bitOp struct{ ops []bitStep }

func (o *bitOp) compute(old bson.Value) bson.Value {
	is64 := old.Type == bson.TypeInt64
	var n int64
	if is64 {
		n = old.Int64()
	} else {
		n = int64(old.Int32())
	}
	for _, s := range o.ops {
		var x int64
		if s.v.Type == bson.TypeInt64 {
			x = s.v.Int64()
			is64 = true
		} else {
			x = int64(s.v.Int32())
		}
		switch s.kind {
		case '&':
			n &= x
		case '|':
			n |= x
		default:
			n ^= x
		}
	}
	var b bson.Builder
	if is64 {
		b.AppendInt64("v", n)
	} else {
		b.AppendInt32("v", int32(n))
	}
	v, _ := b.Finish().Lookup("v")
	return v
}

func (o *bitOp) apply(c *applyCtx, b *bson.Builder, key string, old bson.Value, _ []string, _ bool) error {
	if old.Type != bson.TypeInt32 && old.Type != bson.TypeInt64 {
		return mongoerr.New(mongoerr.BadValue, "Cannot apply $bit to a value of non-integral type.%s has the field %s of non-integer type %s", c.idString(), key, typeNameForMessage(old.Type))
	}
	b.AppendValue(key, o.compute(old))
	return nil
}

func (o *bitOp) create(_ *applyCtx, b *bson.Builder, key string, _ []string) error {
	b.AppendValue(key, o.compute(bson.Value{Type: bson.TypeInt32, Data: []byte{0, 0, 0, 0}}))
	return nil
}

func (o *bitOp) creates(*applyCtx) bool { return true }
