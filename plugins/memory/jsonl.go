package main

import (
	"bytes"
	"encoding/json"
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
	if !json.Valid(line) {
		var v any
		err := json.Unmarshal(line, &v)
		return fmt.Errorf("not valid JSON: %v", err)
	}
	if trimmed := bytes.TrimLeft(line, " \t\r\n"); len(trimmed) == 0 || trimmed[0] != '{' {
		return nil // JSON but no object: it has no "type", the reference skips it
	}
	var fields map[string]json.RawMessage // exact keys, the last of duplicates, as JSON.parse
	if err := json.Unmarshal(line, &fields); err != nil {
		return err
	}
	var typ string
	if json.Unmarshal(fields["type"], &typ) != nil {
		return nil
	}
	switch typ {
	case "entity":
		var e Entity
		if err := stringField(fields, "name", &e.Name); err != nil {
			return err
		}
		if err := stringField(fields, "entityType", &e.EntityType); err != nil {
			return err
		}
		if err := stringsField(fields, "observations", &e.Observations); err != nil {
			return err
		}
		g.Entities = append(g.Entities, e)
	case "relation":
		var r Relation
		for _, f := range []struct {
			key string
			dst *string
		}{{"from", &r.From}, {"to", &r.To}, {"relationType", &r.RelationType}} {
			if err := stringField(fields, f.key, f.dst); err != nil {
				return err
			}
		}
		g.Relations = append(g.Relations, r)
	}
	return nil
}

// stringField decodes the string fields[key] into dst.
func stringField(fields map[string]json.RawMessage, key string, dst *string) error {
	raw, ok := fields[key]
	if !ok || json.Unmarshal(raw, dst) != nil || bytes.Equal(raw, []byte("null")) {
		return fmt.Errorf("%q is not a string", key)
	}
	return nil
}

// stringsField decodes the list of strings fields[key] into dst.
func stringsField(fields map[string]json.RawMessage, key string, dst *[]string) error {
	raw, ok := fields[key]
	var list []*string
	if !ok || json.Unmarshal(raw, &list) != nil || list == nil {
		return fmt.Errorf("%q is not a list of strings", key)
	}
	out := make([]string, len(list))
	for i, s := range list {
		if s == nil {
			return fmt.Errorf("%q is not a list of strings", key)
		}
		out[i] = *s
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
// JSON.stringify form is compact: json.Indent copies strings as they are
// and writes empty arrays as [], as JavaScript does.
func pretty(compact []byte) string {
	var out bytes.Buffer
	if err := json.Indent(&out, compact, "", "  "); err != nil {
		panic(fmt.Sprintf("memory: indenting its own JSON: %v", err)) // a bug, reported as -32603
	}
	return out.String()
}
