package agg

import (
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/expr"
	"github.com/cairndb/cairn/internal/mongoerr"
)

func init() {
	register("$replaceRoot", stageInfo{parse: parseReplaceRoot})
	register("$replaceWith", stageInfo{parse: parseReplaceWith})
	register("$redact", stageInfo{parse: parseRedact})
}

// replaceStage replaces each document by the value of an expression.
type replaceStage struct {
	x      expr.Expr
	opener string
	ctx    *Context
}

func parseReplaceRoot(c *Context, v bson.Value) (stage, error) {
	if v.Type != bson.TypeDocument {
		return nil, mongoerr.New(mongoerr.ReplaceRootStageNotObject, "expected an object as specification for $replaceRoot stage, got %s", v.Type)
	}
	var root bson.Value
	it := v.Document().Iter()
	for it.Next() {
		e := it.Element()
		if e.Key != "newRoot" {
			return nil, mongoerr.New(mongoerr.IDLUnknownField, "BSON field '$replaceRoot.%s' is an unknown field.", e.Key)
		}
		root = e.Value
	}
	if root.Type == 0 {
		return nil, mongoerr.New(mongoerr.IDLFailedToParse, "BSON field '$replaceRoot.newRoot' is missing but a required field")
	}
	x, err := expr.Parse(root, c.Expr)
	if err != nil {
		return nil, err
	}
	return &replaceStage{x: x, opener: "'newRoot' expression ", ctx: c}, nil
}

func parseReplaceWith(c *Context, v bson.Value) (stage, error) {
	x, err := expr.Parse(v, c.Expr)
	if err != nil {
		return nil, err
	}
	return &replaceStage{x: x, opener: "'replacement document' ", ctx: c}, nil
}

func valueString(v bson.Value) string {
	if v.Type == 0 {
		return "MISSING"
	}
	return v.String()
}

func typeName(v bson.Value) string {
	if v.Type == 0 {
		return "missing"
	}
	return v.Type.String()
}

func (s *replaceStage) open(in Iterator) (Iterator, error) {
	env := expr.NewEnv(s.ctx.Expr)
	return FuncIterator(func() (bson.Doc, error) {
		d, err := in.Next()
		if d == nil || err != nil {
			return nil, err
		}
		v, err := expr.Eval(s.x, d, env)
		if err != nil {
			return nil, err
		}
		if v.Type != bson.TypeDocument {
			return nil, mongoerr.New(mongoerr.ReplaceRootNotObject, "%smust evaluate to an object, but resulting value was: %s. Type of resulting value: '%s'. Input document: %s",
				s.opener, valueString(v), typeName(v), d.String())
		}
		return v.Document(), nil
	}), nil
}

// $redact's system variables are not known to internal/expr: the stage
// rewrites them to sentinel strings before parsing.
const (
	redactDescend = "\x00cairn-redact-DESCEND"
	redactPrune   = "\x00cairn-redact-PRUNE"
	redactKeep    = "\x00cairn-redact-KEEP"
)

type redactStage struct {
	x   expr.Expr
	ctx *Context
	// With $$ROOT in the expression, spec is re-parsed per document with
	// $$ROOT bound to the top-level document (nested levels evaluate with
	// the sub-document as $$CURRENT).
	spec bson.Value
}

// redactRoot stands for $$ROOT in a $redact expression.
const redactRoot = "cairnredactroot"

// rewriteRoot replaces $$ROOT references by $$cairnredactroot; it reports
// whether there were any.
func rewriteRoot(v bson.Value) (bson.Value, bool) {
	switch v.Type {
	case bson.TypeString:
		s := v.StringValue()
		if s == "$$ROOT" || strings.HasPrefix(s, "$$ROOT.") {
			var b bson.Builder
			b.AppendString("v", "$$"+redactRoot+s[len("$$ROOT"):])
			out, _ := b.Finish().Lookup("v")
			return out, true
		}
	case bson.TypeDocument, bson.TypeArray:
		if v.Type == bson.TypeDocument && firstKey(v.Document()) == "$literal" {
			return v, false
		}
		var b bson.Builder
		if v.Type == bson.TypeDocument {
			b.StartDocument("v")
		} else {
			b.StartArray("v")
		}
		found := false
		it := v.Document().Iter()
		for it.Next() {
			e := it.Element()
			nv, ok := rewriteRoot(e.Value)
			found = found || ok
			b.AppendValue(e.Key, nv)
		}
		b.End()
		out, _ := b.Finish().Lookup("v")
		return out, found
	}
	return v, false
}

