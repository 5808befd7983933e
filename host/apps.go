package host

// MCP Apps (SEP-1865, io.modelcontextprotocol/ui): a plugin serves an
// interactive page as a ui:// resource and links tools to it through
// their _meta.ui.resourceUri; the client renders the page in a sandboxed
// iframe whose Content Security Policy it builds from the resource's
// _meta.ui.csp. The host passes all of it through, and checks that a
// plugin's page may reach no more than the plugin itself: every CSP source
// must lie within the plugin's allowed_hosts (egress.Covers). The check
// runs when the plugin is listed (every app resource is read then, and a
// fault refuses the whole plugin: serve leaves it out, a reload keeps the
// old generation, validate fails), and again on every resources/read of
// an app (a page whose _meta.ui differs from the one checked is refused).
// ABI.md §18 is the contract, RATIONALE.md the reasons.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/host/internal/bridge"
	"github.com/mcphost/mcphost/host/internal/egress"
)

// uiExtension is the extension's name, declared in the host's
// capabilities (newServer) whatever the plugins serve: a reload may add
// the first app, and clients read capabilities once.
const uiExtension = abi.UIExtension

// uiExtensionSettings is what the host declares of the extension in its
// capabilities: the page type it serves.
var uiExtensionSettings = map[string]any{"mimeTypes": []string{abi.UIMimeType}}

// cspDirectives are the members of _meta.ui.csp the host knows, each the
// sources of one CSP directive; any other member is refused (a client
// that knows a directive this host does not would open it unchecked).
var cspDirectives = []string{"connectDomains", "resourceDomains", "frameDomains", "baseUriDomains"}

// maxApps bounds the app resources one plugin may list: each is read at
// load, one call under the plugin's deadline each, and a load must stay
// bounded (max_items allows 1,000 resources).
const maxApps = 100

// appUI is what the host checked of one app resource when its plugin was
// listed.
type appUI struct {
	// uri is the resource's URI as the plugin lists it.
	uri string
	// settings are the resource's _meta.ui as listed and as read (the
	// read's contents first), for inspect and validate.
	settings []uiSettings
	// contentsUI is the canonical JSON of each content's _meta.ui as read
	// ("" for none), and resultUI the result's: a read serving anything
	// else is refused.
	contentsUI []string
	resultUI   string
	// digest fingerprints the contents read (HTML and _meta), for the lock
	// file.
	digest string
	// tools are the tools that link to it, as clients name them.
	tools []string
	// ungranted are the sources outside the plugin's grants, recorded
	// instead of refusing the plugin (Options.ReportUngrantedUI).
	ungranted []string
}

// uiSettings is one _meta.ui of an app resource.
type uiSettings struct {
	// sources are the CSP sources, "connectDomains https://api.example.com".
	sources []string
	// permissions are the browser features it asks for (camera, …).
	permissions []string
	// domain is the dedicated origin it asks for ("" for none).
	domain string
}

// AppInfo describes what one app (a ui:// resource) of a plugin asks for.
type AppInfo struct {
	// URI is the app resource's URI.
	URI string
	// Tools are the tools that link to it.
	Tools []string
	// Sources are the CSP sources it declares, each "directive source"
	// ("connectDomains https://api.example.com"), every one within the
	// plugin's allowed_hosts unless listed in Ungranted too.
	Sources []string
	// Permissions are the browser features it asks for (camera,
	// microphone, geolocation, clipboardWrite), and Domain the dedicated
	// origin it asks for: neither is bounded by a grant, the client
	// decides.
	Permissions []string
	Domain      string
	// Ungranted are the sources outside the plugin's grants, with the
	// grant each needs: only for `plugin inspect` (Options.ReportUngrantedUI),
	// a host refuses such a plugin.
	Ungranted []string
}

// appInfos describes lp's apps, sorted by URI, as clients name them.
func appInfos(lp *loadedPlugin) []AppInfo {
	var out []AppInfo
	for _, uri := range slices.Sorted(maps.Keys(lp.apps)) {
		ui := lp.apps[uri]
		info := AppInfo{URI: uri, Tools: slices.Clone(ui.tools), Ungranted: slices.Clone(ui.ungranted)}
		if hyperMCPNaming(lp.cfg) {
			info.URI = hyperMCPURI(lp.cfg.Name, uri)
		}
		for _, s := range ui.settings {
			for _, src := range s.sources {
				if !slices.Contains(info.Sources, src) {
					info.Sources = append(info.Sources, src)
				}
			}
			for _, p := range s.permissions {
				if !slices.Contains(info.Permissions, p) {
					info.Permissions = append(info.Permissions, p)
				}
			}
			if s.domain != "" {
				info.Domain = s.domain
			}
		}
		out = append(out, info)
	}
	return out
}

