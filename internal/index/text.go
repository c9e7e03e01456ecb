package index

import (
	"context"
	"encoding/binary"
	"math"
	"sort"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/index/fts"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// Text indexes, as MongoDB's: createIndexes receives {a: "text", b:
// "text"} (or {"$**": "text"}), possibly between ascending or descending
// prefix and suffix fields; the stored key pattern replaces the text fields
// by {_fts: "text", _ftsx: 1} and the fields move to "weights". Each
// document has one entry per distinct term of its indexed strings: the
// prefix values, the term, the term's score in the document (see
// fts.Spec.Score), the suffix values.

// textIndexVersion is the text index version Cairn builds (MongoDB's 3).
const textIndexVersion = 3

// maxWordWeight bounds a field's weight (exclusive), as in MongoDB.
const maxWordWeight = 100000

// parseText recognises a text index and fills s.Text from the key pattern
// and the options (weights, default_language, language_override,
// textIndexVersion).
func (s *Spec) parseText(d bson.Doc) (bool, error) {
	textAt, n := -1, 0
	weights := map[string]float64{}
	wildcard := false
	var fields []Field
	var key bson.Builder
	for i, f := range s.Fields {
		switch {
		case f.Text:
			if textAt >= 0 && i != textAt+n {
				return false, badSpec("'text' fields in index must all be adjacent")
			}
			if textAt < 0 {
				textAt = i
				fields = append(fields, Field{Path: "_fts", Parts: []string{"_fts"}, Text: true})
				key.AppendString("_fts", "text")
				key.AppendInt32("_ftsx", 1)
			}
			n++
			switch f.Path {
			case "_fts":
			case fts.Wildcard:
				wildcard = true
			default:
				weights[f.Path] = 1
			}
		case f.Path == "_ftsx" && textAt >= 0:
			n++
		default:
			if textAt >= 0 || hasText(s.Fields[i:]) {
				if f.Hashed {
					return false, badSpec("expected value 1 or -1 for non-text key in compound index")
				}
				if f.Path == "_fts" || f.Path == "_ftsx" {
					return false, badSpec("text index with reserved fields _fts/_ftsx not allowed")
				}
			}
			fields = append(fields, f)
			if f.Desc {
				key.AppendInt32(f.Path, -1)
			} else {
				key.AppendInt32(f.Path, 1)
			}
		}
	}
	if textAt < 0 {
		for _, o := range []string{"weights", "default_language", "language_override", "textIndexVersion"} {
			if _, ok := d.Lookup(o); ok {
				return false, mongoerr.New(mongoerr.InvalidIndexSpecificationOption, "The field '%s' is not valid for an index specification. Specification: %s", o, d.String())
			}
		}
		return false, nil
	}
	// A unique text index is allowed, as in mongod: no two documents may
	// then share a term (with the same prefix fields).
	if s.Collation != nil {
		return false, badSpec("Index type 'text' does not support collation")
	}
	if w, ok := d.Lookup("weights"); ok {
		switch {
		case w.Type == bson.TypeDocument:
			it := w.Document().Iter()
			for it.Next() {
				e := it.Element()
				n, ok := e.Value.AsFloat64()
				if !ok || !e.Value.IsNumber() {
					return false, badSpec("weight for text index needs numeric type")
				}
				n = math.Trunc(n) // MongoDB stores weights as integers
				if n <= 0 || n >= maxWordWeight {
					return false, badSpec("text index weight must be in the exclusive interval (0,%d) but found: %d", maxWordWeight, int64(n))
				}
				if e.Key == fts.Wildcard {
					wildcard = true
					continue
				}
				if err := checkWeightPath(e.Key); err != nil {
					return false, err
				}
				weights[e.Key] = n
			}
		case w.Type == bson.TypeString && w.StringValue() == fts.Wildcard:
			wildcard = true
		default:
			return false, badSpec("text index option 'weights' must be an object")
		}
	}
	if len(weights) == 0 && !wildcard {
		return false, badSpec("text index option 'weights' must specify fields or the wildcard")
	}
	lang := "english"
	if v, ok := d.Lookup("default_language"); ok {
		if v.Type != bson.TypeString {
			return false, badSpec("default_language needs a string type")
		}
		lang = v.StringValue()
	}
	l, ok := fts.LookupLanguage(lang)
	if !ok {
		return false, badSpec("default_language is not valid")
	}
	override := "language"
	if v, ok := d.Lookup("language_override"); ok {
		if v.Type != bson.TypeString {
			return false, badSpec("language_override must be a string")
		}
		override = v.StringValue()
		if override == "" || override[0] == '$' || containsByte(override, '.') {
			return false, badSpec("language_override is not valid")
		}
	}
	if v, ok := d.Lookup("textIndexVersion"); ok {
		n, isNum := v.AsInt64()
		if !isNum || !v.IsNumber() {
			return false, badSpec("text index option 'textIndexVersion' must be a number")
		}
		if n != textIndexVersion {
			return false, mongoerr.New(mongoerr.CannotCreateIndex, "Cairn builds text index version 3 only; bad textIndexVersion: %d", n)
		}
	}
	s.Fields = fields
	s.Key = key.Finish()
	s.Text = fts.NewSpec(weights, wildcard, l, override)
	return true, nil
}

func hasText(fs []Field) bool {
	for _, f := range fs {
		if f.Text {
			return true
		}
	}
	return false
}

func containsByte(s string, c byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return true
		}
	}
	return false
}

