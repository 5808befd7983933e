package sdk

import (
	"encoding/json"
	"testing"

	"github.com/mcphost/mcphost/abi"
)

func TestClientSupportsUI(t *testing.T) {
	r := newRegistry()
	var got bool
	r.addTool(abi.Tool{Name: "t"}, func(ctx *Context, _ json.RawMessage) (*abi.CallToolResult, error) {
		got = ctx.ClientSupportsUI()
		return nil, nil
	})
	for caps, want := range map[string]bool{
		`{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}}`: true,
		`{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/uri-list"]}}}`:             false,
		`{"extensions":{"io.modelcontextprotocol/ui":{}}}`:                                          false,
		`{"extensions":{"io.modelcontextprotocol/tasks":{}}}`:                                       false,
		`{"sampling":{}}`: false,
	} {
		call(t, r, abi.ExportCallTool, `{"request":{"name":"t"},"context":{"_meta":{},"clientCapabilities":`+caps+`}}`)
		if got != want {
			t.Errorf("ClientSupportsUI with %s = %v, want %v", caps, got, want)
		}
	}
}
