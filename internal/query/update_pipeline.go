package query

import (
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// updatePipeline is an update given as an aggregation pipeline of $set
// ($addFields), $unset, $project and $replaceRoot ($replaceWith) stages.
type updatePipeline struct {
	stages []pipelineStage
}

type pipelineStage interface {
	apply(dst []byte, doc bson.Doc) (bson.Doc, error)
}

func parseUpdatePipeline(stages bson.Doc, opts *Options) (*updatePipeline, error) {
	fp := &filterParser{coll: opts.comparer(), opts: opts}
	ep, vars, err := fp.exprParser()
	if err != nil {
		return nil, err
	}
	p := &updatePipeline{}
	it := stages.Iter()
	for it.Next() {
		sv := it.Element().Value
		if sv.Type != bson.TypeDocument {
			return nil, mongoerr.New(mongoerr.TypeMismatch, "Each element of the 'pipeline' array must be an object")
		}
		sd := bson.Doc(sv.Data)
		if sd.Len() != 1 {
			return nil, mongoerr.New(mongoerr.PipelineStageNotOneField, "A pipeline stage specification object must contain exactly one field.")
		}
		name := firstKey(sd)
		arg, _ := sd.Lookup(name)
		var st pipelineStage
		switch name {
		case "$set", "$addFields":
			if arg.Type != bson.TypeDocument {
				return nil, mongoerr.New(mongoerr.ProjectStageSpecNotObject, "%s specification stage must be an object, got %s", name, typeNameForMessage(arg.Type))
			}
			st, err = parseAddFields(bson.Doc(arg.Data), ep, vars, fp.coll)
		case "$unset":
			st, err = parseUnsetStage(arg, opts)
		case "$project":
			if arg.Type != bson.TypeDocument {
				return nil, mongoerr.New(mongoerr.ProjectStageNotObject, "$project specification must be an object")
			}
			var pr *Projection
			pr, err = parseProjection(bson.Doc(arg.Data), opts, true)
			if err == nil && pr.empty {
				err = mongoerr.New(mongoerr.ProjectionEmpty, "Invalid $project :: caused by :: projection specification must have at least one field")
			}
			st = projectStage{pr}
		case "$replaceRoot", "$replaceWith":
			st, err = parseReplaceRoot(name, arg, ep, vars, fp.coll)
		default:
			if strings.HasPrefix(name, "$") && knownStages[name] {
				return nil, mongoerr.New(mongoerr.FailedToParse, "%s is not allowed to be used within an update", name)
			}
			return nil, mongoerr.New(mongoerr.PipelineUnknownStage, "Unrecognized pipeline stage name: '%s'", name)
		}
		if err != nil {
			return nil, err
		}
		p.stages = append(p.stages, st)
	}
	return p, nil
}

var knownStages = map[string]bool{
	"$match": true, "$group": true, "$sort": true, "$limit": true, "$skip": true, "$lookup": true,
	"$unwind": true, "$count": true, "$facet": true, "$out": true, "$merge": true, "$sample": true,
	"$bucket": true, "$bucketAuto": true, "$sortByCount": true, "$graphLookup": true, "$geoNear": true,
	"$redact": true, "$unionWith": true, "$densify": true, "$fill": true, "$setWindowFields": true,
	"$documents": true, "$collStats": true, "$indexStats": true, "$changeStream": true,
}

func (p *updatePipeline) apply(dst []byte, doc bson.Doc, _ *Options) (bson.Doc, error) {
	cur := doc
	for _, st := range p.stages {
		out, err := st.apply(nil, cur)
		if err != nil {
			return nil, err
		}
		cur = out
	}
	return append(dst[len(dst):], cur...), nil
}

type projectStage struct{ p *Projection }

func (s projectStage) apply(dst []byte, doc bson.Doc) (bson.Doc, error) {
	return s.p.Apply(dst, doc, nil)
}

func parseUnsetStage(arg bson.Value, opts *Options) (pipelineStage, error) {
	var b bson.Builder
	switch arg.Type {
	case bson.TypeString:
		b.AppendInt32(arg.StringValue(), 0)
	case bson.TypeArray:
		it := bson.Doc(arg.Data).Iter()
		n := 0
		for it.Next() {
			v := it.Element().Value
			if v.Type != bson.TypeString {
				return nil, mongoerr.New(mongoerr.UnsetArrayNotStrings, "$unset specification must be a string or an array containing only string values")
			}
			b.AppendInt32(v.StringValue(), 0)
			n++
		}
		if n == 0 {
			return nil, mongoerr.New(mongoerr.UnsetEmptyArray, "$unset specification must be a string or an array with at least one field")
		}
	default:
		return nil, mongoerr.New(mongoerr.UnsetNotStringOrArray, "$unset specification must be a string or an array")
	}
	pr, err := parseProjection(b.Finish(), opts, true)
	if err != nil {
		return nil, err
	}
	return projectStage{pr}, nil
}

type replaceRootStage struct {
	e    compiledExpr
	vars map[string]bson.Value
	coll bson.StringComparer
}

func parseReplaceRoot(name string, arg bson.Value, ep *exprParser, vars map[string]bson.Value, coll bson.StringComparer) (pipelineStage, error) {
	spec := arg
	if name == "$replaceRoot" {
		if arg.Type != bson.TypeDocument {
			return nil, mongoerr.New(mongoerr.ReplaceRootNotObject, "$replaceRoot requires an object as its argument")
		}
		nr, ok := bson.Doc(arg.Data).Lookup("newRoot")
		if !ok {
			return nil, mongoerr.New(mongoerr.ReplaceRootMissingNewRoot, "no newRoot specified for the $replaceRoot stage")
		}
		if bson.Doc(arg.Data).Len() != 1 {
			return nil, mongoerr.New(mongoerr.IDLUnknownField, "BSON field '$replaceRoot.%s' is an unknown field.", secondKey(bson.Doc(arg.Data)))
		}
		spec = nr
	}
	x, err := ep.parse(spec)
	if err != nil {
		return nil, err
	}
	return &replaceRootStage{e: x, vars: vars, coll: coll}, nil
}

func secondKey(d bson.Doc) string {
	it := d.Iter()
	for it.Next() {
		if k := it.Element().Key; k != "newRoot" {
			return k
		}
	}
	return ""
}

func (s *replaceRootStage) apply(dst []byte, doc bson.Doc) (bson.Doc, error) {
	v, err := s.e.eval(&evalCtx{root: doc})
	if err != nil {
		return nil, err
	}
	if v.Type != bson.TypeDocument {
		return nil, mongoerr.New(mongoerr.ReplaceRootNotObject, "'newRoot' expression must evaluate to an object, but resulting value was: %s. Type of resulting value: '%s'. Input document: %s", v.String(), typeNameOrMissing(v), doc.String())
	}
	return append(dst[len(dst):], v.Data...), nil
}

// addFieldsStage is $set / $addFields: computed fields replace existing
// ones in place and new ones are appended in specification order; nested
// specifications merge into embedded documents (and each document of an
// array).
type addFieldsStage struct {
	root *afNode
	vars map[string]bson.Value
	coll bson.StringComparer
}

type afNode struct {
	name     string
	children []*afNode
	byName   map[string]*afNode
	e        compiledExpr
}

func (n *afNode) child(name string) *afNode {
	if n.byName == nil {
		return nil
	}
	return n.byName[name]
}

func parseAddFields(spec bson.Doc, ep *exprParser, vars map[string]bson.Value, coll bson.StringComparer) (pipelineStage, error) {
	s := &addFieldsStage{root: &afNode{}, vars: vars, coll: coll}
	var walk func(prefix []string, d bson.Doc) error
	walk = func(prefix []string, d bson.Doc) error {
		it := d.Iter()
		for it.Next() {
			e := it.Element()
			full := strings.Join(append(append([]string{}, prefix...), e.Key), ".")
			if err := validateSortPath(full); err != nil {
				return err
			}
			parts := append(append([]string{}, prefix...), splitPath(e.Key)...)
			if e.Value.Type == bson.TypeDocument && bson.Doc(e.Value.Data).Len() > 0 && !strings.HasPrefix(firstKey(bson.Doc(e.Value.Data)), "$") {
				if err := walk(parts, bson.Doc(e.Value.Data)); err != nil {
					return err
				}
				continue
			}
			x, err := ep.parse(e.Value)
			if err != nil {
				return err
			}
			if err := s.insert(parts, x); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(nil, spec); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *addFieldsStage) insert(parts []string, x compiledExpr) error {
	cur := s.root
	for i, c := range parts {
		last := i == len(parts)-1
		if ex := cur.child(c); ex != nil {
			if last {
				return mongoerr.New(mongoerr.ProjectPathCollision, "Invalid $addFields :: caused by :: Path collision at %s", strings.Join(parts, "."))
			}
			if ex.e != nil {
				return mongoerr.New(mongoerr.ProjectPathCollisionPortion, "Invalid $addFields :: caused by :: Path collision at %s remaining portion %s", strings.Join(parts, "."), strings.Join(parts[i+1:], "."))
			}
			cur = ex
			continue
		}
		n := &afNode{name: c}
		if last {
			n.e = x
		}
		if cur.byName == nil {
			cur.byName = map[string]*afNode{}
		}
		cur.byName[c] = n
		cur.children = append(cur.children, n)
		cur = n
	}
	return nil
}

func (s *addFieldsStage) apply(dst []byte, doc bson.Doc) (bson.Doc, error) {
	c := &evalCtx{root: doc}
	b := bson.NewBuilder(dst[len(dst):])
	if err := s.applyDoc(c, b, doc, s.root); err != nil {
		return nil, err
	}
	return b.Finish(), nil
}

func (s *addFieldsStage) applyDoc(c *evalCtx, b *bson.Builder, d bson.Doc, n *afNode) error {
	it := d.Iter()
	for it.Next() {
		e := it.Element()
		ch := n.child(e.Key)
		if ch == nil {
			b.AppendElement(e)
			continue
		}
		if err := s.applyValue(c, b, e.Key, e.Value, ch); err != nil {
			return err
		}
	}
	for _, ch := range n.children {
		if _, ok := d.Lookup(ch.name); ok {
			continue
		}
		if err := s.applyValue(c, b, ch.name, bson.Value{}, ch); err != nil {
			return err
		}
	}
	return nil
}

func (s *addFieldsStage) applyValue(c *evalCtx, b *bson.Builder, key string, v bson.Value, n *afNode) error {
	if n.e != nil {
		r, err := n.e.eval(c)
		if err != nil {
			return err
		}
		if r.Type != 0 {
			b.AppendValue(key, r)
		}
		return nil
	}
	switch v.Type {
	case bson.TypeDocument:
		b.StartDocument(key)
		if err := s.applyDoc(c, b, bson.Doc(v.Data), n); err != nil {
			return err
		}
		b.End()
	case bson.TypeArray:
		b.StartArray(key)
		it := bson.Doc(v.Data).Iter()
		for it.Next() {
			e := it.Element()
			if err := s.applyValue(c, b, e.Key, e.Value, n); err != nil {
				return err
			}
		}
		b.End()
	default:
		b.StartDocument(key)
		if err := s.applyDoc(c, b, bson.EmptyDoc, n); err != nil {
			return err
		}
		b.End()
	}
	return nil
}

// typeNameOrMissing is $type's name for v ("missing" for no value).
func typeNameOrMissing(v bson.Value) string {
	if v.Type == 0 {
		return "missing"
	}
	return v.Type.String()
}
