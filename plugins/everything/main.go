// Command everything is mcphost's conformance fixture: a plugin that offers
// every tool, resource, resource template, prompt and completion of go-sdk's
// conformance "everything" server (go-sdk/conformance/everything-server),
// with the same names, schemas, descriptions and contents, so that the
// official MCP conformance suite can be run against mcphost hosting it. It
// also offers echo, used by benchmarks. See README.md for what differs from
// go-sdk's server and why.
//
// Build: GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o plugins/everything/everything.wasm ./plugins/everything
package main

import (
	"encoding/base64"
	"encoding/json"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/sdk"
)

func main() {} // never called: a reactor runs only init and its exports

func init() {
	registerTools()
	registerInputRequiredTools()
	registerTaskTools()
	registerResources()
	registerPrompts()
	sdk.SetCompletion(complete)
}

// Base64-encoded minimal test files, the same as go-sdk's (copied from the
// TypeScript conformance example).
const (
	// Minimal 1x1 red PNG image.
	testImageBase64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
	// Minimal WAV audio file (silence).
	testAudioBase64 = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
)

var (
	imageData = mustDecode(testImageBase64)
	audioData = mustDecode(testAudioBase64)
)

func mustDecode(s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		panic("invalid base64 test data: " + err.Error())
	}
	return b
}

// emptyObject is the input schema of a tool without arguments: what go-sdk
// infers for an input of type any.
var emptyObject = json.RawMessage(`{"type":"object"}`)

// complete answers every completion request with no values, as go-sdk's
// server does: it only acknowledges the capability.
func complete(*sdk.Context, abi.CompleteParams) (*abi.CompleteResult, error) {
	return &abi.CompleteResult{Completion: abi.Completion{Values: []string{}, Total: 0}}, nil
}
