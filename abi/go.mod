module github.com/mcphost/mcphost/abi

// The oldest Go that builds this module (see RATIONALE.md, "The SDK and the
// ABI as modules of their own"). It uses only the standard library.
go 1.22