// policy is the egress policy an app's sources are checked against: the
// plugin's own.
func (lp *loadedPlugin) policy() *egress.Policy {
	return &egress.Policy{AllowedHosts: lp.cfg.AllowedHosts, AllowPrivate: lp.cfg.AllowPrivateNetwork}
}

// checkApps checks the apps lp offers, reading each from p, and records
// them in lp.apps: every resource the plugin lists under ui:// is read as
// a client rendering MCP Apps would read it, and must hold the page
// (UIMimeType) with a _meta.ui whose CSP sources lie within the plugin's
// grants; every tool's link must name one of them; no template may make
// ui:// URIs (an app is declared, SEP-1865). The error names the resource
// or tool and the source at fault; the caller refuses the whole plugin.
func (lp *loadedPlugin) checkApps(ctx context.Context, p lister) error {
	lp.apps = nil
	for _, t := range lp.templates {
		if strings.HasPrefix(strings.ToLower(t.URITemplate), abi.UIScheme) {
			return fmt.Errorf("app: resource template %s makes ui:// URIs: an app must be a resource the plugin lists (SEP-1865 declares every app up front)", strconv.QuoteToASCII(t.URITemplate))
		}
	}
	apps := map[string]*appUI{}
	for _, r := range lp.resources {
		if !strings.HasPrefix(strings.ToLower(r.URI), abi.UIScheme) {
			continue
		}
		if len(apps) == maxApps {
			return fmt.Errorf("app: the plugin lists more than %d ui:// resources, each of which the host reads at load", maxApps)
		}
		ui, err := lp.checkApp(ctx, p, r)
		if err != nil {
			return fmt.Errorf("app resource %s: %w", strconv.QuoteToASCII(r.URI), err)
		}
		apps[r.URI] = ui
	}
	for _, t := range lp.tools {
		uri, err := toolUILink(t.MCP.Meta)
		if err != nil {
			return fmt.Errorf("app: tool %q: %w", t.MCP.Name, err)
		}
		if uri == "" {
			continue
		}
		ui := apps[uri]
		if ui == nil {
			return fmt.Errorf("app: tool %q links to %s (_meta.ui.resourceUri), which the plugin does not list among its resources", t.MCP.Name, strconv.QuoteToASCII(uri))
		}
		ui.tools = append(ui.tools, t.MCP.Name)
	}
	if len(apps) > 0 {
		lp.apps = apps
	}
	return nil
}

// checkApp reads and checks one app resource.
func (lp *loadedPlugin) checkApp(ctx context.Context, p lister, r *mcp.Resource) (*appUI, error) {
	ui := &appUI{uri: r.URI}
	if v, ok := r.Meta[abi.UIMetaKey]; ok {
		s, err := lp.checkUIMeta(v, "list_resources: _meta.ui", ui)
		if err != nil {
			return nil, err
		}
		ui.settings = append(ui.settings, s)
	}
	if !p.Has(abi.ExportReadResource) {
		return nil, errors.New("the plugin lists it but has no read_resource export")
	}
	res, err := bridge.ReadUI(ctx, p, r.URI)
	if err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	if len(res.InputRequests) > 0 {
		return nil, errors.New("read: it asks the client for input (inputRequests): an app must be readable as it is")
	}
	if len(res.Contents) == 0 {
		return nil, errors.New("read: no contents")
	}
	for i, c := range res.Contents {
		where := fmt.Sprintf("read: contents #%d", i+1)
		if c.URI != r.URI {
			return nil, fmt.Errorf("%s has the URI %s, not the resource's", where, strconv.QuoteToASCII(c.URI))
		}
		if c.MIMEType != abi.UIMimeType {
			return nil, fmt.Errorf("%s has the MIME type %s, not %q", where, strconv.QuoteToASCII(c.MIMEType), abi.UIMimeType)
		}
		if c.Text == "" && len(c.Blob) == 0 {
			return nil, fmt.Errorf("%s has no page (text or blob)", where)
		}
		canon := ""
		if v, ok := c.Meta[abi.UIMetaKey]; ok {
			s, err := lp.checkUIMeta(v, where+": _meta.ui", ui)
			if err != nil {
				return nil, err
			}
			ui.settings = append([]uiSettings{s}, ui.settings...)
			canon = canonical(v)
		}
		if err := bridge.CheckText(map[string]any(c.Meta)); err != nil {
			return nil, fmt.Errorf("%s: _meta: %w", where, err)
		}
		ui.contentsUI = append(ui.contentsUI, canon)
	}
	if v, ok := res.Meta[abi.UIMetaKey]; ok {
		s, err := lp.checkUIMeta(v, "read: _meta.ui", ui)
		if err != nil {
			return nil, err
		}
		ui.settings = append(ui.settings, s)
		ui.resultUI = canonical(v)
	}
	b, err := json.Marshal(struct {
		Meta     mcp.Meta                `json:"_meta,omitempty"`
		Contents []*mcp.ResourceContents `json:"contents"`
	}{res.Meta, res.Contents})
	if err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	sum := sha256.Sum256(b)
	ui.digest = hex.EncodeToString(sum[:])
	return ui, nil
}

