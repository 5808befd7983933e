package abi

// MCP Apps (SEP-1865, extension io.modelcontextprotocol/ui): a plugin serves
// an interactive page as a resource whose URI begins with UIScheme and
// whose contents have the MIME type UIMimeType, and links a tool to it
// through the tool's _meta.ui.resourceUri. ABI.md §18 says what the host
// checks.
const (
	// UIExtension is the extension's name in the capabilities' extensions.
	UIExtension = "io.modelcontextprotocol/ui"
	// UIMimeType is the MIME type of an app's HTML.
	UIMimeType = "text/html;profile=mcp-app"
	// UIScheme begins the URI of every app resource.
	UIScheme = "ui://"
	// UIMetaKey is the _meta key of a tool's link and of a resource's
	// settings (csp, permissions, domain, prefersBorder).
	UIMetaKey = "ui"
	// UIResourceURIMetaKey is the flat, deprecated form of a tool's link,
	// _meta["ui/resourceUri"], which the specification still names.
	UIResourceURIMetaKey = "ui/resourceUri"
)
