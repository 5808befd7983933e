package config

import (
	"encoding"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcphost/mcphost/host/internal/auth"
)

// lineIndex maps a key of the config file to the 1-based line that sets
// it. Keys are dotted; the tables of an array of tables carry their index,
// so the timeout of the second [[plugin]] is "plugin.1.timeout" and its
// [[plugin]] header is "plugin.1". It is built from the text with simple
// patterns, which is enough for error messages: a key it cannot place
// gets the line of its table, or none.
type lineIndex map[string]int

var (
	arrayHeader = regexp.MustCompile(`^\s*\[\[\s*([^\[\]]+?)\s*\]\]`)
	tableHeader = regexp.MustCompile(`^\s*\[\s*([^\[\]]+?)\s*\]`)
	keyAssign   = regexp.MustCompile(`^\s*((?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*'))*)\s*=`)
)

// indexLines finds where each table and key of a TOML text is set.
func indexLines(text string) lineIndex {
	idx := lineIndex{}
	arrays := map[string]int{} // array-of-tables name -> index of its last table
	prefix := ""
	for i, line := range strings.Split(text, "\n") {
		n := i + 1
		if m := arrayHeader.FindStringSubmatch(line); m != nil {
			name := withIndexes(dottedKey(m[1]), arrays)
			arrays[name]++
			prefix = name + "." + strconv.Itoa(arrays[name]-1)
			idx.set(prefix, n)
			continue
		}
		if m := tableHeader.FindStringSubmatch(line); m != nil {
			prefix = withIndexes(dottedKey(m[1]), arrays)
			idx.set(prefix, n)
			continue
		}
		if m := keyAssign.FindStringSubmatch(line); m != nil {
			key := dottedKey(m[1])
			if prefix != "" {
				key = prefix + "." + key
			}
			idx.set(key, n)
		}
	}
	return idx
}

func (idx lineIndex) set(key string, line int) {
	if _, ok := idx[key]; !ok {
		idx[key] = line
	}
}

// line returns the line of key, else of the nearest table that holds it;
// 0 when none is known.
func (idx lineIndex) line(key string) int {
	for key != "" {
		if n, ok := idx[key]; ok {
			return n
		}
		i := strings.LastIndex(key, ".")
		if i < 0 {
			break
		}
		key = key[:i]
	}
	return 0
}

// at returns "path:line" for key, or path when its line is unknown.
func (idx lineIndex) at(path, key string) string {
	if n := idx.line(key); n > 0 {
		return fmt.Sprintf("%s:%d", path, n)
	}
	return path
}

// dottedKey normalizes a TOML key as written (`a . "b"`) to "a.b".
func dottedKey(s string) string {
	var parts []string
	for _, p := range splitKey(s) {
		p = strings.TrimSpace(p)
		if len(p) >= 2 && (p[0] == '"' || p[0] == '\'') && p[len(p)-1] == p[0] {
			p = p[1 : len(p)-1]
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ".")
}

// splitKey splits a dotted key at the dots outside quotes.
func splitKey(s string) []string {
	var parts []string
	var quote byte
	start := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '.':
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}

// withIndexes inserts, after each part of name that is an array of tables,
// the index of its current table: "plugin.config" -> "plugin.2.config".
func withIndexes(name string, arrays map[string]int) string {
	parts := strings.Split(name, ".")
	var out []string
	for i, p := range parts {
		out = append(out, p)
		if i == len(parts)-1 {
			break
		}
		if n, ok := arrays[strings.Join(out, ".")]; ok {
			out = append(out, strconv.Itoa(n-1))
		}
	}
	return strings.Join(out, ".")
}

// durationKeys are the string keys that hold a duration.
var durationKeys = []string{"timeout", "breaker_cooldown", "list_ttl", "session_timeout", "drain_delay"}

var (
	durationType        = reflect.TypeFor[auth.Duration]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// typeProblems compares the decoded TOML values in raw with the fields of
// fileConfig and reports each value of the wrong type, with its line, in
// words: `x.toml:7: plugin "a": timeout: want a duration like "5s", got 5`.
// The TOML library's own message for this names neither the plugin nor,
// within an array of tables, the right line.
func typeProblems(path string, idx lineIndex, raw map[string]any) []error {
	var problems []error
	var walk func(t reflect.Type, v any, key []string, label string)
	walk = func(t reflect.Type, v any, key []string, label string) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		name := strings.Join(key, ".")
		bad := func(want string) {
			what := bracketed(key)
			if label != "" {
				what = label + " " + lastKeys(key)
			}
			problems = append(problems, fmt.Errorf("%s: %s: want %s, got %s", idx.at(path, name), what, want, describe(v)))
		}
		switch {
		case t == durationType:
			if _, ok := v.(string); !ok {
				bad(`a duration like "30s"`)
			}
		case reflect.PointerTo(t).Implements(textUnmarshalerType):
			if _, ok := v.(string); !ok {
				bad("a string")
			}
		case t.Kind() == reflect.String:
			if _, ok := v.(string); !ok {
				if slices.Contains(durationKeys, key[len(key)-1]) {
					bad(`a duration like "5s"`)
				} else {
					bad("a string")
				}
			}
		case t.Kind() == reflect.Bool:
			if _, ok := v.(bool); !ok {
				bad("true or false")
			}
		case t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64:
			if _, ok := v.(int64); !ok {
				bad("a whole number")
			}
		case t.Kind() == reflect.Float64:
			_, isInt := v.(int64)
			if _, ok := v.(float64); !ok && !isInt {
				bad("a number")
			}
		case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct:
			tables, ok := tablesOf(v)
			if !ok {
				bad("[[" + name + "]] tables")
				return
			}
			for i, table := range tables {
				walkStruct(t.Elem(), table, append(slices.Clone(key), strconv.Itoa(i)), tableLabel(key, i, table), walk)
			}
		case t.Kind() == reflect.Slice:
			list, ok := v.([]any)
			if !ok {
				bad(fmt.Sprintf("a list like [%s]", exampleOf(t.Elem())))
				return
			}
			for i, item := range list {
				if !fits(t.Elem(), item) {
					bad(fmt.Sprintf("a list like [%s] (item %d is %s)", exampleOf(t.Elem()), i+1, describe(item)))
					return
				}
			}
		case t.Kind() == reflect.Map:
			table, ok := v.(map[string]any)
			if !ok {
				bad(fmt.Sprintf("a table like { key = %s }", exampleOf(t.Elem())))
				return
			}
			for _, k := range slices.Sorted(maps.Keys(table)) {
				walk(t.Elem(), table[k], append(slices.Clone(key), k), label)
			}
		case t.Kind() == reflect.Struct:
			table, ok := v.(map[string]any)
			if !ok {
				bad("a table")
				return
			}
			walkStruct(t, table, key, label, walk)
		}
	}
	walkStruct(reflect.TypeFor[fileConfig](), raw, nil, "", walk)
	return problems
}

// walkStruct calls walk for each key of table that is a field of t.
// Unknown keys are left to the check of undecoded keys.
func walkStruct(t reflect.Type, table map[string]any, key []string, label string, walk func(reflect.Type, any, []string, string)) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if name == "" || name == "-" {
			continue
		}
		v, ok := table[name]
		if !ok {
			continue
		}
		walk(f.Type, v, append(slices.Clone(key), name), label)
	}
}

