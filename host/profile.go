package host

// Profiles ([[profile]] in mcphost.toml): named subsets of what the host
// serves, each its own endpoint (/mcp/{name} over HTTP, serve --profile
// over stdio).
//
// A profile is not a second host. It is an mcp.Server of its own (so that
// its sessions, its pagination and its list_changed are its own) whose
// registrations are a view of the host's one catalog: the same plugin
// generations, the same toolEntry values (a renamed tool shares its
// definition's schema and annotations with the host's; only its name is
// copied), rebuilt from the catalog each time the catalog changes, and
// applied to the profile's server with the same diff (applyTo) that serves
// /mcp, so a reload that changes nothing a profile shows sends its
// sessions nothing. Every request through a profile runs the same request
// path (middleware.go), with the profile's view as its catalog.

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"net/http"
	"path"
	"slices"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
	mcpauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/internal/auth"
	"github.com/mcphost/mcphost/host/internal/config"
)

// profile is one [[profile]] being served.
type profile struct {
	name   string
	server *mcp.Server
	// cfg is the profile's table as last applied (a reload replaces it).
	cfg atomic.Pointer[config.Profile]
	// catalog is the profile's view of the host's catalog.
	catalog atomic.Pointer[catalog]
	// search: the server registers tool search's two tools instead of
	// the view's (changed with reloadMu held).
	search bool
}

// profileSet is every profile served, by name. It is built whole and
// swapped (Host.profiles), never changed.
type profileSet map[string]*profile

// profileNamed returns the profile served as name, or nil.
func (h *Host) profileNamed(name string) *profile {
	if set := h.profiles.Load(); set != nil {
		return (*set)[name]
	}
	return nil
}

// ProfileNames returns the names of the profiles served, sorted.
func (h *Host) ProfileNames() []string {
	set := h.profiles.Load()
	if set == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(*set))
}

// currentCatalog is the catalog requests through p see now: p's view, or
// the host's whole catalog for p == nil (/mcp).
func (h *Host) currentCatalog(p *profile) *catalog {
	if p == nil {
		return h.catalog.Load()
	}
	return p.catalog.Load()
}

// sessions iterates over the sessions of every server: /mcp's and each
// profile's.
func (h *Host) sessions() iter.Seq[*mcp.ServerSession] {
	return func(yield func(*mcp.ServerSession) bool) {
		for ss := range h.server.Sessions() {
			if !yield(ss) {
				return
			}
		}
		set := h.profiles.Load()
		if set == nil {
			return
		}
		for _, p := range *set {
			for ss := range p.server.Sessions() {
				if !yield(ss) {
					return
				}
			}
		}
	}
}

// view returns the part of c that profile p serves, named as p names it:
// the tools p selects (its plugins' and those its tools patterns match,
// renamed or prefixed), and the resources, templates and prompts of its
// plugins. Items keep their entries (plugin generation, definition), so
// everything checked on a call through /mcp is checked through p alike. A
// name two tools would share in p goes to the first in config order, with
// a warning.
func (c *catalog) view(p *config.Profile, logger hclog.Logger) *catalog {
	v := &catalog{
		tools:     map[string]toolEntry{},
		resources: map[string]resourceEntry{},
		templates: map[string]templateEntry{},
		prompts:   map[string]promptEntry{},
		reserved:  c.reserved,
		leftOut:   c.leftOut,
	}
	whole := map[*loadedPlugin]bool{}
	for _, lp := range c.plugins {
		whole[lp] = slices.Contains(p.Plugins, lp.cfg.Name)
		serves := whole[lp]
		for _, t := range lp.tools {
			name := t.MCP.Name
			e, ok := c.tools[name]
			if !ok || e.plugin != lp || !p.Selects(lp.cfg.Name, name) {
				continue
			}
			served := p.ServedName(name)
			if prev, taken := v.tools[served]; taken {
				logger.Warn("profile: two tools would share a name; leaving the later out",
					"profile", p.Name, "tool", served, "plugin", lp.cfg.Name, "owner", prev.plugin.cfg.Name)
				continue
			}
			if served != name {
				mt := *e.tool.MCP // shallow: the schema is shared, read-only
				mt.Name = served
				e.tool.MCP = &mt
			}
			v.tools[served] = e
			serves = true
		}
		if serves {
			v.plugins = append(v.plugins, lp)
		}
	}
	for uri, e := range c.resources {
		if whole[e.plugin] {
			v.resources[uri] = e
		}
	}
	for uri, e := range c.templates {
		if whole[e.plugin] {
			v.templates[uri] = e
		}
	}
	for name, e := range c.prompts {
		if whole[e.plugin] {
			v.prompts[name] = e
		}
	}
	v.skills = c.skills.view(func(lp *loadedPlugin) bool { return whole[lp] })
	// In config order, as in c; a reserved template keeps the URIs it
	// matches from every profile, as from /mcp.
	for _, e := range c.templateOrder {
		if e.reserved || whole[e.plugin] {
			v.templateOrder = append(v.templateOrder, e)
		}
	}
	return v
}

