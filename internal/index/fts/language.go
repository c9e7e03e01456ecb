// Package fts is Cairn's full-text search: the languages a text index
// understands (stop words and Snowball stemming), tokenising, the term
// scores MongoDB's text indexes store, parsing a $text query's search
// string, and matching a document against a parsed query (phrases,
// negated terms, case and diacritic sensitivity).
//
// It follows MongoDB's text index version 3: words are runs of letters,
// digits and combining marks (and, in English, apostrophes); they are
// lowercased, stop words are dropped, the rest are stemmed with the
// language's Snowball stemmer (github.com/kljensen/snowball) and stripped
// of diacritics.
package fts

import (
	"sort"
	"strings"
	"sync"

	"github.com/kljensen/snowball/english"
	"github.com/kljensen/snowball/french"
	"github.com/kljensen/snowball/hungarian"
	"github.com/kljensen/snowball/norwegian"
	"github.com/kljensen/snowball/russian"
	"github.com/kljensen/snowball/spanish"
	"github.com/kljensen/snowball/swedish"
)

// Language is a text search language: its stop words and stemmer.
type Language struct {
	// Name is the language's canonical name ("english", "none").
	Name    string
	stem    func(string, bool) string
	isStop  func(string) bool
	english bool
	// stems caches stem results: index builds stem the same words
	// millions of times.
	stems sync.Map
	// cached counts entries in stems (bounded by maxCachedStems).
	cachedMu sync.Mutex
	cached   int
}

// maxCachedStems bounds each language's stem cache.
const maxCachedStems = 1 << 17

var languages = map[string]*Language{}

func register(l *Language, names ...string) {
	for _, n := range names {
		languages[n] = l
	}
}

func init() {
	register(&Language{Name: "none"}, "none")
	register(&Language{Name: "english", stem: english.Stem, isStop: isEnglishStopWord, english: true}, "english", "en")
	register(&Language{Name: "french", stem: french.Stem, isStop: french.IsStopWord}, "french", "fr")
	register(&Language{Name: "spanish", stem: spanish.Stem, isStop: spanish.IsStopWord}, "spanish", "es")
	register(&Language{Name: "russian", stem: russian.Stem, isStop: russian.IsStopWord}, "russian", "ru")
	register(&Language{Name: "swedish", stem: swedish.Stem, isStop: swedish.IsStopWord}, "swedish", "sv")
	register(&Language{Name: "norwegian", stem: norwegian.Stem, isStop: norwegian.IsStopWord}, "norwegian", "nb")
	register(&Language{Name: "hungarian", stem: hungarian.Stem, isStop: hungarian.IsStopWord}, "hungarian", "hu")
}

// LookupLanguage returns the language called name (a name or a
// two-letter code, case-insensitively as MongoDB accepts them).
func LookupLanguage(name string) (*Language, bool) {
	l, ok := languages[strings.ToLower(name)]
	return l, ok
}

// Languages lists the supported language names.
func Languages() []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range languages {
		if !seen[l.Name] {
			seen[l.Name] = true
			out = append(out, l.Name)
		}
	}
	sort.Strings(out)
	return out
}

// IsStopWord reports whether the lowercased word is one of the language's
// stop words.
func (l *Language) IsStopWord(word string) bool {
	return l.isStop != nil && l.isStop(word)
}

// Stem returns the Snowball stem of the lowercased word.
func (l *Language) Stem(word string) string {
	if l.stem == nil {
		return word
	}
	if s, ok := l.stems.Load(word); ok {
		return s.(string)
	}
	s := l.stem(word, true)
	l.cachedMu.Lock()
	if l.cached < maxCachedStems {
		l.cached++
		l.stems.Store(strings.Clone(word), s)
	}
	l.cachedMu.Unlock()
	return s
}

// englishStopWords is MongoDB's English stop word list.
var englishStopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about above after again against all am an and any are aren't as at
be because been before being below between both but by can't cannot could couldn't did didn't do does
doesn't doing don't down during each few for from further had hadn't has hasn't have haven't having he
he'd he'll he's her here here's hers herself him himself his how how's i i'd i'll i'm i've if in into is
isn't it it's its itself let's me more most mustn't my myself no nor not of off on once only or other
ought our ours ourselves out over own same shan't she she'd she'll she's should shouldn't so some such
than that that's the their theirs them themselves then there there's these they they'd they'll they're
they've this those through to too under until up very was wasn't we we'd we'll we're we've were weren't
what what's when when's where where's which while who who's whom why why's with won't would wouldn't
you you'd you'll you're you've your yours yourself yourselves`) {
		m[w] = true
	}
	return m
}()

func isEnglishStopWord(w string) bool { return englishStopWords[w] }
