package fts

import (
	"context"
	"fmt"
	"slices"
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
		return nil, mongoerr.New(mongoerr.TextLanguageOverrideNotString, "found language override field in document with non-string type")
	}
	l, ok := LookupLanguage(v.StringValue())
	if !ok {
		return nil, mongoerr.New(mongoerr.TextLanguageUnsupported, "language override unsupported: %s", v.StringValue())
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
	return s.score(doc, newScorer())
}

// ScoreContext is Score checking ctx every checkTokens terms: a document
// of millions of words takes seconds, which killOp, maxTimeMS and
// shutdown should not wait for. It returns ctx's error, wrapped, when ctx
// ends first.
func (s *Spec) ScoreContext(ctx context.Context, doc bson.Doc) ([]TermScore, error) {
	sc := newScorer()
	sc.ctx = ctx
	return s.score(doc, sc)
}

// checkTokens is how many terms a scorer reads between two checks of its
// context.
const checkTokens = 4096

func (s *Spec) score(doc bson.Doc, sc *scorer) ([]TermScore, error) {
	if err := s.Texts(doc, sc.addString); err != nil {
		return nil, err
	}
	if sc.err != nil {
		return nil, fmt.Errorf("scoring text terms: %w", sc.err)
	}
	acc := make([]TermScore, len(sc.scores))
	for i, t := range sc.terms.terms {
		acc[i] = TermScore{Term: t, Score: sc.scores[i]}
	}
	slices.SortFunc(acc, func(a, b TermScore) int { return strings.Compare(a.Term, b.Term) })
	for _, ts := range acc {
		if ts.Score > maxScore {
			return nil, mongoerr.New(mongoerr.BadValue, "text score of term %q is more than %g", ts.Term, float64(maxScore))
		}
	}
	return acc, nil
}

// linearTerms is the length up to which a scorer's term lists are
// searched linearly.
const linearTerms = 32

// scorer accumulates one document's term scores. It looks terms up in two
// lists, the current string's and the document's: linearly while a list
// is short (most documents have a few dozen distinct terms, where
// comparing strings beats hashing them), through a map built once the
// list outgrows linearMax. So a document with n distinct terms costs O(n)
// lookups, not the O(n²) of linear searches alone (80,000 distinct words
// took a minute).
type scorer struct {
	terms  termIndex // the document's terms
	scores []float64 // by position in terms
	words  termIndex // the current string's terms
	freqs  []termFreq
	// linearMax is the longest list searched linearly.
	linearMax int
	// ctx, if set, is checked every checkTokens terms; err is its error
	// once it has ended (the remaining strings are then skipped).
	ctx    context.Context
	err    error
	tokens int
	// probes counts term comparisons and map operations (tests assert
	// that it grows linearly with the document's terms).
	probes int
	// small backs the lists of a small document, so that scoring one
	// allocates little more than its result.
	small struct {
		terms, words [smallTerms]string
		scores       [smallTerms]float64
		freqs        [smallTerms]termFreq
	}
}

// smallTerms is the capacity of a scorer's initial lists.
const smallTerms = 16

func newScorer() *scorer {
	sc := &scorer{linearMax: linearTerms}
	sc.terms.terms = sc.small.terms[:0]
	sc.words.terms = sc.small.words[:0]
	sc.scores = sc.small.scores[:0]
	sc.freqs = sc.small.freqs[:0]
	return sc
}

// termFreq is a term's occurrences in one string.
type termFreq struct {
	count, exp, freq float64
}

// termIndex finds terms in a list that grows at its end.
type termIndex struct {
	terms []string
	at    map[string]int // nil while the list is short
}

// index returns the position of term in the list, appending it when it is
// absent (added is then true: the caller appends its item).
func (ix *termIndex) index(sc *scorer, term string) (i int, added bool) {
	if ix.at != nil {
		sc.probes++
		if i, ok := ix.at[term]; ok {
			return i, false
		}
		ix.at[term] = len(ix.terms)
		ix.terms = append(ix.terms, term)
		return len(ix.terms) - 1, true
	}
	for i, t := range ix.terms {
		sc.probes++
		if t == term {
			return i, false
		}
	}
	ix.terms = append(ix.terms, term)
	if len(ix.terms) > sc.linearMax {
		ix.at = make(map[string]int, 2*len(ix.terms))
		for i, t := range ix.terms {
			ix.at[t] = i
		}
		sc.probes += len(ix.terms)
	}
	return len(ix.terms) - 1, true
}

// reset empties the list. A map is dropped rather than cleared: clearing
// costs its size, which a long string followed by many short ones would
// pay once per short string.
func (ix *termIndex) reset() {
	ix.terms = ix.terms[:0]
	ix.at = nil
}

// addString adds the scores of one string's terms.
func (sc *scorer) addString(t Text) {
	if sc.err != nil {
		return
	}
	sc.words.reset()
	sc.freqs = sc.freqs[:0]
	n := 0
	t.Lang.tokens(t.Value, Options{}, func(term string) bool {
		if sc.tokens++; sc.ctx != nil && sc.tokens%checkTokens == 0 {
			if sc.err = sc.ctx.Err(); sc.err != nil {
				return false
			}
		}
		i, added := sc.words.index(sc, term)
		if added {
			sc.freqs = append(sc.freqs, termFreq{})
		}
		d := &sc.freqs[i]
		if d.exp == 0 {
			d.exp = 1
		} else {
			d.exp *= 2
		}
		d.count++
		d.freq += 1 / d.exp
		n++
		return true
	})
	if sc.err != nil {
		return
	}
	for i, term := range sc.words.terms {
		d := sc.freqs[i]
		coeff := 0.5*d.count/float64(n) + 0.5
		adjust := 1.0
		if len(t.Value) == len(term) && strings.EqualFold(t.Value, term) {
			adjust += 0.1
		}
		j, added := sc.terms.index(sc, term)
		if added {
			sc.scores = append(sc.scores, 0)
		}
		sc.scores[j] += t.Weight * d.freq * coeff * adjust
	}
}

func (s *Spec) String() string {
	return fmt.Sprintf("fts{weights: %v, wildcard: %v, language: %s, override: %s}", s.Weights, s.Wildcard, s.DefaultLanguage.Name, s.LanguageOverride)
}
