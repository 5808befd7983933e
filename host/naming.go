package host

import (
	"strings"

	"github.com/mcphost/mcphost/host/internal/config"
)

// hyper-mcp's naming (its src/naming.rs), for plugins configured with
// naming = "hyper-mcp": a tool or prompt is "{plugin}-{name}", and a
// resource's URI, or a template's, carries the plugin's name as the first
// segment of its path ("https://example.com/{plugin}/a/b"). Clients see
// those names; the plugin is called with its own.

// hyperMCPNaming reports whether pc names things as hyper-mcp does.
func hyperMCPNaming(pc config.Plugin) bool { return pc.Naming == config.NamingHyperMCP }

// hyperMCPName is hyper-mcp's name for a plugin's tool or prompt.
func hyperMCPName(plugin, name string) string { return plugin + "-" + name }

// hyperMCPURI inserts plugin as the first segment of uri's path, as
// hyper-mcp's create_namespaced_uri does: after the authority of a
// "scheme://authority/path" URI, after the scheme of any other. The rest
// of the URI (template expressions included) is kept as it is.
func hyperMCPURI(plugin, uri string) string {
	i := pathStart(uri)
	return uri[:i] + "/" + plugin + "/" + strings.TrimPrefix(uri[i:], "/")
}

// pluginURI undoes hyperMCPURI: it returns the URI as the plugin knows it,
// or false when uri's path does not start with plugin's segment.
func pluginURI(plugin, uri string) (string, bool) {
	i := pathStart(uri)
	rest, ok := strings.CutPrefix(uri[i:], "/"+plugin+"/")
	if !ok {
		return "", false
	}
	return uri[:i] + "/" + rest, true
}

// pathStart returns the index where uri's path begins: after
// "scheme://authority", or after "scheme:".
func pathStart(uri string) int {
	scheme := strings.Index(uri, ":")
	if scheme < 0 {
		return 0
	}
	rest := uri[scheme+1:]
	if !strings.HasPrefix(rest, "//") {
		return scheme + 1
	}
	authority := rest[2:]
	end := strings.IndexAny(authority, "/?#")
	if end < 0 {
		end = len(authority)
	}
	return scheme + 1 + 2 + end
}
