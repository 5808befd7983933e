package bridge

import (
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"strconv"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// Limits on the JSON Schemas a plugin offers (inputSchema, outputSchema).
// A plugin is hostile: its schemas are checked before jsonschema-go
// decodes them, and what validating a value against them may cost is
// bounded before the value is validated.
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

// Schema is a JSON Schema a plugin offered, resolved and checked, against
// which values are validated with bounded work.
type Schema struct {
	resolved *jsonschema.Resolved
	root     *node
	names    declaredNames
	// flat, for a flat schema (flat.go), accepts most valid values
	// without resolved; nil for any other.
	flat *flatSchema

	// deferred, when set, is the schema as listed, to check and resolve
	// at its first use (Limits.Deferred); once guards that, and err is
	// what it found.
	deferred *deferredSchema
}

// deferredSchema is a schema whose check and resolution wait for its
// first use.
type deferredSchema struct {
	once   sync.Once
	raw    json.RawMessage
	fields map[string]reflect.StructField
	err    error
}

// Validate checks v, a decoded JSON value, against the schema. A value
// whose check could take more work than its budget, or whose errors could
// take more memory (see node.bound), is refused unchecked.
func (s *Schema) Validate(v any) error {
	if err := s.ready(); err != nil {
		return err
	}
	if m, ok := v.(map[string]any); ok && s.flat != nil && s.flat.accepts(m) {
		return nil
	}
	if err := s.root.bound(v); err != nil {
		return fmt.Errorf("not checked: %w", err)
	}
	return s.resolved.Validate(v)
}

// ready checks and resolves a deferred schema, once.
func (s *Schema) ready() error {
	if d := s.deferred; d != nil {
		d.once.Do(func() {
			var built *Schema
			if built, d.err = build(d.raw, d.fields); d.err == nil {
				s.resolved, s.root, s.names, s.flat = built.resolved, built.root, built.names, built.flat
			}
		})
		if d.err != nil {
			return fmt.Errorf("not checked: the schema, checked when its plugin's description was cached, is refused now: %w", d.err)
		}
	}
	return nil
}

// CheckKeyCase refuses v, decoded tool arguments, when an object in it
// has a key that equals a property the schema declares except for case
// (keycase.go says why). Call it after Validate, which readies the schema.
func (s *Schema) CheckKeyCase(v any) error {
	if err := s.ready(); err != nil {
		return err
	}
	return s.names.check(v)
}

// schemaCache resolves each distinct schema of one listing once: many
// tools share a schema (often just {"type": "object"}), and a Schema is
// read-only once built.
type schemaCache struct {
	// deferred leaves each schema's check and resolution to its first
	// use (Limits.Deferred); sizes, nesting and the plugin's total are
	// still checked at once.
	deferred bool
	byRaw    map[string]*Schema
	// left is how many more subschemas the plugin's schemas may hold.
	left   int
	fields map[string]reflect.StructField // schemaFields()
}

func newSchemaCache() *schemaCache {
	return &schemaCache{byRaw: map[string]*Schema{}, left: maxPluginSchemas, fields: schemaFields()}
}

// compile checks raw, a schema as the plugin listed it, and resolves it.
// It refuses what is not a JSON Schema of its dialect (see
// checkMetaSchema), and what could not be validated with bounded work: a
// schema too big, a $ref to anything outside it (nothing is ever fetched), a cycle of
// references that consumes nothing of the value being validated (which
// would recurse until the stack overflows and the process dies), or one
// whose validation multiplies the work beyond the budget even for a
// single value.
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
	if c.deferred {
		s := &Schema{deferred: &deferredSchema{raw: raw, fields: c.fields}}
		c.byRaw[string(raw)] = s
		return s, nil
	}
	s, err := build(raw, c.fields)
	if err != nil {
		return nil, err
	}
	c.byRaw[string(raw)] = s
	return s, nil
}

// build checks raw against its dialect's meta-schema rules, resolves it
// and bounds what validating against it may cost (see compile).
func build(raw json.RawMessage, fields map[string]reflect.StructField) (*Schema, error) {
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	if err := checkMetaSchema(doc); err != nil {
		return nil, fmt.Errorf("not a valid JSON Schema: %w", err)
	}
	var js jsonschema.Schema
	if err := json.Unmarshal(raw, &js); err != nil {
		return nil, fmt.Errorf("not a JSON Schema: %w", err)
	}
	resolved, err := js.Resolve(&jsonschema.ResolveOptions{Loader: refuseRemote})
	if err != nil {
		return nil, fmt.Errorf("invalid JSON Schema: %w", err)
	}
	root, err := buildGraph(&js, fields)
	if err != nil {
		return nil, err
	}
	// The least a validation may cost is that of a single value, which
	// meets every subschema reached without consuming anything.
	if err := root.bound(nil); err != nil {
		return nil, fmt.Errorf("validating even a single value against it %w", err)
	}
	return &Schema{resolved: resolved, root: root, names: collectDeclaredNames(doc), flat: newFlatSchema(doc)}, nil
}

// refuseRemote is the loader jsonschema-go calls for a $ref outside the
// schema: the host never fetches anything a plugin names.
func refuseRemote(uri *url.URL) (*jsonschema.Schema, error) {
	return nil, fmt.Errorf("it refers to %s, outside the schema (remote references are not fetched)", strconv.QuoteToASCII(uri.String()))
}
