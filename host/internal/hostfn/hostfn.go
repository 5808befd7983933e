// Package hostfn provides the host functions a plugin may import from
// module "extism:host/user" (see abi/ABI.md, "Host functions").
//
// A host function runs inside a plugin call, on the goroutine of that call,
// with the call's context. The MCP request the call serves (its session and
// progress token) travels in that context: WithRequest puts it there before
// the host calls the plugin. A host function called outside a request (while
// the host lists a plugin's tools at load) still works; what needs a client
// is only logged.
package hostfn

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	extism "github.com/extism/go-sdk"
	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"

	"github.com/mcphost/mcphost/host/internal/clip"
	"github.com/mcphost/mcphost/host/internal/egress"
	"github.com/mcphost/mcphost/host/internal/pluginstate"
)

// Namespace is the Wasm import module of mcphost's host functions.
const Namespace = "extism:host/user"

// maxPayloadBytes bounds the JSON a plugin may pass to a host function
// that answers (http_request, hyper-mcp's requests to the client).
const maxPayloadBytes = 1 << 20

// maxNotifyBytes bounds the JSON of a notification (notify_*,
// close_sse_stream): what reaches a client unasked, up to ClientRate times
// a second, is kept well under an output (max_output_kb).
const maxNotifyBytes = 64 << 10

// Request is the MCP request a plugin call serves.
type Request struct {
	// Session is the client session, or nil when unknown.
	Session *mcp.ServerSession
	// ProgressToken is the request's _meta.progressToken, or nil.
	ProgressToken any
	// Capabilities are what the client declared (at initialize, or in the
	// request's _meta on the 2026-07-28 revision); nil for none. The host
	// asks a client only what they include.
	Capabilities *mcp.ClientCapabilities
	// CloseSSEStream, when the transport offers it, closes the SSE stream
	// of the request so the client reconnects later (SEP-1699).
	CloseSSEStream func(mcp.CloseSSEStreamArgs)
	// StateSession is the session whose scope of plugin state
	// (state_get, state_set) the call reaches: Session on stdio and over
	// stateful HTTP, nil (the plugin's one shared scope) for stateless
	// requests and calls outside a request. The host sets it.
	StateSession *mcp.ServerSession
}

type requestKey struct{}

// WithRequest returns ctx carrying r for the host functions.
func WithRequest(ctx context.Context, r *Request) context.Context {
	return context.WithValue(ctx, requestKey{}, r)
}

func requestFrom(ctx context.Context) *Request {
	r, _ := ctx.Value(requestKey{}).(*Request)
	if r == nil {
		return &Request{}
	}
	return r
}

// Notifier receives what a plugin announces that concerns every client,
// not just the request being served.
type Notifier interface {
	// ResourceUpdated tells the sessions subscribed to uri that it changed.
	ResourceUpdated(ctx context.Context, uri string)
	// ListChanged tells the host that the plugin's list of kind ("tools",
	// "resources" or "prompts") changed.
	ListChanged(ctx context.Context, plugin, kind string)
}

// ClientRate bounds how many messages a plugin's host functions may send
// toward clients (log messages, progress, resource updates, list changes,
// requests to the client), per second, with bursts of ClientBurst. Past
// it, messages are dropped and the drop is logged.
const (
	ClientRate  = 100
	ClientBurst = 200
)

// State is where a plugin's state_get and state_set reach: the host's
// store and the plugin's bound in it.
type State struct {
	// Store holds the state of every plugin of the host.
	Store *pluginstate.Store
	// KB is the plugin's state_kb: what one of its scopes may hold, keys
	// and values counted; 0 turns its state off.
	KB int
}

