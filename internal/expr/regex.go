package expr

import (
	"errors"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/pcre"
)

// $regexMatch, $regexFind and $regexFindAll. MongoDB uses PCRE; Cairn
// translates patterns to Go's RE2 (internal/pcre, the translator the
// query language's $regex uses too) and rejects the PCRE-only constructs
// (look-around, back-references, possessive quantifiers, atomic groups,
// ...) with NotImplemented rather than matching differently.

func init() {
	register("$regexMatch", parseRegex("$regexMatch", regexMatchMode))
	register("$regexFind", parseRegex("$regexFind", regexFindMode))
	register("$regexFindAll", parseRegex("$regexFindAll", regexFindAllMode))
}

const (
	regexMatchMode = iota
	regexFindMode
	regexFindAllMode
)

type regexNode struct {
	name                  string
	mode                  int
	input, regex, options node
	fixed                 *regexp.Regexp // compiled at parse time when constant
}

func parseRegex(name string, mode int) opParser {
	return func(p *parser, _ string, arg bson.Value) (node, error) {
		m, err := namedArgs(p, arg, []string{"input", "regex", "options"}, func() error {
			return errf(mongoerr.RegexExprNotObject, "%s expects an object of named arguments but found: %s", name, typeName(arg))
		}, func(key string) error {
			return errf(mongoerr.RegexUnknownArgument, "%s found an unknown argument: %s", name, key)
		})
		if err != nil {
			return nil, err
		}
		n := &regexNode{name: name, mode: mode, input: m["input"], regex: m["regex"], options: m["options"]}
		if n.input == nil {
			return nil, errf(mongoerr.RegexMissingInput, "%s requires 'input' parameter", name)
		}
		if n.regex == nil {
			return nil, errf(mongoerr.RegexMissingRegex, "%s requires 'regex' parameter", name)
		}
		rc, ok1 := n.regex.(constNode)
		var oc constNode
		ok2 := true
		if n.options != nil {
			oc, ok2 = n.options.(constNode)
		}
		// Absent or null options are no options: the regex is still constant.
		if ok1 && ok2 && !nullish(rc.v) {
			re, err := n.compile(rc.v, oc.v)
			if err != nil {
				return nil, err
			}
			n.fixed = re
		}
		return n, nil
	}
}

func (n *regexNode) compile(rv, ov bson.Value) (*regexp.Regexp, error) {
	var pattern, opts string
	switch rv.Type {
	case bson.TypeString:
		pattern = rv.StringValue()
	case bson.TypeRegex:
		pattern, opts = rv.Regex()
	default:
		return nil, errf(mongoerr.RegexExprRegexBadType, "%s needs 'regex' to be of type string or regex", n.name)
	}
	if ov.Type != 0 && ov.Type != bson.TypeNull && ov.Type != bson.TypeUndefined {
		if ov.Type != bson.TypeString {
			return nil, errf(mongoerr.RegexExprOptionsNotString, "%s needs 'options' to be of type string", n.name)
		}
		if opts != "" {
			return nil, errf(mongoerr.RegexExprOptionsTwice, "%s: found regex option(s) specified in both 'regex' and 'option' fields", n.name)
		}
		if opts == "" {
			opts = ov.StringValue()
		}
	}
	if strings.IndexByte(pattern, 0) >= 0 {
		return nil, errf(mongoerr.RegexExprEmbeddedNull, "%s: regular expression cannot contain an embedded null byte", n.name)
	}
	if strings.IndexByte(opts, 0) >= 0 {
		return nil, errf(mongoerr.RegexExprOptionsEmbeddedNull, "%s: regular expression options cannot contain an embedded null byte", n.name)
	}
	return compileRegex(n.name, pattern, opts)
}

// compileRegex compiles the pattern of the operator name with mongod's
// errors for a bad one (the translation is internal/pcre's, shared with
// the query language's $regex); a construct RE2 cannot run is
// NotImplemented.
func compileRegex(name, pattern, opts string) (*regexp.Regexp, error) {
	re, err := pcre.Compile(pattern, opts)
	if err == nil {
		return re, nil
	}
	var e *pcre.Error
	if !errors.As(err, &e) {
		return nil, err
	}
	switch e.Kind {
	case pcre.BadFlag:
		return nil, errf(mongoerr.RegexInvalidFlag, "%s invalid flag in regex options: %c", name, e.Flag)
	case pcre.NullByte:
		return nil, errf(mongoerr.RegexExprEmbeddedNull, "%s: regular expression cannot contain an embedded null byte", name)
	case pcre.Unsupported:
		return nil, errf(mongoerr.NotImplemented, "%s: %s", name, e.Msg)
	}
	return nil, errf(mongoerr.RegexExprInvalid, "Invalid Regex in %s: %s", name, e.Msg)
}

