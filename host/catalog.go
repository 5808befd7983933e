package host

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/abi/uritemplate"
	"github.com/mcphost/mcphost/host/internal/bridge"
)

// catalog is everything the loaded plugins contribute, keyed by the names
// and URIs clients use. It is built whole from a list of plugins and never
// changed afterwards, so requests read it without locks; a reload builds a
// new one and swaps it in.
type catalog struct {
	plugins   []*loadedPlugin // serving, in config order
	tools     map[string]toolEntry
	resources map[string]resourceEntry
	templates map[string]templateEntry
	prompts   map[string]promptEntry
	// templateOrder is every template in config order, the reserved ones
	// too: a URI is served by the first that matches.
	templateOrder []templateEntry
	// reserved maps "kind key" (as in held) to the plugin a key is kept
	// for: its definition is held out, and no other plugin may serve it.
	reserved map[string]*loadedPlugin
	// leftOut is, for each plugin, what it lists and c does not serve
	// (leftout.go).
	leftOut map[*loadedPlugin][]LeftOut
	// search is the tool search index of a search profile's view (nil
	// for any other catalog); searchLeftOut says which tools it left out
	// for having a built-in tool's name (search.go).
	search        *toolIndex
	searchLeftOut []string
	// skills are the skills the plugins ship (skills.go).
	skills *skillIndex
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
	matcher  *uritemplate.Template
	reserved bool // held out (template may be nil): matching URIs are served by no one
}

type promptEntry struct {
	plugin *loadedPlugin
	prompt *mcp.Prompt
}

// buildCatalog merges the plugins' contributions in config order: each name
// or URI goes to the first plugin that offers it, and a later plugin's item
// with the same name or URI is left out, with a warning naming both.
//
// Items in held (see vet) are left out too, but their names and URIs stay
// reserved for their plugin: a later plugin offering the same name does not
// get it (a rug-pull hold must not hand a tool's name to another plugin,
// whose tool would then answer the calls meant for the held one). A held
// item the plugin no longer offers (removed) keeps its name reserved as
// well, until the change is accepted.
func buildCatalog(plugins []*loadedPlugin, logger hclog.Logger, held held) *catalog {
	c := &catalog{
		plugins:   plugins,
		tools:     map[string]toolEntry{},
		resources: map[string]resourceEntry{},
		templates: map[string]templateEntry{},
		prompts:   map[string]promptEntry{},
		reserved:  map[string]*loadedPlugin{},
	}
	// admit reports whether lp may serve its item key of kind: no earlier
	// plugin serves or reserves it, and lp's own item is not held out.
	admit := func(lp *loadedPlugin, kind, key string) bool {
		if owner := c.servingPlugin(kind, key); owner != nil {
			logger.Warn(kind+" already offered by another plugin; leaving this one out",
				"plugin", lp.cfg.Name, kind, key, "owner", owner.cfg.Name)
			return false
		}
		if owner := c.reserved[kind+" "+key]; owner != nil {
			if owner != lp {
				logger.Warn(kind+" is held out for another plugin until its change is accepted, and stays reserved for it; leaving this one out",
					"plugin", lp.cfg.Name, kind, key, "owner", owner.cfg.Name)
			}
			return false
		}
		return true
	}
	for _, lp := range plugins {
		// lp's held keys first, listed or removed: reserved for lp unless
		// an earlier plugin has them (then lp's item is refused below).
		for k := range held[lp] {
			kind, key := heldKey(k)
			if c.servingPlugin(kind, key) != nil || c.reserved[k] != nil {
				continue
			}
			c.reserved[k] = lp
			logger.Debug(kind+" held out; its name stays reserved for its plugin", "plugin", lp.cfg.Name, kind, key)
			if kind == "template" {
				// The URIs it matches stay reserved too. Held keys come
				// from the plugin's listings, where they were validated.
				if m, err := uritemplate.Parse(key); err == nil {
					c.templateOrder = append(c.templateOrder, templateEntry{plugin: lp, matcher: m, reserved: true})
				}
			}
		}
		for _, t := range lp.tools {
			if admit(lp, "tool", t.MCP.Name) {
				c.tools[t.MCP.Name] = toolEntry{plugin: lp, tool: t}
			}
		}
		for _, r := range lp.resources {
			if admit(lp, "resource", r.URI) {
				c.resources[r.URI] = resourceEntry{plugin: lp, resource: r}
			}
		}
		for _, t := range lp.templates {
			if !admit(lp, "template", t.URITemplate) {
				continue
			}
			// Validated when listed, so this cannot fail.
			m, _ := uritemplate.Parse(t.URITemplate)
			e := templateEntry{plugin: lp, template: t, matcher: m}
			c.templates[t.URITemplate] = e
			c.templateOrder = append(c.templateOrder, e)
		}
		for _, p := range lp.prompts {
			if admit(lp, "prompt", p.Name) {
				c.prompts[p.Name] = promptEntry{plugin: lp, prompt: p}
			}
		}
	}
	c.skills = buildSkillIndex(c, held, logger)
	c.leftOut = map[*loadedPlugin][]LeftOut{}
	for _, lp := range plugins {
		c.leftOut[lp] = c.findLeftOut(lp)
	}
	return c
}

