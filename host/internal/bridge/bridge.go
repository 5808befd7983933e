// Package bridge translates between MCP requests (as go-sdk delivers them)
// and the plugin ABI: it builds the envelope a plugin export receives,
// decodes and checks what the plugin returns as untrusted input, and maps
// plugin failures to JSON-RPC errors.
package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"unicode"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/host/internal/plugin"
)

// Caller is what the bridge needs of a plugin: one export call.
type Caller interface {
	Name() string
	Call(ctx context.Context, export string, input []byte) ([]byte, error)
}

var _ Caller = (*plugin.Plugin)(nil)

// Tool is a tool a plugin offers, checked and ready to register.
type Tool struct {
	// MCP is the tool as clients see it.
	MCP *mcp.Tool
	// PluginName is the name the plugin knows the tool by.
	PluginName string
	// Input validates arguments before the plugin sees them.
	Input *jsonschema.Resolved
	// Output, when the tool declares an outputSchema, validates the
	// structuredContent of its successful results.
	Output *jsonschema.Resolved
}

// validToolName follows the MCP tool-name rules (2025-11-25): 1 to 128
// characters from A-Z, a-z, 0-9, '_', '-' and '.'.
var validToolName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

// maxDescriptionBytes bounds a description a plugin may offer.
const maxDescriptionBytes = 64 << 10

// envelope builds the ABI input for an export.
func envelope(request any, meta map[string]any, caps *mcp.ClientCapabilities) ([]byte, error) {
	in := struct {
		Request any             `json:"request,omitempty"`
		Context abi.CallContext `json:"context"`
	}{Request: request, Context: abi.CallContext{Meta: meta, ID: json.RawMessage(strconv.FormatInt(rand.Int64N(1<<53), 10))}}
	if in.Context.Meta == nil {
		in.Context.Meta = map[string]any{}
	}
	if caps != nil {
		b, err := json.Marshal(caps)
		if err != nil {
			return nil, fmt.Errorf("encode client capabilities: %w", err)
		}
		in.Context.ClientCapabilities = b
	}
	b, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("encode plugin input: %w", err)
	}
	return b, nil
}

// decodeResult decodes a plugin output, which must be one JSON object, into v.
func decodeResult(export string, out []byte, v any) error {
	trimmed := bytes.TrimSpace(out)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return fmt.Errorf("%s returned %s, not a JSON object", export, describeBytes(out))
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s returned invalid JSON: %w", export, err)
	}
	if dec.More() {
		return fmt.Errorf("%s returned trailing data after the JSON object", export)
	}
	return nil
}

func describeBytes(b []byte) string {
	if len(b) == 0 {
		return "no output"
	}
	const n = 40
	if len(b) > n {
		return fmt.Sprintf("%q… (%d bytes)", b[:n], len(b))
	}
	return fmt.Sprintf("%q", b)
}

// ListTools asks a plugin for its tools and checks each one: a valid and
// unique name, a description of sane size, and an input schema that is a
// valid JSON Schema for an object.
func ListTools(ctx context.Context, p Caller) ([]Tool, error) {
	res, err := list[struct {
		Tools []*mcp.Tool `json:"tools"`
	}](ctx, p, abi.ExportListTools)
	if err != nil {
		return nil, err
	}
	tools := make([]Tool, 0, len(res.Tools))
	seen := map[string]bool{}
	for i, t := range res.Tools {
		if t == nil {
			return nil, fmt.Errorf("%s: tool #%d is null", abi.ExportListTools, i+1)
		}
		if !validToolName.MatchString(t.Name) {
			return nil, fmt.Errorf("%s: tool #%d: name %q is invalid (1-128 characters from A-Z a-z 0-9 _ - .)", abi.ExportListTools, i+1, t.Name)
		}
		if seen[t.Name] {
			return nil, fmt.Errorf("%s: tool %q is listed twice", abi.ExportListTools, t.Name)
		}
		seen[t.Name] = true
		if err := checkText(t.Title, t.Description); err != nil {
			return nil, fmt.Errorf("%s: tool %q: %w", abi.ExportListTools, t.Name, err)
		}
		resolved, err := resolveInputSchema(t.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("%s: tool %q: inputSchema: %w", abi.ExportListTools, t.Name, err)
		}
		var output *jsonschema.Resolved
		if t.OutputSchema != nil {
			if output, err = resolveSchema(t.OutputSchema); err != nil {
				return nil, fmt.Errorf("%s: tool %q: outputSchema: %w", abi.ExportListTools, t.Name, err)
			}
		}
		tools = append(tools, Tool{MCP: t, PluginName: t.Name, Input: resolved, Output: output})
	}
	return tools, nil
}

// checkText refuses a title or description a client would show or hand
// to a model that hides something: control characters (other than tab and
// newline), which can conceal instructions from the person reading it,
// invalid UTF-8, or an oversized text.
func checkText(title, description string) error {
	for _, f := range []struct{ name, text string }{{"title", title}, {"description", description}} {
		if len(f.text) > maxDescriptionBytes {
			return fmt.Errorf("%s is %d bytes (at most %d)", f.name, len(f.text), maxDescriptionBytes)
		}
		if !utf8.ValidString(f.text) {
			return fmt.Errorf("%s is not valid UTF-8", f.name)
		}
		for i, r := range f.text {
			if r == '\t' || r == '\n' || r == '\r' {
				continue
			}
			if unicode.IsControl(r) || unicode.In(r, unicode.Cf) {
				return fmt.Errorf("%s has a control or invisible formatting character %U at byte %d", f.name, r, i)
			}
		}
	}
	return nil
}

