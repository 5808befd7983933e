package host

import (
	"context"
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/internal/auth"
	"github.com/mcphost/mcphost/host/internal/bridge"
	"github.com/mcphost/mcphost/host/internal/config"
)

// A reload that lands between the resolve middleware and the handler is a
// race no client can time, so these tests build the two catalogs (before
// and after the reload) by hand; route never calls into the plugin itself.

// generationOf is a plugin generation named name offering the tool echo,
// whose callers need scopes.
func generationOf(name string, scopes ...string) (*loadedPlugin, *catalog) {
	lp := newLoadedPlugin(config.Plugin{Name: name, Scopes: scopes}, [32]byte{}, nil)
	lp.tools = []bridge.Tool{{MCP: &mcp.Tool{Name: "echo"}, PluginName: "echo"}}
	return lp, buildCatalog([]*loadedPlugin{lp}, nil, nil)
}

func TestRouteRunsTheCallOnTheGenerationResolved(t *testing.T) {
	req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "echo"}}
	old, oldCatalog := generationOf("old")
	cur, curCatalog := generationOf("new")
	h := &Host{}
	h.catalog.Store(curCatalog) // the reload swapped the catalog after resolve
	ctx := &targetContext{Context: context.Background(), target: oldCatalog.lookup(req)}

	got, err := h.route(ctx, "tools/call", req)
	if err != nil || got == nil {
		t.Fatalf("route = %v, %v; want the resolved target", got, err)
	}
	if got.plugin != old {
		t.Fatalf("call routed to generation %q; want %q, the one resolve found (and observe and the scope check saw)", got.pluginName(), "old")
	}
	got.plugin.release()

	// Once the old generation is retired, the request is looked up again,
	// and the target in ctx follows, so observe labels what really ran.
	<-old.retire()
	got, err = h.route(ctx, "tools/call", req)
	if err != nil || got == nil || got.plugin != cur {
		t.Fatalf("after retirement route = %v, %v; want generation %q", got.pluginName(), err, "new")
	}
	got.plugin.release()
	if name := targetOf(ctx).pluginName(); name != "new" {
		t.Fatalf("target in ctx names %q after the new lookup; want %q", name, "new")
	}
}

func TestRouteChecksScopesOfAGenerationLookedUpAgain(t *testing.T) {
	req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "echo"}}
	old, oldCatalog := generationOf("p")
	_, curCatalog := generationOf("p", "admin") // the reload asks for a scope
	h := &Host{auth: &auth.ResourceServer{}}
	h.catalog.Store(curCatalog)
	ctx := &targetContext{Context: context.Background(), target: oldCatalog.lookup(req)}
	if err := h.scopeRefusal("tools/call", req, targetOf(ctx)); err != nil {
		t.Fatalf("the resolved target needs no scope, yet: %v", err)
	}
	<-old.retire()
	got, err := h.route(ctx, "tools/call", req)
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != codeInsufficientScope {
		t.Fatalf("route to a generation needing scope admin, without a token = %v, %v; want error %d", got, err, codeInsufficientScope)
	}
}
