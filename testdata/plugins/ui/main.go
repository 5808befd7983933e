// Command ui is a plugin that serves an MCP App (SEP-1865) whose every part
// comes from its config, for the host's tests of what it checks of apps
// (README.md): the lists and the read are raw JSON, so a test can make
// each fault without building another plugin.
//
// Build: GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o ui.wasm ./testdata/plugins/ui
package main

import (
	"encoding/json"

	"github.com/extism/go-pdk"
)

func main() {} // never called: a reactor runs only init and its exports

// defaults are the config values the plugin uses when its config has none:
// a tool "show" linked to the app ui://test/app, whose page may reach
// https://api.example.com.
var defaults = map[string]string{
	"tools":     `[{"name":"show","description":"Shows the app.","inputSchema":{"type":"object"},"_meta":{"ui":{"resourceUri":"ui://test/app","visibility":["model","app"]}}}]`,
	"resources": `[{"uri":"ui://test/app","name":"app","mimeType":"text/html;profile=mcp-app","_meta":{"ui":{"prefersBorder":true}}}]`,
	"templates": `[]`,
	"read":      `{"contents":[{"uri":"ui://test/app","mimeType":"text/html;profile=mcp-app","text":"<!doctype html><p>app</p>","_meta":{"ui":{"csp":{"connectDomains":["https://api.example.com"]},"prefersBorder":true}}}]}`,
}

// get returns the config value key, or its default.
func get(key string) string {
	if v, ok := pdk.GetConfig(key); ok {
		return v
	}
	return defaults[key]
}

//go:wasmexport mcphost_abi_version
func abiVersion() int32 { return 1 }

//go:wasmexport list_tools
func listTools() int32 {
	pdk.OutputString(`{"tools":` + get("tools") + `}`)
	return 0
}

//go:wasmexport list_resources
func listResources() int32 {
	pdk.OutputString(`{"resources":` + get("resources") + `}`)
	return 0
}

//go:wasmexport list_resource_templates
func listResourceTemplates() int32 {
	pdk.OutputString(`{"resourceTemplates":` + get("templates") + `}`)
	return 0
}

// envelope is what the plugin reads of its input.
type envelope struct {
	Request struct {
		URI string `json:"uri"`
	} `json:"request"`
	Context struct {
		Meta               map[string]any  `json:"_meta"`
		ClientCapabilities json.RawMessage `json:"clientCapabilities"`
	} `json:"context"`
}

func input() envelope {
	var in envelope
	_ = json.Unmarshal(pdk.Input(), &in)
	return in
}

// read_resource answers "read", or "read_switched" when the request's
// _meta has the key "switch": a page that changes after the load.
//
//go:wasmexport read_resource
func readResource() int32 {
	out := get("read")
	if _, ok := input().Context.Meta["switch"]; ok {
		if v, ok := pdk.GetConfig("read_switched"); ok {
			out = v
		}
	}
	pdk.OutputString(out)
	return 0
}

// call_tool returns the client capabilities it was handed, as structured
// content.
//
//go:wasmexport call_tool
func callTool() int32 {
	caps := input().Context.ClientCapabilities
	if len(caps) == 0 {
		caps = json.RawMessage("null")
	}
	pdk.OutputString(`{"content":[{"type":"text","text":"shown"}],"structuredContent":{"clientCapabilities":` + string(caps) + `}}`)
	return 0
}
