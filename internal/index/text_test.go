package index

import (
	"math"
	"testing"

	dbson "go.mongodb.org/mongo-driver/v2/bson"
)

func TestTextSpecCanonical(t *testing.T) {
	s, err := Parse(doc(t, dbson.D{{Key: "key", Value: dbson.D{{Key: "title", Value: "text"}, {Key: "body", Value: "text"}}},
		{Key: "weights", Value: dbson.D{{Key: "title", Value: 10}}}, {Key: "default_language", Value: "en"}}))
	if err != nil {
		t.Fatal(err)
	}
	want := `{ v: 2, key: { _fts: "text", _ftsx: 1 }, name: "title_text_body_text", weights: { body: 1, title: 10 }, default_language: "english", language_override: "language", textIndexVersion: 3 }`
	if got := s.Raw.String(); got != want {
		t.Fatalf("Raw = %s\nwant %s", got, want)
	}
	// The catalog form parses back to the same definition.
	again, err := Parse(s.Raw)
	if err != nil {
		t.Fatal(err)
	}
	if !SameDefinition(s, again) || again.Name != s.Name || again.Raw.String() != want {
		t.Fatalf("reparsed %s", again.Raw.String())
	}
}

func TestTextKeysScores(t *testing.T) {
	s, err := Parse(doc(t, dbson.D{{Key: "key", Value: dbson.D{{Key: "a", Value: "text"}}}}))
	if err != nil {
		t.Fatal(err)
	}
	// "the" is a stop word; "running" and "runs" both stem to "run":
	// tokens run, run, fox → run: count 2, freq 1 + 1/2; fox: 1.
	keys, multikey, err := s.Keys(doc(t, dbson.D{{Key: "a", Value: "The running fox runs"}}))
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 || !multikey {
		t.Fatalf("keys = %d, multikey %v", len(keys), multikey)
	}
	wantRun := 1.5 * (0.5*2/3 + 0.5)
	wantFox := 1.0 * (0.5*1/3 + 0.5)
	for term, want := range map[string]float64{"run": wantRun, "fox": wantFox} {
		tk := s.TextTermKey(nil, term)
		found := false
		for _, k := range keys {
			if len(k) > len(tk) && string(k[:len(tk)]) == string(tk) {
				found = true
				got, err := TextEntryScore(k, tk)
				if err != nil || math.Abs(got-want) > 1e-12 {
					t.Errorf("score(%s) = %v, %v; want %v", term, got, err, want)
				}
			}
		}
		if !found {
			t.Errorf("no entry for %q", term)
		}
	}
	// A whole-string term gets the 1.1 boost.
	keys, _, _ = s.Keys(doc(t, dbson.D{{Key: "a", Value: "fox"}}))
	tk := s.TextTermKey(nil, "fox")
	if got, _ := TextEntryScore(keys[0], tk); math.Abs(got-1.1) > 1e-12 {
		t.Errorf("whole-string score = %v, want 1.1", got)
	}
	// No indexed strings: no entries (text indexes are sparse).
	if keys, _, _ := s.Keys(doc(t, dbson.D{{Key: "b", Value: "fox"}})); len(keys) != 0 {
		t.Errorf("keys for a document without the field: %d", len(keys))
	}
}
