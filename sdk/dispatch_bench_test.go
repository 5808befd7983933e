package sdk

import (
	"encoding/json"
	"testing"

	"github.com/mcphost/mcphost/abi"
)

// BenchmarkDispatchEcho is the SDK's own work for one tools/call of an echo
// tool (as plugins/everything has it), natively: decoding the envelope, the
// params and the arguments, and encoding the result. In the Wasm guest the
// same code runs a few times slower; this benchmark shows where it goes
// and what a change saves (BENCHMARKS.md, issue 18).
//
//	go test -run '^$' -bench DispatchEcho -benchmem ./sdk/
func BenchmarkDispatchEcho(b *testing.B) {
	r := newRegistry()
	r.addTool(abi.Tool{Name: "echo", InputSchema: objSchema}, func(_ *Context, args json.RawMessage) (*abi.CallToolResult, error) {
		var in struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal(args, &in); err != nil {
			return nil, InvalidParams("echo: %v", err)
		}
		return TextResult(in.Text), nil
	})
	for _, tc := range []struct{ name, input string }{
		{"minimal", `{"request":{"name":"echo","arguments":{"text":"hello"}},"context":{}}`},
		{"stateful", `{"request":{"name":"echo","arguments":{"text":"hello"}},"context":{"id":7821721795495376,"_meta":{},"clientCapabilities":{"roots":{"listChanged":true}}}}`},
		{"stateless", `{"request":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true}},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"name":"echo","arguments":{"text":"hello"}},"context":{"id":6229756520369256,"_meta":{"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true}},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"clientCapabilities":{"roots":{"listChanged":true}}}}`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			in := []byte(tc.input)
			b.ReportAllocs()
			for b.Loop() {
				if _, perr := r.dispatch(abi.ExportCallTool, in); perr != nil {
					b.Fatal(perr)
				}
			}
		})
	}
}
