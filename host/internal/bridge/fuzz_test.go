package bridge

import (
	"context"
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
		ReadResource(ctx, p, &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: "test://a"}})
		GetPrompt(ctx, p, &mcp.Prompt{Name: "p"}, "p", &mcp.GetPromptRequest{Params: &mcp.GetPromptParams{Name: "p"}})
		Complete(ctx, p, &mcp.CompleteReference{Type: "ref/prompt", Name: "p"}, &mcp.CompleteRequest{Params: &mcp.CompleteParams{}})
	})
}
