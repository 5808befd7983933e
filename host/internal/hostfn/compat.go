package hostfn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	extism "github.com/extism/go-sdk"
	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/internal/clip"
	"github.com/mcphost/mcphost/host/internal/egress"
)

// The host functions below exist so that plugins written for hyper-mcp
// load and run unchanged: a Wasm import the host lacks would fail
// instantiation. mcphost's own plugins ask the client the multi-round-trip
// way (ABI.md §8) and never block inside a call; these block, bounded by
// the plugin's call deadline.

// asking defines a host function (i64 offset of a JSON block) -> i64
// offset of the JSON answer, or 0 when there is none (the plugin's PDK then
// fails to decode it and reports an error).
func (f *functions) asking(name string, handle func(ctx context.Context, payload []byte) (any, error)) extism.HostFunction {
	return extism.NewHostFunctionWithStack(name, func(ctx context.Context, p *extism.CurrentPlugin, stack []uint64) {
		CheckDeadline(ctx, name)
		payload, err := f.readPayload(ctx, p, stack[0])
		if err == nil {
			var answer any
			if answer, err = handle(ctx, payload); err == nil {
				stack[0] = f.writeAnswer(ctx, p, name, answer)
				return
			}
		}
		f.log(hclog.Warn, "host function refused", "function", name, "error", err)
		stack[0] = 0
	}, []extism.ValueType{extism.ValueTypeI64}, []extism.ValueType{extism.ValueTypeI64})
}

// answering defines a host function (i64 JSON) -> i64 JSON that always
// answers, errors included.
func (f *functions) answering(name string, handle func(ctx context.Context, payload []byte) any) extism.HostFunction {
	return extism.NewHostFunctionWithStack(name, func(ctx context.Context, p *extism.CurrentPlugin, stack []uint64) {
		CheckDeadline(ctx, name)
		payload, err := f.readPayload(ctx, p, stack[0])
		if err != nil {
			stack[0] = f.writeAnswer(ctx, p, name, errorAnswer{err.Error()})
			return
		}
		stack[0] = f.writeAnswer(ctx, p, name, handle(ctx, payload))
	}, []extism.ValueType{extism.ValueTypeI64}, []extism.ValueType{extism.ValueTypeI64})
}

// askingNoPayload defines a host function () -> i64 offset of the answer.
func (f *functions) askingNoPayload(name string, handle func(ctx context.Context) (any, error)) extism.HostFunction {
	return extism.NewHostFunctionWithStack(name, func(ctx context.Context, p *extism.CurrentPlugin, stack []uint64) {
		CheckDeadline(ctx, name)
		answer, err := handle(ctx)
		if err != nil {
			f.log(hclog.Warn, "host function refused", "function", name, "error", err)
			stack[0] = 0
			return
		}
		stack[0] = f.writeAnswer(ctx, p, name, answer)
	}, nil, []extism.ValueType{extism.ValueTypeI64})
}

// readPayload reads the JSON payload at offset, of at most
// maxPayloadBytes (a longer one is refused unread).
func (f *functions) readPayload(ctx context.Context, p *extism.CurrentPlugin, offset uint64) ([]byte, error) {
	return readBlock(ctx, p, offset, maxPayloadBytes)
}

// writeAnswer writes answer as JSON into a new block and returns its
// offset, or 0 (logged) when it cannot.
func (f *functions) writeAnswer(ctx context.Context, p *extism.CurrentPlugin, name string, answer any) uint64 {
	b, err := json.Marshal(answer)
	if err == nil {
		var offset uint64
		if offset, err = writeBlock(ctx, p, b); err == nil {
			return offset
		}
	}
	f.log(hclog.Warn, "host function could not answer", "function", name, "error", err)
	return 0
}

// session returns the client session of the current request, or an error
// saying why there is none.
func (f *functions) session(ctx context.Context, what string) (*mcp.ServerSession, error) {
	if err := f.mayReachClient(what); err != nil {
		return nil, err
	}
	if s := requestFrom(ctx).Session; s != nil {
		return s, nil
	}
	return nil, errors.New("not serving a client request (called at load time?)")
}

