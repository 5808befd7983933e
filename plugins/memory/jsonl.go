package main

import (
	"fmt"
	"strings"
	"unicode"
)

// The memory file is the reference server's format: one JSON object per
// line, {"type":"entity","name":…,"entityType":…,"observations":[…]} or
// {"type":"relation","from":…,"to":…,"relationType":…}, entities first,
// lines joined by "\n" with none after the last, each written as
// JavaScript's JSON.stringify writes it. So either server reads what the
// other wrote, and the same graph is the same bytes.

// parseGraph reads a memory file as the reference's loadGraph does: blank
// lines are skipped, every other line must be JSON, and objects whose
// "type" is neither "entity" nor "relation" are ignored. Unlike the
// reference, an entity or relation whose fields are not strings (or a list
// of strings) is refused with the line's number rather than carried along.
func parseGraph(data []byte) (Graph, error) {
	g := Graph{Entities: []Entity{}, Relations: []Relation{}}
	for n, line := range strings.Split(string(data), "\n") {
		if strings.TrimFunc(line, jsSpace) == "" {
			continue
		}
		if err := parseLine(&g, []byte(line)); err != nil {
			return Graph{}, fmt.Errorf("line %d: %w", n+1, err)
		}
	}
	return g, nil
}

// parseLine adds the entity or relation of one line to g.
func parseLine(g *Graph, line []byte) error {
	v, err := parseJSON(line)
	if err != nil {
		return err
	}
	if v.kind != jsonObject {
		return nil // no "type": the reference skips it
	}
	typ, ok := v.member("type")
	if !ok || typ.kind != jsonString {
		return nil
	}
	switch typ.str {
	case "entity":
		var e Entity
		if err := stringField(&v, "name", &e.Name); err != nil {
			return err
		}
		if err := stringField(&v, "entityType", &e.EntityType); err != nil {
			return err
		}
		if err := stringsField(&v, "observations", &e.Observations); err != nil {
			return err
		}
		g.Entities = append(g.Entities, e)
	case "relation":
		var r Relation
		for _, f := range []struct {
			key string
			dst *string
		}{{"from", &r.From}, {"to", &r.To}, {"relationType", &r.RelationType}} {
			if err := stringField(&v, f.key, f.dst); err != nil {
				return err
			}
		}
		g.Relations = append(g.Relations, r)
	}
	return nil
}

// stringField sets dst to the string member key of obj.
func stringField(obj *jsonValue, key string, dst *string) error {
	m, ok := obj.member(key)
	if !ok || m.kind != jsonString {
		return fmt.Errorf("%q %w", key, errNotString)
	}
	*dst = m.str
	return nil
}

// stringsField sets dst to the list of strings member key of obj.
func stringsField(obj *jsonValue, key string, dst *[]string) error {
	m, ok := obj.member(key)
	if !ok || m.kind != jsonArray {
		return fmt.Errorf("%q %w", key, errNotStrings)
	}
	out := make([]string, len(m.items))
	for i, item := range m.items {
		if item.kind != jsonString {
			return fmt.Errorf("%q %w", key, errNotStrings)
		}
		out[i] = item.str
	}
	*dst = out
	return nil
}

// jsSpace is the white space String.prototype.trim removes.
func jsSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', '\u00a0', '\u1680', '\u2028', '\u2029', '\u202f', '\u205f', '\u3000', '\ufeff':
		return true
	}
	return unicode.Is(unicode.Zs, r)
}

// formatGraph writes g as the memory file's bytes.
func formatGraph(g *Graph) []byte {
	var b []byte
	for i, e := range g.Entities {
		if i > 0 {
			b = append(b, '\n')
		}
		b = append(b, `{"type":"entity",`...)
		b = appendEntityFields(b, e)
		b = append(b, '}')
	}
	for i, r := range g.Relations {
		if i > 0 || len(g.Entities) > 0 {
			b = append(b, '\n')
		}
		b = append(b, `{"type":"relation",`...)
		b = appendRelationFields(b, r)
		b = append(b, '}')
	}
	return b
}

