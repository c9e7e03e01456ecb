// Package pcretest holds the table of patterns that internal/pcre and
// its users (internal/query's $regex, internal/expr's $regexMatch) are
// tested against, so that they are checked to agree.
package pcretest

import (
	"strings"

	"github.com/cairndb/cairn/internal/pcre"
)

// Case is a pattern with its options, what it must match and not match,
// or the kind of error it is refused with.
type Case struct {
	Pattern, Options string
	Match, NoMatch   []string
	Kind             pcre.Kind // refused with this kind (Match/NoMatch unused)
}

// Cases covers the constructs: anchors ("$" at the end and before a
// final newline), options i m s x u and inline flags, \Q..\E, classes,
// PCRE's escapes, and what is refused (look-around, back-references,
// possessive quantifiers, atomic groups, recursion, ...).
var Cases = []Case{
	// Anchors; "$" at the end and before a final newline only, unless m.
	{Pattern: "^ab$", Match: []string{"ab", "ab\n"}, NoMatch: []string{"ab\n\n", "xab", "ab\nc"}},
	{Pattern: "ab$", Options: "m", Match: []string{"ab\nc", "ab"}, NoMatch: []string{"abc"}},
	{Pattern: "^c", Options: "m", Match: []string{"ab\nc"}, NoMatch: []string{"abc"}},
	{Pattern: "^c", NoMatch: []string{"ab\nc"}},
	{Pattern: `ab\Z`, Match: []string{"ab", "ab\n"}, NoMatch: []string{"ab\n\n"}},
	{Pattern: `ab\z`, Match: []string{"ab"}, NoMatch: []string{"ab\n"}},
	{Pattern: `\Aab`, Options: "m", Match: []string{"ab"}, NoMatch: []string{"x\nab"}},
	{Pattern: `a[$]b`, Match: []string{"a$b"}, NoMatch: []string{"ab"}},
	{Pattern: `a\$`, Match: []string{"a$"}, NoMatch: []string{"a"}},
	{Pattern: `(?m)b$`, Match: []string{"b\nc"}},
	{Pattern: `(?m:b$)|z`, Match: []string{"b\nc"}},
	{Pattern: `(?:(?m)b$)\nc$`, Match: []string{"b\nc\n"}, NoMatch: []string{"b\nc\nd"}},
	// Options i s x u.
	{Pattern: "ABC", Options: "i", Match: []string{"abc", "xAbC"}, NoMatch: []string{"ab"}},
	{Pattern: "a.b", Options: "s", Match: []string{"a\nb"}},
	{Pattern: "a.b", NoMatch: []string{"a\nb"}},
	{Pattern: "a b # comment\n c", Options: "x", Match: []string{"abc"}, NoMatch: []string{"a b c"}},
	{Pattern: `a\ b[ ]c`, Options: "x", Match: []string{"a b c"}},
	{Pattern: "(?x) a b", Match: []string{"ab"}},
	{Pattern: "(?i)é", Options: "u", Match: []string{"É"}},
	{Pattern: "a(?i:b)c", Match: []string{"aBc"}, NoMatch: []string{"aBC"}},
	{Pattern: "a", Options: "q", Kind: pcre.BadFlag},
	// \Q..\E: literal, whatever it holds.
	{Pattern: `\Qa.$(?=\E`, Match: []string{"xa.$(?="}, NoMatch: []string{"ab$(?="}},
	{Pattern: `\Qa.b`, Match: []string{"a.b"}, NoMatch: []string{"axb"}},
	{Pattern: `[\Q]$\E]`, Match: []string{"]", "$"}, NoMatch: []string{"a"}},
	// Classes.
	{Pattern: `[]a]`, Match: []string{"]"}, NoMatch: []string{"b"}},
	{Pattern: `[^]a]`, Match: []string{"b"}, NoMatch: []string{"]"}},
	{Pattern: `[[:digit:]$]+x`, Match: []string{"1$x"}},
	{Pattern: `a\hb`, Match: []string{"a b", "a\u00a0b"}, NoMatch: []string{"a\nb"}},
	{Pattern: `a\vb`, Match: []string{"a\nb"}, NoMatch: []string{"a b"}},
	{Pattern: `a\Rb`, Match: []string{"a\r\nb", "a\nb"}},
	{Pattern: `a\Nb`, Match: []string{"axb"}, NoMatch: []string{"a\nb"}},
	{Pattern: `\cA`, Match: []string{"\x01"}},
	{Pattern: `(?<year>\d{4})-(?'m'\d\d)`, Match: []string{"2024-05"}},
	{Pattern: `a(?#comment)b`, Match: []string{"ab"}},
	// Refused: what RE2 cannot run.
	{Pattern: "a(?=b)", Kind: pcre.Unsupported},
	{Pattern: "a(?!b)", Kind: pcre.Unsupported},
	{Pattern: "(?<=a)b", Kind: pcre.Unsupported},
	{Pattern: "(?<!a)b", Kind: pcre.Unsupported},
	{Pattern: `(a)\1`, Kind: pcre.Unsupported},
	{Pattern: `(?<n>a)\k<n>`, Kind: pcre.Unsupported},
	{Pattern: `(a)\g1`, Kind: pcre.Unsupported},
	{Pattern: `(?P<n>a)(?P=n)`, Kind: pcre.Unsupported},
	{Pattern: "a++", Kind: pcre.Unsupported},
	{Pattern: "a*+", Kind: pcre.Unsupported},
	{Pattern: "a?+", Kind: pcre.Unsupported},
	{Pattern: "a{2}+", Kind: pcre.Unsupported},
	{Pattern: "(?>a)", Kind: pcre.Unsupported},
	{Pattern: "(a(?R))", Kind: pcre.Unsupported},
	{Pattern: "(a)(?1)", Kind: pcre.Unsupported},
	{Pattern: "(?(1)a|b)", Kind: pcre.Unsupported},
	{Pattern: `\Ga`, Kind: pcre.Unsupported},
	{Pattern: `a\Kb`, Kind: pcre.Unsupported},
	{Pattern: "(*UTF8)a", Kind: pcre.Unsupported},
	// Not patterns.
	{Pattern: "[a", Kind: pcre.Invalid},
	{Pattern: "a)", Kind: pcre.Invalid},
	{Pattern: `a\`, Kind: pcre.Invalid},
	{Pattern: strings.Repeat("a", pcre.MaxPatternLength+1), Kind: pcre.Invalid},
	{Pattern: "a\x00b", Kind: pcre.NullByte},
	// Not refused: lazy quantifiers, escaped quantifier characters.
	{Pattern: `a+?b`, Match: []string{"aab"}},
	{Pattern: `\++`, Match: []string{"++"}},
	{Pattern: `[+]+`, Match: []string{"+"}},
}
