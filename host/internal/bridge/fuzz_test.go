package bridge

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FuzzPluginOutput feeds arbitrary bytes as a plugin's output to every
// decoder of the bridge: none may panic, whatever a plugin returns.
func FuzzPluginOutput(f *testing.F) {
	for _, seed := range []string{
		`{"tools":[{"name":"a","inputSchema":{"type":"object","properties":{"x":{"type":"string"}}}}]}`,
		`{"resources":[{"uri":"test://a","name":"a"}]}`,
		`{"resourceTemplates":[{"uriTemplate":"test://{id}","name":"t"}]}`,
		`{"prompts":[{"name":"p","arguments":[{"name":"a","required":true}]}]}`,
		`{"content":[{"type":"image","data":"AAAA","mimeType":"image/png"}],"structuredContent":{"a":1}}`,
		`{"inputRequests":{"k":{"method":"roots/list","params":{}}},"requestState":"s"}`,
		`{"contents":[{"uri":"test://a","blob":"!!"}]}`,
		`{"messages":[{"role":"user","content":{"type":"resource","resource":{"uri":"x"}}}]}`,
		`{"completion":{"values":["a"],"total":1}}`,
		`{"tools":[{"name":"a","inputSchema":{"type":"object","$ref":"#/nope"}}]}`,
		`{"tools":[{"name":"a","inputSchema":{"type":"object","$defs":{"a":{"$ref":"#/$defs/b"},"b":{"allOf":[{"$ref":"#/$defs/a"}]}},"properties":{"x":{"$ref":"#/$defs/a"}}}}]}`,
		`{"tools":[{"name":"a","inputSchema":{"type":"object","properties":{"x":{"items":{"$ref":"#"}}}},"outputSchema":{"$dynamicRef":"#d","$dynamicAnchor":"d"}}]}`,
		"\x00\xff",
	} {
		f.Add([]byte(seed))
	}
	ctx := context.Background()
	tool := Tool{MCP: &mcp.Tool{Name: "t"}, PluginName: "t"}
	var err error
	if tool.Input, err = newSchemaCache().compile([]byte(`{"type":"object"}`)); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, out []byte) {
		p := fakeCaller{string(out)}
		ListTools(ctx, p, Limits{})
		ListResources(ctx, p, Limits{})
		ListResourceTemplates(ctx, p, Limits{})
		ListPrompts(ctx, p, Limits{})
		CallTool(ctx, p, tool, &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "t"}})
		ReadResource(ctx, p, &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: "test://a"}}, nil)
		GetPrompt(ctx, p, &mcp.Prompt{Name: "p"}, "p", &mcp.GetPromptRequest{Params: &mcp.GetPromptParams{Name: "p"}})
		Complete(ctx, p, &mcp.CompleteReference{Type: "ref/prompt", Name: "p"}, &mcp.CompleteRequest{Params: &mcp.CompleteParams{}})
	})
}

// FuzzSchemaValidation compiles arbitrary schemas and validates arbitrary
// values against those it accepts. Nothing may crash or hang (a stack
// overflow kills the fuzzing process), and the cost model must hold:
// an error validate returns is never longer than the message estimated.
func FuzzSchemaValidation(f *testing.F) {
	for _, seed := range [][2]string{
		{`{"type":"object","properties":{"a":{"$ref":"#"}}}`, `{"a":{"a":{}}}`},
		{`{"type":"object","$defs":{"a":{"$ref":"#/$defs/b"},"b":{"allOf":[{"$ref":"#/$defs/a"}]}}}`, `{}`},
		{`{"type":"object","allOf":[{"$ref":"#"}]}`, `{}`},
		{`{"$dynamicAnchor":"n","anyOf":[{"type":"string"},{"items":{"$dynamicRef":"#n"}}]}`, `[["x",[1]]]`},
		{`{"$id":"https://example.com/s","$defs":{"x":{"$id":"x","anyOf":[{"type":"string","pattern":"^a"},{"$ref":"s"}]}},"items":{"$ref":"x"}}`, `["b"]`},
		{`{"anyOf":[{"anyOf":[{"const":1},{"const":2}]},{"anyOf":[{"enum":[3,4]},{"type":"object"}]}]}`, `"long string that is printed"`},
		{`{"type":"object","additionalProperties":false,"patternProperties":{"^x":{"not":{"type":"number"}}},"propertyNames":{"maxLength":3}}`, `{"xa":1,"yy":2,"long":3}`},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","items":[{"type":"string"}],"additionalItems":{"$ref":"#"},"dependencies":{"a":["b"]}}`, `["a",[1],{"a":1}]`},
		{`{"if":{"type":"string"},"then":{"minLength":2},"else":{"uniqueItems":true,"contains":{"type":"null"}}}`, `[null,null]`},
	} {
		f.Add([]byte(seed[0]), []byte(seed[1]))
	}
	f.Fuzz(func(t *testing.T, schema, value []byte) {
		var v any
		if json.Unmarshal(value, &v) != nil {
			return
		}
		s, err := newSchemaCache().compile(schema)
		if err != nil {
			return
		}
		e, _, _ := s.root.estimate(v)
		if err := s.Validate(v); err != nil && !strings.HasPrefix(err.Error(), "not checked") && len(err.Error()) > e.msg {
			t.Errorf("error of %d bytes, estimated at most %d: %s", len(err.Error()), e.msg, err)
		}
	})
}
