// Command hypermcp-v1 is a test plugin written exactly to hyper-mcp's
// original ("v1") plugin ABI, with go-pdk and no mcphost code: exports
// describe (-> ListToolsResult) and call ({"params": CallToolRequest
// params} -> CallToolResult). mcphost must load and run it unmodified.
package main

import (
	"encoding/json"

	"github.com/extism/go-pdk"
)

func main() {}

//go:wasmexport describe
func describe() int32 {
	pdk.OutputString(`{"tools":[{"name":"shout","description":"upper-cases text","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}}]}`)
	return 0
}

//go:wasmexport call
func call() int32 {
	var in struct {
		Params struct {
			Name      string `json:"name"`
			Arguments struct {
				Text string `json:"text"`
			} `json:"arguments"`
		} `json:"params"`
	}
	if err := json.Unmarshal(pdk.Input(), &in); err != nil || in.Params.Name != "shout" {
		pdk.SetErrorString("bad v1 call input: " + string(pdk.Input()))
		return 1
	}
	out := []byte(in.Params.Arguments.Text)
	for i, c := range out {
		if c >= 'a' && c <= 'z' {
			out[i] = c - 32
		}
	}
	b, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": string(out)}}})
	pdk.Output(b)
	return 0
}
