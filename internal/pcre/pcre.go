// Package pcre is Cairn's one translator of MongoDB's regular expressions
// (PCRE syntax, options "imsxu") into Go's RE2, shared by the query
// language's $regex (internal/query: filters, listCollections filters,
// $jsonSchema patterns, $pull conditions) and the expression operators
// $regexMatch, $regexFind and $regexFindAll (internal/expr). Callers
// turn its errors (*Error, by Kind) into their commands' codes.
//
// # Translation
//
// The pattern is read once, left to right, keeping the flags in force
// per group (an inline (?m) or (?x) lasts to the end of its group, as in
// PCRE). What RE2 spells differently is rewritten:
//
//   - "$" outside a character class: without m, PCRE's "$" matches at
//     the end or before a final newline, RE2's only at the end, so it
//     becomes (?:\n?\z); with m it stays "$" (RE2's multi-line "$" is
//     PCRE's). \Z is always (?:\n?\z).
//   - x (extended): whitespace and #-comments outside classes are
//     dropped here, since RE2 has no x flag; (?x) inline likewise.
//   - \Q...\E is copied verbatim (RE2 has it too): nothing inside is
//     interpreted, so a "$" there stays literal.
//   - \h \H \v \V \R \N (PCRE's horizontal and vertical space classes,
//     newline sequence and non-newline), \e and \cX become the classes
//     and characters RE2 knows; (?<name> becomes (?P<name>; (?#...) comments are dropped.
//   - A "]" first in a class is literal; [:alpha:] classes inside a class
//     are kept whole.
//
// What RE2 cannot run is refused with Kind Unsupported, never matched
// differently: look-ahead and look-behind, back-references (\1..\9, \g,
// \k, (?P=name)), atomic groups, possessive quantifiers, recursion and
// subroutine calls, conditionals, \G, \K, \X, callouts and (*VERB)s.
package pcre

import (
	"fmt"
	"regexp"
	"strings"
)

// MaxPatternLength is the longest pattern MongoDB accepts.
const MaxPatternLength = 32761

// Kind classifies an Error.
type Kind int

const (
	// BadFlag: an option is not one of "imsxu" (Error.Flag).
	BadFlag Kind = iota + 1
	// NullByte: the pattern holds a NUL byte.
	NullByte
	// Invalid: the pattern is not a valid regular expression (too long,
	// or a syntax error).
	Invalid
	// Unsupported: the pattern uses a PCRE construct RE2 cannot run.
	Unsupported
)

// Error is a pattern Compile refuses.
type Error struct {
	Kind Kind
	// Flag is the offending option (BadFlag).
	Flag rune
	// Msg describes the problem: PCRE's wording where there is one
	// (Invalid), the construct (Unsupported).
	Msg string
}

func (e *Error) Error() string { return e.Msg }

// Options are the options of a pattern.
type Options struct {
	I, M, S, X bool
}

// ParseOptions reads MongoDB's regex options.
func ParseOptions(options string) (Options, error) {
	var o Options
	for _, c := range options {
		switch c {
		case 'i':
			o.I = true
		case 'm':
			o.M = true
		case 's':
			o.S = true
		case 'x':
			o.X = true
		case 'u':
			// UTF-8 matching: RE2 always matches UTF-8.
		default:
			return o, &Error{Kind: BadFlag, Flag: c, Msg: fmt.Sprintf("invalid flag in regex options: %c", c)}
		}
	}
	return o, nil
}

// Compile translates pattern with options and compiles it.
func Compile(pattern, options string) (*regexp.Regexp, error) {
	o, err := ParseOptions(options)
	if err != nil {
		return nil, err
	}
	tr, err := Translate(pattern, o)
	if err != nil {
		return nil, err
	}
	re, cerr := regexp.Compile(tr)
	if cerr != nil {
		return nil, &Error{Kind: Invalid, Msg: strings.TrimPrefix(cerr.Error(), "error parsing regexp: ")}
	}
	return re, nil
}

// Translate rewrites pattern into RE2 syntax (see the package comment);
// the i, m and s options become a leading inline flag group.
func Translate(pattern string, o Options) (string, error) {
	if len(pattern) > MaxPatternLength {
		return "", &Error{Kind: Invalid, Msg: "pattern string is longer than the limit set by the application"}
	}
	if strings.IndexByte(pattern, 0) >= 0 {
		return "", &Error{Kind: NullByte, Msg: "embedded null byte"}
	}
	t := translator{p: pattern, scopes: []scope{{m: o.M, x: o.X}}}
	var flags string
	if o.I {
		flags += "i"
	}
	if o.M {
		flags += "m"
	}
	if o.S {
		flags += "s"
	}
	if flags != "" {
		t.b.WriteString("(?" + flags + ")")
	}
	if err := t.run(); err != nil {
		return "", err
	}
	return t.b.String(), nil
}

func unsupported(what string) error {
	return &Error{Kind: Unsupported, Msg: fmt.Sprintf("Regular expression uses %s, which Cairn's regular expression engine (RE2) does not support", what)}
}

