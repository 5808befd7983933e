package sdk_test

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/sdk"
)

// call prints what the plugin answers to the host's call of export; a real
// plugin registers its features in main or init and never calls Dispatch.
func call(export, input string) {
	out, perr := sdk.Dispatch(export, []byte(input))
	if perr != nil {
		fmt.Printf("error %d: %s\n", perr.Code, perr.Message)
		return
	}
	fmt.Println(string(out))
}

// A tool with hand-written JSON arguments.
func ExampleAddTool() {
	sdk.AddTool(abi.Tool{
		Name:        "greet",
		Description: "Says hello to someone.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
	}, func(ctx *sdk.Context, args json.RawMessage) (*abi.CallToolResult, error) {
		var in struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(args, &in); err != nil {
			return sdk.ToolError("bad arguments: %v", err), nil // the model sees it and may retry
		}
		return sdk.TextResult("Hello, " + in.Name + "!"), nil
	})

	call(abi.ExportCallTool, `{"request":{"name":"greet","arguments":{"name":"Ada"}},"context":{}}`)
	// Output: {"content":[{"type":"text","text":"Hello, Ada!"}]}
}

// A typed tool: arguments decode into a Go struct and the result is sent as
// structuredContent (and as text, for clients that ignore it).
func ExampleAddTypedTool() {
	type sumIn struct {
		Numbers []float64 `json:"numbers"`
	}
	type sumOut struct {
		Sum float64 `json:"sum"`
	}
	sdk.AddTypedTool(abi.Tool{
		Name:         "sum",
		Description:  "Adds numbers.",
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"numbers":{"type":"array","items":{"type":"number"}}},"required":["numbers"]}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"sum":{"type":"number"}},"required":["sum"]}`),
	}, func(ctx *sdk.Context, in sumIn) (sumOut, error) {
		var out sumOut
		for _, n := range in.Numbers {
			out.Sum += n
		}
		return out, nil
	})

	call(abi.ExportCallTool, `{"request":{"name":"sum","arguments":{"numbers":[1,2,3.5]}},"context":{}}`)
	// Output: {"structuredContent":{"sum":6.5},"content":[{"type":"text","text":"{\"sum\":6.5}"}]}
}

// A resource template: the host matches the URI (any RFC 6570 template) and
// the handler reads the variables.
func ExampleAddResourceTemplate() {
	sdk.AddResourceTemplate(abi.ResourceTemplate{
		URITemplate: "note://{id}",
		Name:        "note",
		MimeType:    "text/plain",
	}, func(ctx *sdk.Context, uri string) (*abi.ReadResourceResult, error) {
		id := ctx.URIVar("id")
		if id == "" {
			return nil, sdk.ResourceNotFound(uri)
		}
		return &abi.ReadResourceResult{Contents: []abi.ResourceContents{
			sdk.TextContents(uri, "", "note number "+id),
		}}, nil
	})

	call(abi.ExportReadResource, `{"request":{"uri":"note://42"},"context":{}}`)
	// Output: {"contents":[{"uri":"note://42","mimeType":"text/plain","text":"note number 42"}]}
}

// A prompt whose argument the client can complete.
func ExampleAddPrompt() {
	languages := []string{"go", "rust", "zig"}
	sdk.AddPrompt(abi.Prompt{
		Name:        "review",
		Description: "Asks for a code review.",
		Arguments:   []abi.PromptArgument{{Name: "language", Required: true}},
	}, func(ctx *sdk.Context, args map[string]string) (*abi.GetPromptResult, error) {
		return &abi.GetPromptResult{Messages: []abi.PromptMessage{
			sdk.UserMessage(sdk.Text("Review this " + args["language"] + " code.")),
		}}, nil
	})
	sdk.SetCompletion(func(ctx *sdk.Context, p abi.CompleteParams) (*abi.CompleteResult, error) {
		var values []string
		if p.Ref.Name == "review" && p.Argument.Name == "language" {
			for _, l := range languages {
				if strings.HasPrefix(l, p.Argument.Value) {
					values = append(values, l)
				}
			}
		}
		return &abi.CompleteResult{Completion: abi.Completion{Values: values}}, nil
	})

	call(abi.ExportGetPrompt, `{"request":{"name":"review","arguments":{"language":"go"}},"context":{}}`)
	call(abi.ExportComplete, `{"request":{"ref":{"type":"ref/prompt","name":"review"},"argument":{"name":"language","value":"r"}},"context":{}}`)
	// Output:
	// {"messages":[{"role":"user","content":{"type":"text","text":"Review this go code."}}]}
	// {"completion":{"values":["rust"]}}
}

// Sampling through a multi-round-trip result: the first call asks the
// client for an LLM completion; the host asks the client (sampling/createMessage,
// or the 2026-07-28 inputRequests) and calls again with the answer.
func ExampleInputRequired() {
	sdk.AddTool(abi.Tool{Name: "capital", Description: "Asks the client's model for a capital."},
		func(ctx *sdk.Context, _ json.RawMessage) (*abi.CallToolResult, error) {
			if answer, ok := ctx.SamplingResponse("q"); ok && len(answer.Content) > 0 {
				return sdk.TextResult("The model says: " + answer.Content[0].Text), nil
			}
			return sdk.InputRequired(map[string]json.RawMessage{
				"q": sdk.SamplingRequest(sdk.SamplingParams{
					Messages:  []abi.PromptMessage{sdk.UserMessage(sdk.Text("Capital of France?"))},
					MaxTokens: 20,
				}),
			}, ""), nil
		})

	call(abi.ExportCallTool, `{"request":{"name":"capital","arguments":{}},"context":{}}`)
	call(abi.ExportCallTool, `{"request":{"name":"capital","arguments":{},"inputResponses":{"q":{"role":"assistant","content":{"type":"text","text":"Paris"},"model":"m"}}},"context":{}}`)
	// Output:
	// {"inputRequests":{"q":{"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"Capital of France?"}}],"maxTokens":20}}}}
	// {"content":[{"type":"text","text":"The model says: Paris"}]}
}
