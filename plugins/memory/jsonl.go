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
func parseGraph(file []byte) (Graph, error) {
	g := Graph{Entities: []Entity{}, Relations: []Relation{}}
	data := string(file) // one copy; the graph's strings are parts of it
	for n := 1; len(data) > 0; n++ {
		line := data
		if i := strings.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = ""
		}
		if blank(line) {
			continue
		}
		if err := parseLine(&g, line); err != nil {
			return Graph{}, fmt.Errorf("line %d: %w", n, err)
		}
	}
	return g, nil
}

// blank reports whether line holds only what String.prototype.trim
// removes.
func blank(line string) bool {
	for i := 0; i < len(line); i++ {
		c := line[i]
		if c >= 0x80 {
			return strings.TrimFunc(line, jsSpace) == ""
		}
		if c != ' ' && (c < '\t' || c > '\r') {
			return false
		}
	}
	return true
}

// parseLine adds the entity or relation of one line to g.
func parseLine(g *Graph, line string) error {
	r, err := parseRecord(line)
	if err != nil {
		return err
	}
	if !r.isObject || r.typ.kind != jsonString {
		return nil // no "type": the reference skips it
	}
	switch r.typ.str {
	case "entity":
		if err := needString("name", r.name); err != nil {
			return err
		}
		if err := needString("entityType", r.entityType); err != nil {
			return err
		}
		if !r.hasObservations || r.observationsKind != jsonArray {
			return fmt.Errorf("%q %w", "observations", errNotStrings)
		}
		g.Entities = append(g.Entities, Entity{Name: r.name.str, EntityType: r.entityType.str, Observations: r.observations})
	case "relation":
		for _, f := range [...]struct {
			key string
			v   fieldValue
		}{{"from", r.from}, {"to", r.to}, {"relationType", r.relationType}} {
			if err := needString(f.key, f.v); err != nil {
				return err
			}
		}
		g.Relations = append(g.Relations, Relation{From: r.from.str, To: r.to.str, RelationType: r.relationType.str})
	}
	return nil
}

// needString fails unless the member key is a string.
func needString(key string, f fieldValue) error {
	if !f.present || f.kind != jsonString {
		return fmt.Errorf("%q %w", key, errNotString)
	}
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

func appendStrings(b []byte, list []string) []byte { return appendList(b, list, appendJSString) }

func appendEntities(b []byte, list []Entity) []byte {
	return appendList(b, list, func(b []byte, e Entity) []byte {
		return append(appendEntityFields(append(b, '{'), e), '}')
	})
}

func appendRelations(b []byte, list []Relation) []byte {
	return appendList(b, list, func(b []byte, r Relation) []byte {
		return append(appendRelationFields(append(b, '{'), r), '}')
	})
}

// appendList appends list as a JSON array, each item by appendItem.
func appendList[T any](b []byte, list []T, appendItem func([]byte, T) []byte) []byte {
	b = append(b, '[')
	for i, item := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendItem(b, item)
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
