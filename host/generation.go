package host

import (
	"context"
	"crypto/sha256"
	"fmt"
	"reflect"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/host/internal/bridge"
	"github.com/mcphost/mcphost/host/internal/config"
	"github.com/mcphost/mcphost/host/internal/plugin"
	"github.com/mcphost/mcphost/host/internal/skills"
)

// A plugin is what the bridge calls (bridge.Caller); the assertion lives
// here so that bridge, a pure translator, does not import the runtime.
var _ bridge.Caller = (*plugin.Plugin)(nil)

// loadedPlugin is one generation of a running plugin and what it
// contributes. A reload that changes the plugin builds a new generation; the
// old one is retired: it takes no new calls, and is closed when the last
// call running on it ends.
type loadedPlugin struct {
	cfg       config.Plugin
	hash      [sha256.Size]byte // of the .wasm file
	plugin    *plugin.Plugin
	tools     []bridge.Tool
	resources []*mcp.Resource
	templates []*mcp.ResourceTemplate
	prompts   []*mcp.Prompt
	// skills are the Agent Skills its module ships, checked (skills.go).
	skills []*skills.Skill
	// promptNames maps a prompt's name as clients see it to the plugin's
	// own, where they differ (naming = "hyper-mcp").
	promptNames map[string]string
	// remote is what was read from the plugin store (nil: a local file).
	remote *remoteModule
	// refused is what the host left out of the plugin's lists, and why
	// (leftout.go). hostile is set once a listing of this generation hid
	// text or offered a look-alike name: the generation then serves
	// nothing, its lists stay empty, and a later listing does not bring it
	// back (a new file or config makes a new generation, judged afresh).
	refused []bridge.Refusal
	hostile bool
	// apps are the app resources (MCP Apps) the plugin lists, by the
	// plugin's own URI, as checked when it was listed (apps.go); nil for
	// none. reportUngrantedUI records an app's sources outside the grants
	// instead of refusing the plugin (plugin inspect).
	apps              map[string]*appUI
	reportUngrantedUI bool
	// unverified is set while the generation serves the lists of the
	// description its module ships, before a first activation checked
	// them (the background preparation activates it early: prepare.go).
	unverified bool
	// live is what the plugin offered when listed from its module, and
	// shipped how the description its module ships compares with it
	// (set for the hosts of validate, inspect, plugin test, warm and
	// describe only).
	live    *plugin.Description
	shipped string

	mu      sync.Mutex
	refs    int
	retired bool
	idle    chan struct{} // closed once retired with no calls left
}

func newLoadedPlugin(cfg config.Plugin, hash [sha256.Size]byte, p *plugin.Plugin) *loadedPlugin {
	return &loadedPlugin{cfg: cfg, hash: hash, plugin: p, idle: make(chan struct{})}
}

// acquire takes a reference for one call; it fails once the generation is
// retired, and the caller must look the name up again.
func (lp *loadedPlugin) acquire() bool {
	lp.mu.Lock()
	defer lp.mu.Unlock()
	if lp.retired {
		return false
	}
	lp.refs++
	return true
}

// release gives back a reference taken with acquire.
func (lp *loadedPlugin) release() {
	lp.mu.Lock()
	defer lp.mu.Unlock()
	lp.refs--
	if lp.retired && lp.refs == 0 {
		close(lp.idle)
	}
}

// retire refuses new calls and returns a channel closed when the calls
// already running have ended.
func (lp *loadedPlugin) retire() <-chan struct{} {
	lp.mu.Lock()
	defer lp.mu.Unlock()
	if !lp.retired {
		lp.retired = true
		if lp.refs == 0 {
			close(lp.idle)
		}
	}
	return lp.idle
}

// sameSource reports whether pc and hash describe exactly this generation,
// so that a reload can keep it.
func (lp *loadedPlugin) sameSource(pc config.Plugin, hash [sha256.Size]byte) bool {
	return lp.hash == hash && reflect.DeepEqual(lp.cfg, pc)
}

// liveLists reports whether the plugin's lists are read again from its
// running instance when it announces a change, rather than from a new
// generation: hyper-mcp asks its one live instance every time, and its
// plugins (tool_list_changed) keep what they list in that instance's
// memory, which a new generation would start without.
func (lp *loadedPlugin) liveLists() bool {
	return lp.plugin.Flavor() != plugin.FlavorMCPHost
}

// relist reads the plugin's lists again from the same generation; on
// failure the previous lists stay. The caller holds the host's reloadMu,
// which guards the lists.
func (lp *loadedPlugin) relist(ctx context.Context, logger hclog.Logger) error {
	tools, resources, templates, prompts, names := lp.tools, lp.resources, lp.templates, lp.prompts, lp.promptNames
	refused, hostile, apps := lp.refused, lp.hostile, lp.apps
	if err := lp.list(ctx, logger); err != nil {
		lp.tools, lp.resources, lp.templates, lp.prompts, lp.promptNames = tools, resources, templates, prompts, names
		lp.refused, lp.hostile, lp.apps = refused, hostile, apps
		return fmt.Errorf("list plugin %q again after it announced a change: %w", lp.cfg.Name, err)
	}
	return nil
}