// Functions returns the host functions for the plugin named plugin; policy
// is what its config grants of the network (nil: nothing); state is where
// its state is kept (nil: it keeps none, state_set refuses).
func Functions(plugin string, logger hclog.Logger, notifier Notifier, policy *egress.Policy, state *State) []extism.HostFunction {
	if policy == nil {
		policy = &egress.Policy{}
	}
	f := &functions{plugin: plugin, logger: logger, notifier: notifier, egress: policy, state: state,
		toClient: rate.NewLimiter(ClientRate, ClientBurst), dropLog: rate.NewLimiter(1, 1), logs: newLogBudget()}
	fns := []extism.HostFunction{
		f.withPayload("notify_logging_message", f.loggingMessage),
		f.withPayload("notify_progress", f.progress),
		f.withPayload("notify_resource_updated", f.resourceUpdated),
		f.noPayload("notify_tool_list_changed", f.listChanged("tools")),
		f.noPayload("notify_resource_list_changed", f.listChanged("resources")),
		f.noPayload("notify_prompt_list_changed", f.listChanged("prompts")),
		f.withPayload("close_sse_stream", f.closeSSEStream),
		f.answering("http_request", f.httpRequest),
		f.answering("state_get", f.stateGet),
		f.answering("state_set", f.stateSet),
		// hyper-mcp's blocking client requests and secrets, so that its
		// plugins load unchanged (see compat.go).
		f.asking("create_message", f.createMessage),
		f.asking("create_elicitation", f.createElicitation),
		f.askingNoPayload("list_roots", f.listRoots),
		f.asking("get_access_token", f.refuseSecret("get_access_token")),
		f.asking("get_keyring_secret", f.refuseSecret("get_keyring_secret")),
		f.withPayload("notify_url_elicitation_completed", f.urlElicitationCompleted),
	}
	for i := range fns {
		fns[i].SetNamespace(Namespace)
	}
	// Extism's own http_request, redirected to the egress policy.
	return append(fns, f.extismHTTPRequest())
}

type functions struct {
	plugin   string
	logger   hclog.Logger
	notifier Notifier
	egress   *egress.Policy
	state    *State        // nil: no state
	toClient *rate.Limiter // messages toward clients
	dropLog  *rate.Limiter // how often a drop is logged
	logs     *logBudget    // host-log lines for the plugin's calls
}

// mayReachClient takes one message from the plugin's budget toward
// clients; when the budget is spent it logs (at most once a second) and
// refuses.
func (f *functions) mayReachClient(what string) error {
	if f.toClient.Allow() {
		return nil
	}
	if f.dropLog.Allow() {
		f.logger.Warn("plugin sends too many messages to clients; dropping", "function", what, "limit_per_second", ClientRate)
	}
	return fmt.Errorf("more than %d messages per second toward clients: dropped", ClientRate)
}

// withPayload defines a host function (i64 offset of a JSON block of at
// most maxNotifyBytes) -> (). A payload that cannot be read or decoded is
// logged and ignored: a host function never traps the plugin for a bad
// argument.
func (f *functions) withPayload(name string, handle func(ctx context.Context, payload []byte) error) extism.HostFunction {
	return extism.NewHostFunctionWithStack(name, func(ctx context.Context, p *extism.CurrentPlugin, stack []uint64) {
		CheckDeadline(ctx, name)
		offset := stack[0]
		n, err := p.LengthWithContext(ctx, offset)
		if err != nil {
			f.logFor(ctx, hclog.Warn, "host function: bad payload", "function", name, "error", err)
			return
		}
		if n > maxNotifyBytes {
			f.logFor(ctx, hclog.Warn, "host function: payload too large", "function", name, "bytes", n, "max", maxNotifyBytes)
			return
		}
		payload, err := readBlock(ctx, p, offset, maxNotifyBytes)
		if err != nil {
			f.logFor(ctx, hclog.Warn, "host function: bad payload", "function", name, "error", err)
			return
		}
		if err := handle(ctx, payload); err != nil {
			f.logFor(ctx, hclog.Warn, "host function refused", "function", name, "error", err)
		}
	}, []extism.ValueType{extism.ValueTypeI64}, nil)
}

// noPayload defines a host function () -> ().
func (f *functions) noPayload(name string, handle func(ctx context.Context)) extism.HostFunction {
	return extism.NewHostFunctionWithStack(name, func(ctx context.Context, _ *extism.CurrentPlugin, _ []uint64) {
		CheckDeadline(ctx, name)
		handle(ctx)
	}, nil, nil)
}

func (f *functions) listChanged(kind string) func(context.Context) {
	return func(ctx context.Context) {
		if f.mayReachClient("notify_"+kind+"_list_changed") == nil {
			f.notifier.ListChanged(ctx, f.plugin, kind)
		}
	}
}

// decodePayload decodes a host function's JSON payload into v.
func decodePayload(payload []byte, v any) error {
	if err := json.Unmarshal(payload, v); err != nil {
		return fmt.Errorf("payload is not the expected JSON: %w", err)
	}
	return nil
}

var logLevels = map[mcp.LoggingLevel]hclog.Level{
	"debug": hclog.Debug, "info": hclog.Info, "notice": hclog.Info,
	"warning": hclog.Warn, "error": hclog.Error, "critical": hclog.Error,
	"alert": hclog.Error, "emergency": hclog.Error,
}