func checkWeightPath(p string) error {
	if p == "" {
		return badSpec("weight cannot be on an empty field")
	}
	start := 0
	for i := 0; i <= len(p); i++ {
		if i == len(p) || p[i] == '.' {
			part := p[start:i]
			if part == "" {
				return badSpec("weight cannot have empty path component")
			}
			if part[0] == '$' {
				return badSpec("weight cannot have path component with $ prefix")
			}
			start = i + 1
		}
	}
	return nil
}

// canonicalText is listIndexes' form of a text index: {v, key (with
// _fts/_ftsx), name, other options, weights (by field name),
// default_language, language_override, textIndexVersion}.
func (s *Spec) canonicalText(d bson.Doc) bson.Doc {
	var b bson.Builder
	b.AppendInt32("v", 2)
	b.AppendDocument("key", s.Key)
	b.AppendString("name", s.Name)
	it := d.Iter()
	for it.Next() {
		e := it.Element()
		switch e.Key {
		case "key", "name", "v", "ns", "background", "weights", "default_language", "language_override", "textIndexVersion":
		case "sparse", "hidden":
			if e.Value.Truthy() {
				b.AppendBool(e.Key, true)
			}
		default:
			b.AppendElement(e)
		}
	}
	b.StartDocument("weights")
	if s.Text.Wildcard {
		b.AppendInt32(fts.Wildcard, 1)
	}
	paths := make([]string, 0, len(s.Text.Weights))
	for p := range s.Text.Weights {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		b.AppendInt32(p, int32(s.Text.Weights[p]))
	}
	b.End()
	b.AppendString("default_language", s.Text.DefaultLanguage.Name)
	b.AppendString("language_override", s.Text.LanguageOverride)
	b.AppendInt32("textIndexVersion", textIndexVersion)
	return b.Finish()
}

// sameText reports whether two text indexes index the same way.
func sameText(a, b *fts.Spec) bool {
	if a.Wildcard != b.Wildcard || a.DefaultLanguage != b.DefaultLanguage || a.LanguageOverride != b.LanguageOverride || len(a.Weights) != len(b.Weights) {
		return false
	}
	for p, w := range a.Weights {
		if b.Weights[p] != w {
			return false
		}
	}
	return true
}

// textKeys is Keys for a text index; a non-nil ctx is checked while the
// terms are scored.
func (s *Spec) textKeys(ctx context.Context, doc bson.Doc) ([][]byte, bool, error) {
	var scores []fts.TermScore
	var err error
	if ctx != nil {
		scores, err = s.Text.ScoreContext(ctx, doc)
	} else {
		scores, err = s.Text.Score(doc)
	}
	if err != nil {
		return nil, false, err
	}
	if len(scores) == 0 {
		return nil, false, nil
	}
	var prefix, suffix []byte
	seenText := false
	for _, f := range s.Fields {
		if f.Text {
			seenText = true
			continue
		}
		vals, isArray := fieldValues(doc, f.Parts)
		if isArray {
			return nil, false, mongoerr.New(mongoerr.TextIndexMultikeyPrefix, "cannot have a multi-key as a prefix to a text index")
		}
		v := nullValue
		if len(vals) > 0 {
			v = vals[0]
		}
		if seenText {
			suffix = bson.AppendKey(suffix, v, f.Desc)
		} else {
			prefix = bson.AppendKey(prefix, v, f.Desc)
		}
	}
	keys := make([][]byte, 0, len(scores))
	size := 0
	for _, t := range scores {
		size += len(prefix) + len(t.Term) + 12 + len(suffix)
	}
	arena := make([]byte, 0, size)
	for _, t := range scores {
		start := len(arena)
		arena = append(arena, prefix...)
		arena = appendTextTerm(arena, t.Term)
		arena = bson.AppendKey(arena, DoubleValue(t.Score), false)
		arena = append(arena, suffix...)
		keys = append(keys, arena[start:len(arena):len(arena)])
	}
	return keys, len(keys) > 1, nil
}

// StringValue is a BSON string value.
func StringValue(s string) bson.Value {
	b := make([]byte, 4, 5+len(s))
	binary.LittleEndian.PutUint32(b, uint32(len(s)+1))
	b = append(b, s...)
	return bson.Value{Type: bson.TypeString, Data: append(b, 0)}
}

// DoubleValue is a BSON double value.
func DoubleValue(f float64) bson.Value {
	b := make([]byte, 8)
	binary.LittleEndian.PutUint64(b, math.Float64bits(f))
	return bson.Value{Type: bson.TypeDouble, Data: b}
}

func appendTextTerm(dst []byte, term string) []byte {
	return bson.AppendKey(dst, StringValue(term), false)
}

// TextPrefixFields are the paths of a text index's prefix fields, which a
// $text query must pin by equality.
func (s *Spec) TextPrefixFields() []Field {
	var out []Field
	for _, f := range s.Fields {
		if f.Text {
			break
		}
		out = append(out, f)
	}
	return out
}

// TextTermKey is the start of every entry of term under the given prefix
// values (one per prefix field).
func (s *Spec) TextTermKey(prefix []bson.Value, term string) []byte {
	var k []byte
	for i, f := range s.TextPrefixFields() {
		k = bson.AppendKey(k, prefix[i], f.Desc)
	}
	return appendTextTerm(k, term)
}

// TextEntryScore decodes the score of an entry that starts with termKey.
func TextEntryScore(key, termKey []byte) (float64, error) {
	v, _, err := bson.DecodeKey(key[len(termKey):])
	if err != nil {
		return 0, err
	}
	f, _ := v.AsFloat64()
	return f, nil
}
