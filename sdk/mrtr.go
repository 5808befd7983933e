package sdk

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/mcphost/mcphost/abi"
)

// Multi-round-trip requests (MCP SEP-2322). A tool, prompt or resource
// handler that needs something from the client (a user's answer, an LLM
// completion, the client's roots) does not wait for it: it returns a result
// whose InputRequests names what it needs, keyed by names it chooses, plus
// an opaque RequestState if it must remember something. The host (or the
// client, for protocol 2026-07-28) obtains the answers and calls the same
// handler again, with the answers in [Context.InputResponses] under the
// same keys and the state in [Context.RequestState]. A handler is thus
// called once per round and keeps nothing in memory between rounds.
//
// A result with InputRequests carries no content: the SDK leaves content,
// contents or messages out of it and refuses one that has some.

// Methods of the client requests an InputRequests entry may name.
const (
	MethodElicit        = "elicitation/create"
	MethodCreateMessage = "sampling/createMessage"
	MethodListRoots     = "roots/list"
)

// InputRequest returns one value of an InputRequests map: the client request
// method with params ({"method": …, "params": …}). A nil params is sent as
// {}. It panics if params does not marshal to JSON (a panic in a handler is
// reported as an internal error).
func InputRequest(method string, params any) json.RawMessage {
	if params == nil {
		params = struct{}{}
	}
	b, err := json.Marshal(struct {
		Method string `json:"method"`
		Params any    `json:"params"`
	}{method, params})
	if err != nil {
		panic("sdk: InputRequest " + method + ": " + err.Error())
	}
	return b
}

// ElicitRequest returns an input request asking the user, through the
// client, for the values described by requestedSchema (a JSON Schema of a
// flat object, as MCP elicitation allows), showing message. The answer is
// read with [Context.ElicitResponse].
func ElicitRequest(message string, requestedSchema json.RawMessage) json.RawMessage {
	return InputRequest(MethodElicit, struct {
		Message         string          `json:"message"`
		RequestedSchema json.RawMessage `json:"requestedSchema,omitempty"`
	}{message, requestedSchema})
}

// SamplingParams are the params of a sampling request (MCP
// CreateMessageRequest): the conversation to complete and how.
type SamplingParams struct {
	// Messages is the conversation; each message has a role ("user" or
	// "assistant") and one content block.
	Messages []abi.PromptMessage `json:"messages"`
	// MaxTokens is the most tokens the client should sample (required).
	MaxTokens int `json:"maxTokens"`
	// SystemPrompt is an optional system prompt.
	SystemPrompt string `json:"systemPrompt,omitempty"`
	// IncludeContext asks for context from MCP servers: "none",
	// "thisServer" or "allServers".
	IncludeContext string `json:"includeContext,omitempty"`
	// Temperature is the sampling temperature, when set.
	Temperature *float64 `json:"temperature,omitempty"`
	// StopSequences end sampling when produced.
	StopSequences []string `json:"stopSequences,omitempty"`
	// ModelPreferences is an MCP ModelPreferences object, when set.
	ModelPreferences json.RawMessage `json:"modelPreferences,omitempty"`
	// Metadata is passed to the LLM provider as it is.
	Metadata any `json:"metadata,omitempty"`
}

// SamplingRequest returns an input request asking the client's LLM to
// complete a conversation. The answer is read with
// [Context.SamplingResponse].
func SamplingRequest(p SamplingParams) json.RawMessage {
	if p.Messages == nil {
		p.Messages = []abi.PromptMessage{}
	}
	return InputRequest(MethodCreateMessage, p)
}

// RootsRequest returns an input request asking the client for its roots
// (the directories or files it exposes). The answer is read with
// [Context.RootsResponse].
func RootsRequest() json.RawMessage { return InputRequest(MethodListRoots, nil) }

// InputRequired returns a tool result that asks the client for input:
// requests maps the handler's keys to values built by [ElicitRequest],
// [SamplingRequest], [RootsRequest] or [InputRequest], and requestState
// (which may be empty) comes back in [Context.RequestState] in the next
// round. Anyone can read and alter requestState on its way through the
// client: protect what matters with [SignState].
func InputRequired(requests map[string]json.RawMessage, requestState string) *abi.CallToolResult {
	return &abi.CallToolResult{InputRequests: requests, RequestState: requestState}
}

// ElicitResult is the client's answer to an elicitation request.
type ElicitResult struct {
	// Action is "accept" (Content holds the values), "decline" or "cancel".
	Action string `json:"action"`
	// Content holds the values the user submitted, as decoded from JSON
	// (string, float64, bool, []any), when Action is "accept".
	Content map[string]any `json:"content,omitempty"`
}

// Accepted reports whether the user accepted the request and submitted
// values.
func (r *ElicitResult) Accepted() bool { return r != nil && r.Action == "accept" }

// SamplingResult is the client's answer to a sampling request (MCP
// CreateMessageResult).
type SamplingResult struct {
	// Role is the role of the message produced, normally "assistant".
	Role string `json:"role"`
	// Content is what the LLM produced: one block, or several when the
	// client supports tool use in sampling.
	Content []abi.Content `json:"content"`
	// Model names the model that produced it.
	Model string `json:"model,omitempty"`
	// StopReason is why sampling stopped, e.g. "endTurn" or "maxTokens".
	StopReason string `json:"stopReason,omitempty"`
}

