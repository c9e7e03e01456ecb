package agg

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/expr"
	"github.com/cairndb/cairn/internal/mongoerr"
)

func init() {
	register("$project", stageInfo{parse: parseProject})
	register("$addFields", stageInfo{parse: func(c *Context, v bson.Value) (stage, error) { return parseAddFields(c, v, "$addFields") }})
	register("$set", stageInfo{parse: func(c *Context, v bson.Value) (stage, error) { return parseAddFields(c, v, "$set") }})
	register("$unset", stageInfo{parse: parseUnset})
}

type projectStage struct {
	p   *projection
	ctx *Context
}

func parseProject(c *Context, v bson.Value) (stage, error) {
	if v.Type != bson.TypeDocument {
		return nil, mongoerr.New(mongoerr.ProjectStageNotObject, "$project specification must be an object")
	}
	if v.Document().Len() == 0 {
		return nil, mongoerr.New(mongoerr.ProjectionEmpty, "Invalid $project :: caused by :: projection specification must have at least one field")
	}
	p := &projection{root: newProjNode(), stage: "$project"}
	if err := p.parse(c, v.Document(), "", modeProject); err != nil {
		return nil, err
	}
	if p.inclusion {
		if _, ok := p.root.byName["_id"]; !ok {
			f := &projField{name: "_id", include: true}
			p.root.byName["_id"] = f
			p.root.fields = append([]*projField{f}, p.root.fields...)
		} else if p.excludeID {
			// {_id: 0} in an inclusion projection: drop the exclusion leaf.
			p.root.remove("_id")
		}
	}
	return &projectStage{p: p, ctx: c}, nil
}

func parseAddFields(c *Context, v bson.Value, name string) (stage, error) {
	if v.Type != bson.TypeDocument {
		return nil, mongoerr.New(mongoerr.ProjectStageSpecNotObject, "%s specification stage must be an object, got %s", name, v.Type)
	}
	p := &projection{root: newProjNode(), add: true, stage: name}
	if err := p.parse(c, v.Document(), "", modeAddFields); err != nil {
		return nil, err
	}
	return &projectStage{p: p, ctx: c}, nil
}

func parseUnset(c *Context, v bson.Value) (stage, error) {
	p := &projection{root: newProjNode(), stage: "$unset"}
	var paths []string
	switch v.Type {
	case bson.TypeString:
		paths = append(paths, v.StringValue())
	case bson.TypeArray:
		it := v.Document().Iter()
		for it.Next() {
			e := it.Element().Value
			if e.Type != bson.TypeString {
				return nil, mongoerr.New(mongoerr.UnsetArrayNotStrings, "$unset specification must be a string or an array containing only string values")
			}
			paths = append(paths, e.StringValue())
		}
		if len(paths) == 0 {
			return nil, mongoerr.New(mongoerr.UnsetEmptyArray, "$unset specification must be a string or an array with at least one field")
		}
	default:
		return nil, mongoerr.New(mongoerr.UnsetNotStringOrArray, "$unset specification must be a string or an array")
	}
	for _, path := range paths {
		if err := validFieldPath("$unset", path); err != nil {
			return nil, err
		}
		if err := p.root.insert(path, &projField{exclude: true}); err != nil {
			return nil, err
		}
	}
	return &projectStage{p: p, ctx: c}, nil
}

func (n *projNode) remove(name string) {
	delete(n.byName, name)
	for i, f := range n.fields {
		if f.name == name {
			n.fields = append(n.fields[:i], n.fields[i+1:]...)
			return
		}
	}
}

func (s *projectStage) open(in Iterator) (Iterator, error) {
	env := expr.NewEnv(s.ctx.Expr)
	var b bson.Builder
	var buf []byte
	return FuncIterator(func() (bson.Doc, error) {
		d, err := in.Next()
		if d == nil || err != nil {
			return nil, err
		}
		env.Reset()
		// The previous result is no longer referenced: reuse its memory.
		b.Reset(buf[:0])
		switch {
		case s.p.add:
			err = s.p.root.applyAdd(&b, d, d, env)
		case s.p.inclusion:
			err = s.p.root.applyInclusion(&b, d, d, env)
		default:
			s.p.root.applyExclusion(&b, d)
		}
		if err != nil {
			return nil, err
		}
		out := b.Finish()
		buf = out
		return out, nil
	}), nil
}
