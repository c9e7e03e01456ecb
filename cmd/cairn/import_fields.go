package main

import (
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/cairndb/cairn/bson"
)

// A fieldParser appends the value text s under key, or fails.
type fieldParser func(b *bson.Builder, key, s string) error

// parseGrace says what a typed column does with text its type rejects,
// as mongoimport's --parseGrace.
type parseGrace int

const (
	graceAutoCast  parseGrace = iota // store the value as an untyped (auto) column would
	graceSkipField                   // leave the field out
	graceSkipRow                     // leave the whole row out
	graceStop                        // stop the import
)

func parseGraceName(s string) (parseGrace, error) {
	switch s {
	case "autoCast":
		return graceAutoCast, nil
	case "skipField":
		return graceSkipField, nil
	case "skipRow":
		return graceSkipRow, nil
	case "stop":
		return graceStop, nil
	}
	return 0, fmt.Errorf("invalid --parseGrace %q (autoCast, skipField, skipRow or stop)", s)
}

// errSkipRow marks a row a typed column rejected under --parseGrace skipRow.
var errSkipRow = errors.New("row skipped")

// column is one CSV/TSV column: its dotted name and how its text is typed.
type column struct {
	name  string
	path  []string
	typ   string // type name as written: auto, string, int32, ...
	parse fieldParser
}

var typedHeader = regexp.MustCompile(`(?s)^(.*)\.(\w+)\((.*)\)$`)

// parseColumns turns field names into columns. With typed set each name
// must carry mongoimport's type suffix, name.type(arg); otherwise every
// column is auto-typed.
func parseColumns(names []string, typed bool) ([]column, error) {
	cols := make([]column, 0, len(names))
	seen := map[string]bool{}
	for _, n := range names {
		c := column{name: n, typ: "auto", parse: parseAuto}
		if typed {
			m := typedHeader.FindStringSubmatch(n)
			if m == nil {
				return nil, fmt.Errorf("could not parse type from header %s", n)
			}
			p, err := typeParser(m[2], unescapeTypeArg(m[3]))
			if err != nil {
				return nil, fmt.Errorf("header %s: %w", n, err)
			}
			c.name, c.typ, c.parse = m[1], m[2], p
		}
		if c.name == "" {
			return nil, fmt.Errorf("field names cannot be empty")
		}
		if seen[c.name] {
			return nil, fmt.Errorf("fields cannot be identical: %q", c.name)
		}
		seen[c.name] = true
		c.path = strings.Split(c.name, ".")
		for _, p := range c.path {
			if p == "" {
				return nil, fmt.Errorf("field %q has an empty part", c.name)
			}
		}
		cols = append(cols, c)
	}
	for _, c := range cols { // "a" and "a.b" cannot both be columns
		for i := 1; i < len(c.path); i++ {
			if seen[strings.Join(c.path[:i], ".")] {
				return nil, fmt.Errorf("fields %q and %q are incompatible", strings.Join(c.path[:i], "."), c.name)
			}
		}
	}
	return cols, nil
}

