package host

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"time"

	mcpauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/internal/audit"
	"github.com/mcphost/mcphost/host/internal/auth"
)

// codeInsufficientScope is the JSON-RPC error code of a request refused
// because the caller's token lacks a scope (server-defined range). Over
// HTTP a tools/call is refused earlier, with 403 insufficient_scope; this
// code covers prompts, resources and completions.
const codeInsufficientScope = -32001

// pluginScopes returns the scopes a caller needs for anything lp offers,
// plus, for a tool, those of the tool (by the name the plugin gives it).
func pluginScopes(lp *loadedPlugin, pluginToolName string) []string {
	if lp == nil {
		return nil
	}
	scopes := lp.cfg.Scopes
	if extra := lp.cfg.ToolScopes[pluginToolName]; len(extra) > 0 {
		scopes = append(slices.Clone(scopes), extra...)
	}
	return scopes
}

// toolScopes returns the scopes a caller needs to see and call the tool
// clients know as name (nil for an unknown tool: go-sdk refuses it).
func (h *Host) toolScopes(name string) []string {
	e, ok := h.catalog.Load().tools[name]
	if !ok {
		return nil
	}
	return pluginScopes(e.plugin, e.tool.PluginName)
}

// checkToolScopes refuses, with HTTP 403 insufficient_scope, a tools/call
// for a tool the request's token has not the scopes for (see
// auth.RequireToolScopes), and counts and audits each refusal: the request
// never reaches the MCP server, where calls are otherwise observed.
func (h *Host) checkToolScopes(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info := mcpauth.TokenInfoFromContext(r.Context())
		lookup := func(name string) []string {
			required := h.toolScopes(name)
			if !auth.HasScopes(info, required) {
				h.recordRefusal(r, info, name, required)
			}
			return required
		}
		h.auth.RequireToolScopes(lookup, 0)(next).ServeHTTP(w, r)
	})
}

// recordRefusal counts and audits a tools/call refused for its scopes.
func (h *Host) recordRefusal(r *http.Request, info *mcpauth.TokenInfo, tool string, required []string) {
	pluginName := ""
	if e, ok := h.catalog.Load().tools[tool]; ok {
		pluginName = e.plugin.cfg.Name
	}
	h.metrics.calls.WithLabelValues("tools/call", pluginName, tool, "denied").Inc()
	if h.audit == nil {
		return
	}
	err := h.audit.Write(audit.Entry{
		Time: time.Now().UTC(), Subject: auth.Subject(info), Session: r.Header.Get("Mcp-Session-Id"),
		Method: "tools/call", Plugin: pluginName, Name: tool, Outcome: "denied",
		Error: fmt.Sprintf("insufficient scope: tool %q needs scopes %v", tool, required),
	})
	if err != nil {
		h.logger.Error("audit log", "error", err)
	}
}

// scopedMethods are those enforceScopes filters or checks.
var scopedMethods = map[string]bool{
	"tools/list": true, "prompts/list": true, "resources/list": true, "resources/templates/list": true,
	"tools/call": true, "prompts/get": true, "resources/read": true, "completion/complete": true,
}

// enforceScopes is a receiving middleware, active when requests carry a
// verified token ([server.auth]): lists leave out what the token's scopes
// do not reach, and a request for such an item is refused.
func (h *Host) enforceScopes(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if h.auth == nil || !scopedMethods[method] {
			return next(ctx, method, req)
		}
		var info *mcpauth.TokenInfo
		if extra := req.GetExtra(); extra != nil {
			info = extra.TokenInfo
		}
		c := h.catalog.Load()
		switch r := req.(type) {
		case *mcp.CallToolRequest:
			if e, ok := c.tools[r.Params.Name]; ok {
				if required := pluginScopes(e.plugin, e.tool.PluginName); !auth.HasScopes(info, required) {
					return nil, scopeError("tool", r.Params.Name, required)
				}
			}
		case *mcp.GetPromptRequest, *mcp.ReadResourceRequest, *mcp.CompleteRequest:
			name := requestTarget(req)
			if lp := c.pluginFor(req); lp != nil && !auth.HasScopes(info, lp.cfg.Scopes) {
				return nil, scopeError(method, name, lp.cfg.Scopes)
			}
		}
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		switch r := res.(type) {
		case *mcp.ListToolsResult:
			r.Tools = slices.DeleteFunc(r.Tools, func(t *mcp.Tool) bool {
				e, ok := c.tools[t.Name]
				return ok && !auth.HasScopes(info, pluginScopes(e.plugin, e.tool.PluginName))
			})
		case *mcp.ListPromptsResult:
			r.Prompts = slices.DeleteFunc(r.Prompts, func(p *mcp.Prompt) bool {
				e, ok := c.prompts[p.Name]
				return ok && !auth.HasScopes(info, pluginScopes(e.plugin, ""))
			})
		case *mcp.ListResourcesResult:
			r.Resources = slices.DeleteFunc(r.Resources, func(rs *mcp.Resource) bool {
				e, ok := c.resources[rs.URI]
				return ok && !auth.HasScopes(info, pluginScopes(e.plugin, ""))
			})
		case *mcp.ListResourceTemplatesResult:
			r.ResourceTemplates = slices.DeleteFunc(r.ResourceTemplates, func(t *mcp.ResourceTemplate) bool {
				e, ok := c.templates[t.URITemplate]
				return ok && !auth.HasScopes(info, pluginScopes(e.plugin, ""))
			})
		}
		return res, nil
	}
}

// scopeError refuses a request for an item the token's scopes do not reach.
func scopeError(kind, name string, required []string) error {
	data, _ := json.Marshal(map[string]any{"requiredScopes": required})
	return &jsonrpc.Error{
		Code:    codeInsufficientScope,
		Message: fmt.Sprintf("insufficient scope: %s %q needs scopes %v", kind, name, required),
		Data:    data,
	}
}
