// Command gojajs measures goja, a JavaScript engine in pure Go, as the
// engine of JavaScript plugins (issue 30): an ordinary mcphost Go plugin
// that evaluates plugin.js once per instance and calls its functions per
// tool call. A measurement, not a product: RATIONALE.md, "JavaScript
// plugins on QuickJS", compares it with the QuickJS engine.
package main

import (
	_ "embed"
	"encoding/json"

	"github.com/dop251/goja"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/sdk"
)

//go:embed plugin.js
var source string

var vm *goja.Runtime

func main() {}

func init() {
	for _, name := range []string{"greet", "sum"} {
		sdk.AddTool(abi.Tool{
			Name:        name,
			Description: "plugin.js's " + name,
			InputSchema: json.RawMessage(`{"type":"object"}`),
		}, call(name))
	}
}

// call returns the handler that calls the JavaScript function name with
// the tool's arguments, evaluating plugin.js at the instance's first call.
func call(name string) sdk.ToolHandler {
	return func(_ *sdk.Context, args json.RawMessage) (*abi.CallToolResult, error) {
		if vm == nil {
			vm = goja.New()
			if _, err := vm.RunString(source); err != nil {
				return nil, err
			}
		}
		fn, ok := goja.AssertFunction(vm.Get(name))
		if !ok {
			return nil, sdk.InvalidParams("no function %s", name)
		}
		var in map[string]any
		if err := json.Unmarshal(args, &in); err != nil {
			return nil, sdk.InvalidParams("%v", err)
		}
		out, err := fn(goja.Undefined(), vm.ToValue(in))
		if err != nil {
			return nil, err
		}
		return sdk.TextResult(out.String()), nil
	}
}