// servingPlugin returns the plugin serving key of kind ("tool", "prompt",
// "resource", "template") in c, or nil.
func (c *catalog) servingPlugin(kind, key string) *loadedPlugin {
	switch kind {
	case "tool":
		return c.tools[key].plugin
	case "prompt":
		return c.prompts[key].plugin
	case "resource":
		return c.resources[key].plugin
	case "template":
		return c.templates[key].plugin
	}
	return nil
}

// owner names the plugin a key of kind belongs to in c, served or
// reserved ("" for none).
func (c *catalog) owner(kind, key string) string {
	if lp := c.servingPlugin(kind, key); lp != nil {
		return lp.cfg.Name
	}
	if lp := c.reserved[kind+" "+key]; lp != nil {
		return lp.cfg.Name
	}
	return ""
}

// warnMoves logs every name or URI that another plugin than in old now
// serves (say a plugin dropped a tool another one also offers): such a
// move is never silent.
func (c *catalog) warnMoves(old *catalog, logger hclog.Logger) {
	if old == nil {
		return
	}
	check := func(kind, key string, now *loadedPlugin) {
		if before := old.owner(kind, key); before != "" && before != now.cfg.Name {
			logger.Warn(kind+" now served by another plugin than before the reload",
				kind, key, "plugin", now.cfg.Name, "before", before)
		}
	}
	for name, e := range c.tools {
		check("tool", name, e.plugin)
	}
	for uri, e := range c.resources {
		check("resource", uri, e.plugin)
	}
	for uri, e := range c.templates {
		check("template", uri, e.plugin)
	}
	for name, e := range c.prompts {
		check("prompt", name, e.plugin)
	}
}

// contributions lists, for logs and PluginInfo, what a plugin has in the
// catalog.
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

// lookupResource finds the plugin serving uri: a concrete resource first,
// then a template (by its own text, for completion, or by matching, in
// config order). A URI reserved for a plugin whose definition is held out
// (a resource, or the first template that matches it) is served by none.
func (c *catalog) lookupResource(uri string) (*loadedPlugin, bool) {
	lp, _, ok := c.matchResource(uri)
	return lp, ok
}