// newServer returns an MCP server as the host serves one, /mcp's or a
// profile's (p; nil for /mcp), with the host's request path.
func (h *Host) newServer(p *profile) (*mcp.Server, error) {
	s := h.settings
	server := mcp.NewServer(&mcp.Implementation{Name: s.Name, Version: h.version}, &mcp.ServerOptions{
		Logger:   slogFor(h.logger.Named("mcp")),
		PageSize: s.PageSize,
		// Every capability is declared, whatever the plugins offer now: a
		// reload may add the first tool or prompt, and clients read
		// capabilities only once.
		Capabilities: &mcp.ServerCapabilities{
			Logging:     &mcp.LoggingCapabilities{},
			Tools:       &mcp.ToolCapabilities{ListChanged: true},
			Prompts:     &mcp.PromptCapabilities{ListChanged: true},
			Resources:   &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true},
			Completions: &mcp.CompletionCapabilities{},
			Extensions:  map[string]any{tasksExtension: map[string]any{}, uiExtension: uiExtensionSettings, skillsExtension: skillsCapability},
		},
		CompletionHandler:  h.complete,
		SubscribeHandler:   h.subscribeVia(p),
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
		SetCacheable: func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) {
			c.TTLMs = int(s.ListTTL.Milliseconds())
			c.CacheScope = h.cacheScope()
		},
	})
	if err := registerTaskMethods(server); err != nil {
		return nil, err
	}
	if err := registerSkillMethods(server); err != nil {
		return nil, err
	}
	server.AddReceivingMiddleware(h.mcpMiddleware(p)...) // the request path: middleware.go
	return server, nil
}

// applyProfiles brings the profiles served to those of cfgs, over c (the
// catalog just stored): a profile new in cfgs gets its server, one still
// there gets c's view (its sessions hear of what changed in that view
// only), and one gone has its sessions closed. The caller holds reloadMu.
func (h *Host) applyProfiles(cfgs []config.Profile, c *catalog) error {
	old := profileSet{}
	if set := h.profiles.Load(); set != nil {
		old = *set
	}
	next := profileSet{}
	var errs []error
	for i := range cfgs {
		pc := cfgs[i]
		p := old[pc.Name]
		if p == nil {
			p = &profile{name: pc.Name}
			server, err := h.newServer(p)
			if err != nil {
				errs = append(errs, fmt.Errorf("profile %q: %w", pc.Name, err))
				continue
			}
			p.server = server
		}
		p.cfg.Store(&pc)
		v := c.view(&pc, h.logger)
		if pc.Search {
			v.search = &toolIndex{}
			if err := v.leaveOutBuiltins(pc.Name); err != nil {
				errs = append(errs, err)
			}
		}
		before := p.catalog.Load()
		p.catalog.Store(v)
		// A search profile registers its two tools instead of its view's
		// (search.go); the built-ins go before the view's tools come back.
		wasSearch := p.search
		if !pc.Search {
			p.search = h.applySearch(p, wasSearch, false)
		}
		registered(v, pc.Search).applyTo(p.server, registered(before, wasSearch), h)
		p.search = h.applySearch(p, p.search, pc.Search)
		next[pc.Name] = p
	}
	h.profiles.Store(&next)
	for name, p := range old {
		if next[name] == nil {
			h.logger.Info("profile removed: closing its sessions", "profile", name)
			for ss := range p.server.Sessions() {
				_ = ss.Close()
			}
		}
	}
	return errors.Join(errs...)
}