// createMessage: hyper-mcp's blocking sampling request (MCP
// CreateMessageRequest params) -> CreateMessageResult.
func (f *functions) createMessage(ctx context.Context, payload []byte) (any, error) {
	ss, err := f.session(ctx, "create_message")
	if err != nil {
		return nil, err
	}
	var params mcp.CreateMessageParams
	if err := decodePayload(payload, &params); err != nil {
		return nil, err
	}
	if err := mayAsk(ctx, &params); err != nil {
		return nil, err
	}
	return ss.CreateMessage(ctx, &params)
}

// createElicitation: hyper-mcp's blocking elicitation (MCP ElicitRequest
// params, plus an optional timeout that the call's deadline supersedes) ->
// ElicitResult.
func (f *functions) createElicitation(ctx context.Context, payload []byte) (any, error) {
	ss, err := f.session(ctx, "create_elicitation")
	if err != nil {
		return nil, err
	}
	var params mcp.ElicitParams
	if err := decodePayload(payload, &params); err != nil {
		return nil, err
	}
	if err := mayAsk(ctx, &params); err != nil {
		return nil, err
	}
	return ss.Elicit(ctx, &params)
}

// listRoots: hyper-mcp's blocking roots/list -> ListRootsResult.
func (f *functions) listRoots(ctx context.Context) (any, error) {
	ss, err := f.session(ctx, "list_roots")
	if err != nil {
		return nil, err
	}
	if err := mayAsk(ctx, &mcp.ListRootsParams{}); err != nil {
		return nil, err
	}
	return ss.ListRoots(ctx, &mcp.ListRootsParams{})
}

// refuseSecret answers hyper-mcp's secret lookups: mcphost grants a plugin
// no token or keyring secret; values a plugin needs come from its config.
func (f *functions) refuseSecret(name string) func(context.Context, []byte) (any, error) {
	return func(context.Context, []byte) (any, error) {
		return nil, fmt.Errorf("%s is not granted to plugin %q: pass values through its config in mcphost.toml", name, f.plugin)
	}
}

// urlElicitationCompleted: {"elicitationId": "…"} tells the client that an
// out-of-band (URL mode) elicitation finished.
func (f *functions) urlElicitationCompleted(ctx context.Context, payload []byte) error {
	ss, err := f.session(ctx, "notify_url_elicitation_completed")
	if err != nil {
		return err
	}
	var params mcp.ElicitationCompleteParams
	if err := decodePayload(payload, &params); err != nil {
		return err
	}
	return ss.NotifyElicitationComplete(ctx, &params)
}

// ExtismHTTPNamespace is the import module that the plugin package
// redirects a module's import of Extism's built-in http_request
// (extism:host/env) to, so that extismHTTPRequest answers it.
const ExtismHTTPNamespace = "mcphost:extism"

// extismHTTPRequest answers Extism's built-in http_request, which the
// plugin package redirects here (ExtismHTTPNamespace): hyper-mcp's
// plugins, and any plugin using an Extism PDK's HTTP client, call it. It
// keeps Extism's signature and behaviour — (i64 offset of {"url", "method",
// "headers"}, i64 offset of the body or 0) -> i64 offset of the response
// body or 0, the status and headers recorded for Extism's http_status_code
// and http_headers — but the request goes through the plugin's egress
// policy: only the hosts mcphost's config grants, every redirect checked,
// no private addresses unless granted. A refused or failed request traps
// the call, as Extism's own does (a PDK has no other way to hear of it),
// with a message naming the plugin and why.
func (f *functions) extismHTTPRequest() extism.HostFunction {
	fn := extism.NewHostFunctionWithStack("http_request", func(ctx context.Context, p *extism.CurrentPlugin, stack []uint64) {
		CheckDeadline(ctx, "http_request")
		inst, _ := ctx.Value(extism.PluginCtxKey("plugin")).(*extism.Plugin)
		if inst == nil {
			panic(fmt.Errorf("plugin %q: http_request: not inside a call", f.plugin))
		}
		inst.LastStatusCode = 0
		if inst.LastResponseHeaders == nil {
			inst.LastResponseHeaders = map[string]string{}
		}
		clear(inst.LastResponseHeaders)
		resp, err := f.doExtismHTTP(ctx, p, stack[0], stack[1])
		if err != nil {
			f.log(hclog.Warn, "http_request refused or failed", "error", err)
			panic(fmt.Errorf("plugin %q: %w", f.plugin, err))
		}
		inst.LastStatusCode = resp.Status
		for k, v := range resp.Headers {
			inst.LastResponseHeaders[strings.ToLower(k)] = v
		}
		stack[0] = 0
		if len(resp.Body) > 0 {
			offset, err := writeBlock(ctx, p, resp.Body)
			if err != nil {
				panic(fmt.Errorf("plugin %q: http_request: write the response body: %w", f.plugin, err))
			}
			stack[0] = offset
		}
	}, []extism.ValueType{extism.ValueTypeI64, extism.ValueTypeI64}, []extism.ValueType{extism.ValueTypeI64})
	fn.SetNamespace(ExtismHTTPNamespace)
	return fn
}