// matchResource is lookupResource that also returns, when uri matched a
// template, the template and its variables' values in uri.
func (c *catalog) matchResource(uri string) (*loadedPlugin, *bridge.TemplateMatch, bool) {
	if f := c.skills.file(uri); f != nil {
		return f.plugin, nil, true
	}
	if e, ok := c.resources[uri]; ok {
		return e.plugin, nil, true
	}
	if c.reserved["resource "+uri] != nil || c.reserved["template "+uri] != nil {
		return nil, nil, false
	}
	if e, ok := c.templates[uri]; ok {
		return e.plugin, nil, true
	}
	for _, e := range c.templateOrder {
		if vars, ok := e.matcher.Match(uri); ok {
			if e.reserved {
				return nil, nil, false
			}
			return e.plugin, &bridge.TemplateMatch{Template: e.template.URITemplate, Variables: vars}, true
		}
	}
	return nil, nil, false
}

// sameJSON reports whether two definitions marshal identically: a reload
// re-registers only what a client would see as changed.
func sameJSON(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}

// applyTo brings server's registrations from old (nil at start) to c: it
// removes what is gone, and adds what is new or whose definition changed.
// go-sdk sends list_changed for each kind that changed (one per kind for a
// burst), and nothing for a kind that did not — also when a plugin
// announced a change (notify_*_list_changed) that left its lists as they
// were: clients would list again for nothing.
func (c *catalog) applyTo(server *mcp.Server, old *catalog, h *Host) {
	if old == nil {
		old = &catalog{}
	}
	syncKind(old.tools, c.tools, server.RemoveTools, func(name string, o *toolEntry, e toolEntry) {
		if o == nil || !sameJSON(o.tool.MCP, e.tool.MCP) {
			h.register(e.plugin, "tool", name, func() { server.AddTool(e.tool.MCP, h.callTool) })
		}
	})
	syncKind(old.resources, c.resources, server.RemoveResources, func(uri string, o *resourceEntry, e resourceEntry) {
		if o == nil || !sameJSON(o.resource, e.resource) {
			h.register(e.plugin, "resource", uri, func() { server.AddResource(e.resource, h.readResource) })
		}
	})
	syncKind(old.templates, c.templates, server.RemoveResourceTemplates, func(uri string, o *templateEntry, e templateEntry) {
		if o == nil || !sameJSON(o.template, e.template) {
			h.register(e.plugin, "template", uri, func() { server.AddResourceTemplate(e.template, h.readResource) })
		}
	})
	syncKind(old.prompts, c.prompts, server.RemovePrompts, func(name string, o *promptEntry, e promptEntry) {
		if o == nil || !sameJSON(o.prompt, e.prompt) {
			h.register(e.plugin, "prompt", name, func() { server.AddPrompt(e.prompt, h.getPrompt) })
		}
	})
	c.skills.applyTo(server, old.skills, c, h)
}

// syncKind removes (in one call, so go-sdk notifies once) the keys of old
// that cur lacks, then calls update for every entry of cur with its old
// entry, or nil when it is new.
func syncKind[E any](old, cur map[string]E, remove func(...string), update func(key string, old *E, e E)) {
	var gone []string
	for key := range old {
		if _, ok := cur[key]; !ok {
			gone = append(gone, key)
		}
	}
	if len(gone) > 0 {
		remove(gone...)
	}
	for key, e := range cur {
		var prev *E
		if o, ok := old[key]; ok {
			prev = &o
		}
		update(key, prev, e)
	}
}

// register runs one go-sdk registration. go-sdk panics on a definition it
// finds invalid (e.g. a malformed x-mcp-header annotation) that the host's
// own checks let through; such an item is left out with an error, and the
// host keeps serving.
func (h *Host) register(lp *loadedPlugin, kind, name string, add func()) {
	defer func() {
		if v := recover(); v != nil {
			h.logger.Error("plugin offered an invalid "+kind+"; leaving it out", "plugin", lp.cfg.Name, kind, name, "error", fmt.Sprint(v))
		}
	}()
	add()
}

