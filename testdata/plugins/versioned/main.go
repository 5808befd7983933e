// Command versioned is a test plugin with two versions: built plainly it
// offers the tool "version" (answering "v1"); built with -tags v2 it answers
// "v2" and also offers "added". Reload tests swap one for the other.
package main

import (
	"encoding/json"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/sdk"
)

func main() {}

func init() {
	sdk.AddTool(abi.Tool{
		Name:        "version",
		Description: versionDescription,
		InputSchema: json.RawMessage(`{"type":"object"}`),
	}, func(*sdk.Context, json.RawMessage) (*abi.CallToolResult, error) {
		return sdk.TextResult(version), nil
	})
}
