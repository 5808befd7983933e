package bridge

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/abi"
)

// uiCapabilities are the client capabilities a load-time read of an app
// resource carries: a client that renders MCP Apps, so that a plugin
// which returns its UI only to such clients shows the UI the host checks.
var uiCapabilities = &mcp.ClientCapabilities{Extensions: map[string]any{
	abi.UIExtension: map[string]any{"mimeTypes": []string{abi.UIMimeType}},
}}

// ReadUI reads an app resource (a ui:// URI the plugin lists) at load
// time, as a client rendering MCP Apps would, for the host to check what
// the app asks to reach and to fingerprint it. The result is decoded like
// any read_resource output; what it holds is the caller's to check.
func ReadUI(ctx context.Context, p Caller, uri string) (*mcp.ReadResourceResult, error) {
	in, err := envelope(&mcp.ReadResourceParams{URI: uri}, nil, uiCapabilities, nil)
	if err != nil {
		return nil, err
	}
	out, err := p.Call(ctx, abi.ExportReadResource, in)
	if err != nil {
		return nil, err
	}
	var res mcp.ReadResourceResult
	if err := decodeResult(abi.ExportReadResource, out, &res); err != nil {
		return nil, err
	}
	for i, c := range res.Contents {
		if c == nil {
			return nil, fmt.Errorf("%s: contents #%d is null", abi.ExportReadResource, i+1)
		}
	}
	return &res, nil
}

// CheckText refuses a value, decoded JSON a plugin returned, if any string
// in it (keys included) hides text, as a listed definition is refused
// (checkText); the error names the JSON Pointer of the string.
func CheckText(v any) error { return checkText(v) }
