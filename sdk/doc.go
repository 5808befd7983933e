// Package sdk is the Go SDK for writing mcphost plugins.
//
// A plugin is a Go main package built for WASI as a reactor:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o my.wasm ./myplugin
//
// Importing this package defines every export of the mcphost ABI (see the abi
// package): mcphost_abi_version, list_tools, call_tool, list_resources,
// list_resource_templates, read_resource, list_prompts, get_prompt and
// complete. The plugin itself only registers what it contributes, from an
// init function:
//
//	func init() {
//		sdk.AddTool(abi.Tool{Name: "echo", InputSchema: schema}, echo)
//	}
//
//	func main() {} // required by the toolchain, never called in a reactor
//
// In a reactor (-buildmode=c-shared) main is not run: register from init
// functions or package-level variable initialisers.
//
// A handler reaches the client through mcphost's host functions:
// [Context.LogMessage] (notifications/message), [Context.Progress]
// (notifications/progress), [ResourceUpdated] and the list-changed
// announcements ([ToolListChanged], [ResourceListChanged],
// [PromptListChanged]). To ask the client for input (elicitation, sampling,
// roots) it returns a result with input requests ([InputRequired],
// [ElicitRequest], [SamplingRequest], [RootsRequest]) and is called again
// with the answers ([Context.ElicitResponse], [Context.SamplingResponse],
// [Context.RootsResponse]): MCP's multi-round-trip requests (SEP-2322).
//
// The SDK turns handler results into the ABI's outputs: a handler's plain
// Go error from a tool becomes a result with isError set ("the tool ran and
// failed"); an [*abi.Error] becomes a protocol error with its code; a panic
// is recovered and reported as an internal error (-32603). Faults the Go
// runtime cannot recover from (running out of memory, stack exhaustion,
// os.Exit, concurrent map writes) still end the Wasm call with a trap, and
// the host discards the instance.
package sdk
