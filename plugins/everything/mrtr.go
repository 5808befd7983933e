package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/sdk"
)

// Tools that need the client's input. go-sdk's server asks the client from
// inside its handler (Session.CreateMessage, Session.Elicit) or, for the
// test_input_required_result_* tools, returns inputRequests itself. A plugin
// always does the latter (multi-round trip, SEP-2322): the first call
// returns inputRequests, and the host — or the client, for protocol
// 2026-07-28 — calls again with the answers in inputResponses. The final
// texts are the ones go-sdk's handlers return.

// Keys of the input requests of the tools ported from blocking handlers.
const (
	samplingKey    = "sampling"
	elicitationKey = "elicitation"
)

// testSampling asks the client's LLM to complete the prompt argument.
func testSampling(ctx *sdk.Context, args json.RawMessage) (*abi.CallToolResult, error) {
	if res, ok := ctx.SamplingResponse(samplingKey); ok {
		// go-sdk's handler reads the one content block of a sampling result.
		responseText := "(non-text response)"
		if len(res.Content) > 0 && res.Content[0].Type == "text" {
			responseText = res.Content[0].Text
		}
		return sdk.TextResult(fmt.Sprintf("LLM response: %s", responseText)), nil
	}
	var in struct {
		Prompt string `json:"prompt"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return nil, sdk.InvalidParams("test_sampling: %v", err)
	}
	return sdk.InputRequired(map[string]json.RawMessage{
		samplingKey: sdk.SamplingRequest(sdk.SamplingParams{
			Messages:  []abi.PromptMessage{sdk.UserMessage(sdk.Text(in.Prompt))},
			MaxTokens: 100,
		}),
	}, ""), nil
}

// testElicitation asks the user for a username, showing the message argument.
func testElicitation(ctx *sdk.Context, args json.RawMessage) (*abi.CallToolResult, error) {
	var in struct {
		Message string `json:"message"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return nil, sdk.InvalidParams("test_elicitation: %v", err)
	}
	return elicitOnce(in.Message, usernameSchema)(ctx, args)
}

// elicitOnce returns a tool handler that elicits schema with message, then
// reports the answer as go-sdk's handlers do: whatever the action, and the
// content formatted by Go's %v (a map[string]any, keys sorted).
func elicitOnce(message string, schema json.RawMessage) sdk.ToolHandler {
	return func(ctx *sdk.Context, _ json.RawMessage) (*abi.CallToolResult, error) {
		if res, ok := ctx.ElicitResponse(elicitationKey); ok {
			return sdk.TextResult(fmt.Sprintf("Elicitation result: action=%s, content=%v", res.Action, res.Content)), nil
		}
		return sdk.InputRequired(map[string]json.RawMessage{
			elicitationKey: sdk.ElicitRequest(message, schema),
		}, ""), nil
	}
}

var usernameSchema = json.RawMessage(`{"type":"object","properties":{"username":{"type":"string","description":"Your preferred username"}},"required":["username"]}`)

var elicitDefaultsSchema = json.RawMessage(`{
	"type": "object",
	"properties": {
		"name": {"type": "string", "description": "User name", "default": "John Doe"},
		"age": {"type": "integer", "description": "User age", "default": 30},
		"score": {"type": "number", "description": "User score", "default": 95.5},
		"status": {"type": "string", "description": "User status", "enum": ["active", "inactive", "pending"], "default": "active"},
		"verified": {"type": "boolean", "description": "Verification status", "default": true}
	}
}`)

var elicitEnumsSchema = json.RawMessage(`{
	"type": "object",
	"properties": {
		"untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
		"titledSingle": {
			"type": "string",
			"oneOf": [
				{"const": "value1", "title": "First Option"},
				{"const": "value2", "title": "Second Option"},
				{"const": "value3", "title": "Third Option"}
			]
		},
		"legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"], "enumNames": ["Option One", "Option Two", "Option Three"]},
		"untitledMulti": {
			"type": "array", "minItems": 1, "maxItems": 3,
			"items": {"type": "string", "enum": ["option1", "option2", "option3"]}
		},
		"titledMulti": {
			"type": "array", "minItems": 1, "maxItems": 3,
			"items": {
				"type": "string",
				"anyOf": [
					{"const": "value1", "title": "First Option"},
					{"const": "value2", "title": "Second Option"},
					{"const": "value3", "title": "Third Option"}
				]
			}
		}
	}
}`)

// SEP-2322 tools. requestState is signed (HMAC-SHA256) with the plugin's
// config value "state_key", or defaultStateKey without one, so that a state
// the client altered is refused; go-sdk's server only looks for the
// "-TAMPERED" suffix the conformance suite appends.

// defaultStateKey signs requestState when the config sets no "state_key".
// It is public, so it protects nothing outside tests: set state_key.
const defaultStateKey = "mcphost-everything-fixture"

