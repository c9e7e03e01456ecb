package agg

import (
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/expr"
	"github.com/cairndb/cairn/internal/mongoerr"
)

func init() {
	register("$out", stageInfo{parse: parseOut, final: true})
	register("$merge", stageInfo{parse: parseMerge, final: true, collectionless: false})
}

// OutSpec is a parsed $out: the documents replace DB.Coll.
type OutSpec struct {
	DB, Coll string
}

// MergeSpec is a parsed $merge.
type MergeSpec struct {
	DB, Coll string
	// On is the list of fields identifying a target document (["_id"]).
	On []string
	// WhenMatched is "replace", "keepExisting", "merge", "fail" or
	// "pipeline"; WhenNotMatched is "insert", "discard" or "fail".
	WhenMatched, WhenNotMatched string

	pipeline []bson.Doc
	let      bson.Doc // nil: {new: "$$ROOT"} when a pipeline is given
	ctx      *Context
	cache    map[string]*Pipeline
}

// OnID reports whether documents are matched on _id alone.
func (m *MergeSpec) OnID() bool { return len(m.On) == 1 && m.On[0] == "_id" }

// OnKey appends the encoding of d's values at the 'on' fields; a missing,
// null, undefined or array value is an error, as in MongoDB.
func (m *MergeSpec) OnKey(dst []byte, d bson.Doc) ([]byte, error) {
	for _, f := range m.On {
		v := lookupPath(d, strings.Split(f, "."))
		switch v.Type {
		case 0, bson.TypeNull, bson.TypeUndefined, bson.TypeArray:
			return nil, mongoerr.New(mongoerr.MergeOnFieldMissing, "$merge write error: 'on' field '%s' cannot be missing, null, undefined or an array", f)
		}
		dst = bson.AppendKey(dst, v, false)
	}
	return dst, nil
}

// MergeAction is what to do with one $merge document.
type MergeAction int

// The actions Resolve returns.
const (
	MergeSkip MergeAction = iota
	MergeInsert
	MergeReplace
)

type outStage struct {
	spec *OutSpec
	ctx  *Context
}

func checkTargetName(name string) error {
	if name == "" || strings.ContainsRune(name, 0) || strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".") || strings.Contains(name, "$") {
		return mongoerr.New(mongoerr.InvalidNamespace, "Invalid collection name: %s", name)
	}
	if strings.HasPrefix(name, "system.") {
		return mongoerr.New(mongoerr.InvalidNamespace, "Invalid collection name: %s", name)
	}
	return nil
}

func parseOut(c *Context, v bson.Value) (stage, error) {
	spec := &OutSpec{DB: c.DB}
	switch v.Type {
	case bson.TypeString:
		spec.Coll = v.StringValue()
	case bson.TypeDocument:
		it := v.Document().Iter()
		for it.Next() {
			e := it.Element()
			switch e.Key {
			case "db", "coll":
				if e.Value.Type != bson.TypeString {
					return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '$out.%s' is the wrong type '%s', expected type 'string'", e.Key, e.Value.Type)
				}
				if e.Key == "db" {
					spec.DB = e.Value.StringValue()
				} else {
					spec.Coll = e.Value.StringValue()
				}
			case "timeseries":
				return nil, mongoerr.New(mongoerr.NotImplemented, "$out to a time-series collection is not supported by Cairn")
			default:
				return nil, mongoerr.New(mongoerr.IDLUnknownField, "BSON field '$out.%s' is an unknown field.", e.Key)
			}
		}
		if spec.Coll == "" {
			return nil, mongoerr.New(mongoerr.IDLFailedToParse, "BSON field '$out.coll' is missing but a required field")
		}
	default:
		return nil, mongoerr.New(mongoerr.OutBadArgument, "$out only supports a string or object argument, but found %s", v.Type)
	}
	if err := checkTargetName(spec.Coll); err != nil {
		return nil, err
	}
	return &outStage{spec: spec, ctx: c}, nil
}

func (s *outStage) open(in Iterator) (Iterator, error) {
	done := false
	return FuncIterator(func() (bson.Doc, error) {
		if done {
			return nil, nil
		}
		done = true
		if s.ctx.Catalog == nil {
			return nil, mongoerr.New(mongoerr.NotImplemented, "$out is not available here")
		}
		return nil, s.ctx.Catalog.Out(s.spec, in)
	}), nil
}

type mergeStage struct {
	spec *MergeSpec
}

func parseMerge(c *Context, v bson.Value) (stage, error) {
	m := &MergeSpec{DB: c.DB, On: []string{"_id"}, WhenMatched: "merge", WhenNotMatched: "insert", ctx: c}
	switch v.Type {
	case bson.TypeString:
		m.Coll = v.StringValue()
	case bson.TypeDocument:
		if err := m.parse(v.Document()); err != nil {
			return nil, err
		}
	default:
		return nil, mongoerr.New(mongoerr.MergeBadArgument, "$merge only supports a string or object argument, not %s", v.Type)
	}
	if err := checkTargetName(m.Coll); err != nil {
		return nil, err
	}
	return &mergeStage{spec: m}, nil
}

