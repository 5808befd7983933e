package bridge

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// Schemas that are not JSON Schemas, which jsonschema-go decodes and
// resolves without a word (or with an error naming no place): each must be
// refused at load, naming where in the schema and what is wrong.
var invalidSchemas = []struct{ schema, want string }{
	{`{"type":"object","properties":{"n":{"type":"numbr"}}}`, `at "/properties/n/type": "numbr" is not a JSON Schema type (one of array, boolean, integer, null, number, object, string)`},
	{`{"type":"object","properties":{"n":{"type":["string","strin"]}}}`, `at "/properties/n/type/1": "strin" is not a JSON Schema type`},
	{`{"type":"object","properties":{"n":{"type":["string","string"]}}}`, `at "/properties/n/type": names "string" twice`},
	{`{"type":"object","properties":{"n":{"type":[]}}}`, `at "/properties/n/type": is an empty array`},
	{`{"type":"object","properties":{"n":{"type":3}}}`, `at "/properties/n/type": must be a type name or an array of them`},
	{`{"type":"object","properties":{"n":{"minLength":-1}}}`, `at "/properties/n/minLength": must be a non-negative integer, not the number -1`},
	{`{"type":"object","properties":{"n":{"maxItems":1.5}}}`, `at "/properties/n/maxItems": must be a non-negative integer, not the number 1.5`},
	{`{"type":"object","properties":{"n":{"multipleOf":0}}}`, `at "/properties/n/multipleOf": must be a number greater than 0, not the number 0`},
	{`{"type":"object","properties":{"n":{"minimum":"3"}}}`, `at "/properties/n/minimum": must be a number, not the string "3"`},
	{`{"type":"object","required":["a","a"]}`, `at "/required": names "a" twice`},
	{`{"type":"object","required":"a"}`, `at "/required": must be an array of property names, not the string "a"`},
	{`{"type":"object","properties":{"n":"string"}}`, `at "/properties/n": a schema must be an object or a boolean, not the string "string"`},
	{`{"type":"object","properties":[]}`, `at "/properties": must be an object whose values are schemas, not an array`},
	{`{"type":"object","properties":{"n":{"anyOf":[]}}}`, `at "/properties/n/anyOf": must be a non-empty array of schemas, not an array`},
	{`{"type":"object","properties":{"n":{"items":{"type":"x"}}}}`, `at "/properties/n/items/type": "x" is not a JSON Schema type`},
	{`{"type":"object","$defs":{"d":{"type":"y"}},"properties":{"n":{"$ref":"#/$defs/d"}}}`, `at "/$defs/d/type": "y" is not a JSON Schema type`},
	{`{"type":"object","properties":{"n":{"pattern":"("}}}`, `at "/properties/n/pattern": is not a regular expression`},
	{`{"type":"object","patternProperties":{"(":{}}}`, `at "/patternProperties": key "(" is not a regular expression`},
	{`{"type":"object","properties":{"n":{"enum":"a"}}}`, `at "/properties/n/enum": must be an array, not the string "a"`},
	{`{"type":"object","properties":{"n":{"uniqueItems":"yes"}}}`, `at "/properties/n/uniqueItems": must be true or false`},
	{`{"type":"object","properties":{"n":{"description":7}}}`, `at "/properties/n/description": must be a string, not the number 7`},
	{`{"type":"object","dependentRequired":{"a":"b"}}`, `at "/dependentRequired/a": must be an array of property names`},
	{`{"type":"object","properties":{"a/b~":{"type":"nope"}}}`, `at "/properties/a~1b~0/type": "nope"`},
	{`{"$schema":"http://json-schema.org/draft-04/schema#","type":"object"}`, `at "/$schema": "http://json-schema.org/draft-04/schema#" is not a dialect the host can validate`},
	{`{"$schema":"https://json-schema.org/draft/2020-12/schema#","type":"object"}`, `at "/$schema": "https://json-schema.org/draft/2020-12/schema#" is not a dialect`},
}

