package host

// Tool search: a profile with search = true lists two tools of the host's
// own instead of its tools. search_tools ranks the profile's tools against
// a query (BM25, host/internal/toolsearch) and returns their whole
// definitions; call_tool calls one of them by name.
//
// A call through call_tool is a direct call of the tool it names, not a
// call that resembles one: searchCalls, the first step of a profile's
// request path, replaces the call_tool request by the tools/call request
// it stands for (same session, _meta, progress token, input responses and
// request state; the name and arguments from call_tool's arguments), so
// every later step — tracing, resolve in the profile's view, metrics and
// the audit log, the session's in-flight limit, the token's scopes, tasks,
// the schema check in bridge.CallTool, rug-pull holds, multi-round trips —
// sees and checks the inner tool. Only go-sdk's dispatch, which knows the
// two tools the profile registers, gets call_tool back (searchDispatch,
// the last step), and call_tool's handler runs callTool on the inner
// request. Over HTTP, H4 reads the inner name with the same function
// (auth.CallThrough) from the same bytes.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/internal/auth"
	"github.com/mcphost/mcphost/host/internal/bridge"
	"github.com/mcphost/mcphost/host/internal/toolsearch"
)

// The built-in tools of a search profile.
const (
	searchToolsName = "search_tools"
	callToolName    = "call_tool"
)

// What search_tools returns: limit's default and bound, and the longest
// query it reads.
const (
	searchDefaultLimit = 10
	searchMaxLimit     = 50
	searchMaxQuery     = 1000
)

// builtinTools are the names a search profile's tools may not have: the
// profile's own two.
var builtinTools = []string{searchToolsName, callToolName}

var searchToolsDef = &mcp.Tool{
	Name:  searchToolsName,
	Title: "Search tools",
	Description: "Finds the tools this server offers that match a query (words of what you want to do, ranked by relevance), " +
		"and returns their full definitions: name, description, inputSchema. Call a tool found with call_tool.",
	InputSchema: json.RawMessage(`{"type":"object","properties":{` +
		`"query":{"type":"string","minLength":1,"maxLength":1000,"description":"What the tool should do, in a few words (e.g. \"create calendar event\")."},` +
		`"limit":{"type":"integer","minimum":1,"maximum":50,"description":"At most this many tools (default 10)."}},` +
		`"required":["query"],"additionalProperties":false}`),
	OutputSchema: json.RawMessage(`{"type":"object","properties":{"tools":{"type":"array","items":{"type":"object"}}},"required":["tools"]}`),
	Annotations:  &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)},
}

var callToolDef = &mcp.Tool{
	Name:  callToolName,
	Title: "Call a tool",
	Description: "Calls a tool that search_tools found, by its name, with arguments that match its inputSchema; " +
		"returns what the tool returns.",
	InputSchema: json.RawMessage(`{"type":"object","properties":{` +
		`"name":{"type":"string","minLength":1,"description":"The tool's name, as search_tools gave it."},` +
		`"arguments":{"type":"object","description":"The tool's arguments, as its inputSchema describes them."}},` +
		`"required":["name"],"additionalProperties":false}`),
}

// searchToolsInput validates search_tools' arguments with the check every
// plugin tool's go through (bridge.CheckArguments).
var searchToolsInput = sync.OnceValue(func() bridge.Tool {
	s, err := bridge.CompileSchema(searchToolsDef.InputSchema.(json.RawMessage))
	if err != nil {
		panic(fmt.Sprintf("search_tools' own input schema: %v", err))
	}
	return bridge.Tool{MCP: searchToolsDef, PluginName: searchToolsName, Input: s}
})

// toolIndex is the search index of a catalog view, built on its first
// search: a reload builds a new view, and so a new index, only if it is
// searched.
type toolIndex struct {
	once  sync.Once
	index *toolsearch.Index
	names []string // document i is the tool served as names[i]; sorted
}

// searchIndex returns c's index, building it on first use.
func (c *catalog) searchIndex() *toolIndex {
	ix := c.search
	ix.once.Do(func() {
		ix.names = make([]string, 0, len(c.tools))
		for name := range c.tools {
			ix.names = append(ix.names, name)
		}
		slices.Sort(ix.names)
		docs := make([]toolsearch.Document, len(ix.names))
		for i, name := range ix.names {
			mt := c.tools[name].tool.MCP
			docs[i] = toolsearch.Document{Name: mt.Name, Title: mt.Title, Description: mt.Description}
			if raw, ok := mt.InputSchema.(json.RawMessage); ok {
				docs[i].InputSchema = raw
			}
		}
		ix.index = toolsearch.New(docs)
	})
	return ix
}