func (m *MergeSpec) parse(d bson.Doc) error {
	it := d.Iter()
	for it.Next() {
		e := it.Element()
		switch e.Key {
		case "into":
			switch e.Value.Type {
			case bson.TypeString:
				m.Coll = e.Value.StringValue()
			case bson.TypeDocument:
				sub := e.Value.Document().Iter()
				for sub.Next() {
					se := sub.Element()
					if se.Value.Type != bson.TypeString {
						return mongoerr.New(mongoerr.TypeMismatch, "BSON field 'into.%s' is the wrong type '%s', expected type 'string'", se.Key, se.Value.Type)
					}
					switch se.Key {
					case "db":
						m.DB = se.Value.StringValue()
					case "coll":
						m.Coll = se.Value.StringValue()
					default:
						return mongoerr.New(mongoerr.IDLUnknownField, "BSON field 'into.%s' is an unknown field.", se.Key)
					}
				}
			default:
				return mongoerr.New(mongoerr.MergeIntoBadType, "$merge 'into' field  must be either a string or an object, but found %s", e.Value.Type)
			}
		case "on":
			m.On = nil
			switch e.Value.Type {
			case bson.TypeString:
				m.On = []string{e.Value.StringValue()}
			case bson.TypeArray:
				sub := e.Value.Document().Iter()
				for sub.Next() {
					if sub.Element().Value.Type != bson.TypeString {
						return mongoerr.New(mongoerr.MergeOnElementNotString, "$merge 'on' array elements must be strings, but found %s", sub.Element().Value.Type)
					}
					m.On = append(m.On, sub.Element().Value.StringValue())
				}
				if len(m.On) == 0 {
					return mongoerr.New(mongoerr.MergeOnEmpty, "If explicitly specifying $merge 'on', must include at least one field")
				}
			default:
				return mongoerr.New(mongoerr.MergeOnBadType, "$merge 'on' field  must be either a string or an array of strings, but found %s", e.Value.Type)
			}
		case "let":
			if e.Value.Type != bson.TypeDocument {
				return mongoerr.New(mongoerr.TypeMismatch, "BSON field '$merge.let' is the wrong type '%s', expected type 'object'", e.Value.Type)
			}
			m.let = e.Value.Document()
		case "whenMatched":
			switch e.Value.Type {
			case bson.TypeString:
				switch s := e.Value.StringValue(); s {
				case "replace", "keepExisting", "merge", "fail":
					m.WhenMatched = s
				default:
					return mongoerr.New(mongoerr.BadValue, "Enumeration value '%s' for field 'whenMatched' is not a valid value.", s)
				}
			case bson.TypeArray:
				m.WhenMatched = "pipeline"
				sub := e.Value.Document().Iter()
				for sub.Next() {
					sv := sub.Element().Value
					if sv.Type != bson.TypeDocument {
						return mongoerr.New(mongoerr.TypeMismatch, "Each element of the 'whenMatched' array must be an object")
					}
					switch k := firstKey(sv.Document()); k {
					case "$addFields", "$set", "$project", "$unset", "$replaceRoot", "$replaceWith":
					default:
						return mongoerr.New(mongoerr.InvalidOptions, "%s is not allowed to be used within an update", k)
					}
					m.pipeline = append(m.pipeline, sv.Document())
				}
			default:
				return mongoerr.New(mongoerr.MergeWhenMatchedBadType, "$merge 'whenMatched' field  must be either a string or an array, but found %s", e.Value.Type)
			}
		case "whenNotMatched":
			if e.Value.Type != bson.TypeString {
				return mongoerr.New(mongoerr.TypeMismatch, "BSON field '$merge.whenNotMatched' is the wrong type '%s', expected type 'string'", e.Value.Type)
			}
			switch s := e.Value.StringValue(); s {
			case "insert", "discard", "fail":
				m.WhenNotMatched = s
			default:
				return mongoerr.New(mongoerr.BadValue, "Enumeration value '%s' for field 'whenNotMatched' is not a valid value.", s)
			}
		case "targetCollectionVersion":
		default:
			return mongoerr.New(mongoerr.IDLUnknownField, "BSON field '$merge.%s' is an unknown field.", e.Key)
		}
	}
	if m.Coll == "" {
		return mongoerr.New(mongoerr.IDLFailedToParse, "BSON field '$merge.into' is missing but a required field")
	}
	if m.let != nil && m.WhenMatched != "pipeline" {
		return mongoerr.New(mongoerr.MergeLetWithMode, "Cannot use 'let' variables with 'whenMatched: %s' mode", m.WhenMatched)
	}
	seen := map[string]bool{}
	for _, f := range m.On {
		if err := validFieldPath("$merge", f); err != nil {
			return err
		}
		if seen[f] {
			return mongoerr.New(mongoerr.MergeDuplicateOnField, "Found a duplicate field '%s'", f)
		}
		seen[f] = true
	}
	if m.WhenMatched == "pipeline" {
		// Parse once to report errors now.
		if _, err := m.pipelineFor(bson.EmptyDoc); err != nil {
			return err
		}
	}
	return nil
}

