package host

import (
	"errors"
	"fmt"

	"github.com/hashicorp/go-hclog"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/host/internal/bridge"
)

// LeftOut is an item a plugin lists that the host does not serve, and why:
// `mcphost validate`, `plugin test` and `plugin inspect` report every one
// and fail, so that what serve would leave out never passes a check.
type LeftOut struct {
	// Kind is "tool", "prompt", "resource" or "template".
	Kind string
	// Name is the item's name (tools, prompts) or URI (resources,
	// templates) as the plugin listed it, "" when it has none; it may be
	// long or hide characters, so quote it before showing it (ShowName).
	Name string
	// Index is the item's position in the plugin's list of its kind, from
	// 1; 0 when not known, or when the entry stands for the items past
	// max_items (Reason says which).
	Index int
	// Pointer is the JSON Pointer, within the item, of the part at fault
	// ("" for the item as a whole), e.g. /inputSchema/properties/x/pattern.
	Pointer string
	// Reason says why it is left out.
	Reason string
	// Hostile is set when the item hides text or has a look-alike name:
	// the host then leaves out the whole plugin (PluginInfo.Hostile).
	Hostile bool
}

// ShowName quotes an item's name or URI for a report: ASCII only (hidden
// characters escaped) and shortened when long.
func ShowName(name string) string { return bridge.ShowName(name) }

// Label names the item for a report: its kind, its position when known,
// and its name quoted (ShowName), as in `tool #3 "../etc"`.
func (l LeftOut) Label() string {
	s := l.Kind
	if l.Index > 0 {
		s += fmt.Sprintf(" #%d", l.Index)
	}
	if l.Name != "" {
		s += " " + ShowName(l.Name)
	} else if l.Index > 0 {
		s += " (no name)"
	}
	return s
}

// errLeftWithPlugin is the reason of a valid item of a hostile plugin.
var errLeftWithPlugin = errors.New("left out with its plugin, which hides text or offers look-alike names (see its other items)")

// hostileRefusals returns the refusals of rs that are hostile.
func hostileRefusals(rs []bridge.Refusal) []bridge.Refusal {
	var out []bridge.Refusal
	for _, r := range rs {
		if r.Hostile {
			out = append(out, r)
		}
	}
	return out
}

// leaveOutWhole empties the lists of a generation caught hiding text or
// offering a look-alike name, recording each item it still had as left out
// with it, and says so in the log at ERROR, naming the plugin and every
// item left out. Such a plugin is hostile, not buggy: the host trusts
// nothing else it lists (SECURITY.md).
func (lp *loadedPlugin) leaveOutWhole(logger hclog.Logger) {
	add := func(export, kind, name string) {
		lp.refused = append(lp.refused, bridge.Refusal{Export: export, Kind: kind, Name: name, Err: errLeftWithPlugin})
	}
	for _, t := range lp.tools {
		add(abi.ExportListTools, "tool", t.MCP.Name)
	}
	for _, r := range lp.resources {
		add(abi.ExportListResources, "resource", r.URI)
	}
	for _, t := range lp.templates {
		add(abi.ExportListResourceTemplates, "template", t.URITemplate)
	}
	for _, p := range lp.prompts {
		add(abi.ExportListPrompts, "prompt", p.Name)
	}
	lp.tools, lp.resources, lp.templates, lp.prompts, lp.promptNames = nil, nil, nil, nil, nil
	lp.hostile = true
	var items, why []string
	for i := range lp.refused {
		r := &lp.refused[i]
		items = append(items, LeftOut{Kind: r.Kind, Name: r.Name, Index: r.Index}.Label())
		if r.Hostile {
			why = append(why, r.Error())
		}
	}
	logger.Error("plugin hides text or offers look-alike names: leaving the whole plugin out",
		"plugin", lp.cfg.Name, "caught", why, "left_out", items)
}

// wholeLeftOut reports whether a plugin whose left-out items are ls is
// left out whole (hostile).
func wholeLeftOut(ls []LeftOut) bool {
	for _, l := range ls {
		if l.Hostile {
			return true
		}
	}
	return false
}

// findLeftOut lists what lp lists that c does not serve: the items its
// lists refused (all of them, for a hostile plugin), and the valid ones
// another plugin took or the lock file holds out. buildCatalog calls it
// once c is built (under the host's reloadMu, which guards lp's lists),
// and keeps the answer in c.leftOut for whoever reads c later.
func (c *catalog) findLeftOut(lp *loadedPlugin) []LeftOut {
	var out []LeftOut
	for _, r := range lp.refused {
		out = append(out, LeftOut{Kind: r.Kind, Name: r.Name, Index: r.Index, Pointer: r.Pointer, Reason: r.Err.Error(), Hostile: r.Hostile})
	}
	check := func(kind, key string, served *loadedPlugin) {
		if served == lp {
			return
		}
		l := LeftOut{Kind: kind, Name: key}
		switch owner := c.reserved[kind+" "+key]; {
		case served != nil:
			l.Reason = fmt.Sprintf("plugin %q, listed before it in the config, offers it too", served.cfg.Name)
		case owner == lp:
			l.Reason = `held out: its definition is not the one the lock file accepted (on_change = "refuse"); mcphost plugin accept accepts it`
		case owner != nil:
			l.Reason = fmt.Sprintf("held out for plugin %q, which offers it too, until its change is accepted", owner.cfg.Name)
		default:
			l.Reason = "not served"
		}
		out = append(out, l)
	}
	for _, t := range lp.tools {
		check("tool", t.MCP.Name, c.tools[t.MCP.Name].plugin)
	}
	for _, r := range lp.resources {
		check("resource", r.URI, c.resources[r.URI].plugin)
	}
	for _, t := range lp.templates {
		check("template", t.URITemplate, c.templates[t.URITemplate].plugin)
	}
	for _, p := range lp.prompts {
		check("prompt", p.Name, c.prompts[p.Name].plugin)
	}
	return out
}
