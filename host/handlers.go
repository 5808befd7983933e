package host

// The MCP method handlers: the last step of the request path (see
// middleware.go). Each takes the target the request path looked up
// (route, in catalog.go), calls its plugin through bridge, and checks what
// the plugin asks of the client.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/host/internal/bridge"
	"github.com/mcphost/mcphost/host/internal/hostfn"
)

// withRequest puts the MCP request a plugin call serves into ctx, for the
// host functions.
func (h *Host) withRequest(ctx context.Context, session *mcp.ServerSession, progressToken any, caps *mcp.ClientCapabilities, extra *mcp.RequestExtra) context.Context {
	r := &hostfn.Request{Session: session, ProgressToken: progressToken, Capabilities: caps, StateSession: h.stateSession(session, extra)}
	if extra != nil {
		r.CloseSSEStream = extra.CloseSSEStream
	}
	return hostfn.WithRequest(ctx, r)
}

// callToolRound serves one round of a tools/call for every tool: one call
// of its plugin (callTool asks the rounds of a client before 2026-07-28).
func (h *Host) callToolRound(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	t, err := h.route(ctx, "tools/call", req)
	if err != nil {
		return nil, err
	}
	if t == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", req.Params.Name)}
	}
	defer t.plugin.release()
	callCtx := h.withRequest(ctx, req.Session, req.Params.GetProgressToken(), req.ClientCapabilities(), req.Extra)
	asTask := false
	if support := t.tool.tool.TaskSupport; support != "" {
		asTask = h.tasks != nil && clientHasTasks(req.ClientCapabilities())
		if !asTask && support == abi.TaskRequired {
			return nil, missingTasksError(fmt.Sprintf("tool %q runs only as a task: it", req.Params.Name))
		}
		if asTask {
			callCtx = bridge.WithTask(callCtx, &abi.TaskContext{Allowed: true})
		}
	}
	res, err := bridge.CallTool(callCtx, t.plugin.plugin, t.tool.tool, req)
	if errors.Is(err, bridge.ErrRunAsTask) {
		return h.startTask(ctx, t, req, asTask)
	}
	if err == nil && res != nil {
		if missing := undeclaredInput(res.InputRequests, req.ClientCapabilities()); len(missing) > 0 {
			failed := &mcp.CallToolResult{}
			failed.SetError(fmt.Errorf("tool %q needs to ask the client for %s, which this client did not declare it supports",
				req.Params.Name, strings.Join(missing, " and ")))
			return failed, nil
		}
	}
	return res, err
}

// startTask creates the task of a tools/call whose plugin asked to run it
// as one (tasks.go), which taskMethods returns instead of the result.
func (h *Host) startTask(ctx context.Context, t *target, req *mcp.CallToolRequest, allowed bool) (*mcp.CallToolResult, error) {
	if !allowed {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf(
			"plugin %q asked to run tool %q as a task, which it may only when the tool declares execution.taskSupport and the client the %s extension",
			t.plugin.cfg.Name, req.Params.Name, tasksExtension)}
	}
	slot, _ := ctx.Value(taskSlotKey{}).(*taskSlot)
	if slot == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("tool %q: no task can be created outside the request path", req.Params.Name)}
	}
	created, err := h.tasks.create(ctx, req)
	if err != nil {
		return nil, err
	}
	slot.created = created
	return &mcp.CallToolResult{}, nil
}

// undeclaredInput lists the capabilities that the input requests of a
// plugin's result (multi-round trip) need and that the client did not
// declare, sorted: asking a client for sampling, elicitation or roots it
// did not declare is what the specification forbids.
func undeclaredInput(requests mcp.InputRequestMap, caps *mcp.ClientCapabilities) []string {
	seen := map[string]bool{}
	for _, ir := range requests {
		if c := hostfn.MissingCapability(caps, ir); c != "" {
			seen[c] = true
		}
	}
	missing := make([]string, 0, len(seen))
	for c := range seen {
		missing = append(missing, c)
	}
	sort.Strings(missing)
	return missing
}

