package bridge

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// The JSON Schema dialects a tool's schema may declare with "$schema",
// spelled exactly so: jsonschema-go validates these and no other (and
// fails every validation against another). A schema without "$schema" is
// 2020-12, as MCP (2025-11-25) says.
const (
	draft202012   = "https://json-schema.org/draft/2020-12/schema"
	draft07       = "http://json-schema.org/draft-07/schema#"
	draft07Secure = "https://json-schema.org/draft-07/schema#"
)

// simpleTypes are the values "type" may take.
var simpleTypes = []string{"array", "boolean", "integer", "null", "number", "object", "string"}

// checkMetaSchema checks that doc, a decoded JSON value, is a JSON Schema
// of the dialect it declares: what the dialect's meta-schema asks of each
// keyword's value, at every level. jsonschema-go decodes and resolves a
// schema without these checks (it takes "type": "numbr" and fails every
// validation later), and its meta-schema validation names the meta-schema's
// paths, not the schema's; this names the JSON Pointer of the first value
// at fault in doc and what is wrong with it. Keywords it does not know are
// left alone, as JSON Schema asks.
func checkMetaSchema(doc any) error {
	draft7 := false
	if m, ok := doc.(map[string]any); ok {
		if d, ok := m["$schema"]; ok {
			s, _ := d.(string)
			switch s {
			case draft202012:
			case draft07, draft07Secure:
				draft7 = true
			default:
				return faultAt("/$schema", `%s is not a dialect the host can validate (%s or %s, spelled exactly so)`, quoteValue(d), draft202012, draft07)
			}
		}
	}
	c := metaChecker{draft7: draft7}
	return c.schema(doc, "")
}

type metaChecker struct{ draft7 bool }

// schema checks one schema (an object or a boolean) at path.
func (c metaChecker) schema(v any, path string) error {
	switch v := v.(type) {
	case bool:
		return nil
	case map[string]any:
		// In key order, so that the first error is always the same one.
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if err := c.keyword(k, v[k], path+"/"+pointerSegment(k)); err != nil {
				return err
			}
		}
		return nil
	default:
		return faultAt(path, "a schema must be an object or a boolean, not %s", describeValue(v))
	}
}

// keyword checks the value of one keyword at path.
func (c metaChecker) keyword(k string, v any, path string) error {
	switch k {
	case "additionalProperties", "propertyNames", "contains", "not", "if", "then", "else",
		"unevaluatedItems", "unevaluatedProperties", "contentSchema", "additionalItems":
		return c.schema(v, path)
	case "items":
		// An array of schemas is draft-07's tuple, 2020-12's prefixItems.
		// 2020-12 dropped the form, but jsonschema-go validates it as a
		// tuple in either dialect, and older tools use it without saying
		// "$schema": it is taken, not refused.
		if a, ok := v.([]any); ok {
			return c.schemaArray(a, path)
		}
		return c.schema(v, path)
	case "allOf", "anyOf", "oneOf", "prefixItems":
		a, ok := v.([]any)
		if !ok || len(a) == 0 {
			return faultAt(path, "must be a non-empty array of schemas, not %s", describeValue(v))
		}
		return c.schemaArray(a, path)
	case "properties", "$defs", "definitions", "dependentSchemas", "patternProperties":
		m, ok := v.(map[string]any)
		if !ok {
			return faultAt(path, "must be an object whose values are schemas, not %s", describeValue(v))
		}
		for _, name := range sortedKeys(m) {
			if k == "patternProperties" {
				if _, err := regexp.Compile(name); err != nil {
					return faultAt(path, "key %s is not a regular expression: %v", strconv.QuoteToASCII(name), err)
				}
			}
			if err := c.schema(m[name], path+"/"+pointerSegment(name)); err != nil {
				return err
			}
		}
		return nil
	case "dependencies":
		m, ok := v.(map[string]any)
		if !ok {
			return faultAt(path, "must be an object, not %s", describeValue(v))
		}
		for _, name := range sortedKeys(m) {
			p := path + "/" + pointerSegment(name)
			if a, ok := m[name].([]any); ok {
				if err := uniqueStrings(a, p); err != nil {
					return err
				}
			} else if err := c.schema(m[name], p); err != nil {
				return err
			}
		}
		return nil
	case "dependentRequired":
		m, ok := v.(map[string]any)
		if !ok {
			return faultAt(path, "must be an object whose values are arrays of property names, not %s", describeValue(v))
		}
		for _, name := range sortedKeys(m) {
			a, ok := m[name].([]any)
			if !ok {
				return faultAt(path+"/"+pointerSegment(name), "must be an array of property names, not %s", describeValue(m[name]))
			}
			if err := uniqueStrings(a, path+"/"+pointerSegment(name)); err != nil {
				return err
			}
		}
		return nil
	case "type":
		return checkType(v, path)
	case "enum", "examples":
		if _, ok := v.([]any); !ok {
			return faultAt(path, "must be an array, not %s", describeValue(v))
		}
	case "required":
		a, ok := v.([]any)
		if !ok {
			return faultAt(path, "must be an array of property names, not %s", describeValue(v))
		}
		return uniqueStrings(a, path)
	case "maxLength", "minLength", "maxItems", "minItems", "maxContains", "minContains", "maxProperties", "minProperties":
		if f, ok := v.(float64); !ok || f < 0 || f != math.Trunc(f) || f > math.MaxInt32 {
			return faultAt(path, "must be a non-negative integer, not %s", describeValue(v))
		}
	case "maximum", "minimum", "exclusiveMaximum", "exclusiveMinimum":
		if _, ok := v.(float64); !ok {
			return faultAt(path, "must be a number, not %s", describeValue(v))
		}
	case "multipleOf":
		if f, ok := v.(float64); !ok || f <= 0 {
			return faultAt(path, "must be a number greater than 0, not %s", describeValue(v))
		}
	case "pattern":
		s, ok := v.(string)
		if !ok {
			return faultAt(path, "must be a string, not %s", describeValue(v))
		}
		if _, err := regexp.Compile(s); err != nil {
			return faultAt(path, "is not a regular expression: %v", err)
		}
	case "uniqueItems", "readOnly", "writeOnly", "deprecated":
		if _, ok := v.(bool); !ok {
			return faultAt(path, "must be true or false, not %s", describeValue(v))
		}
	case "format", "title", "description", "$comment", "$id", "$anchor", "$dynamicAnchor", "$ref",
		"$dynamicRef", "$schema", "contentEncoding", "contentMediaType":
		if _, ok := v.(string); !ok {
			return faultAt(path, "must be a string, not %s", describeValue(v))
		}
	case "$vocabulary":
		m, ok := v.(map[string]any)
		if !ok {
			return faultAt(path, "must be an object of true or false, not %s", describeValue(v))
		}
		for _, name := range sortedKeys(m) {
			if _, ok := m[name].(bool); !ok {
				return faultAt(path+"/"+pointerSegment(name), "must be true or false, not %s", describeValue(m[name]))
			}
		}
	}
	return nil
}