func resolveSchema(raw any) (*jsonschema.Resolved, error) {
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, err
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("not a JSON Schema: %w", err)
	}
	resolved, err := s.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("invalid JSON Schema: %w", err)
	}
	return resolved, nil
}

func resolveInputSchema(raw any) (*jsonschema.Resolved, error) {
	if raw == nil {
		return nil, errors.New(`missing (a tool needs an object schema, at least {"type": "object"})`)
	}
	m, ok := raw.(map[string]any)
	if !ok || m["type"] != "object" {
		return nil, errors.New(`must be a JSON Schema with "type": "object"`)
	}
	return resolveSchema(raw)
}

// CallTool validates a tools/call request's arguments against the tool's
// schema, calls the plugin and decodes its result. Arguments that do not
// match the schema never reach the plugin: the client gets a tool result
// with isError and the validation error, as the MCP specification asks
// (2025-11-25, SEP-1303) so that a model can correct its call.
func CallTool(ctx context.Context, p Caller, tool Tool, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	args, err := checkArguments(tool, req.Params.Arguments)
	if err != nil {
		res := &mcp.CallToolResult{}
		res.SetError(err)
		return res, nil
	}
	params := *req.Params
	params.Name = tool.PluginName
	params.Arguments = args
	res, err := invoke[mcp.CallToolResult](ctx, p, abi.ExportCallTool, &params, req.Params.Meta, req.ClientCapabilities())
	if err == nil && len(res.InputRequests) > 0 {
		// An input-required result carries no content; the decoder gave it
		// an empty list.
		res.Content = nil
	}
	if err == nil && !res.IsError && len(res.InputRequests) == 0 && tool.Output != nil {
		if err := checkStructured(tool, res.StructuredContent); err != nil {
			return nil, RPCError(fmt.Errorf("plugin %q: %w", p.Name(), err))
		}
	}
	return res, err
}

// checkStructured checks a successful result's structuredContent against
// the outputSchema the tool declared: the specification makes conforming
// a server's duty, so a plugin that breaks its own promise fails the call
// instead of handing the client data its schema says cannot occur.
func checkStructured(tool Tool, structured any) error {
	if structured == nil {
		return fmt.Errorf("tool %q declares an outputSchema but its result has no structuredContent", tool.MCP.Name)
	}
	if err := tool.Output.Validate(structured); err != nil {
		return fmt.Errorf("tool %q: structuredContent does not match its outputSchema: %w", tool.MCP.Name, err)
	}
	return nil
}

// invoke calls export with request in the ABI envelope and decodes the
// plugin's output as R. Errors are JSON-RPC errors for the client.
func invoke[R any](ctx context.Context, p Caller, export string, request any, meta map[string]any, caps *mcp.ClientCapabilities) (*R, error) {
	in, err := envelope(request, meta, caps)
	if err != nil {
		return nil, RPCError(err)
	}
	out, err := p.Call(ctx, export, in)
	if err != nil {
		return nil, RPCError(err)
	}
	var res R
	if err := decodeResult(export, out, &res); err != nil {
		return nil, RPCError(fmt.Errorf("plugin %q: %w", p.Name(), err))
	}
	return &res, nil
}

// list calls a list export at load time and decodes its output as R.
func list[R any](ctx context.Context, p Caller, export string) (*R, error) {
	in, err := envelope(nil, nil, nil)
	if err != nil {
		return nil, err
	}
	out, err := p.Call(ctx, export, in)
	if err != nil {
		return nil, err
	}
	var res R
	if err := decodeResult(export, out, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// checkArguments validates raw arguments against the tool's input schema
// and returns them as JSON (an empty object when absent).
func checkArguments(tool Tool, raw json.RawMessage) (json.RawMessage, error) {
	args := map[string]any{}
	if len(bytes.TrimSpace(raw)) > 0 && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		if err := json.Unmarshal(raw, &args); err != nil {
			return nil, fmt.Errorf("tool %q: arguments must be a JSON object: %v", tool.MCP.Name, err)
		}
	}
	if err := tool.Input.Validate(args); err != nil {
		return nil, fmt.Errorf("tool %q: invalid arguments: %v", tool.MCP.Name, err)
	}
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return json.RawMessage("{}"), nil
	}
	return raw, nil
}

// RPCError maps an error from a plugin call to the JSON-RPC error the
// client receives. A protocol error the plugin reported keeps its code when
// it is one a plugin may use; everything else is an internal error whose
// message names the plugin and what went wrong.
func RPCError(err error) error {
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) {
		return rpcErr
	}
	var abiErr *abi.Error
	if errors.As(err, &abiErr) {
		code := int64(abiErr.Code)
		serverRange := code >= -32099 && code <= -32000
		if !serverRange && abiErr.Code != abi.CodeInvalidParams && abiErr.Code != abi.CodeInternalError {
			code = jsonrpc.CodeInternalError
		}
		return &jsonrpc.Error{Code: code, Message: abiErr.Message, Data: abiErr.Data}
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
}