// missingCapabilitiesError is the error (SEP-2575's
// MissingRequiredClientCapabilities) for a prompt or resource whose plugin
// needs to ask the client what it did not declare.
func missingCapabilitiesError(what string, missing []string) error {
	required := map[string]any{}
	for _, c := range missing {
		name, sub, _ := strings.Cut(c, ".")
		if sub == "" {
			required[name] = map[string]any{}
		} else {
			required[name] = map[string]any{sub: map[string]any{}}
		}
	}
	data, _ := json.Marshal(map[string]any{"requiredCapabilities": required})
	return &jsonrpc.Error{
		Code:    mcp.CodeMissingRequiredClientCapabilities,
		Message: fmt.Sprintf("%s needs to ask the client for %s, which this client did not declare it supports", what, strings.Join(missing, " and ")),
		Data:    data,
	}
}

// readResourceRound serves one round of a resources/read for every
// resource and template: one call of its plugin (see readResource).
func (h *Host) readResourceRound(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	t, err := h.route(ctx, "resources/read", req)
	if err != nil {
		return nil, err
	}
	if t == nil {
		return nil, mcp.ResourceNotFoundError(req.Params.URI)
	}
	lp := t.plugin
	defer lp.release()
	if own := lp.pluginURI(req.Params.URI); own != req.Params.URI {
		params := *req.Params
		params.URI = own
		r := *req
		r.Params = &params
		req = &r
	}
	var match *bridge.TemplateMatch
	if t.match != nil {
		own := *t.match // the target's stays as clients know it
		own.Template = lp.pluginURI(own.Template)
		match = &own
	}
	res, err := bridge.ReadResource(h.withRequest(ctx, req.Session, req.Params.GetProgressToken(), req.ClientCapabilities(), req.Extra), lp.plugin, req, match)
	if err == nil && res != nil {
		if err := lp.checkAppRead(req.Params.URI, res); err != nil { // apps.go
			return nil, err
		}
		if missing := undeclaredInput(res.InputRequests, req.ClientCapabilities()); len(missing) > 0 {
			return nil, missingCapabilitiesError(fmt.Sprintf("resource %q", req.Params.URI), missing)
		}
	}
	return res, err
}

// getPromptRound serves one round of a prompts/get for every prompt: one
// call of its plugin (see getPrompt).
func (h *Host) getPromptRound(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	t, err := h.route(ctx, "prompts/get", req)
	if err != nil {
		return nil, err
	}
	if t == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown prompt %q", req.Params.Name)}
	}
	lp, e := t.plugin, t.prompt
	defer lp.release()
	res, err := bridge.GetPrompt(h.withRequest(ctx, req.Session, req.Params.GetProgressToken(), req.ClientCapabilities(), req.Extra), lp.plugin, e.prompt, lp.pluginPromptName(e.prompt.Name), req)
	if err == nil && res != nil {
		if missing := undeclaredInput(res.InputRequests, req.ClientCapabilities()); len(missing) > 0 {
			return nil, missingCapabilitiesError(fmt.Sprintf("prompt %q", req.Params.Name), missing)
		}
	}
	return res, err
}

// complete routes completion/complete to the plugin owning the prompt or
// resource template the reference names.
func (h *Host) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	ref := req.Params.Ref
	if ref == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "completion: ref is missing"}
	}
	if ref.Type != "ref/prompt" && ref.Type != "ref/resource" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("completion: unknown ref type %q", ref.Type)}
	}
	t, err := h.route(ctx, "completion/complete", req)
	if err != nil {
		return nil, err
	}
	if t == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("completion: no prompt or resource template %q", ref.Name+ref.URI)}
	}
	lp := t.plugin
	defer lp.release()
	if !lp.plugin.Has("complete") {
		return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}, nil
	}
	own := *ref // as the plugin knows it
	own.Name, own.URI = lp.pluginPromptName(ref.Name), lp.pluginURI(ref.URI)
	return bridge.Complete(h.withRequest(ctx, req.Session, nil, req.ClientCapabilities(), req.Extra), lp.plugin, &own, req)
}
