package sdk

import "github.com/mcphost/mcphost/abi"

// Dispatch runs the plugin's export (abi.ExportCallTool, abi.ExportListTools,
// …) on input, exactly as the host's call of that export would, and returns
// what the plugin would answer: the output JSON, or the protocol error the
// host would turn into a JSON-RPC error. It lets a plugin's handlers be
// tested with go test on the development machine, outside Wasm, where the
// host functions are stubs (logs, notifications and config_get do nothing).
// Input is the envelope of abi/ABI.md §3: {"request": …, "context": {…}}.
func Dispatch(export string, input []byte) ([]byte, *abi.Error) {
	return std.dispatch(export, input)
}