// target is what one MCP request names, looked up once per request (by
// the resolve middleware, see middleware.go): the catalog as it was when
// the request came in, and in it the plugin generation serving the
// request's tool, prompt, resource or completion reference. observe,
// enforceScopes and the handler all read this one target, so they agree
// on the generation even when a reload swaps the catalog mid-request.
type target struct {
	catalog *catalog
	// profile is the profile the request came through (nil: /mcp); its
	// view is catalog.
	profile *profile
	plugin  *loadedPlugin // nil: nothing in catalog serves the request
	tool    toolEntry     // tools/call
	prompt  promptEntry   // prompts/get, and completion of a prompt
	// match is the template a resources/read URI matched and its
	// variables (nil for a concrete resource). Handlers copy it before
	// changing it: MRTR calls a handler again with the same target.
	match *bridge.TemplateMatch
}

// lookup returns the target of req in c; its plugin is nil when no plugin
// serves req, or req names nothing (a list).
func (c *catalog) lookup(req mcp.Request) target {
	t := target{catalog: c}
	switch r := req.(type) {
	case *mcp.CallToolRequest:
		t.tool = c.tools[r.Params.Name]
		t.plugin = t.tool.plugin
	case *mcp.GetPromptRequest:
		t.prompt = c.prompts[r.Params.Name]
		t.plugin = t.prompt.plugin
	case *mcp.ReadResourceRequest:
		t.plugin, t.match, _ = c.matchResource(r.Params.URI)
	case *mcp.CompleteRequest:
		if ref := r.Params.Ref; ref != nil {
			if ref.Type == "ref/prompt" {
				t.prompt = c.prompts[ref.Name]
				t.plugin = t.prompt.plugin
			} else {
				t.plugin, _ = c.lookupResource(ref.URI)
			}
		}
	}
	return t
}

// pluginName names the plugin serving t ("" for none).
func (t *target) pluginName() string {
	if t == nil || t.plugin == nil {
		return ""
	}
	return t.plugin.cfg.Name
}

// targetContext is a request's context carrying its target (resolve makes
// it): one allocation for both, where context.WithValue and a *target
// would take two on every request.
type targetContext struct {
	context.Context
	target target
}

// targetKey is the context key of a request's *target.
type targetKey struct{}

// Value implements context.Context: the target for targetKey, else what
// the parent holds.
func (c *targetContext) Value(key any) any {
	if key == (targetKey{}) {
		return &c.target
	}
	return c.Context.Value(key)
}

// targetOf returns the target resolve put in ctx (nil for none).
func targetOf(ctx context.Context) *target {
	t, _ := ctx.Value(targetKey{}).(*target)
	return t
}

// route returns the target of req with a reference taken on its plugin
// generation, so a reload cannot close it under the call (the caller
// releases t.plugin), or nil when no plugin serves req. It is the target
// resolve looked up, unless that generation was retired since (a reload
// replaced it and its last call ended) or nothing served req then: then
// req is looked up again in the current catalog, as if it came in now, and
// the new target replaces the old one in place, so that observe reports
// the plugin that served the call; its scopes are checked again (an error
// refuses the request).
func (h *Host) route(ctx context.Context, method string, req mcp.Request) (*target, error) {
	t := targetOf(ctx)
	if t == nil { // called outside the request path
		fresh := h.catalog.Load().lookup(req)
		t = &fresh
	}
	if t.plugin != nil && t.plugin.acquire() {
		return t, nil
	}
	p := t.profile
	for {
		*t = h.currentCatalog(p).lookup(req)
		t.profile = p
		if t.plugin == nil {
			return nil, nil
		}
		if err := h.scopeRefusal(method, req, t); err != nil {
			return nil, err
		}
		if t.plugin.acquire() {
			return t, nil
		}
	}
}

// toolScopes returns the scopes a caller needs to see and call the tool
// clients know as name (nil for an unknown tool: go-sdk refuses it).
func (c *catalog) toolScopes(name string) []string {
	e, ok := c.tools[name]
	if !ok {
		return nil
	}
	return pluginScopes(e.plugin, e.tool.PluginName)
}
