package query

import (
	"errors"
	"regexp"

	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/pcre"
)

// newRegexMatcher compiles a MongoDB (PCRE) regular expression with
// options "imsxu" into Go's RE2 (internal/pcre translates; constructs
// RE2 cannot run are refused rather than matched wrongly).
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

// compileRegex compiles a $regex (filters, listCollections filters,
// $jsonSchema patterns) with mongod's errors for a bad one.
func compileRegex(pattern, options string) (*regexp.Regexp, error) {
	re, err := pcre.Compile(pattern, options)
	if err != nil {
		return nil, regexError(err)
	}
	return re, nil
}

// regexError is mongod's error for a $regex the translator refuses:
// 51108 for an option, BadValue for a NUL byte in the pattern, 51091
// for an invalid pattern; a construct RE2 cannot run is NotImplemented
// (Cairn's own, as for the expression operators).
func regexError(err error) error {
	var e *pcre.Error
	if !errors.As(err, &e) {
		return err
	}
	switch e.Kind {
	case pcre.BadFlag:
		return mongoerr.New(mongoerr.RegexInvalidFlag, "invalid flag in regex options: %c", e.Flag)
	case pcre.NullByte:
		return badValue("Regular expression cannot contain an embedded null byte")
	case pcre.Unsupported:
		return mongoerr.New(mongoerr.NotImplemented, "%s", e.Msg)
	}
	return mongoerr.New(mongoerr.RegexInvalid, "Regular expression is invalid: %s", e.Msg)
}