// searchTools serves search_tools for a search profile: the tools of the
// request's catalog view (the one resolve took) that the query matches and
// the token's scopes reach, best first.
func (h *Host) searchTools(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	raw, err := bridge.CheckArguments(searchToolsInput(), req.Params.Arguments)
	if err != nil {
		res := &mcp.CallToolResult{}
		res.SetError(err)
		return res, nil
	}
	var in struct {
		Query string `json:"query"`
		Limit int    `json:"limit"`
	}
	if err := json.Unmarshal(raw, &in); err != nil { // validated: cannot fail
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "search_tools: " + err.Error()}
	}
	if in.Limit == 0 {
		in.Limit = searchDefaultLimit
	}
	t := targetOf(ctx)
	if t == nil || t.catalog == nil || t.catalog.search == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "search_tools: served outside a search profile's request path"}
	}
	c := t.catalog
	ix := c.searchIndex()
	var allow func(int) bool
	if h.auth != nil {
		info := tokenInfo(req)
		allow = func(doc int) bool {
			e := c.tools[ix.names[doc]]
			return auth.HasScopes(info, pluginScopes(e.plugin, e.tool.PluginName))
		}
	}
	hits := ix.index.Search(in.Query, in.Limit, allow)
	found := struct {
		Tools []*mcp.Tool `json:"tools"`
	}{Tools: make([]*mcp.Tool, 0, len(hits))}
	for _, hit := range hits {
		found.Tools = append(found.Tools, c.tools[ix.names[hit.Doc]].tool.MCP)
	}
	out, err := json.Marshal(found)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "search_tools: encode the result: " + err.Error()}
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: string(out)}},
		StructuredContent: json.RawMessage(out),
	}, nil
}

// innerCall is a call_tool request (outer) and the tools/call request it
// stands for (inner), in the context of the request path that serves it.
type innerCall struct {
	outer, inner *mcp.CallToolRequest
}

type innerCallKey struct{}

// searchCalls is the first step of a profile's request path: through a
// search profile, a call of call_tool whose arguments name a tool becomes
// the call of that tool (see the top of this file). Arguments it cannot
// read leave the request as it is: call_tool's handler answers the error.
func (h *Host) searchCalls(p *profile) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			r, ok := req.(*mcp.CallToolRequest)
			if method != "tools/call" || !ok || r.Params == nil || r.Params.Name != callToolName || !p.cfg.Load().Search {
				return next(ctx, method, req)
			}
			name, args, err := auth.CallThrough(r.Params.Arguments)
			if err != nil {
				return next(ctx, method, req)
			}
			params := *r.Params
			params.Name, params.Arguments = name, args
			inner := &mcp.CallToolRequest{Session: r.Session, Params: &params, Extra: r.Extra}
			return next(context.WithValue(ctx, innerCallKey{}, &innerCall{outer: r, inner: inner}), method, inner)
		}
	}
}

// searchDispatch is the last step of a profile's request path: it hands
// go-sdk's dispatch the call_tool request searchCalls replaced (the
// profile's server knows no other tool), for callThrough to serve.
func searchDispatch(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if ic, ok := ctx.Value(innerCallKey{}).(*innerCall); ok && method == "tools/call" && req == mcp.Request(ic.inner) {
			return next(ctx, method, ic.outer)
		}
		return next(ctx, method, req)
	}
}

// callThrough serves call_tool: callTool on the request searchCalls made,
// or, when it made none, the error in call_tool's arguments.
func (h *Host) callThrough(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	ic, _ := ctx.Value(innerCallKey{}).(*innerCall)
	if ic == nil || ic.outer != req {
		_, _, err := auth.CallThrough(req.Params.Arguments)
		if err == nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "call_tool: served outside a search profile's request path"}
		}
		res := &mcp.CallToolResult{}
		res.SetError(fmt.Errorf("tool %q: invalid arguments: %w", callToolName, err))
		return res, nil
	}
	return h.callTool(ctx, ic.inner)
}

// searchThrough is the tool whose calls call another through p (for H4):
// call_tool for a search profile, else "".
func searchThrough(p *profile) string {
	if p != nil && p.cfg.Load().Search {
		return callToolName
	}
	return ""
}

// registered is what of c a profile registers on its server: all of it,
// or for a search profile (search) all but its tools, which only its
// view's lookups and index hold.
func registered(c *catalog, search bool) *catalog {
	if c == nil || !search {
		return c
	}
	return &catalog{resources: c.resources, templates: c.templates, prompts: c.prompts}
}

// applySearch brings p's server's built-in tools in line with search
// (whether p is a search profile now): before is true when they are
// registered. It returns whether they are now.
func (h *Host) applySearch(p *profile, before, search bool) bool {
	switch {
	case search && !before:
		p.server.AddTool(searchToolsDef, h.searchTools)
		p.server.AddTool(callToolDef, h.callThrough)
	case !search && before:
		p.server.RemoveTools(builtinTools...)
	}
	return search
}

// leaveOutBuiltins removes from a search profile's view v the tools that
// have the name of one of its built-in tools, and returns an error naming
// each (fail closed: neither is found nor called; the profile's rename or
// prefix can give them another name).
func (v *catalog) leaveOutBuiltins(profile string) error {
	var errs []error
	for _, name := range builtinTools {
		if e, ok := v.tools[name]; ok {
			delete(v.tools, name)
			v.searchLeftOut = append(v.searchLeftOut, fmt.Sprintf("tool %q (plugin %q) has the name of a built-in tool of tool search and is left out: give it another name with rename or prefix", name, e.plugin.cfg.Name))
			errs = append(errs, fmt.Errorf("profile %q: search: tool %q of plugin %q has the name of one of the profile's built-in tools (%s and %s) and is left out; rename it in the profile (rename = { %q = \"…\" }) or give the profile a prefix",
				profile, name, e.plugin.cfg.Name, searchToolsName, callToolName, name))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return errors.Join(errs...)
}
