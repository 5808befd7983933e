package bridge

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// manyTools is list_tools' output with n tools: identical minimal schemas
// ({"type":"object"}), or small schemas that differ from tool to tool.
func manyTools(n int, distinct bool) string {
	var b strings.Builder
	b.WriteString(`{"tools":[`)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		schema := `{"type":"object"}`
		if distinct {
			schema = fmt.Sprintf(`{"type":"object","properties":{"q%d":{"type":"string","description":"what to look for"},"limit":{"type":"integer","minimum":1}},"required":["q%d"]}`, i, i)
		}
		fmt.Fprintf(&b, `{"name":"tool%d","description":"does thing %d","inputSchema":%s}`, i, i, schema)
	}
	b.WriteString(`]}`)
	return b.String()
}

// BenchmarkListTools measures checking a listing of many tools, per tool:
// time, bytes allocated, and bytes still live once listed (what a tool
// costs for as long as the plugin is loaded). Run with -benchmem.
func BenchmarkListTools(b *testing.B) {
	const n = 10_000
	for _, distinct := range []bool{false, true} {
		name := "identical-schemas"
		if distinct {
			name = "distinct-schemas"
		}
		b.Run(name, func(b *testing.B) {
			out := fakeCaller{manyTools(n, distinct)}
			lim := Limits{MaxItems: n}
			var live uint64
			for i := 0; b.Loop(); i++ {
				var before, after runtime.MemStats
				if i == 0 {
					runtime.GC()
					runtime.ReadMemStats(&before)
				}
				tools, refused, err := ListTools(context.Background(), out, lim)
				if err != nil || len(refused) > 0 || len(tools) != n {
					b.Fatal(err, refused)
				}
				if i == 0 {
					runtime.GC()
					runtime.ReadMemStats(&after)
					live = after.HeapAlloc - before.HeapAlloc
					runtime.KeepAlive(tools)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/tool")
			b.ReportMetric(float64(live)/n, "live-B/tool")
		})
	}
}

// BenchmarkEnvelope is the host's part of an envelope, as CallTool builds
// it for echo: a 2025-11-25 session's (no _meta; capabilities from
// initialize) and a 2026-07-28 request's (protocol version, client info and
// capabilities in _meta, and a progress token).
func BenchmarkEnvelope(b *testing.B) {
	caps := &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{ListChanged: true}}
	stateless := mcp.Meta{
		mcp.MetaKeyClientCapabilities: map[string]any{"roots": map[string]any{"listChanged": true}},
		mcp.MetaKeyClientInfo:         map[string]any{"name": "bench", "version": "1"},
		mcp.MetaKeyProtocolVersion:    "2026-07-28",
		"progressToken":               7,
	}
	for _, tc := range []struct {
		name string
		meta mcp.Meta
	}{{"stateful", nil}, {"stateless", stateless}} {
		b.Run(tc.name, func(b *testing.B) {
			req := &mcp.CallToolParamsRaw{Name: "echo", Arguments: json.RawMessage(`{"text":"hello"}`), Meta: tc.meta}
			var n int
			for b.Loop() {
				params := *req
				params.Meta = nil // as CallTool does
				in, err := envelope(&params, req.Meta, caps, nil)
				if err != nil {
					b.Fatal(err)
				}
				n = len(in)
			}
			b.ReportMetric(float64(n), "B-out")
		})
	}
}

// echoTool is plugins/everything's echo as the host lists it.
const echoTool = `{"tools":[{"name":"echo","title":"Echo","description":"Returns the text it is given (used by benchmarks).","inputSchema":{"type":"object","properties":{"text":{"type":"string","description":"The text to echo back."}},"required":["text"],"additionalProperties":false},"annotations":{"readOnlyHint":true,"idempotentHint":true,"openWorldHint":false}}]}`

// BenchmarkCallToolHost measures the host's side of a tools/call of
// plugins/everything's echo, without the Wasm hop (a plugin that answers
// at once with what the Go SDK encodes): the parts, then CallTool whole.
func BenchmarkCallToolHost(b *testing.B) {
	tools, refused, err := ListTools(context.Background(), fakeCaller{echoTool}, Limits{MaxItems: 10})
	if err != nil || len(refused) > 0 || len(tools) != 1 {
		b.Fatal(err, refused)
	}
	tool := tools[0]
	args := json.RawMessage(`{"text":"hello"}`)
	out := []byte(`{"content":[{"type":"text","text":"hello"}]}`)
	b.Run("checkArguments", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := checkArguments(tool, args); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decodeResult", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var res mcp.CallToolResult
			if err := decodeResult("call_tool", out, &res); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("CallTool", func(b *testing.B) {
		b.ReportAllocs()
		p := fakeCaller{string(out)}
		req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "echo", Arguments: args}}
		for b.Loop() {
			res, err := CallTool(context.Background(), p, tool, req)
			if err != nil || res.IsError {
				b.Fatal(err, res)
			}
		}
	})
}