func (c metaChecker) schemaArray(a []any, path string) error {
	for i, s := range a {
		if err := c.schema(s, path+"/"+strconv.Itoa(i)); err != nil {
			return err
		}
	}
	return nil
}

// checkType checks a "type": one of simpleTypes, or a non-empty array of
// them without repeats.
func checkType(v any, path string) error {
	known := func(s string) bool {
		for _, t := range simpleTypes {
			if s == t {
				return true
			}
		}
		return false
	}
	want := "one of " + strings.Join(simpleTypes, ", ")
	switch v := v.(type) {
	case string:
		if !known(v) {
			return faultAt(path, "%s is not a JSON Schema type (%s)", quoteValue(v), want)
		}
		return nil
	case []any:
		if len(v) == 0 {
			return faultAt(path, "is an empty array (want a type, or an array of types: %s)", want)
		}
		seen := map[string]bool{}
		for i, t := range v {
			s, ok := t.(string)
			if !ok || !known(s) {
				return faultAt(path+"/"+strconv.Itoa(i), "%s is not a JSON Schema type (%s)", quoteValue(t), want)
			}
			if seen[s] {
				return faultAt(path, "names %s twice", strconv.Quote(s))
			}
			seen[s] = true
		}
		return nil
	default:
		return faultAt(path, "must be a type name or an array of them (%s), not %s", want, describeValue(v))
	}
}

// uniqueStrings checks an array of property names.
func uniqueStrings(a []any, path string) error {
	seen := map[string]bool{}
	for i, e := range a {
		s, ok := e.(string)
		if !ok {
			return faultAt(path+"/"+strconv.Itoa(i), "must be a property name (a string), not %s", describeValue(e))
		}
		if seen[s] {
			return faultAt(path, "names %s twice", strconv.QuoteToASCII(s))
		}
		seen[s] = true
	}
	return nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// faultAt is an error at a JSON Pointer in a schema, which it carries
// (pointerOf).
func faultAt(path, format string, args ...any) error {
	return at(path, fmt.Errorf("at %s: %s", showPath(path), fmt.Sprintf(format, args...)))
}

// describeValue names a decoded JSON value's kind, with the value when it
// is short.
func describeValue(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(v)
	case float64:
		return "the number " + strconv.FormatFloat(v, 'g', -1, 64)
	case string:
		return "the string " + quoteValue(v)
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// quoteValue quotes a value for an error, shortened when long.
func quoteValue(v any) string {
	s, ok := v.(string)
	if !ok {
		return describeValue(v)
	}
	if len(s) > 64 {
		cut := 64
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		return strconv.QuoteToASCII(s[:cut]) + "…"
	}
	return strconv.QuoteToASCII(s)
}
