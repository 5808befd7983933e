package sdk

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// SchemaFor returns the JSON Schema (2020-12) of the JSON that
// encoding/json makes of a value of type T, as [AddTypedTool] derives a
// tool's inputSchema and outputSchema from its Go types:
//
//   - a struct is an object of its exported fields, named and left out as
//     their `json` tags say, and no others (additionalProperties false, as
//     go-sdk infers); embedded structs' fields are promoted;
//   - a field is required unless its tag says omitempty or omitzero, or it
//     is a pointer;
//   - a `jsonschema:"…"` tag is the field's description (as go-sdk's);
//   - bool, string, integers (unsigned ones with minimum 0), floats, slices
//     and arrays ([]byte is a base64 string), maps with string keys, and
//     pointers (which also admit null) map to their JSON types;
//   - a type with its own JSON encoding (json.Marshaler, json.RawMessage,
//     interfaces) admits any value, an encoding.TextMarshaler a string;
//   - a type that contains itself admits any value where it recurs.
//
// It returns an error for what JSON cannot encode (channels, functions,
// complex numbers, maps with other keys).
func SchemaFor[T any]() (json.RawMessage, error) {
	s, err := schemaOf(reflect.TypeFor[T](), map[reflect.Type]bool{})
	if err != nil {
		return nil, err
	}
	return json.Marshal(s)
}

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// schemaOf builds the schema of t; seen holds the struct types being built,
// so that a recursive type ends in an unconstrained schema.
func schemaOf(t reflect.Type, seen map[reflect.Type]bool) (map[string]any, error) {
	if t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler) {
		return map[string]any{}, nil
	}
	if t.Implements(textMarshaler) || reflect.PointerTo(t).Implements(textMarshaler) {
		return map[string]any{"type": "string"}, nil
	}
	switch t.Kind() {
	case reflect.Bool:
		return map[string]any{"type": "boolean"}, nil
	case reflect.String:
		return map[string]any{"type": "string"}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return map[string]any{"type": "integer"}, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return map[string]any{"type": "integer", "minimum": 0}, nil
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}, nil
	case reflect.Interface:
		return map[string]any{}, nil
	case reflect.Pointer:
		s, err := schemaOf(t.Elem(), seen)
		if err != nil {
			return nil, err
		}
		if typ, ok := s["type"].(string); ok {
			s["type"] = []string{typ, "null"}
		}
		return s, nil
	case reflect.Slice, reflect.Array:
		if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 {
			return map[string]any{"type": "string", "contentEncoding": "base64"}, nil
		}
		items, err := schemaOf(t.Elem(), seen)
		if err != nil {
			return nil, err
		}
		s := map[string]any{"type": "array", "items": items}
		if t.Kind() == reflect.Array {
			s["minItems"], s["maxItems"] = t.Len(), t.Len()
		}
		return s, nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String && !t.Key().Implements(textMarshaler) {
			return nil, fmt.Errorf("%s: map keys must be strings", t)
		}
		values, err := schemaOf(t.Elem(), seen)
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": "object", "additionalProperties": values}, nil
	case reflect.Struct:
		if seen[t] {
			return map[string]any{}, nil
		}
		seen[t] = true
		defer delete(seen, t)
		s := map[string]any{"type": "object", "additionalProperties": false}
		properties := map[string]any{}
		required := []string{}
		if err := addFields(t, seen, properties, &required); err != nil {
			return nil, err
		}
		s["properties"] = properties
		if len(required) > 0 {
			s["required"] = required
		}
		return s, nil
	}
	return nil, fmt.Errorf("%s: JSON cannot encode a %s", t, t.Kind())
}

// addFields adds the JSON fields of struct t, embedded structs' included.
func addFields(t reflect.Type, seen map[reflect.Type]bool, properties map[string]any, required *[]string) error {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		ft := f.Type
		if f.Anonymous && name == "" {
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				if err := addFields(ft, seen, properties, required); err != nil {
					return err
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fs, err := schemaOf(f.Type, seen)
		if err != nil {
			return fmt.Errorf("field %s: %w", f.Name, err)
		}
		if d := f.Tag.Get("jsonschema"); d != "" {
			fs["description"] = d
		}
		properties[name] = fs
		optional := f.Type.Kind() == reflect.Pointer
		for _, o := range strings.Split(opts, ",") {
			optional = optional || o == "omitempty" || o == "omitzero"
		}
		if !optional {
			*required = append(*required, name)
		}
	}
	return nil
}