// subscribeVia is the subscribe handler of p's server (nil: /mcp's): it
// accepts a subscription to a URI p serves.
func (h *Host) subscribeVia(p *profile) func(context.Context, *mcp.SubscribeRequest) error {
	return func(_ context.Context, req *mcp.SubscribeRequest) error {
		if _, ok := h.currentCatalog(p).lookupResource(req.Params.URI); !ok {
			return mcp.ResourceNotFoundError(req.Params.URI)
		}
		return nil
	}
}

// profileName names p for metrics and the audit log ("" for /mcp).
func profileName(p *profile) string {
	if p == nil {
		return ""
	}
	return p.name
}

// checkProfileScopes refuses, with HTTP 403 insufficient_scope, every
// request through profile p whose token lacks p's scopes ([server.auth];
// it runs after the token was verified).
func (h *Host) checkProfileScopes(p *profile, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		required := p.cfg.Load().Scopes
		if len(required) == 0 {
			next.ServeHTTP(w, r)
			return
		}
		info := mcpauth.TokenInfoFromContext(r.Context())
		if info == nil {
			h.auth.Unauthorized(w)
			return
		}
		if !auth.HasScopes(info, required) {
			h.logger.Debug("request refused: insufficient scope for the profile", "profile", p.name, "subject", auth.Subject(info), "required", required)
			h.auth.InsufficientScope(w, required, "profile "+p.name+" needs more scope")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ProfileInfo describes a profile served and what its clients see.
type ProfileInfo struct {
	Name string
	// Tools are the names of the tools it serves, as it serves them,
	// sorted; Resources, Templates and Prompts count the others.
	Tools                         []string
	Resources, Templates, Prompts int
	// Scopes are the scopes its requests need ([server.auth]).
	Scopes []string
	// Search: it serves tool search instead of its tools; Tools are then
	// the tools its search finds (before a token's scopes).
	Search bool
	// Problems are what in its table selects nothing: a tools pattern no
	// served tool matches, a rename of a tool it does not serve, a name
	// two of its tools would share, a profile that serves nothing.
	Problems []string
}

// Profiles describes the profiles served, sorted by name.
func (h *Host) Profiles() []ProfileInfo {
	c := h.catalog.Load()
	var infos []ProfileInfo
	for _, name := range h.ProfileNames() {
		p := h.profileNamed(name)
		pc, v := p.cfg.Load(), p.catalog.Load()
		info := ProfileInfo{
			Name: name, Tools: slices.Sorted(maps.Keys(v.tools)), Resources: len(v.resources), Templates: len(v.templates),
			Prompts: len(v.prompts), Scopes: pc.Scopes, Search: pc.Search,
		}
		info.Problems = profileProblems(pc, c, v)
		infos = append(infos, info)
	}
	return infos
}

// profileProblems lists what in pc selects nothing in c (v is its view).
func profileProblems(pc *config.Profile, c, v *catalog) []string {
	var problems []string
	for _, pattern := range pc.Tools {
		matched := false
		for name := range c.tools {
			if ok, _ := path.Match(pattern, name); ok {
				matched = true
				break
			}
		}
		if !matched {
			problems = append(problems, fmt.Sprintf("tools: %q matches no tool the host serves", pattern))
		}
	}
	for _, from := range slices.Sorted(maps.Keys(pc.Rename)) {
		e, ok := c.tools[from]
		if !ok || !pc.Selects(e.plugin.cfg.Name, from) {
			problems = append(problems, fmt.Sprintf("rename: %q is not a tool this profile serves", from))
		}
	}
	selected := 0
	for name, e := range c.tools {
		if pc.Selects(e.plugin.cfg.Name, name) {
			selected++
		}
	}
	problems = append(problems, v.searchLeftOut...)
	if taken := selected - len(v.tools) - len(v.searchLeftOut); taken > 0 {
		problems = append(problems, fmt.Sprintf("%d tool(s) left out: their names in the profile are taken by another of its tools (see the log)", taken))
	}
	if len(v.tools)+len(v.resources)+len(v.templates)+len(v.prompts) == 0 {
		problems = append(problems, "serves nothing")
	}
	return problems
}