// loggingMessage: {"level": "info", "logger": "…", "data": any}. Goes to the
// host log, and to the client as notifications/message when the session's
// level lets it through.
func (f *functions) loggingMessage(ctx context.Context, payload []byte) error {
	var msg mcp.LoggingMessageParams
	if err := decodePayload(payload, &msg); err != nil {
		return err
	}
	level, ok := logLevels[msg.Level]
	if !ok {
		return fmt.Errorf("unknown level %q (debug, info, notice, warning, error, critical, alert, emergency)", clip.Text(string(msg.Level), 64))
	}
	if err := f.mayReachClient("notify_logging_message"); err != nil {
		return nil // already logged (rate-limited)
	}
	data, _ := json.Marshal(msg.Data) // it came from JSON
	f.logFor(ctx, level, "plugin log", "logger", msg.Logger, "data", data)
	req := requestFrom(ctx)
	if req.Session == nil {
		return nil
	}
	if msg.Logger == "" {
		msg.Logger = f.plugin
	}
	return req.Session.Log(ctx, &msg)
}

// progress: {"progress": n, "total": n, "message": "…"} for the current
// request's progress token; without a token there is nobody to tell.
func (f *functions) progress(ctx context.Context, payload []byte) error {
	var p struct {
		Progress float64 `json:"progress"`
		Total    float64 `json:"total,omitempty"`
		Message  string  `json:"message,omitempty"`
	}
	if err := decodePayload(payload, &p); err != nil {
		return err
	}
	req := requestFrom(ctx)
	if req.Session == nil || req.ProgressToken == nil {
		return nil
	}
	if err := f.mayReachClient("notify_progress"); err != nil {
		return nil
	}
	return req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
		ProgressToken: req.ProgressToken,
		Progress:      p.Progress,
		Total:         p.Total,
		Message:       p.Message,
	})
}

// resourceUpdated: {"uri": "…"}; reaches only the sessions subscribed to it.
func (f *functions) resourceUpdated(ctx context.Context, payload []byte) error {
	var p struct {
		URI string `json:"uri"`
	}
	if err := decodePayload(payload, &p); err != nil {
		return err
	}
	if p.URI == "" {
		return fmt.Errorf("uri is missing")
	}
	if err := f.mayReachClient("notify_resource_updated"); err != nil {
		return nil
	}
	f.notifier.ResourceUpdated(ctx, p.URI)
	return nil
}

// closeSSEStream: {"retryAfterMs": n}. Ends the SSE stream carrying the
// current request's response, telling the client to reconnect after n ms;
// the response reaches it on the resumed stream (SEP-1699 polling, for long
// calls behind proxies that cut idle connections). A no-op where there is
// no such stream (stdio, JSON responses, the stateless revision).
func (f *functions) closeSSEStream(ctx context.Context, payload []byte) error {
	var p struct {
		RetryAfterMs int64 `json:"retryAfterMs"`
	}
	if err := decodePayload(payload, &p); err != nil {
		return err
	}
	if p.RetryAfterMs < 0 || p.RetryAfterMs > 60_000 {
		return fmt.Errorf("retryAfterMs %d is out of range (0 to 60000)", p.RetryAfterMs)
	}
	if req := requestFrom(ctx); req.CloseSSEStream != nil {
		req.CloseSSEStream(mcp.CloseSSEStreamArgs{RetryAfter: time.Duration(p.RetryAfterMs) * time.Millisecond})
	}
	return nil
}

// httpRequest: {"method", "url", "headers", "body" (base64)} -> {"status",
// "headers", "body" (base64)}, or {"error": "…"} saying why not. Only what
// the plugin's allowed_hosts grants is reachable (see package egress).
func (f *functions) httpRequest(ctx context.Context, payload []byte) any {
	var req egress.Request
	if err := decodePayload(payload, &req); err != nil {
		return errorAnswer{err.Error()}
	}
	resp, err := f.egress.Do(ctx, req)
	if err != nil {
		f.logFor(ctx, hclog.Warn, "http_request refused or failed", "url", req.URL, "error", err)
		return errorAnswer{err.Error()}
	}
	f.logFor(ctx, hclog.Debug, "http_request", "method", req.Method, "url", req.URL, "status", resp.Status)
	return resp
}

// errorAnswer is a host function's answer when it could not do what was
// asked.
type errorAnswer struct {
	Error string `json:"error"`
}
