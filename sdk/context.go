package sdk

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/mcphost/mcphost/abi"
)

// Context describes the client request a handler serves. It is valid only
// during the handler's call: the SDK reuses it for the next call, so a
// handler must not keep it (or hand it to a goroutine) past its return.
//
// The request's _meta and the client's capabilities are decoded only when a
// handler asks for them: in a stateless (2026-07-28) request they are most
// of the envelope, and building their maps was most of the SDK's own work
// for a call that never looks at them.
type Context struct {
	id             json.RawMessage
	metaJSON       json.RawMessage
	meta           map[string]any
	metaDecoded    bool
	capsJSON       json.RawMessage
	clientCaps     map[string]any
	capsDecoded    bool
	inputResponses map[string]json.RawMessage
	requestState   string
	// hostTemplate and hostVars are the template the host matched a
	// read_resource URI against and its variables' values (ABI context
	// uriTemplate and uriVariables); uriValues those the handler sees.
	hostTemplate string
	hostVars     map[string]any
	uriValues    map[string]any
	// task is the call's relation to a task (ABI context task).
	task *abi.TaskContext
	// traceParent and traceState are the host's trace context (ABI
	// context traceparent, tracestate).
	traceParent, traceState string
}

// envelope is abi.Input with the context's _meta and client capabilities
// left as JSON until a handler asks (Context.Meta, ClientCapabilities).
type envelope struct {
	Request json.RawMessage `json:"request,omitempty"`
	Context envelopeContext `json:"context"`
}

// envelopeContext is the envelope's context.
type envelopeContext struct {
	ID                 json.RawMessage  `json:"id,omitempty"`
	Meta               json.RawMessage  `json:"_meta"`
	ClientCapabilities json.RawMessage  `json:"clientCapabilities,omitempty"`
	URITemplate        string           `json:"uriTemplate,omitempty"`
	URIVariables       map[string]any   `json:"uriVariables,omitempty"`
	Task               *abi.TaskContext `json:"task,omitempty"`
	TraceParent        string           `json:"traceparent,omitempty"`
	TraceState         string           `json:"tracestate,omitempty"`
}

// reset makes c the context of the call whose envelope is in. A registry
// keeps one Context for all its calls, which run one at a time: a Context
// is valid only during its handler's call, and in the Wasm guest an
// allocation per call is dear.
func (c *Context) reset(in *envelope) {
	*c = Context{id: in.Context.ID, metaJSON: in.Context.Meta, capsJSON: in.Context.ClientCapabilities,
		hostTemplate: in.Context.URITemplate, hostVars: in.Context.URIVariables, task: in.Context.Task,
		traceParent: in.Context.TraceParent, traceState: in.Context.TraceState}
}

// TraceParent returns the W3C traceparent of the host's span for this
// request ("" when the host records no trace): put it on an outbound
// request's traceparent header, or in a log line, to join the call's
// trace. The host's http_request adds it by itself.
func (c *Context) TraceParent() string { return c.traceParent }

// TraceState returns the W3C tracestate that goes with TraceParent.
func (c *Context) TraceState() string { return c.traceState }

// CanRunAsTask reports whether the host would run this tool call as a task
// of the Tasks extension if the handler returns [RunAsTask]: the tool
// declares task support (abi.Tool.Execution), the client supports tasks,
// and the call does not already run as one.
func (c *Context) CanRunAsTask() bool { return c.task != nil && c.task.Allowed && c.task.ID == "" }

// TaskID returns the id of the task this call runs as, or "" when it is
// an ordinary call. A call that runs as a task may take until the task's
// deadline (the plugin's task_timeout) instead of the plugin's timeout.
func (c *Context) TaskID() string {
	if c.task == nil {
		return ""
	}
	return c.task.ID
}

// withParams completes c from the fields the request params may carry: the
// params' _meta counts when the context has none.
func (c *Context) withParams(meta json.RawMessage, responses map[string]json.RawMessage, state string) {
	if len(c.metaJSON) == 0 || string(c.metaJSON) == "null" {
		c.metaJSON = meta
	}
	c.inputResponses = responses
	c.requestState = state
}

