package fts

import (
	"reflect"
	"sort"
	"testing"
)

func keys(m map[string]bool) []string {
	out := []string{}
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestParseQuery(t *testing.T) {
	en, _ := LookupLanguage("english")
	cases := []struct {
		search              string
		terms, negated      []string
		phrases, negPhrases []string
	}{
		{"coffee shops", []string{"coffe", "shop"}, []string{}, nil, nil},
		{"coffee -shop", []string{"coffe"}, []string{"shop"}, nil, nil},
		{"coffee - shop", []string{"coffe", "shop"}, []string{}, nil, nil},
		{"-foo-bar baz", []string{"baz"}, []string{"bar", "foo"}, nil, nil},
		{`"coffee shop" cake`, []string{"cake", "coffe", "shop"}, []string{}, []string{"coffee shop"}, nil},
		{`cake -"coffee shop"`, []string{"cake"}, []string{}, nil, []string{"coffee shop"}},
		{`"a -b"`, []string{"b"}, []string{}, []string{"a -b"}, nil},
		{"the and of", []string{}, []string{}, nil, nil},
		{"Café", []string{"cafe"}, []string{}, nil, nil},
	}
	for _, tc := range cases {
		q := ParseQuery(tc.search, en, false, false)
		terms := q.Terms
		if terms == nil {
			terms = []string{}
		}
		if !reflect.DeepEqual(terms, tc.terms) || !reflect.DeepEqual(keys(q.Negated), tc.negated) ||
			!reflect.DeepEqual(q.Phrases, tc.phrases) || !reflect.DeepEqual(q.NegatedPhrases, tc.negPhrases) {
			t.Errorf("ParseQuery(%q) = terms %q negated %q phrases %q negated phrases %q", tc.search, q.Terms, keys(q.Negated), q.Phrases, q.NegatedPhrases)
		}
	}
}

func TestTokens(t *testing.T) {
	en, _ := LookupLanguage("en")
	var got []string
	en.Tokens("Don't RUN, the runners' café—running!", Options{}, func(s string) { got = append(got, s) })
	// "Don't" and "the" are stop words; the stemmer drops the
	// possessive apostrophe.
	want := []string{"run", "runner", "cafe", "run"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tokens = %q", got)
	}
	none, _ := LookupLanguage("none")
	got = nil
	none.Tokens("The Running", Options{CaseSensitive: true}, func(s string) { got = append(got, s) })
	if !reflect.DeepEqual(got, []string{"The", "Running"}) {
		t.Errorf("none tokens = %q", got)
	}
}
