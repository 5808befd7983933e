// Command tentools is a benchmark fixture: a plugin offering exactly ten
// tools with realistic definitions (title, description, a two-property
// input schema, annotations), so that loading it 100 times with different
// prefixes gives a host 1,000 tools (host/perf_bench_test.go,
// BenchmarkToolsList). Each tool echoes its "text" argument.
//
// Build: GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o tentools.wasm ./bench/plugins/tentools
package main

import (
	"encoding/json"
	"fmt"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/sdk"
)

func main() {} // never called: a reactor runs only init and its exports

func init() {
	for i := range 10 {
		sdk.AddTool(abi.Tool{
			Name:        fmt.Sprintf("tool_%d", i),
			Title:       fmt.Sprintf("Tool %d", i),
			Description: fmt.Sprintf("Benchmark tool number %d: returns the text it is given, repeated count times (default once).", i),
			InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"The text to return."},"count":{"type":"integer","minimum":1,"maximum":10,"description":"How many times."}},"required":["text"],"additionalProperties":false}`),
			Annotations: &abi.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(bool)},
		}, echo)
	}
}

func echo(_ *sdk.Context, args json.RawMessage) (*abi.CallToolResult, error) {
	var in struct {
		Text  string `json:"text"`
		Count int    `json:"count"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return nil, sdk.InvalidParams("%v", err)
	}
	out := in.Text
	for i := 1; i < in.Count; i++ {
		out += in.Text
	}
	return sdk.TextResult(out), nil
}