// withRoot binds $$ROOT (as rewritten) to doc and parses the expression.
func (s *redactStage) withRoot(doc bson.Doc) (expr.Expr, error) {
	c := *s.ctx
	var b bson.Builder
	b.AppendDocument(redactRoot, doc)
	withVars(&c, b.Finish())
	return expr.Parse(s.spec, c.Expr)
}

func rewriteRedactVars(v bson.Value) bson.Value {
	switch v.Type {
	case bson.TypeString:
		var s string
		switch v.StringValue() {
		case "$$DESCEND":
			s = redactDescend
		case "$$PRUNE":
			s = redactPrune
		case "$$KEEP":
			s = redactKeep
		default:
			return v
		}
		var b bson.Builder
		b.StartDocument("v")
		b.AppendString("$literal", s)
		b.End()
		out, _ := b.Finish().Lookup("v")
		return out
	case bson.TypeDocument, bson.TypeArray:
		if v.Type == bson.TypeDocument && firstKey(v.Document()) == "$literal" {
			return v
		}
		var b bson.Builder
		if v.Type == bson.TypeDocument {
			b.StartDocument("v")
		} else {
			b.StartArray("v")
		}
		it := v.Document().Iter()
		for it.Next() {
			e := it.Element()
			b.AppendValue(e.Key, rewriteRedactVars(e.Value))
		}
		b.End()
		out, _ := b.Finish().Lookup("v")
		return out
	}
	return v
}

func parseRedact(c *Context, v bson.Value) (stage, error) {
	spec, usesRoot := rewriteRoot(rewriteRedactVars(v))
	s := &redactStage{ctx: c}
	if usesRoot {
		s.spec = expr.CopyValue(spec)
		_, err := s.withRoot(bson.EmptyDoc)
		return s, err
	}
	x, err := expr.Parse(spec, c.Expr)
	if err != nil {
		return nil, err
	}
	s.x = x
	return s, nil
}

func (s *redactStage) open(in Iterator) (Iterator, error) {
	env := expr.NewEnv(s.ctx.Expr)
	return FuncIterator(func() (bson.Doc, error) {
		for {
			d, err := in.Next()
			if d == nil || err != nil {
				return nil, err
			}
			if s.spec.Type != 0 {
				if s.x, err = s.withRoot(d); err != nil {
					return nil, err
				}
			}
			out, keep, err := s.redact(d, env)
			if err != nil {
				return nil, err
			}
			if keep {
				return out, nil
			}
		}
	}), nil
}

// redact applies the expression at one document level; keep is false when
// the level is pruned.
func (s *redactStage) redact(d bson.Doc, env *expr.Env) (bson.Doc, bool, error) {
	v, err := expr.Eval(s.x, d, env)
	if err != nil {
		return nil, false, err
	}
	if v.Type == bson.TypeString {
		switch v.StringValue() {
		case redactKeep:
			return d, true, nil
		case redactPrune:
			return nil, false, nil
		case redactDescend:
			var b bson.Builder
			it := d.Iter()
			for it.Next() {
				e := it.Element()
				switch e.Value.Type {
				case bson.TypeDocument:
					sub, keep, err := s.redact(e.Value.Document(), env)
					if err != nil {
						return nil, false, err
					}
					if keep {
						b.AppendDocument(e.Key, sub)
					}
				case bson.TypeArray:
					arr, err := s.redactArray(e.Value.Document(), env)
					if err != nil {
						return nil, false, err
					}
					b.AppendArray(e.Key, arr)
				default:
					b.AppendElement(e)
				}
			}
			return b.Finish(), true, nil
		}
	}
	return nil, false, mongoerr.New(mongoerr.RedactBadResult, "$redact's expression should not return anything aside from the variables $$KEEP, $$DESCEND, and $$PRUNE, but returned %s", strings.ReplaceAll(valueString(v), "\x00cairn-redact-", "$$"))
}

func (s *redactStage) redactArray(arr bson.Doc, env *expr.Env) (bson.Doc, error) {
	var b bson.Builder
	i := 0
	it := arr.Iter()
	for it.Next() {
		v := it.Element().Value
		switch v.Type {
		case bson.TypeDocument:
			sub, keep, err := s.redact(v.Document(), env)
			if err != nil {
				return nil, err
			}
			if !keep {
				continue
			}
			b.AppendDocument(bson.Index(i), sub)
		case bson.TypeArray:
			sub, err := s.redactArray(v.Document(), env)
			if err != nil {
				return nil, err
			}
			b.AppendArray(bson.Index(i), sub)
		default:
			b.AppendValue(bson.Index(i), v)
		}
		i++
	}
	return b.Finish(), nil
}
