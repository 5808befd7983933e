package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/sdk"
)

// addTool registers a tool without arguments.
func addTool(name, description string, h sdk.ToolHandler) {
	sdk.AddTool(abi.Tool{Name: name, Description: description, InputSchema: emptyObject}, h)
}

// text returns a tool handler that answers with one text content.
func text(s string) sdk.ToolHandler {
	return func(*sdk.Context, json.RawMessage) (*abi.CallToolResult, error) { return sdk.TextResult(s), nil }
}

func registerTools() {
	addTool("test_simple_text", "Tests simple text content response",
		text("This is a simple text response for testing."))

	addTool("test_image_content", "Tests image content response",
		func(*sdk.Context, json.RawMessage) (*abi.CallToolResult, error) {
			return &abi.CallToolResult{Content: []abi.Content{sdk.Image(imageData, "image/png")}}, nil
		})

	addTool("test_audio_content", "Tests audio content response",
		func(*sdk.Context, json.RawMessage) (*abi.CallToolResult, error) {
			return &abi.CallToolResult{Content: []abi.Content{sdk.Audio(audioData, "audio/wav")}}, nil
		})

	addTool("test_embedded_resource", "Tests embedded resource content response",
		func(*sdk.Context, json.RawMessage) (*abi.CallToolResult, error) {
			return &abi.CallToolResult{Content: []abi.Content{
				sdk.EmbeddedText("test://embedded-resource", "text/plain", "This is an embedded resource"),
			}}, nil
		})

	addTool("test_multiple_content_types", "Tests response with multiple content types (text, image, resource)",
		func(*sdk.Context, json.RawMessage) (*abi.CallToolResult, error) {
			return &abi.CallToolResult{Content: []abi.Content{
				sdk.Text("This is text content"),
				sdk.Image(imageData, "image/png"),
				sdk.EmbeddedText("test://embedded-in-multiple", "text/plain", "This is an embedded resource"),
			}}, nil
		})

	addTool("test_tool_with_logging", "Tests tool that emits log messages during execution",
		func(ctx *sdk.Context, _ json.RawMessage) (*abi.CallToolResult, error) {
			// Three info-level messages, 50ms apart (the delays let a
			// client see the messages arrive during the call).
			ctx.LogMessage(sdk.LevelInfo, "Tool execution started")
			time.Sleep(50 * time.Millisecond)
			ctx.LogMessage(sdk.LevelInfo, "Tool processing data")
			time.Sleep(50 * time.Millisecond)
			ctx.LogMessage(sdk.LevelInfo, "Tool execution completed")
			return sdk.TextResult("Tool with logging executed successfully"), nil
		})

	addTool("test_tool_with_progress", "Tests tool that reports progress notifications",
		func(ctx *sdk.Context, _ json.RawMessage) (*abi.CallToolResult, error) {
			// 0%, 50%, 100%, 50ms apart. Without a progress token the host
			// sends nothing.
			const total = 100.0
			for _, progress := range []float64{0, 50, 100} {
				ctx.Progress(progress, total, fmt.Sprintf("Completed step %.0f of %.0f", progress, total))
				time.Sleep(50 * time.Millisecond)
			}
			// The progress token is the response, as in go-sdk's server
			// (and the TypeScript one), which the conformance suite checks.
			// Without one, say what happened instead of go-sdk's "<nil>".
			token := ctx.ProgressToken()
			if token == nil {
				return sdk.TextResult("Completed 3 steps; no progress notifications were sent: the request has no progress token (_meta.progressToken)"), nil
			}
			return sdk.TextResult(fmt.Sprint(token)), nil
		})

	addTool("test_error_handling", "Tests error response handling",
		func(*sdk.Context, json.RawMessage) (*abi.CallToolResult, error) {
			// A plain error: the tool ran and failed (isError), as go-sdk's
			// typed tool handlers report it.
			return nil, errors.New("this tool intentionally returns an error for testing")
		})

	sdk.AddTool(abi.Tool{
		Name:        "test_sampling",
		Description: "Tests server-initiated sampling (LLM completion request)",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"prompt":{"type":"string","description":"The prompt to send to the LLM"}},"required":["prompt"],"additionalProperties":false}`),
	}, testSampling)

	sdk.AddTool(abi.Tool{
		Name:        "test_elicitation",
		Description: "Tests server-initiated elicitation (user input request)",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string","description":"The message to show the user"}},"required":["message"],"additionalProperties":false}`),
	}, testElicitation)

	addTool("test_elicitation_sep1034_defaults", "Tests elicitation with default values per SEP-1034",
		elicitOnce("Test defaults for primitives", elicitDefaultsSchema))

	addTool("test_elicitation_sep1330_enums", "Tests elicitation with enum schema improvements per SEP-1330",
		elicitOnce("Test enum schemas", elicitEnumsSchema))

	// SEP-1613 / SEP-2106: the scenario checks that $schema, $defs,
	// additionalProperties, $anchor, allOf/anyOf and if/then/else survive
	// tools/list verbatim.
	sdk.AddTool(abi.Tool{
		Name:        "json_schema_2020_12_tool",
		Description: "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613, SEP-2106)",
		InputSchema: json.RawMessage(`{
			"$schema": "https://json-schema.org/draft/2020-12/schema",
			"type": "object",
			"$defs": {
				"address": {
					"$anchor": "addressDef",
					"type": "object",
					"properties": {
						"street": { "type": "string" },
						"city": { "type": "string" }
					}
				}
			},
			"properties": {
				"name": { "type": "string" },
				"address": { "$ref": "#/$defs/address" },
				"contactMethod": { "type": "string", "enum": ["phone", "email"] },
				"phone": { "type": "string" },
				"email": { "type": "string" }
			},
			"allOf": [
				{ "anyOf": [{ "required": ["phone"] }, { "required": ["email"] }] }
			],
			"if": {
				"properties": { "contactMethod": { "const": "phone" } },
				"required": ["contactMethod"]
			},
			"then": { "required": ["phone"] },
			"else": { "required": ["email"] },
			"additionalProperties": false
		}`),
	}, func(_ *sdk.Context, args json.RawMessage) (*abi.CallToolResult, error) {
		// go-sdk hands its handler the arguments re-marshalled from a map
		// (compact, keys sorted); do the same.
		var m map[string]any
		if err := json.Unmarshal(args, &m); err != nil {
			return nil, sdk.InvalidParams("json_schema_2020_12_tool: %v", err)
		}
		b, err := json.Marshal(m)
		if err != nil {
			return nil, err
		}
		return sdk.TextResult(fmt.Sprintf("JSON Schema 2020-12 tool called with: %s", b)), nil
	})

	// SEP-2243: arms the http-custom-header-server-validation scenario,
	// which looks for a tool with an x-mcp-header annotation.
	sdk.AddTool(abi.Tool{
		Name:        "test_x_mcp_header",
		Description: "Tests SEP-2243 Mcp-Param-* server-side validation",
		InputSchema: json.RawMessage(`{
			"type": "object",
			"properties": {
				"region": { "type": "string", "description": "mirrored into Mcp-Param-Region", "x-mcp-header": "Region" },
				"level": { "type": "integer", "description": "non-mirrored argument" }
			}
		}`),
	}, func(_ *sdk.Context, args json.RawMessage) (*abi.CallToolResult, error) {
		var in struct {
			Region string `json:"region"`
		}
		if err := json.Unmarshal(args, &in); err != nil {
			return nil, sdk.InvalidParams("test_x_mcp_header: %v", err)
		}
		return sdk.TextResult("region=" + in.Region), nil
	})

	// SEP-2575 diagnostic tools used by the stateless scenario.
	addTool("test_missing_capability",
		"Requires the sampling client capability; used to verify MissingRequiredClientCapabilityError (-32021) (SEP-2575)",
		testMissingCapability)

	addTool("test_streaming_elicitation",
		"Streams progress notifications while a call is in flight; used to verify response streams carry only notifications, never independent JSON-RPC requests (SEP-2575)",
		// A plain result trivially carries no top-level requests; the
		// scenario declares no elicitation capability, so nothing is asked.
		text("stream observed: result frames only, no top-level requests"))

	addTool("test_logging_tool",
		"Attempts to emit a log message; the framework must drop it when the client did not set _meta.../logLevel (SEP-2575)",
		func(ctx *sdk.Context, _ json.RawMessage) (*abi.CallToolResult, error) {
			// The host (go-sdk) gates the message on the request's log level.
			ctx.LogMessage(sdk.LevelInfo, "test_logging_tool executed")
			return sdk.TextResult("Log attempted; framework gates on _meta.../logLevel."), nil
		})

	// go-sdk's server adds a transient tool or prompt to its own lists. A
	// plugin cannot change what the host lists until it is reloaded; it can
	// only announce a change, which is what these do.
	addTool("test_trigger_tool_change",
		"Announces a tool list change (SEP-2575); the host lists the plugin again and sends notifications/tools/list_changed only if its tools differ, which here they do not",
		func(*sdk.Context, json.RawMessage) (*abi.CallToolResult, error) {
			sdk.ToolListChanged()
			return sdk.TextResult("tools_list_changed published"), nil
		})

	addTool("test_trigger_prompt_change",
		"Announces a prompt list change (SEP-2575); the host lists the plugin again and sends notifications/prompts/list_changed only if its prompts differ, which here they do not",
		func(*sdk.Context, json.RawMessage) (*abi.CallToolResult, error) {
			sdk.PromptListChanged()
			return sdk.TextResult("prompts_list_changed published"), nil
		})

	addTool("test_reconnection",
		"Tests SSE stream disconnection and client reconnection (SEP-1699). Server will close the stream mid-call and send the result after client reconnects.",
		func(ctx *sdk.Context, _ json.RawMessage) (*abi.CallToolResult, error) {
			ctx.CloseSSEStream(10 * time.Millisecond)
			time.Sleep(100 * time.Millisecond) // let the client reconnect
			return sdk.TextResult("Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure."), nil
		})

	// Not in go-sdk's server, whose watched resource is updated by a 3s
	// ticker: a plugin runs only when called, so a tool stands in for it.
	addTool("test_update_watched_resource",
		"Sends notifications/resources/updated for "+watchedResourceURI+" to the sessions subscribed to it (stands in for the 3-second ticker of go-sdk's conformance server)",
		func(*sdk.Context, json.RawMessage) (*abi.CallToolResult, error) {
			sdk.ResourceUpdated(watchedResourceURI)
			return sdk.TextResult("resource updated: " + watchedResourceURI), nil
		})

	sdk.AddTypedTool(abi.Tool{
		Name:        "echo",
		Title:       "Echo",
		Description: "Returns the text it is given (used by benchmarks).",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"The text to echo back."}},"required":["text"],"additionalProperties":false}`),
		Annotations: &abi.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(bool)},
	}, echo)
}

// echoArgs are echo's arguments.
type echoArgs struct {
	Text string `json:"text"`
}

func echo(_ *sdk.Context, in echoArgs) (*abi.CallToolResult, error) {
	return sdk.TextResult(in.Text), nil
}

// codeMissingRequiredClientCapabilities is MCP's
// MissingRequiredClientCapabilityError (SEP-2575).
const codeMissingRequiredClientCapabilities = -32021

// testMissingCapability runs only for a client that declared sampling in the
// request's _meta; otherwise it fails with -32021 naming the capability.
func testMissingCapability(ctx *sdk.Context, _ json.RawMessage) (*abi.CallToolResult, error) {
	if ctx.ClientCapabilities()["sampling"] != nil {
		return sdk.TextResult("Client declared the sampling capability; tool executed."), nil
	}
	return nil, &abi.Error{
		Code:    codeMissingRequiredClientCapabilities,
		Message: "sampling capability required but not declared by client",
		Data:    json.RawMessage(`{"requiredCapabilities":{"sampling":{}}}`),
	}
}
