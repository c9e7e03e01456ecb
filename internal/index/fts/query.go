package fts

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cairndb/cairn/bson"
)

// Query is a parsed $text search.
type Query struct {
	Search             string
	Lang               *Language
	CaseSensitive      bool
	DiacriticSensitive bool
	// Terms are the index terms to look up (positive words, in phrases
	// too), sorted.
	Terms []string
	// Positive and Negated are the terms the matcher checks (with the
	// query's case and diacritic sensitivity).
	Positive, Negated map[string]bool
	Phrases           []string
	NegatedPhrases    []string
}

// ParseQuery parses a $search string as MongoDB does: words separated by
// whitespace, "quoted phrases", a '-' right before a word or phrase (not
// inside a phrase, and only after whitespace or at the start) negates it
// up to the next whitespace.
func ParseQuery(search string, lang *Language, caseSensitive, diacriticSensitive bool) *Query {
	q := &Query{Search: search, Lang: lang, CaseSensitive: caseSensitive, DiacriticSensitive: diacriticSensitive,
		Positive: map[string]bool{}, Negated: map[string]bool{}}
	var pos, neg strings.Builder
	inNegation, inPhrase := false, false
	quote := 0
	prevSpace := true
	i := 0
	for i < len(search) {
		r, n := utf8.DecodeRuneInString(search[i:])
		switch {
		case unicode.IsSpace(r):
			prevSpace = true
			i += n
			continue
		case r == '-':
			if !inPhrase && prevSpace {
				inNegation = true
			}
		case r == '"':
			if inPhrase {
				phrase := search[quote+1 : i]
				if inNegation {
					q.NegatedPhrases = append(q.NegatedPhrases, phrase)
				} else {
					q.Phrases = append(q.Phrases, phrase)
				}
				inPhrase = false
			} else {
				inPhrase = true
				if inNegation && prevSpace {
					inNegation = false
				}
				quote = i
			}
		default:
			start := i
			for i < len(search) {
				r, n := utf8.DecodeRuneInString(search[i:])
				if unicode.IsSpace(r) || r == '-' || r == '"' {
					break
				}
				i += n
			}
			word := search[start:i]
			if !(inPhrase && inNegation) {
				if inNegation && prevSpace {
					inNegation = false
				}
				if inNegation {
					neg.WriteString(word)
					neg.WriteByte(' ')
				} else {
					pos.WriteString(word)
					pos.WriteByte(' ')
				}
			}
			prevSpace = false
			continue
		}
		prevSpace = false
		i += n
	}
	bounds := map[string]bool{}
	sensitive := Options{CaseSensitive: caseSensitive, DiacriticSensitive: diacriticSensitive}
	lang.Tokens(pos.String(), Options{}, func(t string) { bounds[t] = true })
	lang.Tokens(pos.String(), sensitive, func(t string) { q.Positive[t] = true })
	lang.Tokens(neg.String(), sensitive, func(t string) { q.Negated[t] = true })
	for t := range bounds {
		q.Terms = append(q.Terms, t)
	}
	sort.Strings(q.Terms)
	return q
}

// AppendParsed writes explain's parsedTextQuery.
func (q *Query) AppendParsed(b *bson.Builder) {
	arr := func(name string, vals []string) {
		b.StartArray(name)
		for i, v := range vals {
			b.AppendString(itoa(i), v)
		}
		b.End()
	}
	sortedKeys := func(m map[string]bool) []string {
		var out []string
		for k := range m {
			out = append(out, k)
		}
		sort.Strings(out)
		return out
	}
	arr("terms", sortedKeys(q.Positive))
	arr("negatedTerms", sortedKeys(q.Negated))
	arr("phrases", q.Phrases)
	arr("negatedPhrases", q.NegatedPhrases)
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

// Matches reports whether doc satisfies the query beyond what the index
// lookup established (MongoDB's TEXT_MATCH): with case or diacritic
// sensitivity, one positive term present as written; no negated term;
// every phrase present and no negated phrase.
func (s *Spec) Matches(q *Query, doc bson.Doc) (bool, error) {
	var texts []Text
	if err := s.Texts(doc, func(t Text) { texts = append(texts, t) }); err != nil {
		return false, err
	}
	o := Options{CaseSensitive: q.CaseSensitive, DiacriticSensitive: q.DiacriticSensitive}
	hasTerm := func(set map[string]bool) bool {
		found := false
		for _, t := range texts {
			t.Lang.Tokens(t.Value, o, func(term string) { found = found || set[term] })
			if found {
				return true
			}
		}
		return false
	}
	if (q.CaseSensitive || q.DiacriticSensitive) && !hasTerm(q.Positive) {
		return false, nil
	}
	if len(q.Negated) > 0 && hasTerm(q.Negated) {
		return false, nil
	}
	phrase := func(p string) bool {
		p = Fold(p, q.CaseSensitive, q.DiacriticSensitive)
		for _, t := range texts {
			if strings.Contains(Fold(t.Value, q.CaseSensitive, q.DiacriticSensitive), p) {
				return true
			}
		}
		return false
	}
	for _, p := range q.Phrases {
		if !phrase(p) {
			return false, nil
		}
	}
	for _, p := range q.NegatedPhrases {
		if phrase(p) {
			return false, nil
		}
	}
	return true, nil
}