// tableLabel names a table of an array of tables in messages: `plugin "a"`
// when it has a name, else "[[plugin]] #2".
func tableLabel(key []string, i int, table map[string]any) string {
	array := strings.Join(key, ".")
	if name, ok := table["name"].(string); ok && name != "" {
		return fmt.Sprintf("%s %q:", array, name)
	}
	return fmt.Sprintf("[[%s]] #%d:", array, i+1)
}

// tablesOf returns an array of tables, written either way.
func tablesOf(v any) ([]map[string]any, bool) {
	switch v := v.(type) {
	case []map[string]any:
		return v, true
	case []any:
		var tables []map[string]any
		for _, item := range v {
			table, ok := item.(map[string]any)
			if !ok {
				return nil, false
			}
			tables = append(tables, table)
		}
		return tables, true
	}
	return nil, false
}

// bracketed names a key the way its table is written: "server.list_ttl"
// -> "[server] list_ttl".
func bracketed(key []string) string {
	if len(key) == 1 {
		return key[0]
	}
	return "[" + strings.Join(key[:len(key)-1], ".") + "] " + key[len(key)-1]
}

// lastKeys is the part of a key below its array-of-tables entry:
// "plugin.0.config.a" -> "config.a".
func lastKeys(key []string) string {
	for i := len(key) - 1; i >= 0; i-- {
		if _, err := strconv.Atoi(key[i]); err == nil {
			return strings.Join(key[i+1:], ".")
		}
	}
	return strings.Join(key, ".")
}

// fits says whether a TOML value can be decoded into a t.
func fits(t reflect.Type, v any) bool {
	switch t.Kind() {
	case reflect.String:
		_, ok := v.(string)
		return ok
	case reflect.Slice:
		list, ok := v.([]any)
		if !ok {
			return false
		}
		for _, item := range list {
			if !fits(t.Elem(), item) {
				return false
			}
		}
		return true
	}
	return true
}

// exampleOf is a TOML value of type t, for messages.
func exampleOf(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return `"a", "b"`
	case reflect.Slice:
		return "[" + exampleOf(t.Elem()) + "]"
	}
	return "…"
}

// describe renders a decoded TOML value as it would be written, shortened.
func describe(v any) string {
	switch v := v.(type) {
	case string:
		return strconv.Quote(v)
	case int64, float64, bool:
		return fmt.Sprint(v)
	case []any:
		return "a list"
	case []map[string]any:
		return "an array of tables"
	case map[string]any:
		return "a table"
	case time.Time:
		return "a date-time"
	}
	return fmt.Sprintf("a %T", v)
}
