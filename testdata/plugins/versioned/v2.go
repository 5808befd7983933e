//go:build v2

package main

import (
	"encoding/json"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/sdk"
)

const version = "v2"

func init() {
	sdk.AddTool(abi.Tool{
		Name:        "added",
		Description: "Exists only in v2.",
		InputSchema: json.RawMessage(`{"type":"object"}`),
	}, func(*sdk.Context, json.RawMessage) (*abi.CallToolResult, error) {
		return sdk.TextResult("added in v2"), nil
	})
}
