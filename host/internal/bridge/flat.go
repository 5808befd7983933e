package bridge

import (
	"math"
	"slices"
)

// flatSchema is what a flat input schema asks of tool arguments, the most
// common kind: an object whose declared properties are each of one scalar
// type, some required, others perhaps refused. For such a schema, accepts
// answers without jsonschema-go (whose validate costs microseconds even
// for {"text": "hello"}), and without bounding the work (it is linear in
// the value's keys). It only ever says "valid": a value it does not accept
// goes through the full validation, which decides, and words the error.
type flatSchema struct {
	props    map[string]string // property name → its type
	required []string
	closed   bool // additionalProperties: false
}

// flatKeys are the keywords a flat schema may use at its top: any other
// (a $ref, a pattern, a bound, a $schema, anything unknown) leaves the
// schema to jsonschema-go alone. flatPropKeys likewise for a property.
var (
	flatKeys     = []string{"type", "properties", "required", "additionalProperties", "title", "description"}
	flatPropKeys = []string{"type", "title", "description"}
	flatTypes    = []string{"string", "integer", "number", "boolean"}
)

// newFlatSchema returns the flat form of doc, a schema as decoded by
// encoding/json, or nil when it is not flat.
func newFlatSchema(doc any) *flatSchema {
	m, ok := doc.(map[string]any)
	if !ok || m["type"] != "object" {
		return nil
	}
	f := &flatSchema{props: map[string]string{}}
	for k, v := range m {
		if !slices.Contains(flatKeys, k) {
			return nil
		}
		switch k {
		case "properties":
			props, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			for name, p := range props {
				pm, ok := p.(map[string]any)
				if !ok {
					return nil
				}
				for pk := range pm {
					if !slices.Contains(flatPropKeys, pk) {
						return nil
					}
				}
				t, _ := pm["type"].(string)
				if !slices.Contains(flatTypes, t) {
					return nil
				}
				f.props[name] = t
			}
		case "required":
			req, ok := v.([]any)
			if !ok {
				return nil
			}
			for _, r := range req {
				name, ok := r.(string)
				if !ok {
					return nil
				}
				f.required = append(f.required, name)
			}
		case "additionalProperties":
			closed, ok := v.(bool)
			if !ok {
				return nil
			}
			f.closed = !closed
		case "title", "description":
			if _, ok := v.(string); !ok {
				return nil
			}
		}
	}
	return f
}

// accepts reports whether args, decoded by encoding/json, certainly
// satisfy the schema. false means "not certain": validate fully.
func (f *flatSchema) accepts(args map[string]any) bool {
	for _, name := range f.required {
		if _, ok := args[name]; !ok {
			return false
		}
	}
	for name, v := range args {
		t, declared := f.props[name]
		if !declared {
			if f.closed {
				return false
			}
			continue
		}
		if !scalarOfType(v, t) {
			return false
		}
	}
	return true
}

// maxExactInteger bounds the integers accepted here: past 2^53 a float64
// is integral whatever was written, and the full validator decides.
const maxExactInteger = 1 << 53

// scalarOfType reports whether v, a JSON value decoded by encoding/json,
// is of the JSON Schema type t (one of flatTypes).
func scalarOfType(v any, t string) bool {
	switch t {
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "number":
		_, ok := v.(float64)
		return ok
	case "integer":
		n, ok := v.(float64)
		return ok && n == math.Trunc(n) && math.Abs(n) < maxExactInteger
	}
	return false
}