// lister is what a plugin's lists are read from: the plugin, or its
// cached description (described.go).
type lister interface {
	bridge.Caller
	Has(export string) bool
}

// list reads everything the plugin contributes, applying its tool prefix.
// An item the bridge refuses is left out with an error in the log; the
// rest of the plugin is served, unless a refusal is hostile (hidden text, a
// look-alike name): then the whole plugin is left out (leaveOutWhole).
func (lp *loadedPlugin) list(ctx context.Context, logger hclog.Logger) error {
	return lp.listFrom(ctx, logger, lp.plugin)
}

// listFrom is list, reading from p.
func (lp *loadedPlugin) listFrom(ctx context.Context, logger hclog.Logger, p lister) error {
	var (
		err     error
		refused []bridge.Refusal
	)
	// What an earlier listing of this generation was caught at.
	caught := hostileRefusals(lp.refused)
	lim := bridge.Limits{MaxItems: lp.cfg.MaxItems}
	if _, replay := p.(*replayer); replay {
		// A cached description: this build checked these very lists
		// whole when it wrote the entry, and the plugin's first activation
		// proves them unchanged; the costly part of the schema checks (half
		// a 1,000-plugin start) waits for each tool's first call.
		lim.Deferred = true
	}
	report := func() {
		for i := range refused {
			logger.Error("plugin offered an invalid definition; leaving it out", "plugin", lp.cfg.Name, "error", &refused[i])
		}
	}
	defer report()
	if p.Has(abi.ExportListTools) {
		if lp.tools, refused, err = bridge.ListTools(ctx, p, lim); err != nil {
			return err
		}
		prefix := lp.cfg.Prefix
		if hyperMCPNaming(lp.cfg) {
			prefix = hyperMCPName(lp.cfg.Name, "")
		}
		if prefix != "" {
			for i := range lp.tools {
				t := *lp.tools[i].MCP
				t.Name = prefix + t.Name
				lp.tools[i].MCP = &t
			}
		}
	}
	var more []bridge.Refusal
	if p.Has(abi.ExportListResources) {
		if lp.resources, more, err = bridge.ListResources(ctx, p, lim); err != nil {
			return err
		}
		refused = append(refused, more...)
	}
	if p.Has(abi.ExportListResourceTemplates) {
		if lp.templates, more, err = bridge.ListResourceTemplates(ctx, p, lim); err != nil {
			return err
		}
		refused = append(refused, more...)
	}
	if p.Has(abi.ExportListPrompts) {
		if lp.prompts, more, err = bridge.ListPrompts(ctx, p, lim); err != nil {
			return err
		}
		refused = append(refused, more...)
	}
	// Before any renaming: apps are checked by the plugin's own URIs.
	if err := lp.checkApps(ctx, p); err != nil {
		return err
	}
	if hyperMCPNaming(lp.cfg) {
		lp.nameAsHyperMCP()
	}
	lp.refused = refused
	if len(caught) > 0 || len(hostileRefusals(refused)) > 0 {
		if len(hostileRefusals(refused)) == 0 {
			lp.refused = append(caught, refused...)
		}
		lp.leaveOutWhole(logger)
	}
	return nil
}

// nameAsHyperMCP renames the plugin's prompts, resources and templates as
// hyper-mcp does (naming.go); its tools are renamed with the prefix.
func (lp *loadedPlugin) nameAsHyperMCP() {
	lp.promptNames = map[string]string{}
	for i, p := range lp.prompts {
		renamed := *p
		renamed.Name = hyperMCPName(lp.cfg.Name, p.Name)
		lp.promptNames[renamed.Name] = p.Name
		lp.prompts[i] = &renamed
	}
	for i, r := range lp.resources {
		renamed := *r
		renamed.URI = hyperMCPURI(lp.cfg.Name, r.URI)
		lp.resources[i] = &renamed
	}
	for i, t := range lp.templates {
		renamed := *t
		renamed.URITemplate = hyperMCPURI(lp.cfg.Name, t.URITemplate)
		lp.templates[i] = &renamed
	}
}

// pluginPromptName is the plugin's own name for the prompt clients call
// name.
func (lp *loadedPlugin) pluginPromptName(name string) string {
	if own, ok := lp.promptNames[name]; ok {
		return own
	}
	return name
}

// pluginURI is the plugin's own URI for one a client sent.
func (lp *loadedPlugin) pluginURI(uri string) string {
	if hyperMCPNaming(lp.cfg) {
		if own, ok := pluginURI(lp.cfg.Name, uri); ok {
			return own
		}
	}
	return uri
}
