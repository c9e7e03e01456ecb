package query

import (
	"math"
	"strings"
	"sync"
	"unicode"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
	"golang.org/x/text/collate"
	"golang.org/x/text/language"
)

// Collation compares strings by a locale's rules (golang.org/x/text/collate
// standing in for ICU). It implements bson.StringComparer and
// bson.SortKeyer and is safe for concurrent use.
//
// caseFirst "upper" is emulated (see prepare); "lower" is the collator's
// own tertiary order. maxVariable "space" is accepted and reported back,
// but x/text always treats punctuation as variable under "shifted".
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

// icuLocales are the collation locales MongoDB accepts.
var icuLocales = func() map[string]bool {
	m := map[string]bool{}
	for _, l := range strings.Fields(`af sq am ar hy as az bn be bs bs_Cyrl bg my ca chr zh zh_Hant hr cs
	da nl dz en en_US en_US_POSIX eo et ee fo fil fi fi_FI fr fr_CA gl ka de de_AT el gu ha haw he hi hu
	is ig smn id ga it ja kl kn kk km kok ko ky lkt lo lv ln lt dsb lb mk ms ml mt mr mn ne se nb nn or
	om ps fa fa_AF pl pt pa ro ru sr sr_Latn si sk sl es sw sv ta te th bo to tr uk hsb ur ug vi wae cy
	yi yo zu root`) {
		m[l] = true
	}
	return m
}()

// icuVariants maps MongoDB's "@collation=" variants to BCP 47 "co" values.
var icuVariants = map[string]string{
	"de@collation=phonebook":    "phonebk",
	"es@collation=traditional":  "trad",
	"zh@collation=big5han":      "big5han",
	"zh@collation=gb2312han":    "gb2312",
	"zh@collation=pinyin":       "pinyin",
	"zh@collation=stroke":       "stroke",
	"zh@collation=unihan":       "unihan",
	"zh@collation=zhuyin":       "zhuyin",
	"zh_Hant@collation=pinyin":  "pinyin",
	"zh_Hant@collation=zhuyin":  "zhuyin",
	"ko@collation=search":       "search",
	"si@collation=dictionary":   "dict",
	"ar@collation=compat":       "compat",
	"fi_FI@collation=search":    "search",
	"fi_FI@collation=searchjl":  "searchjl",
	"fi_FI@collation=standard":  "standard",
	"hu@collation=standard":     "standard",
	"bn@collation=traditional":  "trad",
	"kn@collation=traditional":  "trad",
	"ta@collation=traditional":  "trad",
	"si@collation=standard":     "standard",
	"sv@collation=standard":     "standard",
	"sv@collation=search":       "search",
	"ln@collation=phonetic":     "phonetic",
	"ja@collation=unihan":       "unihan",
	"ko@collation=unihan":       "unihan",
	"zh_Hant@collation=unihan":  "unihan",
	"zh_Hant@collation=stroke":  "stroke",
	"zh_Hant@collation=big5han": "big5han",
}

// collationSpecFields holds the fields of a collation document as read.
type collationSpecFields struct {
	locale                   *string
	strength                 *bson.Value
	caseLevel, numeric       *bool
	normalization, backwards *bool
	caseFirst, alternate, mv *string
	version                  *string
}

