package fts

import (
	"context"
	"errors"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/cairndb/cairn/bson"
)

// word returns the i-th of a family of distinct words that the English
// stemmer leaves alone and that are no stop words: "q" and i's base-20
// digits spelt with consonants.
func word(i int) string {
	const letters = "bcdfghjklmnpqrstvwxz"
	b := []byte{'q'}
	for v := i; ; v /= len(letters) {
		b = append(b, letters[v%len(letters)])
		if v < len(letters) {
			break
		}
	}
	return string(b)
}

func words(from, n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = word(from + i)
	}
	return strings.Join(ws, " ")
}

// scoreShapes are documents of n tokens shaped to defeat a linear search:
// many distinct terms in one string, in many strings, repeated, and one
// long string followed by many short ones.
var scoreShapes = []struct {
	name string
	doc  func(n int) bson.Doc
}{
	{"one string, distinct words", func(n int) bson.Doc {
		var b bson.Builder
		b.AppendString("t", words(0, n))
		return b.Finish()
	}},
	{"array of one-word strings", func(n int) bson.Doc {
		var b bson.Builder
		b.StartArray("t")
		for i := 0; i < n; i++ {
			b.AppendString(strconv.Itoa(i), word(i))
		}
		b.End()
		return b.Finish()
	}},
	{"every word twice", func(n int) bson.Doc {
		var b bson.Builder
		b.AppendString("t", words(0, n/2)+" "+words(0, n/2))
		return b.Finish()
	}},
	{"long string then short ones", func(n int) bson.Doc {
		var b bson.Builder
		b.StartArray("t")
		b.AppendString("0", words(0, n/2))
		for i := 1; i <= n/2; i++ {
			b.AppendString(strconv.Itoa(i), word(i%100))
		}
		b.End()
		return b.Finish()
	}},
}

func textSpec(t *testing.T) *Spec {
	en, ok := LookupLanguage("english")
	if !ok {
		t.Fatal("no english")
	}
	return NewSpec(map[string]float64{"t": 2}, false, en, "language")
}

// TestScoreLinear asserts that scoring a document looks its terms up
// O(1) times per token: with linear searches alone (linearMax unbounded)
// a document of n distinct terms needs n²/2 comparisons.
func TestScoreLinear(t *testing.T) {
	s := textSpec(t)
	const n = 50_000
	for _, sh := range scoreShapes {
		t.Run(sh.name, func(t *testing.T) {
			sc := newScorer()
			if _, err := s.score(sh.doc(n), sc); err != nil {
				t.Fatal(err)
			}
			// Per token: a frequency lookup and a score lookup, each at
			// most linearMax comparisons, plus the maps' building.
			if limit := 3 * (linearTerms + 1) * n; sc.probes > limit {
				t.Errorf("%d term probes for %d tokens, want at most %d", sc.probes, n, limit)
			}
		})
	}
}

// TestScoreSameAsLinear checks that the maps change no score: every shape
// scores the same with lists searched linearly only.
func TestScoreSameAsLinear(t *testing.T) {
	s := textSpec(t)
	for _, sh := range scoreShapes {
		for _, n := range []int{1, 10, 17, 100, 3000} {
			doc := sh.doc(n)
			linear := newScorer()
			linear.linearMax = math.MaxInt
			want, err := s.score(doc, linear)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.Score(doc)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s, n=%d: scores differ from the linear search's", sh.name, n)
			}
			for i := 1; i < len(got); i++ {
				if got[i-1].Term >= got[i].Term {
					t.Fatalf("%s, n=%d: terms not sorted and distinct: %q, %q", sh.name, n, got[i-1].Term, got[i].Term)
				}
			}
		}
	}
}

// BenchmarkScore scores one string of n distinct words: small documents
// are searched linearly, large ones through maps.
func BenchmarkScore(b *testing.B) {
	en, _ := LookupLanguage("english")
	s := NewSpec(map[string]float64{"t": 1}, false, en, "language")
	for _, n := range []int{8, 40, 10_000} {
		var d bson.Builder
		d.AppendString("t", words(0, n))
		doc := d.Finish()
		b.Run("words="+strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := s.Score(doc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestScoreContextStops checks that scoring a huge document stops within
// checkTokens terms of its context ending, with the context's error.
func TestScoreContextStops(t *testing.T) {
	s := textSpec(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, sh := range scoreShapes {
		sc := newScorer()
		sc.ctx = ctx
		_, err := s.score(sh.doc(100_000), sc)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: error %v, want context.Canceled", sh.name, err)
		}
		if sc.tokens != checkTokens {
			t.Errorf("%s: read %d terms after the context ended, want %d", sh.name, sc.tokens, checkTokens)
		}
	}
	// A live context changes nothing.
	doc := scoreShapes[0].doc(10_000)
	want, err := s.Score(doc)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.ScoreContext(context.Background(), doc)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ScoreContext: %d terms, %v; Score: %d terms", len(got), err, len(want))
	}
}
