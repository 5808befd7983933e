package host

import "github.com/mcphost/mcphost/host/internal/shipped"

// EmbedDescription returns the module wasm with data (a
// PluginInfo.Description) as the description it ships, replacing any it
// had: a custom section that a host with no cached description serves the
// plugin's lists from, without compiling it (`mcphost plugin describe`).
func EmbedDescription(wasm, data []byte) ([]byte, error) {
	return shipped.Embed(wasm, data)
}

// CacheDir is the directory of the host's on-disk caches (compiled code
// and descriptions), "" when it has none.
func (h *Host) CacheDir() string { return h.cacheDir }
