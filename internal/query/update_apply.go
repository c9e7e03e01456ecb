package query

import (
	"bytes"
	"context"
	"sort"
	"strings"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// applyCtx carries what one Apply call needs below the root.
type applyCtx struct {
	u      *Update
	root   bson.Doc
	md     *MatchDetails
	upsert bool
	now    time.Time
	// scratch builds array-filter probe documents.
	scratch    bson.Builder
	scratchBuf []byte
	// forceChanged records a change the bytes may not show ($inc to NaN).
	forceChanged bool
	// out builds the result; pathBuf backs the paths of the fields being
	// applied.
	out     bson.Builder
	pathBuf [16]string
	// ctx stops a long update (killOp, maxTimeMS): steps counts the
	// values added and array elements visited, and every interruptEvery
	// of them ctx is checked.
	ctx   context.Context
	steps int
}

// interruptEvery is how many steps an update runs between checks of its
// context; a check is an atomic load or two, a step costs at least a
// value's copy.
const interruptEvery = 1024

// tick counts one step and, every interruptEvery steps, answers
// Interrupted (11601) or MaxTimeMSExpired (50) once ctx is done.
func (c *applyCtx) tick() error {
	c.steps++
	if c.steps%interruptEvery != 0 {
		return nil
	}
	return c.interrupted()
}

// interrupted checks ctx now.
func (c *applyCtx) interrupted() error {
	if err := c.ctx.Err(); err != nil {
		return mongoerr.FromContext(err)
	}
	return nil
}

// idString formats the document's _id as MongoDB's update messages do:
// "{_id: 1}".
func (c *applyCtx) idString() string {
	if id, ok := c.root.Lookup("_id"); ok {
		return "{_id: " + id.String() + "}"
	}
	return "{}"
}

// Apply applies the update to doc and builds the result in the spare
// capacity of dst. md supplies the array position for the positional $
// operator; upsertInsert is true when doc is the seed of an upsert (then
// $setOnInsert applies). changed reports whether the result differs from
// doc.
func (u *Update) Apply(dst []byte, doc bson.Doc, md *MatchDetails, upsertInsert bool) (newDoc bson.Doc, changed bool, err error) {
	return u.ApplyContext(context.Background(), dst, doc, md, upsertInsert)
}

// ApplyContext is Apply stopped by ctx: operators that loop over many
// values ($addToSet and $push with $each, $pull, $pullAll, updates of
// every array element, backfilled positions) check ctx as they go and
// answer Interrupted (killOp) or MaxTimeMSExpired (maxTimeMS), building
// nothing.
func (u *Update) ApplyContext(ctx context.Context, dst []byte, doc bson.Doc, md *MatchDetails, upsertInsert bool) (newDoc bson.Doc, changed bool, err error) {
	if u.pipeline != nil {
		out, err := u.pipeline.apply(nil, doc, u.opts)
		if err != nil {
			return nil, false, err
		}
		return replaceDoc(dst, doc, out)
	}
	if u.isReplacement {
		return replaceDoc(dst, doc, u.replacement)
	}
	if u.hasPositional && (md == nil || !md.HasKey) {
		return nil, false, badValue("The positional operator did not find the match needed from the query.")
	}
	c := &applyCtx{u: u, root: doc, md: md, upsert: upsertInsert, now: time.Now(), ctx: ctx}
	c.out.Reset(dst[len(dst):])
	b := &c.out
	if err := c.applyObject(b, doc, u.root, c.pathBuf[:0]); err != nil {
		return nil, false, err
	}
	out := b.Finish()
	if !upsertInsert {
		if err := checkTopDollar(doc, out, u.topDollar); err != nil {
			return nil, false, err
		}
	}
	if err := checkIDUnchanged(doc, out, u.idPath); err != nil {
		return nil, false, err
	}
	if err := checkIDType(out); err != nil {
		return nil, false, err
	}
	if len(out) > bson.MaxDocumentSize {
		return nil, false, mongoerr.New(mongoerr.UpdateResultTooLarge, "Resulting document after update is larger than %d", bson.MaxDocumentSize)
	}
	return out, c.forceChanged || !bytes.Equal(out, doc), nil
}

// checkTopDollar refuses an update that wrote one of the top-level
// $-prefixed fields its operators name (created it or changed its
// value; removing one is allowed), with mongod 5.0+'s storage
// validation error.
func checkTopDollar(before, after bson.Doc, fields []string) error {
	for _, f := range fields {
		nv, has := after.Lookup(f)
		if !has {
			continue
		}
		if old, had := before.Lookup(f); had && old.Type == nv.Type && bytes.Equal(old.Data, nv.Data) {
			continue
		}
		return mongoerr.New(mongoerr.DollarPrefixedFieldName, "The dollar ($) prefixed field '%s' in '%s' is not allowed in the context of an update's replacement document. Consider using an aggregation pipeline with $replaceWith.", f, f)
	}
	return nil
}

func checkIDUnchanged(before, after bson.Doc, path string) error {
	old, had := before.Lookup("_id")
	if !had {
		return nil
	}
	nv, has := after.Lookup("_id")
	if has && nv.Type == old.Type && bytes.Equal(nv.Data, old.Data) {
		return nil
	}
	if path == "" {
		path = "_id"
	}
	return mongoerr.New(mongoerr.ImmutableField, "Performing an update on the path '%s' would modify the immutable field '_id'", path)
}

func checkIDType(d bson.Doc) error {
	id, ok := d.Lookup("_id")
	if !ok {
		return nil
	}
	switch id.Type {
	case bson.TypeArray, bson.TypeRegex, bson.TypeUndefined:
		return mongoerr.New(mongoerr.InvalidIdField, "The '_id' value cannot be of type %s", id.Type)
	}
	return nil
}

// replaceDoc replaces doc by replacement as MongoDB does for replacement
// and pipeline updates: the original _id stays first and may not change.
func replaceDoc(dst []byte, doc, replacement bson.Doc) (bson.Doc, bool, error) {
	b := bson.NewBuilder(dst[len(dst):])
	old, had := doc.Lookup("_id")
	nid, has := replacement.Lookup("_id")
	if had {
		if has && !(nid.Type == old.Type && bytes.Equal(nid.Data, old.Data)) {
			return nil, false, mongoerr.New(mongoerr.ImmutableField, "After applying the update, the (immutable) field '_id' was found to have been altered to _id: %s", nid.String())
		}
		b.AppendValue("_id", old)
	} else if has {
		b.AppendValue("_id", nid)
	}
	it := replacement.Iter()
	ids := 0
	for it.Next() {
		e := it.Element()
		if e.Key == "_id" {
			if ids++; ids > 1 {
				return nil, false, mongoerr.New(mongoerr.BadValue, "can't have multiple _id fields in one document")
			}
			continue
		}
		b.AppendElement(e)
	}
	out := b.Finish()
	if err := checkIDType(out); err != nil {
		return nil, false, err
	}
	return out, !bytes.Equal(out, doc), nil
}

// appendPath extends a path for a child. The result may share the
// parent's backing array: paths are only read while the child is being
// applied (for messages), never kept, and siblings are applied one after
// another.
func appendPath(path []string, c string) []string {
	return append(path, c)
}

// resolveName maps a tree child name to the field it stands for in a
// document: "$" is the matched array position.
func (c *applyCtx) resolveName(n *updNode) string {
	if n.positional {
		return c.md.ElemMatchKey
	}
	return n.name
}

// applyObject writes document d (nil when it does not exist yet) with the
// children of n applied: existing fields in place, new fields appended in
// the tree's order (the positional child in the place of the field it
// stands for, merged with an explicit child of that name).
func (c *applyCtx) applyObject(b *bson.Builder, d bson.Doc, n *updNode, path []string) error {
	for _, ch := range n.children {
		if ch.allElems || ch.filterID != "" {
			if d == nil {
				break
			}
			return badValue("Cannot apply array updates to non-array element %s", elementString(path, d))
		}
	}
	var pos *updNode
	if n.byName != nil {
		pos = n.byName["$"]
	}
	it := d.Iter()
	for it.Next() {
		e := it.Element()
		ch := n.child(e.Key)
		if pos != nil && c.md.ElemMatchKey == e.Key {
			merged, err := mergeUpdNodes(ch, pos, appendPath(path, e.Key))
			if err != nil {
				return err
			}
			ch = merged
		}
		if ch == nil {
			b.AppendElement(e)
			continue
		}
		if err := c.applyChild(b, e.Key, e.Value, ch, appendPath(path, e.Key), false); err != nil {
			return err
		}
	}
	children := n.children
	if pos != nil {
		children = c.positionalOrder(n, pos)
	}
	for _, ch := range children {
		name := c.resolveName(ch)
		if d != nil {
			if _, ok := d.Lookup(name); ok {
				continue
			}
		}
		if pos != nil && !ch.positional && name == c.md.ElemMatchKey {
			merged, err := mergeUpdNodes(ch, pos, appendPath(path, name))
			if err != nil {
				return err
			}
			ch = merged
		}
		if err := c.create(b, name, ch, appendPath(path, name)); err != nil {
			return err
		}
	}
	return nil
}

// positionalOrder returns n's children with the positional child placed
// by the field it resolves to, and dropped when an explicit child of that
// name absorbs it.
func (c *applyCtx) positionalOrder(n, pos *updNode) []*updNode {
	out := make([]*updNode, 0, len(n.children))
	for _, ch := range n.children {
		if ch != pos {
			out = append(out, ch)
		}
	}
	if n.child(c.md.ElemMatchKey) != nil {
		return out
	}
	i := sort.Search(len(out), func(i int) bool {
		return comparePathComponents(c.resolveName(out[i]), c.md.ElemMatchKey) > 0
	})
	out = append(out, nil)
	copy(out[i+1:], out[i:])
	out[i] = pos
	return out
}

// mergeUpdNodes combines two subtrees that apply to the same field (an
// explicit path and a positional or all-elements one), as MongoDB does;
// two operators on one path conflict.
func mergeUpdNodes(a, b *updNode, path []string) (*updNode, error) {
	if a == nil {
		return b, nil
	}
	if b == nil {
		return a, nil
	}
	if a.op != nil || b.op != nil {
		return nil, mongoerr.New(mongoerr.ConflictingUpdateOperators, "Update created a conflict at '%s'", strings.Join(path, "."))
	}
	m := &updNode{name: a.name, byName: map[string]*updNode{}}
	for _, src := range []*updNode{a, b} {
		for _, ch := range src.children {
			if ex := m.byName[ch.name]; ex != nil {
				merged, err := mergeUpdNodes(ex, ch, appendPath(path, ch.name))
				if err != nil {
					return nil, err
				}
				for i, x := range m.children {
					if x == ex {
						m.children[i] = merged
					}
				}
				m.byName[ch.name] = merged
				continue
			}
			m.byName[ch.name] = ch
			m.children = append(m.children, ch)
		}
	}
	sort.SliceStable(m.children, func(i, j int) bool {
		return comparePathComponents(m.children[i].name, m.children[j].name) < 0
	})
	return m, nil
}

// elementString prints the element at path in the root document as
// MongoDB's messages do: "a: 5" or, for the root, the document.
func elementString(path []string, v bson.Doc) string {
	if len(path) == 0 {
		return v.String()
	}
	return path[len(path)-1] + ": " + v.String()
}

func (c *applyCtx) applyChild(b *bson.Builder, key string, v bson.Value, n *updNode, path []string, inArray bool) error {
	if n.op != nil {
		return n.op.apply(c, b, key, v, path, inArray)
	}
	switch v.Type {
	case bson.TypeDocument:
		b.StartDocument(key)
		if err := c.applyObject(b, bson.Doc(v.Data), n, path); err != nil {
			return err
		}
		b.End()
		return nil
	case bson.TypeArray:
		b.StartArray(key)
		if err := c.applyArray(b, bson.Doc(v.Data), n, path); err != nil {
			return err
		}
		b.End()
		return nil
	}
	for _, ch := range n.children {
		if ch.allElems || ch.filterID != "" {
			return badValue("Cannot apply array updates to non-array element %s: %s", key, v.String())
		}
		if c.creates(ch) {
			return mongoerr.New(mongoerr.PathNotViable, "Cannot create field '%s' in element {%s: %s}", c.resolveName(ch), key, v.String())
		}
	}
	b.AppendValue(key, v)
	return nil
}

// applyArray writes array arr with the children of n applied to its
// elements.
func (c *applyCtx) applyArray(b *bson.Builder, arr bson.Doc, n *updNode, path []string) error {
	length := 0
	it := arr.Iter()
	for it.Next() {
		if err := c.tick(); err != nil {
			return err
		}
		e := it.Element()
		var chosen *updNode
		for _, ch := range n.children {
			ok := false
			switch {
			case ch.allElems:
				ok = true
			case ch.filterID != "":
				m, err := c.filterMatches(ch.filterID, e.Value)
				if err != nil {
					return err
				}
				ok = m
			default:
				ok = c.resolveName(ch) == e.Key
			}
			if ok {
				merged, err := mergeUpdNodes(chosen, ch, appendPath(path, e.Key))
				if err != nil {
					return err
				}
				chosen = merged
			}
		}
		key := bson.Index(length)
		length++
		if chosen == nil {
			b.AppendValue(key, e.Value)
			continue
		}
		if err := c.applyChild(b, key, e.Value, chosen, appendPath(path, key), true); err != nil {
			return err
		}
	}
	// Positions past the end: pad with nulls, in numeric order.
	for _, ch := range n.children {
		if ch.allElems || ch.filterID != "" {
			continue
		}
		name := c.resolveName(ch)
		if !isAllDigits(name) {
			if c.creates(ch) {
				return mongoerr.New(mongoerr.PathNotViable, "Cannot create field '%s' in element {%s: %s}", name, path[len(path)-1], bson.Value{Type: bson.TypeArray, Data: arr}.String())
			}
			continue
		}
		idx, ok := parseIndex(name)
		if !ok || idx < length || !c.creates(ch) {
			continue
		}
		if idx-length > 1500000 {
			return badValue("can't backfill more than 1500000 elements")
		}
		for length < idx {
			if err := c.tick(); err != nil {
				return err
			}
			b.AppendNull(bson.Index(length))
			length++
		}
		if err := c.create(b, bson.Index(idx), ch, appendPath(path, name)); err != nil {
			return err
		}
		length++
	}
	return nil
}

func parseIndex(s string) (int, bool) {
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
		if n > 1<<30 {
			return 0, false
		}
	}
	return n, true
}

