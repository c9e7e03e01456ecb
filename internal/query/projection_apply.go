package query

import (
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// Applying a compiled projection to a document: inclusion, exclusion,
// $slice, $elemMatch, the positional operator and computed fields.

// Apply builds the projected document in the spare capacity of dst and
// returns it. md supplies the array position for a positional projection.
func (p *Projection) Apply(dst []byte, doc bson.Doc, md *MatchDetails) (bson.Doc, error) {
	if len(p.meta) > 0 {
		return p.applyMeta(dst, doc, md)
	}
	return p.apply(dst, doc, md)
}

// applyMeta applies the projection, then replaces or appends the
// {$meta: "textScore"} fields.
func (p *Projection) applyMeta(dst []byte, doc bson.Doc, md *MatchDetails) (bson.Doc, error) {
	out, err := p.apply(nil, doc, md)
	if err != nil {
		return nil, err
	}
	var score float64
	if md != nil {
		score = md.TextScore
	}
	var b bson.Builder
	b.Reset(dst[len(dst):])
	it := out.Iter()
	for it.Next() {
		e := it.Element()
		isMeta := false
		for _, m := range p.meta {
			isMeta = isMeta || m == e.Key
		}
		if !isMeta {
			b.AppendElement(e)
		}
	}
	var dotted []string
	for _, m := range p.meta {
		if strings.Contains(m, ".") {
			dotted = append(dotted, m)
		} else {
			b.AppendDouble(m, score)
		}
	}
	res := b.Finish()
	if len(dotted) > 0 {
		var sb bson.Builder
		sb.AppendDouble("s", score)
		sv, _ := sb.Finish().Lookup("s")
		for _, m := range dotted {
			res = bson.WithPath(res, strings.Split(m, "."), sv)
		}
	}
	return res, nil
}

func (p *Projection) apply(dst []byte, doc bson.Doc, md *MatchDetails) (bson.Doc, error) {
	if p.empty {
		return append(dst[len(dst):], doc...), nil
	}
	if p.plain != nil {
		var b bson.Builder
		b.Reset(dst[len(dst):])
		p.plain.appendFields(&b, doc)
		return b.Finish(), nil
	}
	if p.positional != nil && (md == nil || !md.HasKey) {
		return nil, errPositionalNoMatch
	}
	buf := dst[len(dst):]
	if p.positional != nil {
		buf = nil // first pass; applyPositional writes the result into dst
	}
	var bb bson.Builder
	bb.Reset(buf)
	b := &bb
	var err error
	if p.inclusion {
		err = p.include(b, doc, doc, p.root, true, md)
		if err == nil {
			err = p.appendNestedTail(b, doc, doc, p.root)
		}
		if err == nil && p.positional != nil {
			return applyPositional(dst, b.Finish(), p.positional, md.ElemMatchKey)
		}
	} else {
		p.exclude(b, doc, p.root, true)
	}
	if err != nil {
		return nil, err
	}
	return b.Finish(), nil
}

func (p *Projection) include(b *bson.Builder, d, root bson.Doc, n *projNode, top bool, md *MatchDetails) error {
	it := d.Iter()
	for it.Next() {
		e := it.Element()
		c := n.child(e.Key)
		if top && e.Key == "_id" && c == nil {
			if !p.idExclude {
				b.AppendElement(e)
			}
			continue
		}
		if c == nil {
			continue
		}
		switch c.kind {
		case projInclude:
			b.AppendElement(e)
		case projSlice:
			appendSliced(b, e, c)
		case projSub:
			if !hasInclusionContent(c) {
				continue
			}
			switch e.Value.Type {
			case bson.TypeDocument:
				b.StartDocument(e.Key)
				if err := p.include(b, bson.Doc(e.Value.Data), root, c, false, md); err != nil {
					return err
				}
				if err := p.appendNestedTail(b, bson.Doc(e.Value.Data), root, c); err != nil {
					return err
				}
				b.End()
			case bson.TypeArray:
				b.StartArray(e.Key)
				if err := p.includeArray(b, bson.Doc(e.Value.Data), root, c, md); err != nil {
					return err
				}
				b.End()
			}
		}
	}
	return nil
}

// errPositionalNoMatch is MongoDB's error when the query recorded no array
// position for a positional projection.
var errPositionalNoMatch = mongoerr.New(mongoerr.PositionalProjectionNoMatch, "positional operator '.$' couldn't find a matching element in the array")

// applyPositional rewrites the projected document d so that the first array
// along the positional path holds only the element at the matched
// position, as MongoDB's positional projection does after the inclusion.
func applyPositional(dst []byte, d bson.Doc, parts []string, key string) (bson.Doc, error) {
	b := bson.NewBuilder(dst[len(dst):])
	if _, err := positionalDoc(b, d, parts, key); err != nil {
		return nil, err
	}
	return b.Finish(), nil
}

// positionalDoc copies d into b, replacing the first array met along
// parts; it reports whether an array was met.
func positionalDoc(b *bson.Builder, d bson.Doc, parts []string, key string) (bool, error) {
	done := false
	it := d.Iter()
	for it.Next() {
		e := it.Element()
		if done || e.Key != parts[0] {
			b.AppendElement(e)
			continue
		}
		switch {
		case e.Value.Type == bson.TypeArray:
			x, ok := bson.Doc(e.Value.Data).Lookup(key)
			if !ok {
				return false, mongoerr.New(mongoerr.PositionalProjectionMismatch, "positional operator '.$' element mismatch")
			}
			b.StartArray(e.Key)
			b.AppendValue("0", x)
			b.End()
			done = true
		case e.Value.Type == bson.TypeDocument && len(parts) > 1:
			b.StartDocument(e.Key)
			found, err := positionalDoc(b, bson.Doc(e.Value.Data), parts[1:], key)
			if err != nil {
				return false, err
			}
			b.End()
			done = found
		default:
			b.AppendElement(e)
		}
	}
	return done, nil
}

// hasInclusionContent reports whether a sub-projection includes anything
// taken from the document (not only computed fields).
func hasInclusionContent(n *projNode) bool {
	for _, c := range n.children {
		switch c.kind {
		case projInclude, projSlice:
			return true
		case projSub:
			if hasInclusionContent(c) {
				return true
			}
		}
	}
	return false
}

func (p *Projection) includeArray(b *bson.Builder, arr, root bson.Doc, n *projNode, md *MatchDetails) error {
	it := arr.Iter()
	i := 0
	for it.Next() {
		v := it.Element().Value
		switch v.Type {
		case bson.TypeDocument:
			b.StartDocument(bson.Index(i))
			if err := p.include(b, bson.Doc(v.Data), root, n, false, md); err != nil {
				return err
			}
			b.End()
			i++
		case bson.TypeArray:
			b.StartArray(bson.Index(i))
			if err := p.includeArray(b, bson.Doc(v.Data), root, n, md); err != nil {
				return err
			}
			b.End()
			i++
		}
	}
	return nil
}

// appendNestedTail appends, for node n applied to d, its computed and
// $elemMatch children and the sub-documents holding computed fields that d
// lacks. Field paths are evaluated against root.
func (p *Projection) appendNestedTail(b *bson.Builder, d, root bson.Doc, n *projNode) error {
	for _, c := range n.children {
		switch c.kind {
		case projElemMatch:
			v, ok := d.Lookup(c.name)
			if !ok {
				continue
			}
			if k, ok := c.elemMatch.first(v); ok {
				x, _ := bson.Doc(v.Data).Lookup(k)
				b.StartArray(c.name)
				b.AppendValue("0", x)
				b.End()
			}
		case projExpr:
			v, err := c.expr.eval(&evalCtx{root: root})
			if err != nil {
				return err
			}
			if v.Type != 0 {
				b.AppendValue(c.name, v)
			}
		case projSub:
			if !hasComputed(c) {
				continue
			}
			v, ok := d.Lookup(c.name)
			if ok && v.Type == bson.TypeDocument && hasInclusionContent(c) {
				continue // handled while including the sub-document
			}
			b.StartDocument(c.name)
			var sub bson.Doc
			if ok && v.Type == bson.TypeDocument {
				sub = bson.Doc(v.Data)
			} else {
				sub = bson.EmptyDoc
			}
			if err := p.appendNestedTail(b, sub, root, c); err != nil {
				return err
			}
			b.End()
		}
	}
	return nil
}

func hasComputed(n *projNode) bool {
	for _, c := range n.children {
		switch c.kind {
		case projExpr:
			return true
		case projSub:
			if hasComputed(c) {
				return true
			}
		}
	}
	return false
}

func (p *Projection) exclude(b *bson.Builder, d bson.Doc, n *projNode, top bool) {
	it := d.Iter()
	for it.Next() {
		e := it.Element()
		if top && e.Key == "_id" && p.idExclude {
			continue
		}
		c := n.child(e.Key)
		if c == nil {
			b.AppendElement(e)
			continue
		}
		switch c.kind {
		case projExclude:
		case projInclude:
			b.AppendElement(e)
		case projSlice:
			appendSliced(b, e, c)
		case projElemMatch:
			// In an exclusion, $elemMatch replaces the field in place, or
			// removes it when no element matches.
			if k, ok := c.elemMatch.first(e.Value); ok {
				x, _ := bson.Doc(e.Value.Data).Lookup(k)
				b.StartArray(e.Key)
				b.AppendValue("0", x)
				b.End()
			}
		case projSub:
			p.excludeNested(b, e, c)
		}
	}
}

// excludeNested writes e, a field or array element under the exclusion
// n: a document projected by n, an array with n applied to its elements
// (at any depth), anything else as it is.
func (p *Projection) excludeNested(b *bson.Builder, e bson.Element, n *projNode) {
	switch e.Value.Type {
	case bson.TypeDocument:
		b.StartDocument(e.Key)
		p.exclude(b, bson.Doc(e.Value.Data), n, false)
		b.End()
	case bson.TypeArray:
		b.StartArray(e.Key)
		it := bson.Doc(e.Value.Data).Iter()
		for it.Next() {
			p.excludeNested(b, it.Element(), n)
		}
		b.End()
	default:
		b.AppendElement(e)
	}
}

// appendSliced appends e with $slice applied if it is an array.
func appendSliced(b *bson.Builder, e bson.Element, n *projNode) {
	if e.Value.Type != bson.TypeArray {
		b.AppendElement(e)
		return
	}
	vals := bson.Doc(e.Value.Data).Values()
	start, end := sliceBounds(len(vals), n.skip, n.limit, n.hasSkip)
	b.StartArray(e.Key)
	for i := start; i < end; i++ {
		b.AppendValue(bson.Index(i-start), vals[i])
	}
	b.End()
}

func sliceBounds(length, skip, limit int, hasSkip bool) (int, int) {
	if !hasSkip {
		if limit >= 0 {
			return 0, min(limit, length)
		}
		return max(0, length+limit), length
	}
	start := skip
	if start < 0 {
		start = max(0, length+start)
	} else {
		start = min(start, length)
	}
	return start, min(length, start+limit)
}