// RequestID returns the id the host gave this call (context.id of the
// ABI envelope): a random number, to tell calls apart in logs, or nil when
// the host did not pass one. It is not the client's JSON-RPC id, which the
// host does not see, and each round of a multi-round-trip call (see
// [Context.RequestState]) gets a new one.
func (c *Context) RequestID() json.RawMessage { return c.id }

// Meta returns the request's _meta object (nil when there is none). Do not
// modify it.
func (c *Context) Meta() map[string]any {
	if !c.metaDecoded {
		c.metaDecoded = true
		if len(c.metaJSON) > 0 {
			_ = json.Unmarshal(c.metaJSON, &c.meta)
		}
	}
	return c.meta
}

// ProgressToken returns the request's _meta.progressToken (a string or a
// number), or nil when the client asked for no progress notifications.
func (c *Context) ProgressToken() any { return c.Meta()["progressToken"] }

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
	if !c.capsDecoded {
		c.capsDecoded = true
		if len(c.capsJSON) > 0 {
			_ = json.Unmarshal(c.capsJSON, &c.clientCaps)
		}
	}
	if c.clientCaps != nil {
		return c.clientCaps
	}
	caps, _ := c.Meta()[MetaClientCapabilities].(map[string]any)
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
// read_resource was dispatched through a resource template, else nil. A
// variable the URI leaves undefined is absent. Each value is a string: an
// exploded variable's items are joined with commas, and its name=value
// pairs written name,value,name,value (RFC 6570's unexploded forms); see
// [Context.URIValue] for them as a list or a map.
func (c *Context) URIVars() map[string]string {
	if c.uriValues == nil {
		return nil
	}
	vars := make(map[string]string, len(c.uriValues))
	for name := range c.uriValues {
		vars[name] = c.URIVar(name)
	}
	return vars
}

// URIVar returns the value of one URI template variable as a string (see
// [Context.URIVars]), or "" when it is undefined.
func (c *Context) URIVar(name string) string {
	switch v := c.URIValue(name).(type) {
	case string:
		return v
	case []string:
		return strings.Join(v, ",")
	case map[string]string:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var parts []string
		for _, k := range keys {
			parts = append(parts, k, v[k])
		}
		return strings.Join(parts, ",")
	}
	return ""
}

// URIValue returns the value of one URI template variable: a string, a
// []string (the items of an exploded variable, e.g. {/path*}) or a
// map[string]string (the name=value pairs of an exploded variable of a
// query, e.g. {?keys*} matching ?a=1&b=2), or nil when it is undefined.
// Values are percent-decoded, except those of {+var} and {#var}, which
// are as they appear in the URI.
func (c *Context) URIValue(name string) any { return c.uriValues[name] }

// setHostURIValues sets the values a handler sees from those the host sent,
// which JSON decoding made []any and map[string]any; a value of another
// shape is left out.
func (c *Context) setHostURIValues() {
	c.uriValues = make(map[string]any, len(c.hostVars))
	for name, v := range c.hostVars {
		switch v := v.(type) {
		case string:
			c.uriValues[name] = v
		case []any:
			list := make([]string, 0, len(v))
			for _, item := range v {
				if s, ok := item.(string); ok {
					list = append(list, s)
				}
			}
			c.uriValues[name] = list
		case map[string]any:
			pairs := make(map[string]string, len(v))
			for k, item := range v {
				if s, ok := item.(string); ok {
					pairs[k] = s
				}
			}
			c.uriValues[name] = pairs
		}
	}
}

// Config returns the value of key in the plugin's config, as set in the
// host's configuration of this plugin. An empty value reads as absent.
func (c *Context) Config(key string) (string, bool) { return getConfig(key) }

// Log sends msg to the host's log (through Extism's log), at level; the
// host decides whether to keep it (it drops what is below its log level).
// It does not reach the MCP client: see [Context.LogMessage] for that. The
// eight MCP levels map onto the host log's: debug; info and notice to
// info; warning; error and more severe to error.
func (c *Context) Log(level LogLevel, msg string) { logMessage(level, msg) }
