package main

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// A small JSON reader for the memory file. encoding/json decodes by
// reflection, which is slow in Wasm (a graph of a few hundred lines took
// tens of milliseconds), and matches keys case-insensitively, which a file
// written by JavaScript must not be read with. This reader keeps what the
// file holds: strings, arrays and objects (members in order, duplicates
// kept), and marks any other value by its kind.

// jsonKind is the kind of a jsonValue.
type jsonKind byte

const (
	jsonOther  jsonKind = iota // a number, true or false
	jsonNull                   // null
	jsonString                 // str
	jsonArray                  // items
	jsonObject                 // keys and items
)

// jsonValue is one decoded JSON value.
type jsonValue struct {
	kind  jsonKind
	str   string
	keys  []string    // an object's member names, parallel to items
	items []jsonValue // an array's elements or an object's member values
}

// member is the value of the last member named key of an object (the one
// JSON.parse keeps), and whether there is one.
func (v *jsonValue) member(key string) (*jsonValue, bool) {
	for i := len(v.keys) - 1; i >= 0; i-- {
		if v.keys[i] == key {
			return &v.items[i], true
		}
	}
	return nil, false
}

// parseJSON decodes b, which must be one JSON value with only white space
// around it.
func parseJSON(b []byte) (jsonValue, error) {
	p := jsonParser{b: b}
	p.space()
	v, err := p.value(0)
	if err != nil {
		return jsonValue{}, err
	}
	p.space()
	if p.i < len(p.b) {
		return jsonValue{}, p.errorf("unexpected %q after the value", p.b[p.i])
	}
	return v, nil
}

// maxDepth bounds nesting, so that a hostile line cannot exhaust the stack.
const maxDepth = 512

type jsonParser struct {
	b []byte
	i int
}

func (p *jsonParser) errorf(format string, args ...any) error {
	return fmt.Errorf("invalid JSON at offset %d: %s", p.i, fmt.Sprintf(format, args...))
}

func (p *jsonParser) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonParser) value(depth int) (jsonValue, error) {
	if depth > maxDepth {
		return jsonValue{}, p.errorf("nested too deeply")
	}
	if p.i >= len(p.b) {
		return jsonValue{}, p.errorf("unexpected end")
	}
	switch c := p.b[p.i]; {
	case c == '"':
		s, err := p.string()
		return jsonValue{kind: jsonString, str: s}, err
	case c == '[':
		p.i++
		v := jsonValue{kind: jsonArray, items: []jsonValue{}}
		p.space()
		if p.i < len(p.b) && p.b[p.i] == ']' {
			p.i++
			return v, nil
		}
		for {
			p.space()
			item, err := p.value(depth + 1)
			if err != nil {
				return v, err
			}
			v.items = append(v.items, item)
			p.space()
			if p.i >= len(p.b) {
				return v, p.errorf("unexpected end in an array")
			}
			if p.b[p.i] == ']' {
				p.i++
				return v, nil
			}
			if p.b[p.i] != ',' {
				return v, p.errorf("unexpected %q in an array", p.b[p.i])
			}
			p.i++
		}
	case c == '{':
		p.i++
		v := jsonValue{kind: jsonObject}
		p.space()
		if p.i < len(p.b) && p.b[p.i] == '}' {
			p.i++
			return v, nil
		}
		for {
			p.space()
			if p.i >= len(p.b) || p.b[p.i] != '"' {
				return v, p.errorf("expected a member name")
			}
			key, err := p.string()
			if err != nil {
				return v, err
			}
			p.space()
			if p.i >= len(p.b) || p.b[p.i] != ':' {
				return v, p.errorf("expected ':' after a member name")
			}
			p.i++
			p.space()
			item, err := p.value(depth + 1)
			if err != nil {
				return v, err
			}
			v.keys = append(v.keys, key)
			v.items = append(v.items, item)
			p.space()
			if p.i >= len(p.b) {
				return v, p.errorf("unexpected end in an object")
			}
			if p.b[p.i] == '}' {
				p.i++
				return v, nil
			}
			if p.b[p.i] != ',' {
				return v, p.errorf("unexpected %q in an object", p.b[p.i])
			}
			p.i++
		}
	case p.literal("true"), p.literal("false"):
		return jsonValue{kind: jsonOther}, nil
	case p.literal("null"):
		return jsonValue{kind: jsonNull}, nil
	case c == '-' || c >= '0' && c <= '9':
		return jsonValue{kind: jsonOther}, p.number()
	default:
		return jsonValue{}, p.errorf("unexpected %q", c)
	}
}

