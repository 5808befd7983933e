package bridge

import (
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
)

// Limits on the JSON Schemas a plugin offers (inputSchema, outputSchema).
// A plugin is hostile: its schemas are checked before jsonschema-go
// decodes them.
const (
	// maxNesting bounds how deep the values in a definition (schemas
	// included) may nest: jsonschema-go decodes a schema in time and memory
	// proportional to its size times its depth.
	maxNesting = 64
	// maxSchemaBytes bounds one schema.
	maxSchemaBytes = 128 << 10
	// maxPluginSchemas bounds how many subschemas all of one plugin's
	// schemas hold together: each costs ~1.3 KB once resolved, and a 4 MB
	// listing could otherwise hold over a million of them.
	maxPluginSchemas = 50_000
)

// Schema is a JSON Schema a plugin offered, resolved and checked.
type Schema struct {
	resolved *jsonschema.Resolved
}

// Validate checks v, a decoded JSON value, against the schema.
func (s *Schema) Validate(v any) error {
	return s.resolved.Validate(v)
}

// schemaCache resolves each distinct schema of one listing once: many
// tools share a schema (often just {"type": "object"}), and a Schema is
// read-only once built.
type schemaCache struct {
	byRaw map[string]*Schema
	// left is how many more subschemas the plugin's schemas may hold.
	left int
}

func newSchemaCache() *schemaCache {
	return &schemaCache{byRaw: map[string]*Schema{}, left: maxPluginSchemas}
}

// compile checks raw, a schema as the plugin listed it, and resolves it.
// It refuses a schema too big before jsonschema-go decodes it.
func (c *schemaCache) compile(raw json.RawMessage) (*Schema, error) {
	if len(raw) > maxSchemaBytes {
		return nil, fmt.Errorf("is %d bytes (at most %d)", len(raw), maxSchemaBytes)
	}
	if s, ok := c.byRaw[string(raw)]; ok {
		return s, nil
	}
	sh, err := scanJSON(raw, maxNesting)
	if err != nil {
		return nil, err
	}
	if sh.schemas > c.left {
		return nil, fmt.Errorf("holds up to %d subschemas, more than the %d left of the %d the plugin's schemas may hold in all",
			sh.schemas, c.left, maxPluginSchemas)
	}
	c.left -= sh.schemas
	var js jsonschema.Schema
	if err := json.Unmarshal(raw, &js); err != nil {
		return nil, fmt.Errorf("not a JSON Schema: %w", err)
	}
	resolved, err := js.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("invalid JSON Schema: %w", err)
	}
	s := &Schema{resolved: resolved}
	c.byRaw[string(raw)] = s
	return s, nil
}