// Schemas that are valid, some using what only one dialect allows.
var validSchemas = []string{
	`{"type":"object"}`,
	`{"type":"object","properties":{"n":{"type":["integer","null"],"minimum":0,"multipleOf":0.5},"s":{"type":"string","minLength":0,"maxLength":3,"pattern":"^a","format":"email"}},"required":["n"],"additionalProperties":false}`,
	`{"type":"object","properties":{"l":{"type":"array","prefixItems":[{"type":"string"}],"items":false,"contains":{"const":1},"minContains":1}}}`,
	`{"type":"object","$defs":{"d":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/d"}},"dependentRequired":{"a":["b"]},"x-vendor":{"type":"anything goes here"}}`,
	`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"t":{"type":"array","items":[{"type":"string"},true],"additionalItems":false}},"dependencies":{"t":["u"],"u":{"required":["t"]}},"definitions":{"x":{}}}`,
	`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"b":true,"c":false,"e":{"enum":[]},"x":{"examples":[1,"a"],"deprecated":true}}}`,
}

func TestInvalidSchemasAreRefusedNamingThePlace(t *testing.T) {
	for _, c := range invalidSchemas {
		_, err := compile(t, c.schema)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error saying %s", c.schema, err, c.want)
		}
	}
	for _, s := range validSchemas {
		if _, err := compile(t, s); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
}

// checkMetaSchema stands in for validation against the dialect's
// meta-schema (whose errors name the meta-schema's paths, not the
// schema's). It must agree with it: on every schema here, valid or not,
// jsonschema-go validating against the official meta-schema
// (testdata/metaschema, copied from jsonschema-go v0.4.3) says the same.
func TestMetaSchemaCheckAgreesWithTheMetaSchema(t *testing.T) {
	meta := map[bool]*jsonschema.Resolved{}
	for draft7, uri := range map[bool]string{false: draft202012, true: draft07} {
		u, err := url.Parse(uri)
		if err != nil {
			t.Fatal(err)
		}
		s, err := loadMetaSchema(u)
		if err != nil {
			t.Fatal(err)
		}
		if meta[draft7], err = s.Resolve(&jsonschema.ResolveOptions{BaseURI: uri, Loader: loadMetaSchema}); err != nil {
			t.Fatalf("resolve %s: %v", uri, err)
		}
	}
	var all []string
	for _, c := range invalidSchemas {
		if !strings.Contains(c.want, "regular expression") { // the meta-schema does not compile patterns; Resolve does
			all = append(all, c.schema)
		}
	}
	all = append(all, validSchemas...)
	for _, s := range all {
		var doc any
		if err := json.Unmarshal([]byte(s), &doc); err != nil {
			t.Fatal(err)
		}
		dialect, _ := doc.(map[string]any)["$schema"].(string)
		if dialect != "" && dialect != draft202012 && dialect != draft07 {
			continue // no meta-schema to compare with: refused for the dialect alone
		}
		mine := checkMetaSchema(doc)
		theirs := meta[dialect == draft07].Validate(doc)
		if (mine == nil) != (theirs == nil) {
			t.Errorf("%s:\n checkMetaSchema: %v\n meta-schema: %v", s, mine, theirs)
		}
	}
}

// loadMetaSchema loads the meta-schemas from testdata.
func loadMetaSchema(u *url.URL) (*jsonschema.Schema, error) {
	var file string
	if rest, ok := strings.CutPrefix(u.String(), "https://json-schema.org/draft/2020-12/"); ok {
		file = filepath.Join("testdata", "metaschema", "draft2020-12", filepath.FromSlash(rest)+".json")
	} else if strings.HasPrefix(u.String(), "http://json-schema.org/draft-07/schema") {
		file = filepath.Join("testdata", "metaschema", "draft7", "schema.json")
	} else {
		return nil, fmt.Errorf("no meta-schema %s", u)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var s jsonschema.Schema
	return &s, json.Unmarshal(data, &s)
}