var typeArgUnescaper = strings.NewReplacer(`\\`, `\`, `\(`, "(", `\)`, ")")

func unescapeTypeArg(s string) string { return typeArgUnescaper.Replace(s) }

// typeParser returns the parser of one of mongoimport's column types.
func typeParser(typ, arg string) (fieldParser, error) {
	switch typ {
	case "binary", "date", "date_go", "date_ms", "date_oracle":
	default:
		if arg != "" {
			return nil, fmt.Errorf("type %s takes no argument", typ)
		}
	}
	switch typ {
	case "auto":
		return parseAuto, nil
	case "string":
		return func(b *bson.Builder, k, s string) error { b.AppendString(k, s); return nil }, nil
	case "int32":
		return func(b *bson.Builder, k, s string) error {
			n, err := strconv.ParseInt(s, 10, 32)
			if err != nil {
				return err
			}
			b.AppendInt32(k, int32(n))
			return nil
		}, nil
	case "int64":
		return func(b *bson.Builder, k, s string) error {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return err
			}
			b.AppendInt64(k, n)
			return nil
		}, nil
	case "double":
		return func(b *bson.Builder, k, s string) error {
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return err
			}
			b.AppendDouble(k, f)
			return nil
		}, nil
	case "decimal":
		return func(b *bson.Builder, k, s string) error {
			hi, lo, err := bson.ParseDecimal128(s)
			if err != nil {
				return err
			}
			b.AppendDecimal128(k, hi, lo)
			return nil
		}, nil
	case "boolean":
		return func(b *bson.Builder, k, s string) error {
			switch {
			case s == "1" || strings.EqualFold(s, "true"):
				b.AppendBool(k, true)
			case s == "0" || strings.EqualFold(s, "false"):
				b.AppendBool(k, false)
			default:
				return fmt.Errorf("failed to parse boolean: %s", s)
			}
			return nil
		}, nil
	case "binary":
		var dec func(string) ([]byte, error)
		switch arg {
		case "base64":
			dec = base64.StdEncoding.DecodeString
		case "base32":
			dec = base32.StdEncoding.DecodeString
		case "hex":
			dec = hex.DecodeString
		default:
			return nil, fmt.Errorf("invalid binary encoding: %s", arg)
		}
		return func(b *bson.Builder, k, s string) error {
			d, err := dec(s)
			if err != nil {
				return err
			}
			b.AppendBinary(k, 0, d)
			return nil
		}, nil
	case "date", "date_go", "date_ms", "date_oracle":
		layout := arg
		switch typ {
		case "date_ms":
			layout = convertLayout(arg, msDateTokens, false)
		case "date_oracle":
			layout = convertLayout(arg, oracleDateTokens, true)
		}
		return func(b *bson.Builder, k, s string) error {
			t, err := time.Parse(layout, s)
			if err != nil {
				return err
			}
			b.AppendDateTime(k, t.UnixMilli())
			return nil
		}, nil
	}
	return nil, fmt.Errorf("invalid type %s", typ)
}

// parseAuto types text as mongoimport does for untyped columns: an integer
// (int32 when it fits, else int64), else a double, else the string.
func parseAuto(b *bson.Builder, k, s string) error {
	if maybeNumber(s) {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			if n >= math.MinInt32 && n <= math.MaxInt32 {
				b.AppendInt32(k, int32(n))
			} else {
				b.AppendInt64(k, n)
			}
			return nil
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			b.AppendDouble(k, f)
			return nil
		}
	}
	b.AppendString(k, s)
	return nil
}

// maybeNumber is a cheap filter before strconv (whose errors allocate):
// text strconv.ParseFloat could accept starts, after an optional sign, with
// a digit, a point, or the i/n of inf and nan.
func maybeNumber(s string) bool {
	if s == "" {
		return false
	}
	c := s[0]
	if (c == '+' || c == '-') && len(s) > 1 {
		c = s[1]
	}
	return c >= '0' && c <= '9' || c == '.' || c == 'i' || c == 'I' || c == 'n' || c == 'N'
}

// Date layouts in Microsoft's and Oracle's notations, longest tokens first,
// mapped to Go's reference-time notation.
var msDateTokens = [][2]string{
	{"yyyy", "2006"}, {"yy", "06"}, {"MMMM", "January"}, {"MMM", "Jan"}, {"MM", "01"}, {"M", "1"},
	{"dddd", "Monday"}, {"ddd", "Mon"}, {"dd", "02"}, {"d", "2"}, {"HH", "15"}, {"H", "15"},
	{"hh", "03"}, {"h", "3"}, {"mm", "04"}, {"m", "4"}, {"ss", "05"}, {"s", "5"},
	{"fffffff", "0000000"}, {"ffffff", "000000"}, {"fffff", "00000"}, {"ffff", "0000"}, {"fff", "000"}, {"ff", "00"}, {"f", "0"},
	{"tt", "PM"}, {"zzz", "-07:00"}, {"zz", "-07"}, {"z", "-07"}, {"K", "Z07:00"},
}

var oracleDateTokens = [][2]string{
	{"YYYY", "2006"}, {"YY", "06"}, {"MONTH", "January"}, {"MON", "Jan"}, {"MM", "01"},
	{"DAY", "Monday"}, {"DY", "Mon"}, {"DD", "02"}, {"HH24", "15"}, {"HH12", "03"}, {"HH", "03"},
	{"MI", "04"}, {"SS", "05"}, {"FF9", "000000000"}, {"FF6", "000000"}, {"FF3", "000"}, {"FF", "000000"},
	{"AM", "PM"}, {"PM", "PM"}, {"TZH:TZM", "-07:00"}, {"TZH", "-07"}, {"TZR", "MST"},
}

// convertLayout rewrites a date layout into Go's notation; text that is no
// token is kept, and "quoted" text is copied literally.
func convertLayout(s string, tokens [][2]string, fold bool) string {
	var out strings.Builder
	for i := 0; i < len(s); {
		if s[i] == '"' || s[i] == '\'' {
			end := strings.IndexByte(s[i+1:], s[i])
			if end < 0 {
				out.WriteString(s[i+1:])
				break
			}
			out.WriteString(s[i+1 : i+1+end])
			i += end + 2
			continue
		}
		matched := false
		for _, t := range tokens {
			if len(s)-i >= len(t[0]) && (s[i:i+len(t[0])] == t[0] || fold && strings.EqualFold(s[i:i+len(t[0])], t[0])) {
				out.WriteString(t[1])
				i += len(t[0])
				matched = true
				break
			}
		}
		if !matched {
			out.WriteByte(s[i])
			i++
		}
	}
	return out.String()
}