func invalid(format string, args ...any) error {
	return &Error{Kind: Invalid, Msg: fmt.Sprintf(format, args...)}
}

// scope is the flags in force in one group.
type scope struct{ m, x bool }

type translator struct {
	p      string
	i      int
	b      strings.Builder
	scopes []scope
}

func (t *translator) cur() *scope { return &t.scopes[len(t.scopes)-1] }

// PCRE's vertical and horizontal white space, as RE2 class contents.
const (
	vspace = `\n\x0b\f\r\x{85}\x{2028}\x{2029}`
	hspace = `\t \x{a0}\x{1680}\x{180e}\x{2000}-\x{200a}\x{202f}\x{205f}\x{3000}`
)

func (t *translator) run() error {
	p := t.p
	for t.i < len(p) {
		c := p[t.i]
		switch {
		case c == '\\':
			if err := t.escape(false); err != nil {
				return err
			}
		case c == '[':
			if err := t.class(); err != nil {
				return err
			}
		case c == '(':
			if err := t.group(); err != nil {
				return err
			}
		case c == ')':
			if len(t.scopes) > 1 {
				t.scopes = t.scopes[:len(t.scopes)-1]
			}
			t.b.WriteByte(c)
			t.i++
		case c == '$':
			if t.cur().m {
				t.b.WriteByte('$')
			} else {
				t.b.WriteString(`(?:\n?\z)`)
			}
			t.i++
		case (c == '*' || c == '+' || c == '?' || c == '}') && t.i+1 < len(p) && p[t.i+1] == '+':
			return unsupported("a possessive quantifier")
		case t.cur().x && (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'):
			t.i++
		case t.cur().x && c == '#':
			for t.i < len(p) && p[t.i] != '\n' {
				t.i++
			}
		default:
			t.b.WriteByte(c)
			t.i++
		}
	}
	return nil
}

// escape translates the escape at t.i (inClass: inside a character
// class).
func (t *translator) escape(inClass bool) error {
	p := t.p
	if t.i+1 >= len(p) {
		return invalid(`\ at end of pattern`)
	}
	n := p[t.i+1]
	switch {
	case n == 'Q':
		// Literal text to \E (or the end): copied as is, RE2 knows \Q.
		end := strings.Index(p[t.i+2:], `\E`)
		lit := p[t.i+2:]
		if end >= 0 {
			lit = p[t.i+2 : t.i+2+end]
			t.i += 2 + end + 2
		} else {
			t.i = len(p)
		}
		if inClass {
			// RE2 has no \Q in classes: escape each character.
			for _, r := range lit {
				t.b.WriteString(regexp.QuoteMeta(string(r)))
			}
		} else if lit != "" {
			t.b.WriteString(regexp.QuoteMeta(lit))
		}
		return nil
	case n == 'E':
		t.i += 2 // a stray \E is ignored, as in PCRE
		return nil
	case n == 'e':
		t.b.WriteString(`\x1b`)
	case n == 'c':
		if t.i+2 >= len(p) || p[t.i+2] >= 0x80 {
			return invalid(`\c at end of pattern`)
		}
		x := p[t.i+2]
		if x >= 'a' && x <= 'z' {
			x -= 'a' - 'A'
		}
		fmt.Fprintf(&t.b, `\x{%x}`, x^0x40)
		t.i += 3
		return nil
	case n == 'N' && !inClass:
		t.b.WriteString(`[^\n]`)
	case n == 'h' || n == 'H' || n == 'v' || n == 'V':
		set := hspace
		if n == 'v' || n == 'V' {
			set = vspace
		}
		switch {
		case inClass && (n == 'h' || n == 'v'):
			t.b.WriteString(set)
		case inClass:
			return unsupported(`\` + string(n) + " inside a character class")
		case n == 'h' || n == 'v':
			t.b.WriteString("[" + set + "]")
		default:
			t.b.WriteString("[^" + set + "]")
		}
	case inClass:
		t.b.WriteString(p[t.i : t.i+2])
	case n >= '1' && n <= '9', n == 'g', n == 'k':
		return unsupported("a back-reference")
	case n == 'G':
		return unsupported(`\G`)
	case n == 'K' || n == 'X':
		return unsupported(`\` + string(n))
	case n == 'R':
		t.b.WriteString(`(?:\r\n|[` + vspace + `])`)
	case n == 'Z':
		t.b.WriteString(`(?:\n?\z)`)
	default:
		t.b.WriteString(p[t.i : t.i+2])
	}
	t.i += 2
	return nil
}

// class copies the character class at t.i.
func (t *translator) class() error {
	p := t.p
	t.b.WriteByte('[')
	t.i++
	if t.i < len(p) && p[t.i] == '^' {
		t.b.WriteByte('^')
		t.i++
	}
	if t.i < len(p) && p[t.i] == ']' {
		t.b.WriteString(`\]`) // literal when first
		t.i++
	}
	for t.i < len(p) {
		c := p[t.i]
		switch {
		case c == ']':
			t.b.WriteByte(c)
			t.i++
			return nil
		case c == '\\':
			if err := t.escape(true); err != nil {
				return err
			}
		case c == '[' && t.i+1 < len(p) && p[t.i+1] == ':':
			end := strings.Index(p[t.i+2:], ":]")
			if end < 0 {
				t.b.WriteString(`\[`)
				t.i++
				continue
			}
			t.b.WriteString(p[t.i : t.i+2+end+2])
			t.i += 2 + end + 2
		case c == '[':
			t.b.WriteString(`\[`)
			t.i++
		default:
			t.b.WriteByte(c)
			t.i++
		}
	}
	return invalid("missing terminating ] for character class")
}

// group translates the group opening at t.i.
func (t *translator) group() error {
	p := t.p
	rest := p[t.i+1:]
	if strings.HasPrefix(rest, "*") {
		return unsupported("a (*VERB)")
	}
	if !strings.HasPrefix(rest, "?") {
		t.scopes = append(t.scopes, *t.cur())
		t.b.WriteByte('(')
		t.i++
		return nil
	}
	rest = rest[1:]
	switch {
	case strings.HasPrefix(rest, "#"):
		end := strings.IndexByte(rest, ')')
		if end < 0 {
			return invalid("missing ) after (?# comment")
		}
		t.i += 2 + end + 1
		return nil
	case strings.HasPrefix(rest, "="), strings.HasPrefix(rest, "!"),
		strings.HasPrefix(rest, "<="), strings.HasPrefix(rest, "<!"):
		return unsupported("a look-around assertion")
	case strings.HasPrefix(rest, ">"):
		return unsupported("an atomic group")
	case strings.HasPrefix(rest, "|"):
		return unsupported("a branch reset group")
	case strings.HasPrefix(rest, "("):
		return unsupported("a conditional group")
	case strings.HasPrefix(rest, "C"):
		return unsupported("a callout")
	case strings.HasPrefix(rest, "R"), strings.HasPrefix(rest, "&"), strings.HasPrefix(rest, "P>"),
		len(rest) > 0 && (rest[0] >= '0' && rest[0] <= '9' || (rest[0] == '+' || rest[0] == '-') && len(rest) > 1 && rest[1] >= '0' && rest[1] <= '9'):
		return unsupported("recursion")
	case strings.HasPrefix(rest, "P="):
		return unsupported("a back-reference")
	case strings.HasPrefix(rest, "P<"):
		t.scopes = append(t.scopes, *t.cur())
		t.b.WriteString("(?P<")
		t.i += 4
		return nil
	case strings.HasPrefix(rest, "<"), strings.HasPrefix(rest, "'"):
		// A named group, (?<name>...) or (?'name'...).
		close := byte('>')
		if rest[0] == '\'' {
			close = '\''
		}
		end := strings.IndexByte(rest[1:], close)
		if end < 0 {
			return invalid("syntax error in subpattern name (missing terminator)")
		}
		t.scopes = append(t.scopes, *t.cur())
		t.b.WriteString("(?P<" + rest[1:1+end] + ">")
		t.i += 3 + end + 1
		return nil
	case strings.HasPrefix(rest, ":"):
		t.scopes = append(t.scopes, *t.cur())
		t.b.WriteString("(?:")
		t.i += 3
		return nil
	}
	return t.flagGroup(rest)
}

// flagGroup translates (?flags) or (?flags:...) at t.i, rest being what
// follows "(?": i, m, s (and their negations) stay for RE2, which
// already scopes them; m and x are also tracked, for "$" and extended
// mode; x is applied here and left out.
func (t *translator) flagGroup(rest string) error {
	end := strings.IndexAny(rest, ":)")
	if end < 0 {
		return invalid("missing ) after (? flags")
	}
	st := *t.cur()
	var keep strings.Builder
	on := true
	for _, c := range rest[:end] {
		switch c {
		case '-':
			on = false
			keep.WriteRune(c)
		case 'i', 's':
			keep.WriteRune(c)
		case 'm':
			st.m = on
			keep.WriteRune(c)
		case 'x':
			st.x = on
		case 'U', 'J', 'n':
			return unsupported(fmt.Sprintf("the inline option (?%c)", c))
		default:
			return invalid("unrecognized character after (? or (?-")
		}
	}
	flags := strings.TrimSuffix(keep.String(), "-")
	if rest[end] == ')' {
		// (?flags): to the end of the enclosing group.
		*t.cur() = st
		if flags != "" {
			t.b.WriteString("(?" + flags + ")")
		}
		t.i += 2 + end + 1
		return nil
	}
	t.scopes = append(t.scopes, st)
	if flags != "" {
		t.b.WriteString("(?" + flags + ":")
	} else {
		t.b.WriteString("(?:")
	}
	t.i += 2 + end + 1
	return nil
}
