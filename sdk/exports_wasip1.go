package sdk

import (
	"encoding/json"

	"github.com/extism/go-pdk"
	"github.com/mcphost/mcphost/abi"
)

// The exports of the mcphost ABI. Each reads its input, dispatches to the
// registered handlers and returns 0 with the result as output, or 1 with a
// JSON abi.Error as the Extism error.

//go:wasmexport mcphost_abi_version
func exportABIVersion() int32 { return abi.Version }

//go:wasmexport list_tools
func exportListTools() int32 { return serve(abi.ExportListTools) }

//go:wasmexport call_tool
func exportCallTool() int32 { return serve(abi.ExportCallTool) }

//go:wasmexport list_resources
func exportListResources() int32 { return serve(abi.ExportListResources) }

//go:wasmexport list_resource_templates
func exportListResourceTemplates() int32 { return serve(abi.ExportListResourceTemplates) }

//go:wasmexport read_resource
func exportReadResource() int32 { return serve(abi.ExportReadResource) }

//go:wasmexport list_prompts
func exportListPrompts() int32 { return serve(abi.ExportListPrompts) }

//go:wasmexport get_prompt
func exportGetPrompt() int32 { return serve(abi.ExportGetPrompt) }

//go:wasmexport complete
func exportComplete() int32 { return serve(abi.ExportComplete) }

func serve(export string) int32 {
	out, perr := std.dispatch(export, readInput())
	if perr != nil {
		b, err := json.Marshal(perr)
		if err != nil { // only if Data is not valid JSON
			b, _ = json.Marshal(abi.Error{Code: perr.Code, Message: perr.Message})
		}
		pdk.SetErrorString(string(b))
		return 1
	}
	writeOutput(out)
	return 0
}

func getConfig(key string) (string, bool) { return pdk.GetConfig(key) }

func logMessage(level LogLevel, msg string) {
	switch level {
	case LevelDebug:
		pdk.Log(pdk.LogDebug, msg)
	case LevelInfo, LevelNotice:
		pdk.Log(pdk.LogInfo, msg)
	case LevelWarning:
		pdk.Log(pdk.LogWarn, msg)
	default: // error and more severe, or a level the SDK does not know
		pdk.Log(pdk.LogError, msg)
	}
}