func (s *mergeStage) open(in Iterator) (Iterator, error) {
	done := false
	return FuncIterator(func() (bson.Doc, error) {
		if done {
			return nil, nil
		}
		done = true
		if s.spec.ctx.Catalog == nil {
			return nil, mongoerr.New(mongoerr.NotImplemented, "$merge is not available here")
		}
		return nil, s.spec.ctx.Catalog.Merge(s.spec, in)
	}), nil
}

// pipelineFor parses the whenMatched pipeline with the let variables
// evaluated against the incoming document.
func (m *MergeSpec) pipelineFor(incoming bson.Doc) (*Pipeline, error) {
	let := m.let
	if let == nil {
		var b bson.Builder
		b.AppendString("new", "$$ROOT")
		let = b.Finish()
	}
	vars, err := evalVars(m.ctx, let, incoming)
	if err != nil {
		return nil, err
	}
	if p := m.cache[string(vars)]; p != nil {
		return p, nil
	}
	c := m.ctx.sub("$merge")
	c.within = ""
	withVars(c, vars)
	p, err := Parse(c, m.pipeline)
	if err != nil {
		return nil, err
	}
	if m.cache == nil || len(m.cache) > 64 {
		m.cache = map[string]*Pipeline{}
	}
	m.cache[string(vars)] = p
	return p, nil
}

// Resolve decides what $merge does with incoming given the target's
// matching document (nil when none): the document to write and how.
func (m *MergeSpec) Resolve(existing, incoming bson.Doc) (bson.Doc, MergeAction, error) {
	if existing == nil {
		switch m.WhenNotMatched {
		case "insert":
			return incoming, MergeInsert, nil
		case "discard":
			return nil, MergeSkip, nil
		}
		return nil, MergeSkip, mongoerr.New(mongoerr.MergeStageNoMatchingDocument, "$merge could not find a matching document in the target collection for at least one document in the source collection")
	}
	switch m.WhenMatched {
	case "keepExisting":
		return nil, MergeSkip, nil
	case "fail":
		return nil, MergeInsert, nil // the caller reports the duplicate key
	case "replace":
		return incoming, MergeReplace, nil
	case "merge":
		var b bson.Builder
		seen := map[string]bool{}
		it := existing.Iter()
		for it.Next() {
			e := it.Element()
			if v, ok := incoming.Lookup(e.Key); ok {
				b.AppendValue(e.Key, v)
				seen[e.Key] = true
			} else {
				b.AppendElement(e)
			}
		}
		it = incoming.Iter()
		for it.Next() {
			if !seen[it.Element().Key] {
				b.AppendElement(it.Element())
			}
		}
		return b.Finish(), MergeReplace, nil
	}
	p, err := m.pipelineFor(incoming)
	if err != nil {
		return nil, MergeSkip, err
	}
	out, err := p.Run(&SliceIterator{Docs: []bson.Doc{existing}})
	if err != nil {
		return nil, MergeSkip, err
	}
	d, err := out.Next()
	if err != nil || d == nil {
		return nil, MergeSkip, err
	}
	return cloneDoc(d), MergeReplace, nil
}

// evalVars evaluates a let specification ({name: expr}) against doc and
// returns the values as a document.
func evalVars(c *Context, let bson.Doc, doc bson.Doc) (bson.Doc, error) {
	var b bson.Builder
	env := expr.NewEnv(c.Expr)
	it := let.Iter()
	for it.Next() {
		e := it.Element()
		x, err := expr.Parse(e.Value, c.Expr)
		if err != nil {
			return nil, err
		}
		v, err := expr.Eval(x, doc, env)
		if err != nil {
			return nil, err
		}
		if v.Type == 0 {
			v = bson.Value{Type: bson.TypeUndefined}
		}
		b.AppendValue(e.Key, v)
	}
	return b.Finish(), nil
}

// withVars makes vars (name: value) visible as $$name in c's expressions
// and $match filters, on top of the variables already visible.
func withVars(c *Context, vars bson.Doc) {
	var b bson.Builder
	seen := map[string]bool{}
	it := vars.Iter()
	for it.Next() {
		seen[it.Element().Key] = true
	}
	if c.Expr != nil {
		if outer, err := c.Expr.LetValues(); err == nil {
			for k, v := range outer {
				if !seen[k] {
					b.StartDocument(k)
					b.AppendValue("$literal", v)
					b.End()
				}
			}
		}
	}
	it = vars.Iter()
	for it.Next() {
		e := it.Element()
		b.StartDocument(e.Key)
		v := e.Value
		if v.Type == bson.TypeUndefined {
			v = bson.Value{Type: bson.TypeNull, Data: []byte{}}
		}
		b.AppendValue("$literal", v)
		b.End()
	}
	let := b.Finish()
	eo := &expr.Options{Let: let}
	if c.Expr != nil {
		eo.Collation, eo.Now = c.Expr.Collation, c.Expr.Now
	}
	c.Expr = eo
	qo := *c.Query
	qo.Let = let
	c.Query = &qo
}
