package host

import (
	"context"
	"fmt"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/internal/bridge"
	"github.com/mcphost/mcphost/host/internal/hostfn"
)

// catalog is everything the loaded plugins contribute, keyed by the names
// and URIs clients use. It is built whole from a list of plugins and never
// changed afterwards, so it can be shared without locks.
type catalog struct {
	tools     map[string]toolEntry
	resources map[string]resourceEntry
	templates map[string]templateEntry
	prompts   map[string]promptEntry
	order     []string // plugin names in config order, for logs
}

type toolEntry struct {
	plugin *loadedPlugin
	tool   bridge.Tool
}

type resourceEntry struct {
	plugin   *loadedPlugin
	resource *mcp.Resource
}

type templateEntry struct {
	plugin   *loadedPlugin
	template *mcp.ResourceTemplate
}

type promptEntry struct {
	plugin *loadedPlugin
	prompt *mcp.Prompt
}

// buildCatalog merges the plugins' contributions in order: a name or URI
// already claimed by an earlier plugin is refused for the later one, with a
// warning naming both.
func buildCatalog(plugins []*loadedPlugin, logger hclog.Logger) *catalog {
	c := &catalog{
		tools:     map[string]toolEntry{},
		resources: map[string]resourceEntry{},
		templates: map[string]templateEntry{},
		prompts:   map[string]promptEntry{},
	}
	refuse := func(lp *loadedPlugin, kind, name, owner string) {
		logger.Warn(fmt.Sprintf("%s already offered by another plugin; leaving this one out", kind),
			"plugin", lp.cfg.Name, kind, name, "owner", owner)
	}
	for _, lp := range plugins {
		c.order = append(c.order, lp.cfg.Name)
		for _, t := range lp.tools {
			if e, taken := c.tools[t.MCP.Name]; taken {
				refuse(lp, "tool", t.MCP.Name, e.plugin.cfg.Name)
				continue
			}
			c.tools[t.MCP.Name] = toolEntry{plugin: lp, tool: t}
		}
		for _, r := range lp.resources {
			if e, taken := c.resources[r.URI]; taken {
				refuse(lp, "resource", r.URI, e.plugin.cfg.Name)
				continue
			}
			c.resources[r.URI] = resourceEntry{plugin: lp, resource: r}
		}
		for _, t := range lp.templates {
			if e, taken := c.templates[t.URITemplate]; taken {
				refuse(lp, "resource template", t.URITemplate, e.plugin.cfg.Name)
				continue
			}
			c.templates[t.URITemplate] = templateEntry{plugin: lp, template: t}
		}
		for _, p := range lp.prompts {
			if e, taken := c.prompts[p.Name]; taken {
				refuse(lp, "prompt", p.Name, e.plugin.cfg.Name)
				continue
			}
			c.prompts[p.Name] = promptEntry{plugin: lp, prompt: p}
		}
	}
	return c
}

// contributions lists, for a log line, what a plugin has in the catalog.
func (c *catalog) contributions(lp *loadedPlugin) (tools, resources, templates, prompts []string) {
	for name, e := range c.tools {
		if e.plugin == lp {
			tools = append(tools, name)
		}
	}
	for uri, e := range c.resources {
		if e.plugin == lp {
			resources = append(resources, uri)
		}
	}
	for uri, e := range c.templates {
		if e.plugin == lp {
			templates = append(templates, uri)
		}
	}
	for name, e := range c.prompts {
		if e.plugin == lp {
			prompts = append(prompts, name)
		}
	}
	return
}

// withRequest puts the MCP request a plugin call serves into ctx, for the
// host functions.
func withRequest(ctx context.Context, session *mcp.ServerSession, params interface{ GetProgressToken() any }) context.Context {
	return hostfn.WithRequest(ctx, &hostfn.Request{Session: session, ProgressToken: params.GetProgressToken()})
}

// apply registers the catalog's entries on server. Handlers capture their
// entry, so a call always runs on the plugin generation it was routed to.
func (c *catalog) apply(server *mcp.Server) {
	for _, e := range c.tools {
		server.AddTool(e.tool.MCP, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return bridge.CallTool(withRequest(ctx, req.Session, req.Params), e.plugin.plugin, e.tool, req)
		})
	}
	read := func(lp *loadedPlugin) mcp.ResourceHandler {
		return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return bridge.ReadResource(withRequest(ctx, req.Session, req.Params), lp.plugin, req)
		}
	}
	for _, e := range c.resources {
		server.AddResource(e.resource, read(e.plugin))
	}
	for _, e := range c.templates {
		server.AddResourceTemplate(e.template, read(e.plugin))
	}
	for _, e := range c.prompts {
		server.AddPrompt(e.prompt, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return bridge.GetPrompt(withRequest(ctx, req.Session, req.Params), e.plugin.plugin, e.prompt, e.prompt.Name, req)
		})
	}
}

// lookupResource finds the plugin serving uri: a concrete resource first,
// then a template that matches it.
func (c *catalog) lookupResource(uri string) (*loadedPlugin, bool) {
	if e, ok := c.resources[uri]; ok {
		return e.plugin, true
	}
	for _, e := range c.templates {
		if e.template.URITemplate == uri {
			return e.plugin, true
		}
	}
	for _, e := range c.templates {
		if matchTemplate(e.template.URITemplate, uri) {
			return e.plugin, true
		}
	}
	return nil, false
}