func (n *regexNode) eval(e *Env) (bson.Value, error) {
	in, err := n.input.eval(e)
	if err != nil {
		return missing, err
	}
	re := n.fixed
	if re == nil {
		rv, err := n.regex.eval(e)
		if err != nil {
			return missing, err
		}
		var ov bson.Value
		if n.options != nil {
			if ov, err = n.options.eval(e); err != nil {
				return missing, err
			}
		}
		if nullish(rv) {
			return n.noMatch(e, in)
		}
		if re, err = n.compile(rv, ov); err != nil {
			return missing, err
		}
	}
	if nullish(in) {
		return n.noMatch(e, in)
	}
	if in.Type != bson.TypeString {
		return missing, errf(mongoerr.RegexExprInputNotString, "%s needs 'input' to be of type string", n.name)
	}
	s := in.StringValue()
	switch n.mode {
	case regexMatchMode:
		if n.fixed != nil {
			return vBool(e.memoFind(re, s) != nil), nil
		}
		return vBool(re.MatchString(s)), nil
	case regexFindMode:
		var m []int
		if n.fixed != nil {
			m = e.memoFind(re, s)
		} else {
			m = re.FindStringSubmatchIndex(s)
		}
		if m == nil {
			return vNull, nil
		}
		return e.regexResult(s, m), nil
	}
	start := len(e.vs)
	if contextSensitive(re.String()) {
		// anchors and word boundaries need the whole text: let Go find
		// every match (its empty-match rule differs only after a match)
		for _, m := range re.FindAllStringSubmatchIndex(s, -1) {
			if err := e.step(); err != nil {
				e.vs = e.vs[:start]
				return missing, err
			}
			e.vs = append(e.vs, e.regexResult(s, m))
		}
	} else {
		// MongoDB's loop: search from pos; after an empty match move one
		// code point on; stop once pos reaches the end
		pos := 0
		for {
			m := re.FindStringSubmatchIndex(s[pos:])
			if m == nil {
				break
			}
			for i := range m {
				if m[i] >= 0 {
					m[i] += pos
				}
			}
			if err := e.step(); err != nil {
				e.vs = e.vs[:start]
				return missing, err
			}
			e.vs = append(e.vs, e.regexResult(s, m))
			if m[1] > m[0] {
				pos = m[1]
			} else if m[1] < len(s) {
				_, sz := utf8.DecodeRuneInString(s[m[1]:])
				pos = m[1] + sz
			} else {
				break
			}
			if pos >= len(s) {
				break
			}
		}
	}
	out := e.array(e.vs[start:])
	e.vs = e.vs[:start]
	return out, nil
}

// contextSensitive reports whether a translated pattern uses constructs
// whose meaning depends on the text before the search position.
func contextSensitive(p string) bool {
	return strings.ContainsAny(p, "^") || strings.Contains(p, `\b`) || strings.Contains(p, `\B`) || strings.Contains(p, `\A`)
}

func (n *regexNode) noMatch(e *Env, in bson.Value) (bson.Value, error) {
	if !nullish(in) && in.Type != bson.TypeString {
		return missing, errf(mongoerr.RegexExprInputNotString, "%s needs 'input' to be of type string", n.name)
	}
	switch n.mode {
	case regexMatchMode:
		return vFalse, nil
	case regexFindMode:
		return vNull, nil
	}
	return emptyArr, nil
}

var regexResultKeys = []string{"match", "idx", "captures"}

func (e *Env) regexResult(s string, m []int) bson.Value {
	start := len(e.vs)
	for g := 1; g < len(m)/2; g++ {
		if m[2*g] < 0 {
			e.vs = append(e.vs, vNull)
		} else {
			e.vs = append(e.vs, e.str(s[m[2*g]:m[2*g+1]]))
		}
	}
	caps := e.array(e.vs[start:])
	e.vs = e.vs[:start]
	fields := [3]bson.Value{e.str(s[m[0]:m[1]]), e.int32(int32(utf8.RuneCountInString(s[:m[0]]))), caps}
	return e.document(regexResultKeys, fields[:])
}

// Regular expressions are slow next to the rest of an expression, and
// the strings a pipeline matches repeat (URLs, referers, phrases). An Env
// therefore remembers, for a constant pattern, where it matched each of
// the last inputs it saw (up to regexMemoSize inputs of at most
// regexMemoMaxLen bytes; the memo starts over when full). An Env serves
// one goroutine, so the memo needs no lock.

// regexMemoSize is a variable for tests.
var regexMemoSize = 16384

const regexMemoMaxLen = 512

// regexMemo is one pattern's memo.
type regexMemo struct {
	re *regexp.Regexp
	m  map[string][]int
}

// memoFind is re.FindStringSubmatchIndex(s), remembered.
func (e *Env) memoFind(re *regexp.Regexp, s string) []int {
	if len(s) > regexMemoMaxLen {
		return re.FindStringSubmatchIndex(s)
	}
	var memo *regexMemo
	for i := range e.regexMemos {
		if e.regexMemos[i].re == re {
			memo = &e.regexMemos[i]
			break
		}
	}
	if memo == nil {
		e.regexMemos = append(e.regexMemos, regexMemo{re: re})
		memo = &e.regexMemos[len(e.regexMemos)-1]
	}
	if m, ok := memo.m[s]; ok {
		return m
	}
	m := re.FindStringSubmatchIndex(s)
	if memo.m == nil || len(memo.m) >= regexMemoSize {
		memo.m = make(map[string][]int, 64)
	}
	memo.m[strings.Clone(s)] = m
	return m
}