// UnmarshalJSON accepts content as one content block (MCP 2025-06-18 and
// earlier) or as an array of blocks.
func (r *SamplingResult) UnmarshalJSON(data []byte) error {
	var w struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		Model      string          `json:"model"`
		StopReason string          `json:"stopReason"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*r = SamplingResult{Role: w.Role, Model: w.Model, StopReason: w.StopReason}
	c := bytes.TrimSpace(w.Content)
	switch {
	case len(c) == 0 || bytes.Equal(c, []byte("null")):
	case c[0] == '[':
		return json.Unmarshal(c, &r.Content)
	default:
		var one abi.Content
		if err := json.Unmarshal(c, &one); err != nil {
			return err
		}
		r.Content = []abi.Content{one}
	}
	return nil
}

// Text returns the text of the first text block of the result, and whether
// there is one.
func (r *SamplingResult) Text() (string, bool) {
	if r == nil {
		return "", false
	}
	for _, c := range r.Content {
		if c.Type == "text" {
			return c.Text, true
		}
	}
	return "", false
}

// Root is one of the client's roots.
type Root struct {
	// URI is the root's URI, a file:// URI.
	URI string `json:"uri"`
	// Name is an optional human-readable name.
	Name string `json:"name,omitempty"`
}

// InputResponse returns the client's answer (its result object) to the
// input request the handler named key in the previous round, and whether
// there is one.
func (c *Context) InputResponse(key string) (json.RawMessage, bool) {
	r, ok := c.inputResponses[key]
	return r, ok && len(r) > 0 && string(r) != "null"
}

// responseFields returns the top-level fields of the answer named key, or
// nil. Field names are matched exactly, as MCP spells them.
func (c *Context) responseFields(key string) map[string]json.RawMessage {
	raw, ok := c.InputResponse(key)
	if !ok {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	return m
}

// ElicitResponse returns the answer named key decoded as an elicitation
// result, and false when there is no such answer or it is not an
// elicitation result (it has no "action").
func (c *Context) ElicitResponse(key string) (*ElicitResult, bool) {
	m := c.responseFields(key)
	if _, ok := m["action"]; !ok {
		return nil, false
	}
	var r ElicitResult
	if json.Unmarshal(m["action"], &r.Action) != nil {
		return nil, false
	}
	if content, ok := m["content"]; ok && json.Unmarshal(content, &r.Content) != nil {
		return nil, false
	}
	return &r, true
}

// SamplingResponse returns the answer named key decoded as a sampling
// result, and false when there is no such answer or it is not a sampling
// result (it has no "role").
func (c *Context) SamplingResponse(key string) (*SamplingResult, bool) {
	m := c.responseFields(key)
	if _, ok := m["role"]; !ok {
		return nil, false
	}
	raw, _ := c.InputResponse(key)
	var r SamplingResult
	if json.Unmarshal(raw, &r) != nil {
		return nil, false
	}
	return &r, true
}

// RootsResponse returns the client's roots from the answer named key, and
// false when there is no such answer or it is not a roots list (it has no
// "roots"). A client with no roots gives an empty list and true.
func (c *Context) RootsResponse(key string) ([]Root, bool) {
	m := c.responseFields(key)
	rootsJSON, ok := m["roots"]
	if !ok {
		return nil, false
	}
	roots := []Root{}
	if json.Unmarshal(rootsJSON, &roots) != nil {
		return nil, false
	}
	if roots == nil {
		roots = []Root{}
	}
	return roots, true
}

// SignState returns state with an HMAC-SHA256 signature made with key, for
// a handler to return as its RequestState. [VerifyState] with the same key
// gives state back and refuses any altered value, so the client cannot
// tamper with what the handler remembers between rounds. state is readable
// by the client (it is only encoded): do not put secrets in it.
func SignState(key []byte, state string) string {
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(state)) + "." + enc.EncodeToString(stateMAC(key, state))
}

// VerifyState checks a requestState made by [SignState] with key and returns
// the state it carries, or false if it was not signed with key or was
// altered.
func VerifyState(key []byte, signed string) (string, bool) {
	i := strings.LastIndexByte(signed, '.')
	if i < 0 {
		return "", false
	}
	enc := base64.RawURLEncoding.Strict()
	state, err := enc.DecodeString(signed[:i])
	if err != nil {
		return "", false
	}
	mac, err := enc.DecodeString(signed[i+1:])
	if err != nil || !hmac.Equal(mac, stateMAC(key, string(state))) {
		return "", false
	}
	return string(state), true
}

func stateMAC(key []byte, state string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte("mcphost requestState v1\x00"))
	h.Write([]byte(state))
	return h.Sum(nil)
}

// RunAsTask returns a tool result that asks the host to run the call as a
// task of the Tasks extension: the host creates the task, answers the
// client with it at once, and calls the handler again with the same
// request, where [Context.TaskID] is the task's id and the call may take
// until the task's deadline. Return it only when [Context.CanRunAsTask]
// (the host fails the call otherwise). A tool that needs input before
// its work starts asks for it with [InputRequired] first and returns
// RunAsTask from the round that has the answers: the task's run gets them
// too.
func RunAsTask() *abi.CallToolResult { return &abi.CallToolResult{ResultType: abi.ResultTypeTask} }