// literal consumes word if it comes next.
func (p *jsonParser) literal(word string) bool {
	if len(p.b)-p.i >= len(word) && string(p.b[p.i:p.i+len(word)]) == word {
		p.i += len(word)
		return true
	}
	return false
}

// number consumes a number in JSON's grammar.
func (p *jsonParser) number() error {
	digits := func() int {
		n := 0
		for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.b[p.i] == '-' {
		p.i++
	}
	if p.i < len(p.b) && p.b[p.i] == '0' {
		p.i++
	} else if digits() == 0 {
		return p.errorf("invalid number")
	}
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return p.errorf("invalid number")
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return p.errorf("invalid number")
		}
	}
	return nil
}

// string consumes a string and returns its value. Invalid UTF-8 and lone
// surrogates become U+FFFD, as encoding/json makes them.
func (p *jsonParser) string() (string, error) {
	p.i++ // the opening quote
	start := p.i
	// The common case: no escapes, valid UTF-8.
	for p.i < len(p.b) {
		c := p.b[p.i]
		if c == '"' {
			s := p.b[start:p.i]
			p.i++
			if utf8.Valid(s) {
				return string(s), nil
			}
			p.i = start
			break
		}
		if c == '\\' || c < 0x20 {
			p.i = start
			break
		}
		p.i++
	}
	if p.i != start {
		return "", p.errorf("unterminated string")
	}
	var out []byte
	for {
		if p.i >= len(p.b) {
			return "", p.errorf("unterminated string")
		}
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			return string(out), nil
		case c < 0x20:
			return "", p.errorf("control character in a string")
		case c == '\\':
			if p.i+1 >= len(p.b) {
				return "", p.errorf("unterminated string")
			}
			e := p.b[p.i+1]
			p.i += 2
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
				r, err := p.hex4()
				if err != nil {
					return "", err
				}
				if utf16.IsSurrogate(r) {
					r2 := utf8.RuneError
					if len(p.b)-p.i >= 6 && p.b[p.i] == '\\' && p.b[p.i+1] == 'u' {
						save := p.i
						p.i += 2
						lo, err := p.hex4()
						if err != nil {
							return "", err
						}
						if r2 = utf16.DecodeRune(r, lo); r2 == utf8.RuneError {
							p.i = save // not a pair: the next escape stands alone
						}
					}
					r = r2
				}
				out = utf8.AppendRune(out, r)
			default:
				return "", p.errorf("invalid escape \\%c", e)
			}
		default:
			r, size := utf8.DecodeRune(p.b[p.i:])
			out = utf8.AppendRune(out, r) // RuneError for an invalid byte
			p.i += size
		}
	}
}

// hex4 consumes four hexadecimal digits.
func (p *jsonParser) hex4() (rune, error) {
	if len(p.b)-p.i < 4 {
		return 0, p.errorf("invalid \\u escape")
	}
	n, err := strconv.ParseUint(string(p.b[p.i:p.i+4]), 16, 32)
	if err != nil {
		return 0, p.errorf("invalid \\u escape")
	}
	p.i += 4
	return rune(n), nil
}

// errNotString and errNotStrings report a field of the wrong type.
var (
	errNotString  = errors.New("is not a string")
	errNotStrings = errors.New("is not a list of strings")
)
