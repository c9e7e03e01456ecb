package fts

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

// Options select how Tokens treats words.
type Options struct {
	// KeepStopWords keeps stop words (MongoDB drops them everywhere text
	// search tokenises; the option exists for tests).
	KeepStopWords bool
	// CaseSensitive keeps the words' case ($caseSensitive).
	CaseSensitive bool
	// DiacriticSensitive keeps diacritics ($diacriticSensitive).
	DiacriticSensitive bool
}

// isDelimiter reports whether r separates words: anything but letters,
// digits and combining marks; English keeps apostrophes inside words.
func isDelimiter(r rune, english bool) bool {
	if r < utf8.RuneSelf {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			return false
		case r == '\'':
			return !english
		}
		return true
	}
	return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.Is(unicode.M, r)
}

// Tokens calls fn with each term of text in language l: every word,
// lowercased (unless case-sensitive), stop words dropped, stemmed and
// stripped of diacritics (unless diacritic-sensitive).
func (l *Language) Tokens(text string, o Options, fn func(term string)) {
	l.tokens(text, o, func(term string) bool { fn(term); return true })
}

// tokens is Tokens stopping at the first term for which fn returns false.
func (l *Language) tokens(text string, o Options, fn func(term string) bool) {
	i := 0
	for i < len(text) {
		// Skip delimiters.
		for i < len(text) {
			r, n := utf8.DecodeRuneInString(text[i:])
			if !isDelimiter(r, l.english) {
				break
			}
			i += n
		}
		start := i
		for i < len(text) {
			r, n := utf8.DecodeRuneInString(text[i:])
			if isDelimiter(r, l.english) {
				break
			}
			i += n
		}
		if start == i {
			break
		}
		word := text[start:i]
		lower := toLower(word)
		if !o.KeepStopWords && l.IsStopWord(lower) {
			continue
		}
		term := l.Stem(lower)
		if o.CaseSensitive {
			term = restoreCase(word, term)
		}
		if !o.DiacriticSensitive {
			term = StripDiacritics(term)
		}
		if !fn(term) {
			return
		}
	}
}

// toLower lowercases s, without allocating when it already is.
func toLower(s string) string {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf || (c >= 'A' && c <= 'Z') {
			return strings.ToLower(s)
		}
	}
	return s
}

// restoreCase gives the stem of a lowercased word the case the word had:
// the stem is a prefix of the lowercased word in nearly every case; when
// it is not, the stem stays lowercase.
func restoreCase(word, stem string) string {
	if len(stem) <= len(word) && strings.EqualFold(word[:len(stem)], stem) && utf8.ValidString(word[:len(stem)]) {
		return word[:len(stem)]
	}
	return stem
}

// StripDiacritics removes combining marks after canonical decomposition
// ("café" → "cafe").
func StripDiacritics(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	t := transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC)
	out, _, err := transform.String(t, s)
	if err != nil {
		return s
	}
	return out
}

// Fold prepares a string for phrase matching: lowercased unless
// case-sensitive, diacritics removed unless diacritic-sensitive.
func Fold(s string, caseSensitive, diacriticSensitive bool) string {
	if !caseSensitive {
		s = strings.ToLower(s)
	}
	if !diacriticSensitive {
		s = StripDiacritics(s)
	}
	return s
}
