package query

import (
	"regexp"
	"strings"

	"github.com/cairndb/cairn/internal/mongoerr"
)

// maxRegexLength is the longest pattern MongoDB accepts.
const maxRegexLength = 32761

// newRegexMatcher compiles a MongoDB (PCRE) regular expression with
// options "imsxu" into Go's RE2 syntax.
//
// Translation: i, m and s become inline flags; x is applied by removing
// unescaped whitespace and #-comments; "$" without m matches at the end or
// before a final newline as in PCRE, and \Z likewise. Constructs RE2 cannot
// run (look-around, back-references, atomic groups, possessive
// quantifiers, recursion, conditionals, \G) are rejected with BadValue
// rather than matched wrongly.
func newRegexMatcher(pattern, options string) (*regexMatcher, error) {
	re, err := compileRegex(pattern, options)
	if err != nil {
		return nil, err
	}
	m := &regexMatcher{pattern: pattern, options: options, re: re}
	// A pattern that is one literal string (LiteralPrefix complete: no
	// metacharacters, no case folding) matches where the string occurs,
	// which strings.Contains finds several times faster than the regexp
	// engine.
	m.lit, m.isLit = re.LiteralPrefix()
	return m, nil
}

func compileRegex(pattern, options string) (*regexp.Regexp, error) {
	var flagI, flagM, flagS, flagX bool
	for _, c := range options {
		switch c {
		case 'i':
			flagI = true
		case 'm':
			flagM = true
		case 's':
			flagS = true
		case 'x':
			flagX = true
		case 'u':
		default:
			return nil, mongoerr.New(mongoerr.RegexInvalidFlag, "invalid flag in regex options: %c", c)
		}
	}
	if len(pattern) > maxRegexLength {
		return nil, mongoerr.New(mongoerr.RegexInvalid, "Regular expression is invalid: pattern string is longer than the limit set by the application")
	}
	if strings.IndexByte(pattern, 0) >= 0 {
		return nil, mongoerr.New(mongoerr.RegexInvalid, "Regular expression is invalid: embedded null byte")
	}
	translated, err := translatePCRE(pattern, flagX, flagM)
	if err != nil {
		return nil, err
	}
	var prefix strings.Builder
	if flagI || flagM || flagS {
		prefix.WriteString("(?")
		if flagI {
			prefix.WriteByte('i')
		}
		if flagM {
			prefix.WriteByte('m')
		}
		if flagS {
			prefix.WriteByte('s')
		}
		prefix.WriteByte(')')
	}
	re, cerr := regexp.Compile(prefix.String() + translated)
	if cerr != nil {
		return nil, mongoerr.New(mongoerr.RegexInvalid, "Regular expression is invalid: %s", strings.TrimPrefix(cerr.Error(), "error parsing regexp: "))
	}
	return re, nil
}

func unsupportedRegex(what string) error {
	return badValue("Regular expression uses %s, which Cairn's regular expression engine (RE2) does not support", what)
}

// translatePCRE rewrites the PCRE constructs whose meaning differs in RE2
// and rejects the ones RE2 lacks.
func translatePCRE(p string, extended, multiline bool) (string, error) {
	var b strings.Builder
	inClass := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\':
			if i+1 >= len(p) {
				return "", mongoerr.New(mongoerr.RegexInvalid, "Regular expression is invalid: \\ at end of pattern")
			}
			n := p[i+1]
			if !inClass {
				switch {
				case n >= '1' && n <= '9':
					return "", unsupportedRegex("a back-reference")
				case n == 'k' || n == 'g':
					return "", unsupportedRegex("a back-reference")
				case n == 'G':
					return "", unsupportedRegex("\\G")
				case n == 'Z':
					b.WriteString(`(?:\n?\z)`)
					i++
					continue
				case n == 'R' || n == 'K' || n == 'X':
					return "", unsupportedRegex("\\" + string(n))
				}
			}
			if n == 'h' {
				if inClass {
					b.WriteString(`\t \x{a0}`)
				} else {
					b.WriteString(`[\t \x{a0}]`)
				}
				i++
				continue
			}
			b.WriteByte(c)
			b.WriteByte(n)
			i++
		case inClass:
			if c == ']' {
				inClass = false
			}
			b.WriteByte(c)
		case c == '[':
			inClass = true
			b.WriteByte(c)
			// A ']' right after '[' or '[^' is literal.
			if i+1 < len(p) && p[i+1] == '^' {
				b.WriteByte('^')
				i++
			}
			if i+1 < len(p) && p[i+1] == ']' {
				b.WriteString(`\]`)
				i++
			}
		case c == '(' && i+1 < len(p) && p[i+1] == '?':
			rest := p[i+2:]
			switch {
			case strings.HasPrefix(rest, "="), strings.HasPrefix(rest, "!"),
				strings.HasPrefix(rest, "<="), strings.HasPrefix(rest, "<!"):
				return "", unsupportedRegex("a look-around assertion")
			case strings.HasPrefix(rest, ">"):
				return "", unsupportedRegex("an atomic group")
			case strings.HasPrefix(rest, "("):
				return "", unsupportedRegex("a conditional group")
			case strings.HasPrefix(rest, "R"), strings.HasPrefix(rest, "&"),
				len(rest) > 0 && (rest[0] >= '0' && rest[0] <= '9' || rest[0] == '+' || rest[0] == '-' && len(rest) > 1 && rest[1] >= '0' && rest[1] <= '9'):
				return "", unsupportedRegex("recursion")
			case strings.HasPrefix(rest, "#"):
				// Comment group.
				end := strings.IndexByte(rest, ')')
				if end < 0 {
					return "", mongoerr.New(mongoerr.RegexInvalid, "Regular expression is invalid: missing ) after (?# comment")
				}
				i += 2 + end
				continue
			case strings.HasPrefix(rest, "P<"):
				b.WriteString("(?P<")
				i += 3
				continue
			case strings.HasPrefix(rest, "P=") || strings.HasPrefix(rest, "P>"):
				return "", unsupportedRegex("a back-reference")
			}
			b.WriteString("(?")
			i++
		case (c == '*' || c == '+' || c == '?' || c == '}') && i+1 < len(p) && p[i+1] == '+':
			return "", unsupportedRegex("a possessive quantifier")
		case c == '$' && !multiline:
			b.WriteString(`(?:\n?\z)`)
		case extended && (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'):
			// Ignored in extended mode.
		case extended && c == '#':
			for i < len(p) && p[i] != '\n' {
				i++
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}
