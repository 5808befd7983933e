package sdk

import (
	"encoding/json"

	"github.com/mcphost/mcphost/abi"
)

// Context describes the client request a handler serves. It is valid only
// during the handler's call.
type Context struct {
	id             json.RawMessage
	meta           map[string]any
	clientCaps     map[string]any
	inputResponses map[string]json.RawMessage
	requestState   string
	uriVars        map[string]string
}

func newContext(in *abi.Input) *Context {
	c := &Context{id: in.Context.ID, meta: in.Context.Meta}
	if len(in.Context.ClientCapabilities) > 0 {
		_ = json.Unmarshal(in.Context.ClientCapabilities, &c.clientCaps)
	}
	return c
}

// withParams completes c from the fields the request params may carry.
func (c *Context) withParams(meta map[string]any, responses map[string]json.RawMessage, state string) {
	if c.meta == nil {
		c.meta = meta
	}
	c.inputResponses = responses
	c.requestState = state
}

// RequestID returns the JSON-RPC id of the client's request, or nil when the
// host did not pass it.
func (c *Context) RequestID() json.RawMessage { return c.id }

// Meta returns the request's _meta object (nil when there is none). Do not
// modify it.
func (c *Context) Meta() map[string]any { return c.meta }

// ProgressToken returns the request's _meta.progressToken (a string or a
// number), or nil when the client asked for no progress notifications.
func (c *Context) ProgressToken() any { return c.meta["progressToken"] }

// MetaClientCapabilities is the _meta key under which a request of MCP
// protocol 2026-07-28 (stateless) carries the client's capabilities.
const MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"

// ClientCapabilities returns the capabilities the client declared, e.g.
// {"sampling": {}, "elicitation": {}}: the host passes them in the call
// context (from initialize, or from the request's _meta under the stateless
// 2026-07-28 protocol). It falls back to the request's _meta (key
// [MetaClientCapabilities]) for hosts that do not pass them, and is nil
// when neither says. A capability is declared when its key is present with
// a non-null value.
func (c *Context) ClientCapabilities() map[string]any {
	if c.clientCaps != nil {
		return c.clientCaps
	}
	caps, _ := c.meta[MetaClientCapabilities].(map[string]any)
	return caps
}

// InputResponses returns the client's answers to the inputRequests of an
// earlier round of this call (MCP multi-round-trip requests), keyed as the
// handler named them, or nil in the first round.
func (c *Context) InputResponses() map[string]json.RawMessage { return c.inputResponses }

// RequestState returns the opaque requestState the handler returned in the
// earlier round of this call, or "" in the first round.
func (c *Context) RequestState() string { return c.requestState }

// URIVars returns the values of the URI template's variables when a
// read_resource was dispatched through a resource template, else nil.
func (c *Context) URIVars() map[string]string { return c.uriVars }

// URIVar returns the value of one URI template variable, or "".
func (c *Context) URIVar(name string) string { return c.uriVars[name] }

// Config returns the value of key in the plugin's config, as set in the
// host's configuration of this plugin. An empty value reads as absent.
func (c *Context) Config(key string) (string, bool) { return getConfig(key) }

// LogLevel is the level of a message sent to the host's log.
type LogLevel int

// Log levels, from the least to the most severe.
const (
	LogTrace LogLevel = iota
	LogDebug
	LogInfo
	LogWarn
	LogError
)

// Log sends msg to the host through Extism's log at level. The host decides
// where it goes (Extism drops it unless the host enables a log level); it
// does not reach the MCP client.
func (c *Context) Log(level LogLevel, msg string) { logMessage(level, msg) }
