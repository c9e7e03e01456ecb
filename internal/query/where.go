package query

import (
	"github.com/cairndb/cairn/bson"
	jsi "github.com/cairndb/cairn/internal/js"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// $where: a JavaScript predicate over the whole document, run by the
// operation's interpreter (internal/js) with this and obj bound to the
// document. As mongod: only at the top level (not in $elemMatch, not as a
// field's operator), only where the command has an interpreter (find,
// count, distinct, the writes' filters; not a $match, a validator or a
// partial filter), and compiled when the filter is parsed, so a syntax
// error fails the command before any document is read.

// codeNoScriptEngine is mongod's JsFunction assertion with scripting
// disabled ("no globalScriptEngine in $where parsing").
const codeNoScriptEngine = 6108304

func (p *filterParser) parseWhere(v bson.Value) (node, error) {
	o := p.opts
	if o == nil || o.Scripts == nil || o.NoWhere {
		return nil, badValue("$where is not allowed in this context")
	}
	if !o.Scripts.Enabled() {
		return nil, mongoerr.New(codeNoScriptEngine, "no globalScriptEngine in $where parsing")
	}
	var src string
	switch v.Type {
	case bson.TypeString, bson.TypeJavaScript:
		src = v.StringValue()
	default:
		return nil, badValue("$where got bad type")
	}
	s, err := o.Scripts.Session()
	if err != nil {
		return nil, err
	}
	f, err := s.Compile(src)
	if err != nil {
		return nil, err
	}
	return &whereNode{f: f}, nil
}

// whereNode is a compiled $where. An error of the script (an exception,
// an interruption) is reported in MatchDetails.Err and fails the
// operation.
type whereNode struct {
	f *jsi.Func
}

func (n *whereNode) match(d bson.Doc, md *MatchDetails) bool {
	ok, err := n.f.Where(d)
	if err != nil {
		if md != nil && md.Err == nil {
			md.Err = err
		}
		return false
	}
	return ok
}
