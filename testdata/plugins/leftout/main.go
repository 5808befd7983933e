// Command leftout is a plugin whose lists break the host's listing rules on
// purpose (README.md): buggy as built, hostile with -tags hostile.
//
// Build: GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared [-tags hostile] -o leftout.wasm ./testdata/plugins/leftout
package main

import (
	"strings"

	"github.com/extism/go-pdk"
)

func main() {} // never called: a reactor runs only init and its exports

// buggyTools are tool definitions, as raw JSON, that the host leaves out
// one by one: the plugin's mistakes.
var buggyTools = []string{
	`{"name":"fine","description":"Answers fine.","inputSchema":{"type":"object"}}`,
	`{"name":"` + strings.Repeat("n", 10_000) + `","inputSchema":{"type":"object"}}`,
	`{"name":"read file","inputSchema":{"type":"object"}}`,
	`{"name":"../etc/passwd","inputSchema":{"type":"object"}}`,
	`{"name":"","inputSchema":{"type":"object"}}`,
	`{"name":"long_description","description":"` + strings.Repeat("d", 65_537) + `","inputSchema":{"type":"object"}}`,
	`{"name":"lookahead","inputSchema":{"type":"object","properties":{"x":{"type":"string","pattern":"^(?=a)"}}}}`,
	`{"name":"not_an_object","inputSchema":{"type":"string"}}`,
	`{"name":"null_schema","inputSchema":null}`,
}

// hostileTools are tool definitions that hide text or pass for another
// tool (hostile.go sets them with -tags hostile).
var hostileTools []string

//go:wasmexport mcphost_abi_version
func abiVersion() int32 { return 1 }

//go:wasmexport list_tools
func listTools() int32 {
	pdk.OutputString(`{"tools":[` + strings.Join(append(buggyTools, hostileTools...), ",") + `]}`)
	return 0
}

//go:wasmexport call_tool
func callTool() int32 {
	pdk.OutputString(`{"content":[{"type":"text","text":"fine"}]}`)
	return 0
}

//go:wasmexport list_prompts
func listPrompts() int32 {
	pdk.OutputString(`{"prompts":[{"name":"fine_prompt","description":"A good prompt."}]}`)
	return 0
}

//go:wasmexport get_prompt
func getPrompt() int32 {
	pdk.OutputString(`{"messages":[{"role":"user","content":{"type":"text","text":"fine"}}]}`)
	return 0
}
