package sdk

import "github.com/mcphost/mcphost/abi"

// ClientSupportsUI reports whether the client renders MCP Apps (SEP-1865):
// it declared the extension io.modelcontextprotocol/ui with the page type
// text/html;profile=mcp-app among its mimeTypes. A tool linked to an app
// (_meta.ui.resourceUri) still returns its result as content for other
// clients; a plugin may use this to say more in that text, or to leave out
// what only the app shows. ABI.md §18.
func (c *Context) ClientSupportsUI() bool {
	ext, ok := c.ClientCapabilities()["extensions"].(map[string]any)
	if !ok {
		return false
	}
	ui, ok := ext[abi.UIExtension].(map[string]any)
	if !ok {
		return false
	}
	types, _ := ui["mimeTypes"].([]any)
	for _, t := range types {
		if t == abi.UIMimeType {
			return true
		}
	}
	return false
}
