package bridge

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func compile(t *testing.T, schema string) (*Schema, error) {
	t.Helper()
	return newSchemaCache().compile(json.RawMessage(schema))
}

// Each of these schemas makes jsonschema-go v0.4.3's validate recurse
// without end on the first value checked against it (fatal error: stack
// overflow, which kills the process: no recover). They must be refused at
// load, naming the cycle.
func TestCyclicSchemasAreRefusedNamingTheCycle(t *testing.T) {
	const d7 = `"$schema":"http://json-schema.org/draft-07/schema#",`
	for _, tc := range []struct{ name, schema, cycle string }{
		{"$defs a -> a", `{"type":"object","$defs":{"a":{"$ref":"#/$defs/a"}},"properties":{"x":{"$ref":"#/$defs/a"}}}`,
			`"#/$defs/a" -> "#/$defs/a"`},
		{"a -> b -> a", `{"type":"object","$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}}}`,
			`"#/$defs/a" -> "#/$defs/b" -> "#/$defs/a"`},
		{"allOf [$ref #]", `{"type":"object","allOf":[{"$ref":"#"}]}`, `"#" -> "#/allOf/0" -> "#"`},
		{"$ref # at the root", `{"type":"object","$ref":"#"}`, `"#" -> "#"`},
		{"anyOf", `{"type":"object","anyOf":[{"type":"string"},{"$ref":"#"}]}`, `"#/anyOf/1"`},
		{"oneOf", `{"type":"object","oneOf":[{"$ref":"#"}]}`, `"#/oneOf/0"`},
		{"not", `{"type":"object","not":{"$ref":"#"}}`, `"#/not"`},
		{"if", `{"type":"object","if":{"$ref":"#"}}`, `"#/if"`},
		{"then", `{"type":"object","if":{},"then":{"$ref":"#"}}`, `"#/then"`},
		{"else", `{"type":"object","if":{"type":"string"},"else":{"$ref":"#"}}`, `"#/else"`},
		{"dependentSchemas", `{"type":"object","dependentSchemas":{"a":{"$ref":"#"}}}`, `"#/dependentSchemas/a"`},
		{"draft 7 dependencies", `{` + d7 + `"type":"object","dependencies":{"a":{"$ref":"#"}}}`, `"#/dependencies/a"`},
		{"draft 7 definitions", `{` + d7 + `"type":"object","definitions":{"a":{"$ref":"#/definitions/a"}}}`, `"#/definitions/a"`},
		{"$anchor", `{"type":"object","$defs":{"a":{"$anchor":"A","allOf":[{"$ref":"#A"}]}}}`, `"#/$defs/a"`},
		{"$dynamicRef", `{"type":"object","$dynamicAnchor":"n","allOf":[{"$dynamicRef":"#n"}]}`, `"#/allOf/0"`},
		{"$dynamicRef to itself", `{"type":"object","$defs":{"a":{"$dynamicAnchor":"n","$dynamicRef":"#n"}}}`, `"#/$defs/a"`},
		{"$id of the root", `{"$id":"https://example.com/s","type":"object","allOf":[{"$ref":"https://example.com/s"}]}`, `"#/allOf/0"`},
		{"$id of a subschema, relative", `{"$id":"https://example.com/root","type":"object","$defs":{"x":{"$id":"x","allOf":[{"$ref":"x"}]}}}`, `"#/$defs/x"`},
		{"$id and pointer", `{"$id":"https://example.com/root","type":"object","$defs":{"x":{"$id":"sub","$defs":{"y":{"$ref":"sub#/$defs/y"}}}}}`, `"#/$defs/x/$defs/y"`},
		{"below a property", `{"type":"object","properties":{"x":{"$ref":"#/properties/x"}}}`, `"#/properties/x"`},
		{"inside items", `{"type":"object","properties":{"l":{"items":{"allOf":[{"$ref":"#/properties/l/items"}]}}}}`, `"#/properties/l/items"`},
		{"percent-encoded pointer", `{"type":"object","$defs":{"a b":{"$ref":"#/$defs/a%20b"}}}`, `"#/$defs/a b"`},
		{"escaped pointer", `{"type":"object","$defs":{"a/b":{"$ref":"#/$defs/a~1b"}}}`, `"#/$defs/a~1b"`},
		{"long chain", `{"type":"object","$defs":{` + chain(20) + `}}`, `… (12 more) -> "#/$defs/d0"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := compile(t, tc.schema)
			if err == nil {
				t.Fatal("compiled")
			}
			if !strings.Contains(err.Error(), "cycle") || !strings.Contains(err.Error(), tc.cycle) {
				t.Errorf("error %q does not name the cycle %s", err, tc.cycle)
			}
		})
	}
}

// chain is $defs d0 -> d1 -> … -> d(n-1) -> d0.
func chain(n int) string {
	var defs []string
	for i := range n {
		defs = append(defs, fmt.Sprintf(`"d%d":{"$ref":"#/$defs/d%d"}`, i, (i+1)%n))
	}
	return strings.Join(defs, ",")
}

// A cycle through an item or a property consumes a level of the value at
// each turn: it is how a schema describes a tree, and it is accepted. A
// value nested too deep for it is refused, not validated.
func TestRecursionThroughTheValueIsBounded(t *testing.T) {
	for _, schema := range []string{
		`{"type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#"}}},"required":["name"]}`,
		`{"type":"object","$defs":{"node":{"type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["name"]}},"$ref":"#/$defs/node"}`,
		`{"type":"object","$dynamicAnchor":"node","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$dynamicRef":"#node"}}},"required":["name"]}`,
	} {
		s, err := compile(t, schema)
		if err != nil {
			t.Fatalf("%s: %v", schema, err)
		}
		tree := func(depth int, name any) map[string]any {
			v := map[string]any{"name": name}
			for range depth {
				v = map[string]any{"name": "n", "children": []any{v}}
			}
			return v
		}
		if err := s.Validate(tree(10, "leaf")); err != nil {
			t.Errorf("a tree 10 deep: %v", err)
		}
		if err := s.Validate(tree(10, 12)); err == nil || !strings.Contains(err.Error(), "name") {
			t.Errorf("a tree 10 deep with a bad leaf: %v, want a validation error", err)
		}
		// jsonschema-go would recurse ~3 frames per level: 10,000 levels
		// (what encoding/json decodes) cost a deep stack. Refused first.
		if err := s.Validate(tree(10000, "leaf")); err == nil || !strings.Contains(err.Error(), "deeper than") {
			t.Errorf("a tree 10,000 deep: %v, want it refused unchecked", err)
		}
	}
}

func TestRemoteReferencesAreRefused(t *testing.T) {
	for _, ref := range []string{"https://example.com/s.json", "https://example.com/s.json#/$defs/a", "other.json", "file:///etc/passwd", "//evil.example/x"} {
		_, err := compile(t, `{"type":"object","properties":{"x":{"$ref":"`+ref+`"}}}`)
		if err == nil || !strings.Contains(err.Error(), "outside the schema") {
			t.Errorf("$ref %s: %v, want it refused as remote", ref, err)
		}
	}
	// A $ref to the schema's own $id is not remote.
	if _, err := compile(t, `{"$id":"https://example.com/s","type":"object","$defs":{"a":{"type":"string"}},"properties":{"x":{"$ref":"https://example.com/s#/$defs/a"}}}`); err != nil {
		t.Errorf("a $ref to the schema's own $id: %v", err)
	}
}

// nest returns allOf [{$ref a1}, {$ref a1}], a1: allOf [{$ref a2}, {$ref
// a2}], …: no cycle, but 2^n subschemas applied to every value.
func doubling(n int) string {
	defs := []string{`"a` + fmt.Sprint(n) + `":{"type":"object"}`}
	for i := n - 1; i >= 1; i-- {
		defs = append(defs, fmt.Sprintf(`"a%d":{"allOf":[{"$ref":"#/$defs/a%d"},{"$ref":"#/$defs/a%d"}]}`, i, i+1, i+1))
	}
	return `{"type":"object","allOf":[{"$ref":"#/$defs/a1"},{"$ref":"#/$defs/a1"}],"$defs":{` + strings.Join(defs, ",") + `}}`
}

func TestExponentialSchemasAreRefusedAtLoad(t *testing.T) {
	if _, err := compile(t, doubling(8)); err != nil {
		t.Errorf("2^8 subschemas per value: %v", err)
	}
	_, err := compile(t, doubling(40))
	if err == nil || !strings.Contains(err.Error(), "validating even a single value") {
		t.Errorf("2^40 subschemas per value: %v, want it refused", err)
	}
}

// The work can also double at each level of the value (each property
// checked twice against the whole schema): only the value tells how much;
// it is refused unchecked when over the budget.
func TestWorkMultipliedByTheValueIsBounded(t *testing.T) {
	s, err := compile(t, `{"type":"object","allOf":[{"properties":{"a":{"$ref":"#"}}},{"properties":{"a":{"$ref":"#"},"n":{"type":"number"}}}]}`)
	if err != nil {
		t.Fatal(err)
	}
	nested := func(depth int) any {
		v := map[string]any{"n": 1.0}
		for range depth {
			v = map[string]any{"a": v}
		}
		return v
	}
	if err := s.Validate(nested(5)); err != nil {
		t.Errorf("5 levels: %v", err)
	}
	err = s.Validate(nested(30))
	if err == nil || !strings.Contains(err.Error(), "too much work") {
		t.Errorf("30 levels (2^30 checks): %v, want it refused unchecked", err)
	}
}

// A large value against an ordinary schema is linear work and is checked,
// however big.
func TestLargeValuesAgainstOrdinarySchemasAreChecked(t *testing.T) {
	s, err := compile(t, `{"type":"object","properties":{"rows":{"type":"array","uniqueItems":true,"items":{"type":"object","properties":{
		"id":{"type":"integer"},"name":{"type":"string","pattern":"^[a-z0-9 ]*$","maxLength":100},"tags":{"type":"array","items":{"enum":["a","b","c"]}}},
		"required":["id","name"],"additionalProperties":false}}}}`)
	if err != nil {
		t.Fatal(err)
	}
	var rows []any
	for i := range 50_000 {
		rows = append(rows, map[string]any{"id": float64(i), "name": fmt.Sprint("row ", i), "tags": []any{"a", "c"}})
	}
	if err := s.Validate(map[string]any{"rows": rows}); err != nil {
		t.Errorf("50,000 rows: %v", err)
	}
	rows = append(rows, map[string]any{"id": 1.5, "name": "x"})
	if err := s.Validate(map[string]any{"rows": rows}); err == nil || strings.Contains(err.Error(), "not checked") {
		t.Errorf("50,000 rows, one bad: %v, want a validation error", err)
	}

	// A union: every number fails the string branch first, and builds an
	// error for it.
	s, err = compile(t, `{"type":"object","properties":{"values":{"type":"array","items":{"anyOf":[{"type":"string"},{"type":"number"},{"type":"object","properties":{"v":{"type":"number"}},"required":["v"]}]}}}}`)
	if err != nil {
		t.Fatal(err)
	}
	var values []any
	for i := range 50_000 {
		values = append(values, float64(i), map[string]any{"v": 1.0})
	}
	if err := s.Validate(map[string]any{"values": values}); err != nil {
		t.Errorf("100,000 values of a union: %v", err)
	}
}

// The cost model mirrors jsonschema-go's validate: each field of
// jsonschema.Schema that holds a subschema must be walked (a $ref may
// point into it) and applied as validate applies it. A new field (a
// jsonschema-go upgrade) fails this test until it is handled in add.
func TestGraphHandlesEverySubschemaField(t *testing.T) {
	applied := map[string]string{
		"AllOf": "value", "AnyOf": "value", "OneOf": "value", "Not": "value", "If": "value", "Then": "value", "Else": "value",
		"DependentSchemas": "value", "DependencySchemas": "value",
		"PrefixItems": "item", "ItemsArray": "item", "Items": "item", "AdditionalItems": "item", "Contains": "item", "UnevaluatedItems": "item",
		"Properties": "property", "PatternProperties": "property", "AdditionalProperties": "property", "UnevaluatedProperties": "property",
		"PropertyNames": "name",
		"Defs":          "never", "Definitions": "never", "ContentSchema": "never",
	}
	st := reflect.TypeFor[jsonschema.Schema]()
	seen := map[string]bool{}
	for _, f := range reflect.VisibleFields(st) {
		var set func(v reflect.Value, marker *jsonschema.Schema)
		switch f.Type {
		case reflect.TypeFor[*jsonschema.Schema]():
			set = func(v reflect.Value, m *jsonschema.Schema) { v.Set(reflect.ValueOf(m)) }
		case reflect.TypeFor[[]*jsonschema.Schema]():
			set = func(v reflect.Value, m *jsonschema.Schema) { v.Set(reflect.ValueOf([]*jsonschema.Schema{m})) }
		case reflect.TypeFor[map[string]*jsonschema.Schema]():
			set = func(v reflect.Value, m *jsonschema.Schema) {
				v.Set(reflect.ValueOf(map[string]*jsonschema.Schema{"k": m}))
			}
		default:
			continue
		}
		seen[f.Name] = true
		how, ok := applied[f.Name]
		if !ok {
			t.Errorf("jsonschema.Schema.%s holds subschemas, and the cost model does not know how validate applies them", f.Name)
			continue
		}
		root := &jsonschema.Schema{}
		marker := &jsonschema.Schema{Title: "marker"}
		set(reflect.ValueOf(root).Elem().FieldByIndex(f.Index), marker)
		g := newGraph(schemaFields())
		n := g.add(root, "")
		m := g.nodes[marker]
		if m == nil {
			t.Errorf("%s: not walked", f.Name)
			continue
		}
		var got []string
		if slices.Contains(slices.Concat(n.must, n.anyOf, n.may), m) {
			got = append(got, "value")
		}
		if slices.Contains(n.everyItem, m) || n.contains == m || len(n.positional) > 0 && slices.Contains(n.positional[0], m) {
			got = append(got, "item")
		}
		if n.props["k"] == m || n.additional == m || slices.Contains(n.everyValue, m) || len(n.patterns) > 0 && n.patterns[0].n == m {
			got = append(got, "property")
		}
		if n.names == m {
			got = append(got, "name")
		}
		if len(got) == 0 {
			got = append(got, "never")
		}
		if len(got) != 1 || got[0] != how {
			t.Errorf("%s: applied to %v, want %s", f.Name, got, how)
		}
	}
	for name := range applied {
		if !seen[name] {
			t.Errorf("%s: no such subschema field in jsonschema.Schema", name)
		}
	}
}

// jsonschema-go prints the value it checks in its errors: what reaches a
// client is cut short.
func TestValidationErrorsAreShortened(t *testing.T) {
	tools, _, err := ListTools(context.Background(), fakeCaller{`{"tools":[{"name":"t","inputSchema":{"type":"object","properties":{"s":{"type":"number"}}}}]}`}, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(map[string]any{"s": strings.Repeat("x", 100_000)})
	res, err := CallTool(context.Background(), fakeCaller{`{"content":[]}`}, tools[0], &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "t", Arguments: args}})
	if err != nil || !res.IsError {
		t.Fatal(res, err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if len(text) > maxErrorText+200 || !strings.Contains(text, "more bytes)") {
		t.Errorf("error of %d bytes: %.200s", len(text), text)
	}
}