// ParseCollation parses a collation document. The "simple" locale yields a
// nil *Collation: binary comparison. Errors follow mongod's order: unknown
// fields and wrong types, value ranges, the locale, the version, then
// incompatible combinations.
func ParseCollation(spec bson.Doc) (*Collation, error) {
	var f collationSpecFields
	it := spec.Iter()
	for it.Next() {
		e := it.Element()
		v := e.Value
		if v.Type == bson.TypeNull || v.Type == bson.TypeUndefined {
			continue
		}
		str := func(dst **string) error {
			if v.Type != bson.TypeString {
				return collationType(e, "string")
			}
			x := v.StringValue()
			*dst = &x
			return nil
		}
		boolean := func(dst **bool) error {
			if v.Type != bson.TypeBoolean {
				return mongoerr.New(mongoerr.TypeMismatch, "Field '%s' should be a boolean value, but found: %s", e.Key, typeNameForMessage(v.Type))
			}
			x := v.Boolean()
			*dst = &x
			return nil
		}
		var err error
		switch e.Key {
		case "locale":
			err = str(&f.locale)
		case "caseLevel":
			err = boolean(&f.caseLevel)
		case "numericOrdering":
			err = boolean(&f.numeric)
		case "normalization":
			err = boolean(&f.normalization)
		case "backwards":
			err = boolean(&f.backwards)
		case "caseFirst":
			err = str(&f.caseFirst)
		case "alternate":
			err = str(&f.alternate)
		case "maxVariable":
			err = str(&f.mv)
		case "version":
			err = str(&f.version)
		case "strength":
			if !v.IsNumber() {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'collation.strength' is the wrong type '%s', expected types '[long, int, decimal, double']", typeNameForMessage(v.Type))
			}
			x := v
			f.strength = &x
		default:
			return nil, mongoerr.New(mongoerr.IDLUnknownField, "BSON field 'collation.%s' is an unknown field.", e.Key)
		}
		if err != nil {
			return nil, err
		}
	}
	if f.locale == nil {
		return nil, mongoerr.New(mongoerr.IDLFailedToParse, "BSON field 'collation.locale' is missing but a required field")
	}
	c := &Collation{Locale: *f.locale, CaseFirst: "off", Strength: 3, Alternate: "non-ignorable", MaxVariable: "punct"}
	if f.strength != nil {
		fl, _ := f.strength.AsFloat64()
		n := int64(math.Trunc(fl))
		switch {
		case math.IsNaN(fl) || n < 1:
			return nil, badValue("Enumeration value '%d' for field 'collation.strength' is not a valid value.", n)
		case n > 5:
			return nil, badValue("BSON field 'strength' value must be <= 5, actual value '%d'", n)
		}
		c.Strength = int(n)
	}
	enum := func(field string, v *string, dst *string, allowed ...string) error {
		if v == nil {
			return nil
		}
		for _, a := range allowed {
			if *v == a {
				*dst = a
				return nil
			}
		}
		return badValue("Enumeration value '%s' for field 'collation.%s' is not a valid value.", *v, field)
	}
	if err := enum("caseFirst", f.caseFirst, &c.CaseFirst, "upper", "lower", "off"); err != nil {
		return nil, err
	}
	if err := enum("alternate", f.alternate, &c.Alternate, "non-ignorable", "shifted"); err != nil {
		return nil, err
	}
	if err := enum("maxVariable", f.mv, &c.MaxVariable, "punct", "space"); err != nil {
		return nil, err
	}
	if c.Locale == "simple" {
		return nil, nil
	}
	if err := c.resolveLocale(spec); err != nil {
		return nil, err
	}
	if f.version != nil && *f.version != "57.1" {
		return nil, mongoerr.New(mongoerr.IncompatibleCollationVersion, "Requested collation version %s but the only available collator version was 57.1. Requested collation spec: %s", *f.version, spec.String())
	}
	for _, x := range []struct {
		src *bool
		dst *bool
	}{{f.caseLevel, &c.CaseLevel}, {f.numeric, &c.NumericOrdering}, {f.normalization, &c.Normalization}, {f.backwards, &c.Backwards}} {
		if x.src != nil {
			*x.dst = *x.src
		}
	}
	if c.CaseFirst != "off" && !c.CaseLevel && c.Strength <= 2 {
		return nil, badValue("'caseFirst' is invalid unless 'caseLevel' is on or 'strength' is greater than 2 in: %s", spec.String())
	}
	if c.Backwards && c.Strength == 1 {
		return nil, badValue("'backwards' is invalid with 'strength' of 1 in: %s", spec.String())
	}
	return c, nil
}

// resolveLocale validates the locale as ICU does and maps it to a tag.
func (c *Collation) resolveLocale(spec bson.Doc) error {
	loc := c.Locale
	base, variant, _ := strings.Cut(loc, "@")
	co := ""
	valid := icuLocales[base]
	if variant != "" {
		co, valid = icuVariants[loc]
		valid = valid && icuLocales[base]
	}
	if !valid {
		msg := "Field 'locale' is invalid in: " + spec.String()
		if s := suggestLocale(loc); s != "" {
			msg += ". Did you mean '" + s + "'?"
		}
		return badValue("%s", msg)
	}
	tagText := strings.ReplaceAll(base, "_", "-")
	if base == "root" {
		tagText = "und"
	}
	if base == "en_US_POSIX" {
		tagText = "en-US-u-va-posix"
	}
	if co != "" {
		tagText += "-u-co-" + co
	}
	// Locales without their own tailoring (nl, it, pt, ...) collate by the
	// root order in x/text, as they do in ICU.
	tag, err := language.Parse(tagText)
	if err != nil {
		return badValue("Collation locale '%s' is not supported by Cairn", loc)
	}
	c.tag = tag
	return nil
}

// suggestLocale proposes the accepted spelling of a near-miss locale, as
// ICU's canonicalization does ("EN" -> "en", "en-US" -> "en_US",
// "de@collation=nope" -> "de").
func suggestLocale(loc string) string {
	base, _, hasVariant := strings.Cut(loc, "@")
	if hasVariant && icuLocales[base] {
		return base
	}
	t, err := language.Parse(strings.ReplaceAll(base, "_", "-"))
	if err != nil {
		return ""
	}
	cand := strings.ReplaceAll(t.String(), "-", "_")
	if icuLocales[cand] && cand != loc {
		return cand
	}
	return ""
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
	a, b = c.prepare(a), c.prepare(b)
	x := c.get()
	r := x.c.CompareString(a, b)
	c.pool.Put(x)
	return r
}

// prepare applies caseFirst "upper", which x/text lacks: the collator
// orders lowercase first at the tertiary level, so swapping the case of
// both strings puts uppercase first while leaving the primary and
// secondary levels (which ignore case) as they were.
func (c *Collation) prepare(s string) string {
	if c.CaseFirst != "upper" {
		return s
	}
	return strings.Map(swapCase, s)
}

func swapCase(r rune) rune {
	switch {
	case unicode.IsUpper(r):
		if l := unicode.ToLower(r); unicode.ToUpper(l) == r {
			return l
		}
	case unicode.IsLower(r):
		if u := unicode.ToUpper(r); unicode.ToLower(u) == r {
			return u
		}
	}
	return r
}

// Key appends the collation sort key of s to dst.
func (c *Collation) Key(dst []byte, s string) []byte {
	s = c.prepare(s)
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

func collationType(e bson.Element, want string) error {
	return mongoerr.New(mongoerr.TypeMismatch, "BSON field 'collation.%s' is the wrong type '%s', expected type '%s'", e.Key, typeNameForMessage(e.Value.Type), want)
}