// appendEntityFields appends e's members, without braces.
func appendEntityFields(b []byte, e Entity) []byte {
	b = append(b, `"name":`...)
	b = appendJSString(b, e.Name)
	b = append(b, `,"entityType":`...)
	b = appendJSString(b, e.EntityType)
	b = append(b, `,"observations":`...)
	return appendStrings(b, e.Observations)
}

// appendRelationFields appends r's members, without braces.
func appendRelationFields(b []byte, r Relation) []byte {
	b = append(b, `"from":`...)
	b = appendJSString(b, r.From)
	b = append(b, `,"to":`...)
	b = appendJSString(b, r.To)
	b = append(b, `,"relationType":`...)
	return appendJSString(b, r.RelationType)
}

func appendStrings(b []byte, list []string) []byte {
	b = append(b, '[')
	for i, s := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSString(b, s)
	}
	return append(b, ']')
}

func appendEntities(b []byte, list []Entity) []byte {
	b = append(b, '[')
	for i, e := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '{')
		b = appendEntityFields(b, e)
		b = append(b, '}')
	}
	return append(b, ']')
}

func appendRelations(b []byte, list []Relation) []byte {
	b = append(b, '[')
	for i, r := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '{')
		b = appendRelationFields(b, r)
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendGraph appends {"entities":[…],"relations":[…]}.
func appendGraph(b []byte, g Graph) []byte {
	b = append(b, `{"entities":`...)
	b = appendEntities(b, g.Entities)
	b = append(b, `,"relations":`...)
	b = appendRelations(b, g.Relations)
	return append(b, '}')
}

// appendResults appends add_observations' result list.
func appendResults(b []byte, list []ObservationResult) []byte {
	b = append(b, '[')
	for i, r := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"entityName":`...)
		b = appendJSString(b, r.EntityName)
		b = append(b, `,"addedObservations":`...)
		b = appendStrings(b, r.AddedObservations)
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendJSString appends s quoted as JSON.stringify quotes it: only '"',
// '\\' and control characters are escaped (\b \t \n \f \r by name, the rest
// as \u00xx), never '<', '>', '&', U+2028 or U+2029 as encoding/json does.
// Invalid UTF-8 becomes U+FFFD, as Node's UTF-8 decoding makes it.
func appendJSString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	s = strings.ToValidUTF8(s, "\ufffd")
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"':
			b = append(b, `\"`...)
		case '\\':
			b = append(b, `\\`...)
		case '\b':
			b = append(b, `\b`...)
		case '\t':
			b = append(b, `\t`...)
		case '\n':
			b = append(b, `\n`...)
		case '\f':
			b = append(b, `\f`...)
		case '\r':
			b = append(b, `\r`...)
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// pretty is JSON.stringify(value, null, 2) of the value whose compact
// JSON.stringify form is compact (as this file's append functions write
// it: no white space outside strings): members and elements one per line,
// indented by two spaces a level, empty arrays and objects as [] and {}.
func pretty(compact []byte) string {
	out := make([]byte, 0, len(compact)*2)
	depth := 0
	newline := func() {
		out = append(out, '\n')
		for range depth {
			out = append(out, ' ', ' ')
		}
	}
	inString := false
	for i := 0; i < len(compact); i++ {
		c := compact[i]
		if inString {
			out = append(out, c)
			switch c {
			case '\\':
				i++
				out = append(out, compact[i])
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
			out = append(out, c)
		case '[', '{':
			out = append(out, c)
			if i+1 < len(compact) && (compact[i+1] == ']' || compact[i+1] == '}') {
				out = append(out, compact[i+1])
				i++
				continue
			}
			depth++
			newline()
		case ']', '}':
			depth--
			newline()
			out = append(out, c)
		case ',':
			out = append(out, c)
			newline()
		case ':':
			out = append(out, ':', ' ')
		default:
			out = append(out, c)
		}
	}
	return string(out)
}
