module github.com/mcphost/mcphost/sdk

// Go 1.24 added //go:wasmexport, through which the SDK provides the ABI's
// exports; it is the oldest Go that builds a plugin with this SDK (see
// RATIONALE.md, "The SDK and the ABI as modules of their own").
go 1.24

require (
	github.com/extism/go-pdk v1.1.3
	github.com/mcphost/mcphost/abi v0.0.0-00010101000000-000000000000
)

// Used only where this module is the main one (its own tests); a plugin's
// go.mod names the abi it builds with.
replace github.com/mcphost/mcphost/abi => ../abi