// doExtismHTTP reads an Extism HTTP request from the plugin's memory and
// sends it under the egress policy.
func (f *functions) doExtismHTTP(ctx context.Context, p *extism.CurrentPlugin, reqOffset, bodyOffset uint64) (*egress.Response, error) {
	payload, err := f.readPayload(ctx, p, reqOffset)
	if err != nil {
		return nil, fmt.Errorf("http_request: read the request: %w", err)
	}
	_ = p.FreeWithContext(ctx, reqOffset)
	var req struct {
		URL     string            `json:"url"`
		Method  string            `json:"method"`
		Headers map[string]string `json:"headers"`
	}
	if err := decodePayload(payload, &req); err != nil {
		return nil, fmt.Errorf("http_request: %w", err)
	}
	var body []byte
	if bodyOffset != 0 {
		if body, err = f.readPayload(ctx, p, bodyOffset); err != nil {
			return nil, fmt.Errorf("http_request to %s: read the body: %w", clip.Text(req.URL, 256), err)
		}
		_ = p.FreeWithContext(ctx, bodyOffset)
	}
	resp, err := f.egress.Do(ctx, egress.Request{Method: req.Method, URL: req.URL, Headers: req.Headers, Body: body})
	if err != nil {
		return nil, fmt.Errorf("http_request to %s: %w", clip.Text(req.URL, 256), err)
	}
	f.log(hclog.Debug, "http_request (Extism's)", "method", req.Method, "url", req.URL, "status", resp.Status)
	return resp, nil
}

// Capabilities a client declares that the host's requests to it need.
const (
	CapSampling      = "sampling"
	CapSamplingTools = "sampling.tools"
	CapElicitation   = "elicitation"
	CapElicitURL     = "elicitation.url"
	CapElicitForm    = "elicitation.form"
	CapRoots         = "roots"
)

// MissingCapability returns the client capability that asking the client
// for ir needs and caps (what the client declared) lacks, or "" when the
// client may be asked. The specification forbids a server to send a
// client a request of a capability it did not declare.
func MissingCapability(caps *mcp.ClientCapabilities, ir mcp.InputRequest) string {
	if caps == nil {
		caps = &mcp.ClientCapabilities{}
	}
	switch p := ir.(type) {
	case *mcp.CreateMessageParams:
		if caps.Sampling == nil {
			return CapSampling
		}
	case *mcp.CreateMessageWithToolsParams:
		if caps.Sampling == nil {
			return CapSampling
		}
		if len(p.Tools) > 0 && caps.Sampling.Tools == nil {
			return CapSamplingTools
		}
	case *mcp.ElicitParams:
		e := caps.Elicitation
		switch {
		case e == nil:
			return CapElicitation
		case p.Mode == "url" && e.URL == nil:
			return CapElicitURL
		// A client declaring neither mode supports forms (2025-06-18).
		case p.Mode != "url" && e.Form == nil && e.URL != nil:
			return CapElicitForm
		}
	case *mcp.ListRootsParams:
		if caps.RootsV2 == nil {
			return CapRoots
		}
	}
	return ""
}

// mayAsk returns an error when the client of the current request did not
// declare the capability asking it for ir needs.
func mayAsk(ctx context.Context, ir mcp.InputRequest) error {
	if missing := MissingCapability(requestFrom(ctx).Capabilities, ir); missing != "" {
		return fmt.Errorf("the client did not declare the %q capability: it may not be asked", missing)
	}
	return nil
}
