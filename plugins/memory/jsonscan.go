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

// parseJSON decodes b, which must be one JSON value with only white space
// around it.
func parseJSON(b []byte) (jsonValue, error) {
	p := jsonParser{b: string(b)}
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

// jsonParser reads b from offset i. It works on a string so that a
// string value without escapes is a substring of b, not a copy.
type jsonParser struct {
	b string
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
	if len(p.b)-p.i >= len(word) && p.b[p.i:p.i+len(word)] == word {
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
	// The common case: no escapes, valid UTF-8.
	b := p.b[p.i:]
	for j := 0; j < len(b); j++ {
		c := b[j]
		if c == '"' {
			if s := b[:j]; utf8.ValidString(s) {
				p.i += j + 1
				return s, nil
			}
			break
		}
		if c == '\\' || c < 0x20 {
			break
		}
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
			r, size := utf8.DecodeRuneInString(p.b[p.i:])
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
	n, err := strconv.ParseUint(p.b[p.i:p.i+4], 16, 32)
	if err != nil {
		return 0, p.errorf("invalid \\u escape")
	}
	p.i += 4
	return rune(n), nil
}

// record is what one line of the memory file holds: the members a line of
// either type may have, each the last of its name, as JSON.parse keeps.
type record struct {
	typ, name, entityType, from, to, relationType fieldValue
	observations                                  []string
	observationsKind                              jsonKind
	hasObservations                               bool
	isObject                                      bool
}

// fieldValue is a member that should be a string.
type fieldValue struct {
	present bool
	kind    jsonKind
	str     string
}

// parseRecord reads one line. It decodes only the members a record uses
// and checks the rest without keeping them: lines are many, and every
// allocation counts in Wasm.
func parseRecord(b string) (record, error) {
	var r record
	p := jsonParser{b: b}
	p.space()
	if p.i >= len(p.b) || p.b[p.i] != '{' {
		if _, err := p.value(0); err != nil {
			return r, err
		}
		p.space()
		if p.i < len(p.b) {
			return r, p.errorf("unexpected %q after the value", p.b[p.i])
		}
		return r, nil
	}
	r.isObject = true
	p.i++
	p.space()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
	} else {
		for {
			p.space()
			if p.i >= len(p.b) || p.b[p.i] != '"' {
				return r, p.errorf("expected a member name")
			}
			key, err := p.string()
			if err != nil {
				return r, err
			}
			p.space()
			if p.i >= len(p.b) || p.b[p.i] != ':' {
				return r, p.errorf("expected ':' after a member name")
			}
			p.i++
			p.space()
			var f *fieldValue
			switch key {
			case "type":
				f = &r.typ
			case "name":
				f = &r.name
			case "entityType":
				f = &r.entityType
			case "from":
				f = &r.from
			case "to":
				f = &r.to
			case "relationType":
				f = &r.relationType
			}
			switch {
			case f != nil && p.i < len(p.b) && p.b[p.i] == '"':
				s, err := p.string()
				if err != nil {
					return r, err
				}
				*f = fieldValue{present: true, kind: jsonString, str: s}
			case key == "observations":
				list, kind, err := p.stringList()
				if err != nil {
					return r, err
				}
				r.hasObservations, r.observationsKind, r.observations = true, kind, list
			default:
				v, err := p.value(1)
				if err != nil {
					return r, err
				}
				if f != nil {
					*f = fieldValue{present: true, kind: v.kind}
				}
			}
			p.space()
			if p.i >= len(p.b) {
				return r, p.errorf("unexpected end in an object")
			}
			if p.b[p.i] == '}' {
				p.i++
				break
			}
			if p.b[p.i] != ',' {
				return r, p.errorf("unexpected %q in an object", p.b[p.i])
			}
			p.i++
		}
	}
	p.space()
	if p.i < len(p.b) {
		return r, p.errorf("unexpected %q after the value", p.b[p.i])
	}
	return r, nil
}

// stringList reads a value that should be a list of strings: kind is
// jsonArray if it is one, else the value's kind (jsonOther for an array
// holding something else) and no list.
func (p *jsonParser) stringList() ([]string, jsonKind, error) {
	if p.i >= len(p.b) || p.b[p.i] != '[' {
		v, err := p.value(1)
		return nil, v.kind, err
	}
	p.i++
	list := []string{}
	kind := jsonArray
	p.space()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		return list, kind, nil
	}
	for {
		p.space()
		if p.i < len(p.b) && p.b[p.i] == '"' {
			s, err := p.string()
			if err != nil {
				return nil, 0, err
			}
			list = append(list, s)
		} else {
			if _, err := p.value(2); err != nil {
				return nil, 0, err
			}
			kind = jsonOther
		}
		p.space()
		if p.i >= len(p.b) {
			return nil, 0, p.errorf("unexpected end in an array")
		}
		if p.b[p.i] == ']' {
			p.i++
			break
		}
		if p.b[p.i] != ',' {
			return nil, 0, p.errorf("unexpected %q in an array", p.b[p.i])
		}
		p.i++
	}
	if kind != jsonArray {
		return nil, kind, nil
	}
	return list, kind, nil
}

// errNotString and errNotStrings report a field of the wrong type.
var (
	errNotString  = errors.New("is not a string")
	errNotStrings = errors.New("is not a list of strings")
)
