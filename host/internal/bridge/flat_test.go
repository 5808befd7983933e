package bridge

import (
	"encoding/json"
	"testing"
)

// flatSchemas are schemas newFlatSchema must take as flat.
var flatSchemas = []string{
	`{"type":"object","properties":{"text":{"type":"string","description":"The text to echo back."}},"required":["text"],"additionalProperties":false}`,
	`{"type":"object"}`,
	`{"type":"object","title":"t","description":"d","additionalProperties":true,"properties":{"a":{"type":"integer","title":"A"},"b":{"type":"number"},"c":{"type":"boolean"},"d":{"type":"string"}},"required":["a","b","zz"]}`,
	`{"type":"object","properties":{"n":{"type":"integer"}},"additionalProperties":false}`,
}

// notFlatSchemas use something a flat schema may not, and must be left
// to jsonschema-go alone.
var notFlatSchemas = []string{
	`{"type":"object","properties":{"text":{"type":"string","maxLength":3}}}`,
	`{"type":"object","properties":{"text":{"type":["string","null"]}}}`,
	`{"type":"object","properties":{"o":{"type":"object"}}}`,
	`{"type":"object","properties":{"a":{"type":"array","items":{"type":"string"}}}}`,
	`{"type":"object","properties":{"e":{"enum":["a","b"]}}}`,
	`{"type":"object","additionalProperties":{"type":"string"}}`,
	`{"type":"object","minProperties":1}`,
	`{"type":"object","$defs":{"a":{"type":"string"}},"properties":{"x":{"$ref":"#/$defs/a"}}}`,
	`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object"}`,
	`{"type":["object"]}`,
	`{"properties":{"a":{"type":"string"}}}`,
}

func compileForTest(t testing.TB, raw string) *Schema {
	t.Helper()
	s, err := newSchemaCache().compile(json.RawMessage(raw))
	if err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return s
}

func TestFlatSchemasAreRecognized(t *testing.T) {
	for _, raw := range flatSchemas {
		if compileForTest(t, raw).flat == nil {
			t.Errorf("%s: not taken as flat", raw)
		}
	}
	for _, raw := range notFlatSchemas {
		if compileForTest(t, raw).flat != nil {
			t.Errorf("%s: taken as flat", raw)
		}
	}
}

// flatArgs are arguments valid or not against flatSchemas.
var flatArgs = []string{
	`{"text":"hello"}`, `{}`, `{"text":1}`, `{"text":null}`, `{"text":"a","extra":true}`,
	`{"a":1,"b":2.5,"c":true,"d":"x","zz":null}`, `{"a":1.5,"b":1,"zz":0}`, `{"a":1e300,"b":0,"zz":0}`,
	`{"a":9007199254740993,"b":0,"zz":0}`, `{"n":-0}`, `{"n":"1"}`, `{"A":1}`,
}

// FuzzFlatSchema checks that whatever a flat schema accepts, jsonschema-go
// accepts too (a flat schema never refuses: it defers).
func FuzzFlatSchema(f *testing.F) {
	for i := range flatSchemas {
		for _, args := range flatArgs {
			f.Add(uint8(i), []byte(args))
		}
	}
	schemas := make([]*Schema, len(flatSchemas))
	for i, raw := range flatSchemas {
		schemas[i] = compileForTest(f, raw)
	}
	f.Fuzz(func(t *testing.T, which uint8, raw []byte) {
		s := schemas[int(which)%len(schemas)]
		var args map[string]any
		if json.Unmarshal(raw, &args) != nil || args == nil || !s.flat.accepts(args) {
			return
		}
		if err := s.root.bound(args); err != nil {
			t.Fatalf("%s against %s: accepted as flat, refused unchecked: %v", raw, flatSchemas[int(which)%len(schemas)], err)
		}
		if err := s.resolved.Validate(args); err != nil {
			t.Fatalf("%s against %s: accepted as flat, refused by jsonschema-go: %v", raw, flatSchemas[int(which)%len(schemas)], err)
		}
	})
}
