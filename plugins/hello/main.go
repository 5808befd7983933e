// Command hello is mcphost's example plugin: four small tools that show a
// plain tool, structured output, a tool failure and plugin config.
//
// Build: GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o plugins/hello/hello.wasm ./plugins/hello
package main

import (
	"encoding/json"
	"errors"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/sdk"
)

func main() {} // never called: a reactor runs only init and its exports

func init() {
	sdk.AddTool(abi.Tool{
		Name:        "echo",
		Title:       "Echo",
		Description: "Returns the text it is given.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"The text to echo back."}},"required":["text"],"additionalProperties":false}`),
		Annotations: &abi.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(bool)},
	}, echo)

	// Its inputSchema and outputSchema are derived from addIn and addOut.
	sdk.AddTypedTool(abi.Tool{
		Name:        "add",
		Title:       "Add",
		Description: "Adds two numbers and returns their sum as structured output.",
		Annotations: &abi.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(bool)},
	}, add)

	sdk.AddTool(abi.Tool{
		Name:        "fail",
		Title:       "Fail",
		Description: "Always fails, to show how a tool reports a failure (isError).",
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false}`),
		Annotations: &abi.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(bool)},
	}, fail)

	sdk.AddTypedTool(abi.Tool{
		Name:        "greet",
		Title:       "Greet",
		Description: `Greets someone with the greeting set in the plugin's config (key "greeting", default "Hello").`,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"Who to greet."}},"required":["name"],"additionalProperties":false}`),
		Annotations: &abi.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(bool)},
	}, greet)
}

func echo(_ *sdk.Context, args json.RawMessage) (*abi.CallToolResult, error) {
	var in struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return nil, sdk.InvalidParams("echo: %v", err)
	}
	return sdk.TextResult(in.Text), nil
}

type addIn struct {
	A float64 `json:"a" jsonschema:"The first addend."`
	B float64 `json:"b" jsonschema:"The second addend."`
}

type addOut struct {
	Sum float64 `json:"sum" jsonschema:"a + b"`
}

func add(_ *sdk.Context, in addIn) (addOut, error) {
	return addOut{Sum: in.A + in.B}, nil
}

func fail(*sdk.Context, json.RawMessage) (*abi.CallToolResult, error) {
	return nil, errors.New("this tool always fails: it exists to show a tool error")
}

type greetIn struct {
	Name string `json:"name"`
}

func greet(ctx *sdk.Context, in greetIn) (*abi.CallToolResult, error) {
	greeting, ok := ctx.Config("greeting")
	if !ok {
		greeting = "Hello"
	}
	return sdk.TextResult(greeting + ", " + in.Name + "!"), nil
}
