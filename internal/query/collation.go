package query

import (
	"strings"
	"sync"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
	"golang.org/x/text/collate"
	"golang.org/x/text/language"
)

// Collation compares strings by a locale's rules (golang.org/x/text/collate
// standing in for ICU). It implements bson.StringComparer and
// bson.SortKeyer and is safe for concurrent use.
//
// caseFirst "upper"/"lower" and maxVariable "space" are accepted and
// reported back but x/text does not implement them: ordering then follows
// the locale's default case order.
type Collation struct {
	Locale          string
	CaseLevel       bool
	CaseFirst       string // "upper", "lower" or "off"
	Strength        int    // 1..5
	NumericOrdering bool
	Alternate       string // "non-ignorable" or "shifted"
	MaxVariable     string // "punct" or "space"
	Normalization   bool
	Backwards       bool

	tag  language.Tag
	pool sync.Pool // of *collator
}

type collator struct {
	c   *collate.Collator
	buf collate.Buffer
}

var collateBases = func() map[string]bool {
	m := map[string]bool{}
	for _, t := range collate.Supported() {
		b, _ := t.Base()
		m[b.String()] = true
	}
	return m
}()

// ParseCollation parses a collation document. The "simple" locale yields a
// nil *Collation: binary comparison.
func ParseCollation(spec bson.Doc) (*Collation, error) {
	c := &Collation{CaseFirst: "off", Strength: 3, Alternate: "non-ignorable", MaxVariable: "punct"}
	var haveLocale, other bool
	it := spec.Iter()
	for it.Next() {
		e := it.Element()
		v := e.Value
		switch e.Key {
		case "locale":
			if v.Type != bson.TypeString {
				return nil, collationType(e, "string")
			}
			c.Locale, haveLocale = v.StringValue(), true
			continue
		case "caseLevel", "numericOrdering", "normalization", "backwards":
			if v.Type != bson.TypeBoolean {
				return nil, collationType(e, "bool")
			}
			b := v.Boolean()
			switch e.Key {
			case "caseLevel":
				c.CaseLevel = b
			case "numericOrdering":
				c.NumericOrdering = b
			case "normalization":
				c.Normalization = b
			default:
				c.Backwards = b
			}
		case "strength":
			if !v.IsNumber() {
				return nil, collationType(e, "int")
			}
			n, ok := v.AsInt64()
			if !ok || n < 1 || n > 5 {
				return nil, badValue("Field 'strength' must be an integer 1 through 5. Got: %s", formatNumber(v))
			}
			c.Strength = int(n)
		case "caseFirst":
			if v.Type != bson.TypeString {
				return nil, collationType(e, "string")
			}
			s := v.StringValue()
			if s != "upper" && s != "lower" && s != "off" {
				return nil, badValue("Field 'caseFirst' must be 'upper', 'lower', or 'off'. Got: %s", s)
			}
			c.CaseFirst = s
		case "alternate":
			if v.Type != bson.TypeString {
				return nil, collationType(e, "string")
			}
			s := v.StringValue()
			if s != "non-ignorable" && s != "shifted" {
				return nil, badValue("Field 'alternate' must be 'non-ignorable' or 'shifted'. Got: %s", s)
			}
			c.Alternate = s
		case "maxVariable":
			if v.Type != bson.TypeString {
				return nil, collationType(e, "string")
			}
			s := v.StringValue()
			if s != "punct" && s != "space" {
				return nil, badValue("Field 'maxVariable' must be 'punct' or 'space'. Got: %s", s)
			}
			c.MaxVariable = s
		case "version":
			if v.Type != bson.TypeString {
				return nil, collationType(e, "string")
			}
		default:
			return nil, mongoerr.New(40415, "BSON field 'collation.%s' is an unknown field.", e.Key)
		}
		other = true
	}
	if !haveLocale {
		return nil, mongoerr.New(40414, "BSON field 'collation.locale' is missing but a required field")
	}
	if c.Locale == "simple" {
		if other {
			return nil, badValue("Collation spec with locale 'simple' cannot contain other fields")
		}
		return nil, nil
	}
	tag, err := language.Parse(strings.ReplaceAll(strings.SplitN(c.Locale, "@", 2)[0], "_", "-"))
	base, _ := tag.Base()
	if c.Locale == "" || err != nil || !collateBases[base.String()] {
		return nil, badValue("Field 'locale' is invalid in: %s", spec.String())
	}
	c.tag = tag
	return c, nil
}

func collationType(e bson.Element, want string) error {
	return mongoerr.New(mongoerr.TypeMismatch, "BSON field 'collation.%s' is the wrong type '%s', expected type '%s'", e.Key, e.Value.Type, want)
}

func (c *Collation) get() *collator {
	if x, ok := c.pool.Get().(*collator); ok {
		return x
	}
	var opts []collate.Option
	switch c.Strength {
	case 1:
		opts = append(opts, collate.IgnoreDiacritics, collate.IgnoreCase, collate.IgnoreWidth)
	case 2:
		opts = append(opts, collate.IgnoreCase, collate.IgnoreWidth)
	}
	if c.NumericOrdering {
		opts = append(opts, collate.Numeric)
	}
	t := c.tag
	ext := []string{}
	if c.CaseLevel {
		ext = append(ext, "kc-true")
	}
	if c.Backwards {
		ext = append(ext, "kb-true")
	}
	if c.Alternate == "shifted" {
		ext = append(ext, "ka-shifted")
	}
	switch c.Strength {
	case 4:
		ext = append(ext, "ks-level4")
	case 5:
		ext = append(ext, "ks-identic")
	}
	if len(ext) > 0 {
		if tt, err := language.Parse(c.tag.String() + "-u-" + strings.Join(ext, "-")); err == nil {
			t = tt
		}
	}
	return &collator{c: collate.New(t, opts...)}
}

// CompareStrings compares a and b under the collation.
func (c *Collation) CompareStrings(a, b string) int {
	x := c.get()
	r := x.c.CompareString(a, b)
	c.pool.Put(x)
	return r
}

// Key appends the collation sort key of s to dst.
func (c *Collation) Key(dst []byte, s string) []byte {
	x := c.get()
	k := x.c.KeyFromString(&x.buf, s)
	dst = append(dst, k...)
	x.buf.Reset()
	c.pool.Put(x)
	return dst
}

// AppendSpec appends the collation's full specification, as MongoDB
// reports it (listCollections, explain), under key.
func (c *Collation) AppendSpec(b *bson.Builder, key string) {
	b.StartDocument(key)
	b.AppendString("locale", c.Locale)
	b.AppendBool("caseLevel", c.CaseLevel)
	b.AppendString("caseFirst", c.CaseFirst)
	b.AppendInt32("strength", int32(c.Strength))
	b.AppendBool("numericOrdering", c.NumericOrdering)
	b.AppendString("alternate", c.Alternate)
	b.AppendString("maxVariable", c.MaxVariable)
	b.AppendBool("normalization", c.Normalization)
	b.AppendBool("backwards", c.Backwards)
	b.AppendString("version", "57.1")
	b.End()
}