func (c *applyCtx) filterMatches(id string, v bson.Value) (bool, error) {
	f := c.u.arrayFilters[id]
	c.scratch.Reset(c.scratchBuf)
	c.scratch.AppendValue(id, v)
	probe := c.scratch.Finish()
	c.scratchBuf = probe[:0]
	return f.Match(probe), nil
}

// creates reports whether applying n to a missing field writes anything.
func (c *applyCtx) creates(n *updNode) bool {
	if n.op != nil {
		return n.op.creates(c)
	}
	for _, ch := range n.children {
		if c.creates(ch) {
			return true
		}
	}
	return false
}

// create writes the field key for a path that does not exist yet.
func (c *applyCtx) create(b *bson.Builder, key string, n *updNode, path []string) error {
	if n.op != nil {
		return n.op.create(c, b, key, path)
	}
	if n.arrayNode {
		return badValue("The path '%s' must exist in the document in order to apply array updates.", strings.Join(path, "."))
	}
	if !c.creates(n) {
		return c.checkArrayPaths(n, path)
	}
	b.StartDocument(key)
	if err := c.applyObject(b, nil, n, path); err != nil {
		return err
	}
	b.End()
	return nil
}

// checkArrayPaths reports the error MongoDB raises for $[] and $[id]
// below a missing field even when nothing would be created there.
func (c *applyCtx) checkArrayPaths(n *updNode, path []string) error {
	for _, ch := range n.children {
		if ch.op != nil {
			continue
		}
		p := appendPath(path, c.resolveName(ch))
		if ch.arrayNode {
			return badValue("The path '%s' must exist in the document in order to apply array updates.", strings.Join(p, "."))
		}
		if err := c.checkArrayPaths(ch, p); err != nil {
			return err
		}
	}
	return nil
}
