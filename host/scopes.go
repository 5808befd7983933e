package host

import (
	"encoding/json"
	"fmt"
	"slices"

	mcpauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

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

// scopedMethods are those enforceScopes filters or checks.
var scopedMethods = map[string]bool{
	"tools/list": true, "prompts/list": true, "resources/list": true, "resources/templates/list": true,
	"tools/call": true, "prompts/get": true, "resources/read": true, "completion/complete": true,
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

// tokenInfo returns the verified token a request came with (nil for none).
func tokenInfo(req mcp.Request) *mcpauth.TokenInfo {
	if extra := req.GetExtra(); extra != nil {
		return extra.TokenInfo
	}
	return nil
}

// scopeRefusal returns the error refusing req, for method, when its token's
// scopes do not reach t, its target: a tool's plugin and tool scopes, the
// plugin scopes of a prompt, resource or completion. It returns nil when
// they do, when no plugin serves req (go-sdk or the handler refuses it) and
// without [server.auth].
func (h *Host) scopeRefusal(method string, req mcp.Request, t *target) error {
	if h.auth == nil || t.plugin == nil {
		return nil
	}
	info := tokenInfo(req)
	switch r := req.(type) {
	case *mcp.CallToolRequest:
		if required := pluginScopes(t.plugin, t.tool.tool.PluginName); !auth.HasScopes(info, required) {
			return scopeError("tool", r.Params.Name, required)
		}
	case *mcp.GetPromptRequest, *mcp.ReadResourceRequest, *mcp.CompleteRequest:
		if !auth.HasScopes(info, t.plugin.cfg.Scopes) {
			return scopeError(method, requestTarget(req), t.plugin.cfg.Scopes)
		}
	}
	return nil
}