func stateKey(ctx *sdk.Context) []byte {
	if k, ok := ctx.Config("state_key"); ok {
		return []byte(k)
	}
	return []byte(defaultStateKey)
}

// invalidState is the error for a requestState that fails verification.
func invalidState(msg string) error { return sdk.InvalidParams("%s", msg) }

var (
	nameSchema    = json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)
	confirmSchema = json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`)
	colorSchema   = json.RawMessage(`{"type":"object","properties":{"color":{"type":"string"}},"required":["color"]}`)
	contextSchema = json.RawMessage(`{"type":"object","properties":{"context":{"type":"string"}},"required":["context"]}`)
)

// acceptedContent returns the content of the elicitation answer named key
// when the user accepted it, else nil (go-sdk server's helper of that name).
func acceptedContent(ctx *sdk.Context, key string) map[string]any {
	if res, ok := ctx.ElicitResponse(key); ok && res.Accepted() {
		return res.Content
	}
	return nil
}

// samplingResponseText returns the first text of the sampling answer named
// key, "(non-text response)" if it has none, and whether there is one.
func samplingResponseText(ctx *sdk.Context, key string) (string, bool) {
	res, ok := ctx.SamplingResponse(key)
	if !ok {
		return "", false
	}
	if t, ok := res.Text(); ok {
		return t, true
	}
	return "(non-text response)", true
}

func textMessage(role, text string) abi.PromptMessage {
	return abi.PromptMessage{Role: role, Content: sdk.Text(text)}
}

func registerInputRequiredTools() {
	addTool("test_input_required_result_elicitation",
		"MRTR (SEP-2322): asks for the caller name via an in-band elicitation request",
		testInputRequiredElicitation)
	addTool("test_input_required_result_sampling",
		"MRTR (SEP-2322): asks for an LLM completion via an in-band sampling request",
		testInputRequiredSampling)
	addTool("test_input_required_result_list_roots",
		"MRTR (SEP-2322): asks for the client roots via an in-band roots/list request",
		testInputRequiredListRoots)
	addTool("test_input_required_result_request_state",
		"MRTR (SEP-2322): round-trips integrity-protected requestState alongside an elicitation request",
		testInputRequiredRequestState)
	addTool("test_input_required_result_multiple_inputs",
		"MRTR (SEP-2322): asks for elicitation, sampling and roots input in a single round",
		testInputRequiredMultipleInputs)
	addTool("test_input_required_result_multi_round",
		"MRTR (SEP-2322): two elicitation rounds with evolving requestState before completing",
		testInputRequiredMultiRound)
	addTool("test_input_required_result_tampered_state",
		"MRTR (SEP-2322): rejects retries whose requestState fails integrity verification",
		testInputRequiredTamperedState)
	addTool("test_input_required_result_capabilities",
		"MRTR (SEP-2322): only requests input kinds the declared client capabilities cover",
		testInputRequiredCapabilities)
}

// testInputRequiredElicitation asks for the caller's name until an accepted
// answer with a non-empty name arrives (a wrong or missing answer is asked
// again, not an error).
func testInputRequiredElicitation(ctx *sdk.Context, _ json.RawMessage) (*abi.CallToolResult, error) {
	if name, _ := acceptedContent(ctx, "user_name")["name"].(string); name != "" {
		return sdk.TextResult(fmt.Sprintf("Hello, %s!", name)), nil
	}
	return sdk.InputRequired(map[string]json.RawMessage{
		"user_name": sdk.ElicitRequest("What is your name?", nameSchema),
	}, ""), nil
}

func testInputRequiredSampling(ctx *sdk.Context, _ json.RawMessage) (*abi.CallToolResult, error) {
	if text, ok := samplingResponseText(ctx, "capital_question"); ok {
		return sdk.TextResult(fmt.Sprintf("Sampling response: %s", text)), nil
	}
	return sdk.InputRequired(map[string]json.RawMessage{
		"capital_question": sdk.SamplingRequest(sdk.SamplingParams{
			Messages:  []abi.PromptMessage{textMessage("user", "What is the capital of France?")},
			MaxTokens: 100,
		}),
	}, ""), nil
}

func testInputRequiredListRoots(ctx *sdk.Context, _ json.RawMessage) (*abi.CallToolResult, error) {
	if roots, ok := ctx.RootsResponse("client_roots"); ok {
		uris := make([]string, len(roots))
		for i, r := range roots {
			uris[i] = r.URI
		}
		return sdk.TextResult(fmt.Sprintf("Client exposed %d root(s): %s", len(roots), strings.Join(uris, ", "))), nil
	}
	return sdk.InputRequired(map[string]json.RawMessage{"client_roots": sdk.RootsRequest()}, ""), nil
}

// confirmRequest is the input request of the requestState tools.
func confirmRequest() map[string]json.RawMessage {
	return map[string]json.RawMessage{"confirm": sdk.ElicitRequest("Please confirm", confirmSchema)}
}

func testInputRequiredRequestState(ctx *sdk.Context, _ json.RawMessage) (*abi.CallToolResult, error) {
	if acceptedContent(ctx, "confirm") != nil {
		if state, ok := sdk.VerifyState(stateKey(ctx), ctx.RequestState()); ok && state == "request_state" {
			return sdk.TextResult("state-ok: requestState received and confirmation accepted"), nil
		}
		return nil, invalidState("invalid requestState")
	}
	return sdk.InputRequired(confirmRequest(), sdk.SignState(stateKey(ctx), "request_state")), nil
}

func testInputRequiredMultipleInputs(ctx *sdk.Context, _ json.RawMessage) (*abi.CallToolResult, error) {
	name, _ := acceptedContent(ctx, "user_name")["name"].(string)
	greetingText, hasGreeting := samplingResponseText(ctx, "greeting")
	roots, rootsOK := ctx.RootsResponse("client_roots")
	if name != "" && hasGreeting && rootsOK {
		return sdk.TextResult(fmt.Sprintf("%s %s — %d root(s) visible", greetingText, name, len(roots))), nil
	}
	return sdk.InputRequired(map[string]json.RawMessage{
		"user_name": sdk.ElicitRequest("What is your name?", nameSchema),
		"greeting": sdk.SamplingRequest(sdk.SamplingParams{
			Messages:  []abi.PromptMessage{textMessage("user", "Generate a greeting")},
			MaxTokens: 50,
		}),
		"client_roots": sdk.RootsRequest(),
	}, sdk.SignState(stateKey(ctx), "multiple_inputs")), nil
}

// testInputRequiredMultiRound runs two elicitation rounds; the round number
// and the name elicited in round 1 travel in the (signed) requestState:
// "round=1", then "round=2;name=<name>".
func testInputRequiredMultiRound(ctx *sdk.Context, _ json.RawMessage) (*abi.CallToolResult, error) {
	key := stateKey(ctx)
	if ctx.RequestState() == "" {
		return sdk.InputRequired(map[string]json.RawMessage{
			"step1": sdk.ElicitRequest("Step 1: What is your name?", nameSchema),
		}, sdk.SignState(key, "round=1")), nil
	}
	state, ok := sdk.VerifyState(key, ctx.RequestState())
	switch {
	case !ok:
		return nil, invalidState("invalid requestState")
	case state == "round=1":
		name, _ := acceptedContent(ctx, "step1")["name"].(string)
		if name == "" {
			name = "unknown"
		}
		return sdk.InputRequired(map[string]json.RawMessage{
			"step2": sdk.ElicitRequest("Step 2: What is your favorite color?", colorSchema),
		}, sdk.SignState(key, "round=2;name="+name)), nil
	case strings.HasPrefix(state, "round=2;name="):
		color, _ := acceptedContent(ctx, "step2")["color"].(string)
		if color == "" {
			color = "unknown"
		}
		name := strings.TrimPrefix(state, "round=2;name=")
		return sdk.TextResult(fmt.Sprintf("Multi-round complete: %s likes %s", name, color)), nil
	default:
		return nil, invalidState("invalid requestState")
	}
}

func testInputRequiredTamperedState(ctx *sdk.Context, _ json.RawMessage) (*abi.CallToolResult, error) {
	key := stateKey(ctx)
	if ctx.RequestState() != "" {
		if state, ok := sdk.VerifyState(key, ctx.RequestState()); !ok || state != "tampered_state" {
			return nil, invalidState("invalid requestState: tampered")
		}
		if acceptedContent(ctx, "confirm") != nil {
			return sdk.TextResult("state-ok: requestState received and confirmation accepted"), nil
		}
	}
	return sdk.InputRequired(confirmRequest(), sdk.SignState(key, "tampered_state")), nil
}

// testInputRequiredCapabilities asks only for what the client declares it
// supports in the request's _meta (see README: a stateful session's
// capabilities are not visible to a plugin).
func testInputRequiredCapabilities(ctx *sdk.Context, _ json.RawMessage) (*abi.CallToolResult, error) {
	if len(ctx.InputResponses()) > 0 {
		return sdk.TextResult("Capability-aware input requests fulfilled"), nil
	}
	caps := ctx.ClientCapabilities()
	reqs := map[string]json.RawMessage{}
	if caps["elicitation"] != nil {
		reqs["user_name"] = sdk.ElicitRequest("What is your name?", nameSchema)
	}
	if caps["sampling"] != nil {
		reqs["greeting"] = sdk.SamplingRequest(sdk.SamplingParams{
			Messages:  []abi.PromptMessage{textMessage("user", "Generate a short greeting")},
			MaxTokens: 50,
		})
	}
	if caps["roots"] != nil {
		reqs["client_roots"] = sdk.RootsRequest()
	}
	if len(reqs) == 0 {
		return sdk.TextResult("No declared client capability supports an in-band input request"), nil
	}
	return sdk.InputRequired(reqs, ""), nil
}
