package agg

import (
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/expr"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// projNode is one level of a $project/$addFields/$unset specification:
// fields to include or exclude, computed fields and nested levels, in the
// order the specification names them.
type projNode struct {
	fields []*projField
	byName map[string]*projField
}

type projField struct {
	name    string
	include bool // inclusion (1/true)
	exclude bool // exclusion (0/false)
	child   *projNode
	value   expr.Expr // computed field
}

func newProjNode() *projNode { return &projNode{byName: map[string]*projField{}} }

// projMode is the kind of projection being parsed.
type projMode int

const (
	modeProject projMode = iota
	modeAddFields
	modeUnset
)

// projection is a parsed $project, $addFields or $unset.
type projection struct {
	root      *projNode
	inclusion bool // $project with inclusions (else exclusion, or addFields)
	add       bool // $addFields: every field is computed into the input
	excludeID bool
	stage     string
}

// insert adds path with the given leaf to the tree, reporting collisions as
// MongoDB does (31249/31250).
func (n *projNode) insert(path string, leaf *projField) error {
	parts := strings.Split(path, ".")
	cur := n
	for i, p := range parts {
		last := i == len(parts)-1
		f := cur.byName[p]
		if last {
			if f != nil {
				if f.child != nil {
					return mongoerr.New(mongoerr.ProjectPathCollisionPortion, "Invalid $project :: caused by :: Path collision at %s remaining portion %s", path, strings.Join(parts[i:], "."))
				}
				return mongoerr.New(mongoerr.ProjectPathCollision, "Invalid $project :: caused by :: Path collision at %s", path)
			}
			leaf.name = p
			cur.byName[p] = leaf
			cur.fields = append(cur.fields, leaf)
			return nil
		}
		if f == nil {
			f = &projField{name: p, child: newProjNode()}
			cur.byName[p] = f
			cur.fields = append(cur.fields, f)
		} else if f.child == nil {
			return mongoerr.New(mongoerr.ProjectPathCollision, "Invalid $project :: caused by :: Path collision at %s", strings.Join(parts[:i+1], "."))
		}
		cur = f.child
	}
	return nil
}

func validFieldPath(stage, path string) error {
	if path == "" {
		return mongoerr.New(mongoerr.FieldPathEmpty, "Invalid %s :: caused by :: FieldPath cannot be constructed with empty string", stage)
	}
	if strings.HasPrefix(path, "$") {
		return mongoerr.New(mongoerr.FieldPathDollarPrefix, "Invalid %s :: caused by :: FieldPath field names may not start with '$'. Consider using $getField or $setField.", stage)
	}
	for _, p := range strings.Split(path, ".") {
		if p == "" {
			return mongoerr.New(mongoerr.FieldPathEmptyName, "Invalid %s :: caused by :: FieldPath field names may not be empty strings.", stage)
		}
	}
	return nil
}

// parseProjection parses spec into p.root under prefix.
func (p *projection) parse(c *Context, spec bson.Doc, prefix string, mode projMode) error {
	it := spec.Iter()
	for it.Next() {
		e := it.Element()
		path := e.Key
		if prefix != "" {
			path = prefix + "." + e.Key
		}
		if strings.HasPrefix(e.Key, "$") {
			if mode == modeAddFields {
				return mongoerr.New(mongoerr.FieldPathDollarPrefix, "Invalid %s :: caused by :: FieldPath field names may not start with '$'. Consider using $getField or $setField.", p.stage)
			}
			return mongoerr.New(mongoerr.PositionalProjectionWithExclusion, "Invalid $project :: caused by :: field path references must be prefixed with a '$' (found '%s')", e.Key)
		}
		if err := validFieldPath(p.stage, path); err != nil {
			return err
		}
		v := e.Value
		leaf := &projField{}
		switch {
		case mode == modeProject && (v.Type == bson.TypeBoolean || v.IsNumber()):
			if v.Truthy() {
				if p.hasExclusion(path) {
					return mongoerr.New(mongoerr.InclusionInExclusionProjection, "Invalid $project :: caused by :: Cannot do inclusion on field %s in exclusion projection", path)
				}
				leaf.include = true
				p.inclusion = true
			} else {
				if path == "_id" {
					p.excludeID = true
				} else if p.inclusion {
					return mongoerr.New(mongoerr.ExclusionInInclusionProjection, "Invalid $project :: caused by :: Cannot do exclusion on field %s in inclusion projection", path)
				}
				leaf.exclude = true
			}
		case v.Type == bson.TypeDocument && v.Document().Len() > 0 && !strings.HasPrefix(firstKey(v.Document()), "$"):
			if err := p.parse(c, v.Document(), path, mode); err != nil {
				return err
			}
			continue
		case mode == modeProject && v.Type == bson.TypeDocument && v.Document().Len() == 0:
			return mongoerr.New(mongoerr.ProjectionEmptySubProjection, "Invalid $project :: caused by :: An empty sub-projection is not a valid value. Found empty object at path")
		default:
			x, err := expr.Parse(v, c.Expr)
			if err != nil {
				return err
			}
			leaf.value = x
			if mode == modeProject {
				if p.hasExclusion(path) {
					return mongoerr.New(mongoerr.ExclusionProjectionExpression, "Invalid $project :: caused by :: Cannot use expression other than $meta in exclusion projection")
				}
				p.inclusion = true
			}
		}
		if err := p.root.insert(path, leaf); err != nil {
			if mode != modeProject {
				e := err.(*mongoerr.Error)
				e.Message = strings.Replace(e.Message, "$project", p.stage, 1)
			}
			return err
		}
	}
	return nil
}

// hasExclusion reports whether a non-_id exclusion was parsed.
func (p *projection) hasExclusion(path string) bool {
	var walk func(n *projNode, prefix string) bool
	walk = func(n *projNode, prefix string) bool {
		for _, f := range n.fields {
			full := prefix + f.name
			if f.exclude && full != "_id" {
				return true
			}
			if f.child != nil && walk(f.child, full+".") {
				return true
			}
		}
		return false
	}
	return walk(p.root, "")
}

// applyInclusion builds the included and computed fields of doc.
func (n *projNode) applyInclusion(b *bson.Builder, doc bson.Doc, root bson.Doc, env *expr.Env) error {
	done := map[string]bool{}
	it := doc.Iter()
	for it.Next() {
		e := it.Element()
		f := n.byName[e.Key]
		if f == nil || f.value != nil || done[e.Key] {
			continue
		}
		switch {
		case f.include:
			b.AppendValue(e.Key, e.Value)
			done[e.Key] = true
		case f.child != nil:
			switch e.Value.Type {
			case bson.TypeDocument:
				b.StartDocument(e.Key)
				if err := f.child.applyInclusion(b, e.Value.Document(), root, env); err != nil {
					return err
				}
				b.End()
				done[e.Key] = true
			case bson.TypeArray:
				b.StartArray(e.Key)
				if err := f.child.inclusionArray(b, e.Value.Document(), root, env); err != nil {
					return err
				}
				b.End()
				done[e.Key] = true
			default:
				if f.child.hasComputed() {
					b.StartDocument(e.Key)
					if err := f.child.applyInclusion(b, bson.EmptyDoc, root, env); err != nil {
						return err
					}
					b.End()
					done[e.Key] = true
				}
			}
		}
	}
	// Computed fields, and nested levels holding computed fields that the
	// input did not have, follow in specification order.
	for _, f := range n.fields {
		if done[f.name] {
			continue
		}
		switch {
		case f.value != nil:
			v, err := expr.EvalKeep(f.value, root, env)
			if err != nil {
				return err
			}
			if v.Type != 0 {
				b.AppendValue(f.name, v)
			}
		case f.child != nil && f.child.hasComputed():
			if _, present := doc.Lookup(f.name); present {
				continue
			}
			b.StartDocument(f.name)
			if err := f.child.applyInclusion(b, bson.EmptyDoc, root, env); err != nil {
				return err
			}
			b.End()
		}
	}
	return nil
}

func (n *projNode) inclusionArray(b *bson.Builder, arr bson.Doc, root bson.Doc, env *expr.Env) error {
	i := 0
	it := arr.Iter()
	for it.Next() {
		v := it.Element().Value
		switch v.Type {
		case bson.TypeDocument:
			b.StartDocument(bson.Index(i))
			if err := n.applyInclusion(b, v.Document(), root, env); err != nil {
				return err
			}
			b.End()
		case bson.TypeArray:
			b.StartArray(bson.Index(i))
			if err := n.inclusionArray(b, v.Document(), root, env); err != nil {
				return err
			}
			b.End()
		default:
			if !n.hasComputed() {
				continue
			}
			b.StartDocument(bson.Index(i))
			if err := n.applyInclusion(b, bson.EmptyDoc, root, env); err != nil {
				return err
			}
			b.End()
		}
		i++
	}
	return nil
}

func (n *projNode) hasComputed() bool {
	for _, f := range n.fields {
		if f.value != nil || (f.child != nil && f.child.hasComputed()) {
			return true
		}
	}
	return false
}

// applyExclusion copies doc without the excluded fields.
func (n *projNode) applyExclusion(b *bson.Builder, doc bson.Doc) {
	it := doc.Iter()
	for it.Next() {
		e := it.Element()
		f := n.byName[e.Key]
		switch {
		case f == nil:
			b.AppendValue(e.Key, e.Value)
		case f.exclude:
		case f.child != nil && e.Value.Type == bson.TypeDocument:
			b.StartDocument(e.Key)
			f.child.applyExclusion(b, e.Value.Document())
			b.End()
		case f.child != nil && e.Value.Type == bson.TypeArray:
			b.StartArray(e.Key)
			f.child.exclusionArray(b, e.Value.Document())
			b.End()
		default:
			b.AppendValue(e.Key, e.Value)
		}
	}
}

func (n *projNode) exclusionArray(b *bson.Builder, arr bson.Doc) {
	it := arr.Iter()
	for i := 0; it.Next(); i++ {
		v := it.Element().Value
		switch v.Type {
		case bson.TypeDocument:
			b.StartDocument(bson.Index(i))
			n.applyExclusion(b, v.Document())
			b.End()
		case bson.TypeArray:
			b.StartArray(bson.Index(i))
			n.exclusionArray(b, v.Document())
			b.End()
		default:
			b.AppendValue(bson.Index(i), v)
		}
	}
}

// applyAdd copies doc, setting computed fields in place (existing fields)
// or at the end (new fields), as $addFields does.
func (n *projNode) applyAdd(b *bson.Builder, doc bson.Doc, root bson.Doc, env *expr.Env) error {
	done := map[string]bool{}
	it := doc.Iter()
	for it.Next() {
		e := it.Element()
		f := n.byName[e.Key]
		if f == nil {
			b.AppendValue(e.Key, e.Value)
			continue
		}
		if done[e.Key] {
			continue
		}
		done[e.Key] = true
		if err := f.add(b, e.Value, root, env); err != nil {
			return err
		}
	}
	for _, f := range n.fields {
		if !done[f.name] {
			if err := f.add(b, bson.Value{}, root, env); err != nil {
				return err
			}
		}
	}
	return nil
}

// add writes field f given the input's value at it (zero when absent).
func (f *projField) add(b *bson.Builder, cur bson.Value, root bson.Doc, env *expr.Env) error {
	if f.value != nil {
		v, err := expr.EvalKeep(f.value, root, env)
		if err != nil {
			return err
		}
		if v.Type != 0 {
			b.AppendValue(f.name, v)
		}
		return nil
	}
	switch cur.Type {
	case bson.TypeDocument:
		b.StartDocument(f.name)
		err := f.child.applyAdd(b, cur.Document(), root, env)
		b.End()
		return err
	case bson.TypeArray:
		b.StartArray(f.name)
		err := f.child.addArray(b, cur.Document(), root, env)
		b.End()
		return err
	}
	b.StartDocument(f.name)
	err := f.child.applyAdd(b, bson.EmptyDoc, root, env)
	b.End()
	return err
}

func (n *projNode) addArray(b *bson.Builder, arr bson.Doc, root bson.Doc, env *expr.Env) error {
	it := arr.Iter()
	for i := 0; it.Next(); i++ {
		v := it.Element().Value
		var err error
		switch v.Type {
		case bson.TypeArray:
			b.StartArray(bson.Index(i))
			err = n.addArray(b, v.Document(), root, env)
		case bson.TypeDocument:
			b.StartDocument(bson.Index(i))
			err = n.applyAdd(b, v.Document(), root, env)
		default:
			b.StartDocument(bson.Index(i))
			err = n.applyAdd(b, bson.EmptyDoc, root, env)
		}
		b.End()
		if err != nil {
			return err
		}
	}
	return nil
}
