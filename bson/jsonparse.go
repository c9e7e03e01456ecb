package bson

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// A small strict JSON (RFC 8259) parser producing an ordered tree, for
// Extended JSON: encoding/json would lose member order and number lexemes.

type jsonKind uint8

const (
	jsonNull jsonKind = iota
	jsonBool
	jsonNumber
	jsonString
	jsonObject
	jsonArray
)

// jsonNode is a parsed JSON value. str holds a string's text or a number's
// lexeme; keys and vals hold an object's members (keys nil for arrays).
type jsonNode struct {
	kind jsonKind
	b    bool
	str  string
	keys []string
	vals []*jsonNode
}

// get returns the member named key of an object node.
func (n *jsonNode) get(key string) (*jsonNode, bool) {
	for i, k := range n.keys {
		if k == key {
			return n.vals[i], true
		}
	}
	return nil, false
}

var errJSONSyntax = errors.New("invalid JSON")

type jsonParser struct {
	data []byte
	pos  int
}

// parseJSON parses exactly one JSON value (surrounding whitespace allowed).
func parseJSON(data []byte) (*jsonNode, error) {
	p := jsonParser{data: data}
	n, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos != len(p.data) {
		return nil, p.errorf("unexpected data after the top-level value")
	}
	return n, nil
}

func (p *jsonParser) errorf(format string, args ...any) error {
	return fmt.Errorf("%w at offset %d: %s", errJSONSyntax, p.pos, fmt.Sprintf(format, args...))
}

func (p *jsonParser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *jsonParser) literal(word string) bool {
	if len(p.data)-p.pos >= len(word) && string(p.data[p.pos:p.pos+len(word)]) == word {
		p.pos += len(word)
		return true
	}
	return false
}

func (p *jsonParser) value(depth int) (*jsonNode, error) {
	if depth > MaxDepth+2 {
		return nil, p.errorf("nesting too deep")
	}
	p.skipSpace()
	if p.pos >= len(p.data) {
		return nil, p.errorf("unexpected end of input")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		s, err := p.string()
		if err != nil {
			return nil, err
		}
		return &jsonNode{kind: jsonString, str: s}, nil
	case c == 't' && p.literal("true"):
		return &jsonNode{kind: jsonBool, b: true}, nil
	case c == 'f' && p.literal("false"):
		return &jsonNode{kind: jsonBool}, nil
	case c == 'n' && p.literal("null"):
		return &jsonNode{kind: jsonNull}, nil
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	}
	return nil, p.errorf("unexpected character %q", p.data[p.pos])
}

func (p *jsonParser) object(depth int) (*jsonNode, error) {
	p.pos++ // {
	n := &jsonNode{kind: jsonObject, keys: []string{}}
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return n, nil
	}
	for {
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return nil, p.errorf("expected a member name")
		}
		k, err := p.string()
		if err != nil {
			return nil, err
		}
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return nil, p.errorf("expected ':'")
		}
		p.pos++
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		n.keys = append(n.keys, k)
		n.vals = append(n.vals, v)
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, p.errorf("unterminated object")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			return n, nil
		default:
			return nil, p.errorf("expected ',' or '}'")
		}
	}
}

func (p *jsonParser) array(depth int) (*jsonNode, error) {
	p.pos++ // [
	n := &jsonNode{kind: jsonArray}
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		return n, nil
	}
	for {
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		n.vals = append(n.vals, v)
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, p.errorf("unterminated array")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			return n, nil
		default:
			return nil, p.errorf("expected ',' or ']'")
		}
	}
}

func (p *jsonParser) number() (*jsonNode, error) {
	start := p.pos
	d := p.data
	if p.pos < len(d) && d[p.pos] == '-' {
		p.pos++
	}
	digits := func() int {
		s := p.pos
		for p.pos < len(d) && d[p.pos] >= '0' && d[p.pos] <= '9' {
			p.pos++
		}
		return p.pos - s
	}
	intStart := p.pos
	if n := digits(); n == 0 || (n > 1 && d[intStart] == '0') {
		return nil, p.errorf("malformed number")
	}
	if p.pos < len(d) && d[p.pos] == '.' {
		p.pos++
		if digits() == 0 {
			return nil, p.errorf("malformed number")
		}
	}
	if p.pos < len(d) && (d[p.pos] == 'e' || d[p.pos] == 'E') {
		p.pos++
		if p.pos < len(d) && (d[p.pos] == '+' || d[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return nil, p.errorf("malformed number")
		}
	}
	return &jsonNode{kind: jsonNumber, str: string(d[start:p.pos])}, nil
}

// string parses a JSON string starting at the opening quote.
func (p *jsonParser) string() (string, error) {
	p.pos++ // "
	d := p.data
	start := p.pos
	for p.pos < len(d) {
		c := d[p.pos]
		if c == '"' {
			s := string(d[start:p.pos])
			p.pos++
			if !utf8.ValidString(s) {
				return "", p.errorf("string is not valid UTF-8")
			}
			return s, nil
		}
		if c == '\\' {
			return p.stringSlow(start)
		}
		if c < 0x20 {
			return "", p.errorf("control character in string")
		}
		p.pos++
	}
	return "", p.errorf("unterminated string")
}

func (p *jsonParser) stringSlow(start int) (string, error) {
	d := p.data
	out := append([]byte(nil), d[start:p.pos]...)
	for p.pos < len(d) {
		c := d[p.pos]
		switch {
		case c == '"':
			p.pos++
			if !utf8.Valid(out) {
				return "", p.errorf("string is not valid UTF-8")
			}
			return string(out), nil
		case c < 0x20:
			return "", p.errorf("control character in string")
		case c != '\\':
			out = append(out, c)
			p.pos++
			continue
		}
		p.pos++
		if p.pos >= len(d) {
			break
		}
		e := d[p.pos]
		p.pos++
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return "", p.errorf("bad \\u escape")
			}
			if utf16.IsSurrogate(r) {
				r2 := utf8.RuneError
				if p.pos+1 < len(d) && d[p.pos] == '\\' && d[p.pos+1] == 'u' {
					save := p.pos
					p.pos += 2
					if x, ok := p.hex4(); ok {
						r2 = x
					} else {
						p.pos = save
					}
				}
				r = utf16.DecodeRune(r, r2)
				if r == utf8.RuneError {
					return "", p.errorf("unpaired surrogate in \\u escape")
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", p.errorf("bad escape \\%c", e)
		}
	}
	return "", p.errorf("unterminated string")
}

func (p *jsonParser) hex4() (rune, bool) {
	if p.pos+4 > len(p.data) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(p.data[p.pos:p.pos+4]), 16, 16)
	if err != nil {
		return 0, false
	}
	p.pos += 4
	return rune(n), true
}
