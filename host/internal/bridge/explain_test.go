package bridge

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Argument errors name the argument and the problem plainly: no
// "<invalid reflect.Value>" for a null, no schema paths for a member, no
// "1/1" or "3.000000" for a number.
func TestArgumentErrorsArePlain(t *testing.T) {
	for _, c := range []struct{ schema, args, want string }{
		{`{"type":"object","properties":{"a":{"type":"string"}}}`, `{"a":null}`, `argument "a": null has type "null", want "string"`},
		{`{"type":"object","properties":{"a":{"type":["string","integer"]}}}`, `{"a":null}`, `argument "a": null has type "null", want one of "string, integer"`},
		{`{"type":"object","properties":{"a":{"enum":["x","y"]}}}`, `{"a":null}`, `argument "a": enum: null does not equal any of: [x y]`},
		{`{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"number"}}}}}`, `{"a":{"b":null}}`, `argument "a.b": null has type "null", want "number"`},
		{`{"type":"object","properties":{"a":{"type":"integer","minimum":3}}}`, `{"a":1}`, `argument "a": minimum: 1 is less than 3`},
		{`{"type":"object","properties":{"a":{"type":"number","maximum":0.5}}}`, `{"a":2.25}`, `argument "a": maximum: 9/4 is greater than 0.5`},
		{`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`, `{}`, `missing required arguments: ["a"]`},
		{`{"type":"object","additionalProperties":false}`, `{"a":1}`, `unexpected arguments: ["a"]`},
		{`{"type":"object","properties":{"a":{"anyOf":[{"type":"string"},{"type":"number"}]}}}`, `{"a":null}`, `argument "a": null has type "null", want "number" (schema at /anyOf/1)`},
	} {
		s, err := compile(t, c.schema)
		if err != nil {
			t.Fatal(err)
		}
		_, err = checkArguments(Tool{MCP: &mcp.Tool{Name: "t"}, Input: s, PluginName: "t"}, json.RawMessage(c.args))
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "invalid reflect") || strings.Contains(err.Error(), "validating") {
			t.Errorf("%s against %s: got %v, want %s", c.args, c.schema, err, c.want)
		}
	}
}
