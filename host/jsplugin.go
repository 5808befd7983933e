package host

import (
	"github.com/mcphost/mcphost/host/internal/jsengine"
	"github.com/mcphost/mcphost/host/internal/jsplugin"
)

// BuildJSPlugin returns a JavaScript plugin's module: mcphost's JavaScript
// engine with source, one bundled ES module, in its mcphost.js section
// (abi/ABI.md §17). `mcphost plugin build` calls it with what esbuild
// bundled.
func BuildJSPlugin(source []byte) ([]byte, error) {
	return jsplugin.Build(jsengine.Wasm, source)
}