// canonical is v (decoded JSON) encoded with its keys sorted.
func canonical(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// checkUIMeta checks one _meta.ui of an app resource (v, at where): an
// object; its csp, if any, only of the known directives, each a list of
// sources (egress.ParseSource) within the plugin's grants; permissions an
// object; domain a string; prefersBorder a boolean; no hidden text.
// Sources outside the grants are recorded in ui.ungranted instead when
// lp.reportUngrantedUI.
func (lp *loadedPlugin) checkUIMeta(v any, where string, ui *appUI) (uiSettings, error) {
	var s uiSettings
	m, ok := v.(map[string]any)
	if !ok {
		return s, fmt.Errorf("%s is not an object", where)
	}
	if err := bridge.CheckText(m); err != nil {
		return s, fmt.Errorf("%s: %w", where, err)
	}
	if raw, ok := m["csp"]; ok && raw != nil {
		csp, ok := raw.(map[string]any)
		if !ok {
			return s, fmt.Errorf("%s.csp is not an object", where)
		}
		pol := lp.policy()
		for _, directive := range slices.Sorted(maps.Keys(csp)) {
			if !slices.Contains(cspDirectives, directive) {
				return s, fmt.Errorf("%s.csp.%s is not a directive this host checks (%s): refused rather than passed to a client unchecked",
					where, strconv.QuoteToASCII(directive), strings.Join(cspDirectives, ", "))
			}
			if csp[directive] == nil {
				continue
			}
			list, ok := csp[directive].([]any)
			if !ok {
				return s, fmt.Errorf("%s.csp.%s is not a list of sources", where, directive)
			}
			for i, e := range list {
				text, ok := e.(string)
				if !ok {
					return s, fmt.Errorf("%s.csp.%s[%d] is not a string", where, directive, i)
				}
				src, err := egress.ParseSource(text)
				if err != nil {
					return s, fmt.Errorf("%s.csp.%s[%d] %s %w", where, directive, i, strconv.QuoteToASCII(text), err)
				}
				if err := pol.Covers(src); err != nil {
					reason := strings.TrimSuffix(err.Error(), ": "+egress.ErrNotGranted.Error())
					if !lp.reportUngrantedUI {
						return s, fmt.Errorf("%s.csp.%s: %s is outside the plugin's grants (allowed_hosts %s): %s",
							where, directive, strconv.QuoteToASCII(text), showHosts(lp.cfg.AllowedHosts), reason)
					}
					if u := directive + " " + text + ": " + reason; !slices.Contains(ui.ungranted, u) {
						ui.ungranted = append(ui.ungranted, u)
					}
				}
				s.sources = append(s.sources, directive+" "+text)
			}
		}
	}
	if raw, ok := m["permissions"]; ok && raw != nil {
		perms, ok := raw.(map[string]any)
		if !ok {
			return s, fmt.Errorf("%s.permissions is not an object", where)
		}
		s.permissions = slices.Sorted(maps.Keys(perms))
	}
	if raw, ok := m["domain"]; ok && raw != nil {
		if s.domain, ok = raw.(string); !ok {
			return s, fmt.Errorf("%s.domain is not a string", where)
		}
	}
	if raw, ok := m["prefersBorder"]; ok && raw != nil {
		if _, ok := raw.(bool); !ok {
			return s, fmt.Errorf("%s.prefersBorder is not a boolean", where)
		}
	}
	return s, nil
}

// showHosts prints an allowed_hosts list for an error.
func showHosts(hosts []string) string {
	if len(hosts) == 0 {
		return "none"
	}
	b, _ := json.Marshal(hosts)
	return string(b)
}

// toolUILink returns the app a tool links to: _meta.ui.resourceUri, or
// the deprecated _meta["ui/resourceUri"]; "" for none. A link that is not
// a ui:// URI, or two links that differ, is an error.
func toolUILink(meta mcp.Meta) (string, error) {
	var uri string
	if ui, ok := meta[abi.UIMetaKey]; ok && ui != nil {
		m, ok := ui.(map[string]any)
		if !ok {
			return "", errors.New("_meta.ui is not an object")
		}
		if v, ok := m["resourceUri"]; ok && v != nil {
			if uri, ok = v.(string); !ok {
				return "", errors.New("_meta.ui.resourceUri is not a string")
			}
		}
	}
	if v, ok := meta[abi.UIResourceURIMetaKey]; ok && v != nil {
		flat, ok := v.(string)
		if !ok {
			return "", errors.New(`_meta["ui/resourceUri"] is not a string`)
		}
		if uri != "" && flat != uri {
			return "", fmt.Errorf(`_meta.ui.resourceUri %s and _meta["ui/resourceUri"] %s differ`, strconv.QuoteToASCII(uri), strconv.QuoteToASCII(flat))
		}
		uri = flat
	}
	if uri != "" && !strings.HasPrefix(uri, abi.UIScheme) {
		return "", fmt.Errorf("links to %s, not a ui:// resource", strconv.QuoteToASCII(uri))
	}
	return uri, nil
}

// checkAppRead checks what a resources/read of one of lp's apps (uri, the
// plugin's own) returned: the page type, and the same _meta.ui as was
// checked when the plugin was listed, still within its grants. A plugin
// whose page asks for more at read time than at load gets the read
// refused (the page never reaches the client). A URI that is not an app
// passes.
func (lp *loadedPlugin) checkAppRead(uri string, res *mcp.ReadResourceResult) error {
	ui := lp.apps[uri]
	if ui == nil || len(res.InputRequests) > 0 {
		return nil
	}
	refuse := func(format string, args ...any) error {
		return bridge.RPCError(fmt.Errorf("plugin %q: app resource %s: %s: the read is refused", lp.cfg.Name, strconv.QuoteToASCII(uri), fmt.Sprintf(format, args...)))
	}
	if len(res.Contents) != len(ui.contentsUI) {
		return refuse("it returned %d contents, %d when it was loaded", len(res.Contents), len(ui.contentsUI))
	}
	check := func(v any, ok bool, want, where string) error {
		got := ""
		if ok {
			got = canonical(v)
		}
		if got != want {
			return refuse("%s differs from the one checked when the plugin was loaded (now %s)", where, shortJSON(got))
		}
		if ok {
			if _, err := lp.checkUIMeta(v, where, &appUI{}); err != nil {
				return refuse("%v", err)
			}
		}
		return nil
	}
	for i, c := range res.Contents {
		if c.MIMEType != abi.UIMimeType {
			return refuse("contents #%d has the MIME type %s, not %q", i+1, strconv.QuoteToASCII(c.MIMEType), abi.UIMimeType)
		}
		v, ok := c.Meta[abi.UIMetaKey]
		if err := check(v, ok, ui.contentsUI[i], fmt.Sprintf("contents #%d: _meta.ui", i+1)); err != nil {
			return err
		}
	}
	v, ok := res.Meta[abi.UIMetaKey]
	return check(v, ok, ui.resultUI, "_meta.ui")
}

// shortJSON shows JSON in an error, cut to 200 bytes.
func shortJSON(s string) string {
	if s == "" {
		return "none"
	}
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// resourceFingerprint is the lock file's fingerprint of r, one of lp's
// resources: of the definition clients see, and for an app also of what
// was read of it when the plugin was listed (its page and _meta), so that
// a changed page or CSP is a changed definition.
func resourceFingerprint(lp *loadedPlugin, r *mcp.Resource) string {
	ui := lp.apps[lp.pluginURI(r.URI)]
	if ui == nil {
		return fingerprint(r)
	}
	return fingerprint(struct {
		Resource *mcp.Resource `json:"resource"`
		App      string        `json:"app"`
	}{r, ui.digest})
}
