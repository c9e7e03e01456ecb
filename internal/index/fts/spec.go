package fts

import (
	"fmt"
	"sort"
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// Wildcard is the weights key that indexes every string field.
const Wildcard = "$**"

// Spec is what a text index indexes: weighted fields (or every string
// field), the default language and the field that overrides it.
type Spec struct {
	// Weights maps dotted field paths to their weights.
	Weights map[string]float64
	// Wildcard indexes every string field (weight 1 unless listed).
	Wildcard         bool
	DefaultLanguage  *Language
	LanguageOverride string
	// prefixes holds every proper prefix of a weighted path, to know
	// which sub-documents to descend into.
	prefixes map[string]bool
}

// NewSpec builds a Spec.
func NewSpec(weights map[string]float64, wildcard bool, lang *Language, override string) *Spec {
	s := &Spec{Weights: weights, Wildcard: wildcard, DefaultLanguage: lang, LanguageOverride: override, prefixes: map[string]bool{}}
	for p := range weights {
		for i := 0; i < len(p); i++ {
			if p[i] == '.' {
				s.prefixes[p[:i]] = true
			}
		}
	}
	return s
}

// Text is one indexed string of a document: its text, its field's weight
// and the language that applies to it.
type Text struct {
	Value  string
	Weight float64
	Lang   *Language
}

// Texts calls fn with every string of doc the index covers, in document
// order. A language override field holding something other than a string
// is error 17261, an unknown language 17262 (as MongoDB).
func (s *Spec) Texts(doc bson.Doc, fn func(Text)) error {
	return s.walk(doc, "", s.DefaultLanguage, fn)
}

func (s *Spec) docLanguage(doc bson.Doc, lang *Language) (*Language, error) {
	v, ok := doc.Lookup(s.LanguageOverride)
	if !ok {
		return lang, nil
	}
	if v.Type != bson.TypeString {
		return nil, mongoerr.New(17261, "found language override field in document with non-string type")
	}
	l, ok := LookupLanguage(v.StringValue())
	if !ok {
		return nil, mongoerr.New(17262, "language override unsupported: %s", v.StringValue())
	}
	return l, nil
}

func (s *Spec) walk(doc bson.Doc, prefix string, lang *Language, fn func(Text)) error {
	lang, err := s.docLanguage(doc, lang)
	if err != nil {
		return err
	}
	it := doc.Iter()
	for it.Next() {
		e := it.Element()
		if prefix == "" && e.Key == s.LanguageOverride {
			continue
		}
		path := e.Key
		if prefix != "" {
			path = prefix + "." + e.Key
		}
		if err := s.value(e.Value, path, lang, fn); err != nil {
			return err
		}
	}
	return nil
}

func (s *Spec) value(v bson.Value, path string, lang *Language, fn func(Text)) error {
	w, weighted := s.Weights[path]
	switch v.Type {
	case bson.TypeString:
		if weighted || s.Wildcard {
			if !weighted {
				w = 1
			}
			fn(Text{Value: v.StringValue(), Weight: w, Lang: lang})
		}
	case bson.TypeArray:
		if !weighted && !s.Wildcard && !s.prefixes[path] {
			return nil
		}
		it := v.Document().Iter()
		for it.Next() {
			if err := s.value(it.Element().Value, path, lang, fn); err != nil {
				return err
			}
		}
	case bson.TypeDocument:
		if s.Wildcard || s.prefixes[path] {
			return s.walk(v.Document(), path, lang, fn)
		}
	}
	return nil
}

// maxScore is MongoDB's bound on one term's score in a document.
const maxScore = 1e9

// TermScore is one term of a document and its score.
type TermScore struct {
	Term  string
	Score float64
}

// Score returns the score of every term of doc, sorted by term, as
// MongoDB's text index version 2+ computes it: within each string, a
// term's frequency counts its first occurrence 1, the second 1/2, the
// third 1/4 and so on; it is scaled by (0.5 × occurrences / terms in the
// string + 0.5), by the field's weight and by 1.1 when the term is the
// whole string; scores add up across strings.
func (s *Spec) Score(doc bson.Doc) ([]TermScore, error) {
	var acc []TermScore
	var freqs []termFreq
	err := s.Texts(doc, func(t Text) { acc, freqs = scoreString(acc, freqs[:0], t) })
	if err != nil {
		return nil, err
	}
	sort.Slice(acc, func(i, j int) bool { return acc[i].Term < acc[j].Term })
	for _, ts := range acc {
		if ts.Score > maxScore {
			return nil, mongoerr.New(mongoerr.BadValue, "text score of term %q is more than %g", ts.Term, float64(maxScore))
		}
	}
	return acc, nil
}

type termFreq struct {
	term             string
	count, exp, freq float64
}

// scoreString adds the scores of one string's terms to acc. Documents
// have a few dozen distinct terms: linear searches beat maps here.
func scoreString(acc []TermScore, freqs []termFreq, t Text) ([]TermScore, []termFreq) {
	n := 0
	t.Lang.Tokens(t.Value, Options{}, func(term string) {
		i := 0
		for i < len(freqs) && freqs[i].term != term {
			i++
		}
		if i == len(freqs) {
			freqs = append(freqs, termFreq{term: term})
		}
		d := &freqs[i]
		if d.exp == 0 {
			d.exp = 1
		} else {
			d.exp *= 2
		}
		d.count++
		d.freq += 1 / d.exp
		n++
	})
	for _, d := range freqs {
		coeff := 0.5*d.count/float64(n) + 0.5
		adjust := 1.0
		if len(t.Value) == len(d.term) && strings.EqualFold(t.Value, d.term) {
			adjust += 0.1
		}
		sc := t.Weight * d.freq * coeff * adjust
		j := 0
		for j < len(acc) && acc[j].Term != d.term {
			j++
		}
		if j == len(acc) {
			acc = append(acc, TermScore{Term: d.term})
		}
		acc[j].Score += sc
	}
	return acc, freqs
}

func (s *Spec) String() string {
	return fmt.Sprintf("fts{weights: %v, wildcard: %v, language: %s, override: %s}", s.Weights, s.Wildcard, s.DefaultLanguage.Name, s.LanguageOverride)
}
