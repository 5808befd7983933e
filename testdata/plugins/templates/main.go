// Command templates is a test plugin, written with the Go SDK, whose
// resource templates use RFC 6570 beyond level 1: a variable in the
// authority (note://{id}, https://{host}/x{?q}), a query, explosion. Each
// read answers with what the host sent in the call's context (uriTemplate,
// uriVariables) and what the SDK gave the handler (Context.URIVars), so a
// test sees both.
//
// Build: GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o testdata/plugins/templates/templates.wasm ./testdata/plugins/templates
package main

import (
	"encoding/json"

	"github.com/extism/go-pdk"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/sdk"
)

func main() {} // never called: a reactor runs only init and its exports

func init() {
	for _, t := range []abi.ResourceTemplate{
		{URITemplate: "note://{id}", Name: "note", MimeType: "application/json"},
		{URITemplate: "https://{host}/x{?q}", Name: "x", MimeType: "application/json"},
		{URITemplate: "file://{/path*}{?keys*}", Name: "file", MimeType: "application/json"},
	} {
		sdk.AddResourceTemplate(t, read)
	}
}

// read answers with the context the host sent and the values the handler
// got.
func read(ctx *sdk.Context, uri string) (*abi.ReadResourceResult, error) {
	var in struct {
		Context struct {
			URITemplate  string         `json:"uriTemplate"`
			URIVariables map[string]any `json:"uriVariables"`
		} `json:"context"`
	}
	if err := json.Unmarshal(pdk.Input(), &in); err != nil {
		return nil, err
	}
	out, err := json.Marshal(map[string]any{
		"uriTemplate":  in.Context.URITemplate,
		"uriVariables": in.Context.URIVariables,
		"handlerVars":  ctx.URIVars(),
	})
	if err != nil {
		return nil, err
	}
	return &abi.ReadResourceResult{Contents: []abi.ResourceContents{sdk.TextContents(uri, "", string(out))}}, nil
}
