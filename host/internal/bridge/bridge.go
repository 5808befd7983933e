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

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/host/internal/clip"
	"github.com/mcphost/mcphost/host/internal/telemetry"
)

// Caller is what the bridge needs of a plugin: one export call.
type Caller interface {
	Name() string
	Call(ctx context.Context, export string, input []byte) ([]byte, error)
}

// Tool is a tool a plugin offers, checked and ready to register.
type Tool struct {
	// MCP is the tool as clients see it.
	MCP *mcp.Tool
	// PluginName is the name the plugin knows the tool by.
	PluginName string
	// Input validates arguments before the plugin sees them.
	Input *Schema
	// Output, when the tool declares an outputSchema, validates the
	// structuredContent of its successful results.
	Output *Schema
	// TaskSupport is the tool's execution.taskSupport: "" (never a task),
	// abi.TaskOptional or abi.TaskRequired (ABI.md §15).
	TaskSupport string
}

// validToolName follows the MCP tool-name rules (2025-11-25): 1 to 128
// characters from A-Z, a-z, 0-9, '_', '-' and '.'.
var validToolName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

// checkName checks a tool or prompt name: a look-alike (lookAlike) is
// hostile, any other name outside validToolName a mere fault.
func checkName(name string) error {
	if err := lookAlike(name); err != nil {
		return at("/name", fmt.Errorf("name %s %w", ShowName(name), err))
	}
	if !validToolName.MatchString(name) {
		return at("/name", fmt.Errorf("name %s is invalid (1-128 characters from A-Z a-z 0-9 _ - .)", ShowName(name)))
	}
	return nil
}

// envelope builds the ABI input for an export (ABI.md §3): request, the
// MCP request's params without their _meta, and the call's context: its
// id, the request's _meta (meta; {} when none), the client's capabilities
// and, when not nil, the resource template a read_resource URI matched.
// Each value is sent once (ABI draft 6): _meta only in the context, and the
// capabilities only in context.clientCapabilities, not also in _meta, where
// a 2026-07-28 request carries them (contextMeta). The guest parses every
// byte of it on every call (issue 18).
func envelope(request any, meta map[string]any, caps *mcp.ClientCapabilities, match *TemplateMatch) ([]byte, error) {
	b := make([]byte, 0, 256)
	b = append(b, '{')
	if request != nil {
		r, err := json.Marshal(request)
		if err != nil {
			return nil, fmt.Errorf("encode plugin input: request: %w", err)
		}
		b = append(b, `"request":`...)
		b = append(b, r...)
		b = append(b, ',')
	}
	// The id is the host's own (go-sdk does not expose the client's), a
	// random number to tell calls apart in a plugin's logs; hyper-mcp's
	// plugins require one.
	b = append(b, `"context":{"id":`...)
	b = strconv.AppendInt(b, rand.Int64N(1<<53), 10)
	b = append(b, `,"_meta":`...)
	if m := contextMeta(meta, caps != nil); len(m) == 0 {
		b = append(b, "{}"...)
	} else {
		r, err := json.Marshal(m)
		if err != nil {
			return nil, fmt.Errorf("encode plugin input: _meta: %w", err)
		}
		b = append(b, r...)
	}
	if caps != nil {
		r, err := encodeCapabilities(caps)
		if err != nil {
			return nil, fmt.Errorf("encode client capabilities: %w", err)
		}
		b = append(b, `,"clientCapabilities":`...)
		b = append(b, r...)
	}
	if match != nil {
		r, err := json.Marshal(match.Template)
		if err != nil {
			return nil, fmt.Errorf("encode plugin input: uriTemplate: %w", err)
		}
		b = append(b, `,"uriTemplate":`...)
		b = append(b, r...)
		if len(match.Variables) > 0 {
			r, err := json.Marshal(match.Variables)
			if err != nil {
				return nil, fmt.Errorf("encode plugin input: uriVariables: %w", err)
			}
			b = append(b, `,"uriVariables":`...)
			b = append(b, r...)
		}
	}
	return append(b, "}}"...), nil
}

// withTask appends the call's task context to an envelope made by
// envelope (ABI.md §15).
func withTask(in []byte, task *abi.TaskContext) ([]byte, error) {
	if task == nil {
		return in, nil
	}
	r, err := json.Marshal(task)
	if err != nil {
		return nil, fmt.Errorf("encode plugin input: task: %w", err)
	}
	in = in[:len(in)-2] // the context's and the envelope's closing braces
	in = append(in, `,"task":`...)
	in = append(in, r...)
	return append(in, "}}"...), nil
}

// withTraceContext appends the trace context of ctx's span to an
// envelope made by envelope (ABI.md §16), when it is recorded.
func withTraceContext(ctx context.Context, in []byte) []byte {
	tp, ts := telemetry.TraceParent(ctx)
	if tp == "" {
		return in
	}
	in = in[:len(in)-2] // the context's and the envelope's closing braces
	in = append(in, `,"traceparent":`...)
	in = strconv.AppendQuote(in, tp)
	if ts != "" {
		in = append(in, `,"tracestate":`...)
		in = strconv.AppendQuote(in, ts)
	}
	return append(in, "}}"...)
}

// taskKey keys the task context WithTask sets.
type taskKey struct{}

// WithTask makes the call_tool calls made under ctx carry task in their
// context (ABI.md §15): the host may run them as a task, or they run as
// one.
func WithTask(ctx context.Context, task *abi.TaskContext) context.Context {
	return context.WithValue(ctx, taskKey{}, task)
}

// ErrRunAsTask is CallTool's error when the plugin asked to run the call
// as a task (resultType "task"); the host decides what follows.
var ErrRunAsTask = errors.New("the plugin asks to run the call as a task")

// contextMeta is the _meta a call's context carries: the request's, less
// the client capabilities a 2026-07-28 request carries in it
// (mcp.MetaKeyClientCapabilities) when capsSent, that is when they are in
// context.clientCapabilities already. meta itself, which is go-sdk's
// request, is not modified.
func contextMeta(meta map[string]any, capsSent bool) map[string]any {
	if _, ok := meta[mcp.MetaKeyClientCapabilities]; !ok || !capsSent {
		return meta
	}
	m := make(map[string]any, len(meta)-1)
	for k, v := range meta {
		if k != mcp.MetaKeyClientCapabilities {
			m[k] = v
		}
	}
	return m
}

// encodeCapabilities encodes what the client declared. go-sdk's
// ClientCapabilities always encodes "roots" (a struct field, which
// omitempty does not omit), so a plugin would read every client as
// declaring roots; the shallower Roots field here, set only from RootsV2
// (which go-sdk sets only when the client declared roots), hides it, as
// go-sdk's own clientCapabilitiesV2 does. One encoding, on every call.
func encodeCapabilities(caps *mcp.ClientCapabilities) (json.RawMessage, error) {
	return json.Marshal(struct {
		*mcp.ClientCapabilities
		Roots *mcp.RootCapabilities `json:"roots,omitempty"`
	}{caps, caps.RootsV2})
}

// decodeResult decodes a plugin output, which must be one JSON object, into v.
// A tool result of text contents only, the common one, is decoded by hand
// (decodeTextResult) rather than through go-sdk's decoder.
func decodeResult(export string, out []byte, v any) error {
	trimmed := bytes.TrimSpace(out)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return fmt.Errorf("%s returned %s, not a JSON object", export, describeBytes(out))
	}
	if r, ok := v.(*mcp.CallToolResult); ok {
		if res, ok := decodeTextResult(trimmed); ok {
			*r = res
			return nil
		}
	}
	return decodeJSON(export, trimmed, v)
}

// decodeJSON decodes trimmed, one JSON object, into v through its
// UnmarshalJSON if it has one (go-sdk's types do).
func decodeJSON(export string, trimmed []byte, v any) error {
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

// ListTools asks a plugin for its tools and checks each on its own: a
// valid name, unique within the plugin, no hidden text anywhere in it (see
// checkText), an inputSchema of "type": "object", and schemas that can be
// validated with bounded work (see schemaCache.compile). A tool that fails
// is left out and refused says why; so are the tools past lim. err is for
// an output that is no list of tools at all.
func ListTools(ctx context.Context, p Caller, lim Limits) (tools []Tool, refused []Refusal, err error) {
	raws, refused, err := listItems(ctx, p, abi.ExportListTools, "tool", lim,
		func(r *struct {
			Tools []json.RawMessage `json:"tools"`
		}) []json.RawMessage {
			return r.Tools
		})
	if err != nil {
		return nil, nil, err
	}
	schemas := newSchemaCache()
	schemas.deferred = lim.Deferred
	seen := map[string]bool{}
	for i, raw := range raws {
		t, key, err := checkTool(raw, schemas)
		if err == nil && seen[t.MCP.Name] {
			err = at("/name", errors.New("is listed twice (the first is kept)"))
		}
		if err != nil {
			refused = append(refused, refuse(abi.ExportListTools, "tool", i, key.Name, err))
			continue
		}
		seen[t.MCP.Name] = true
		tools = append(tools, t)
	}
	return tools, refused, nil
}

// checkTool decodes and checks one tool, and returns its key (its name)
// whatever happens.
func checkTool(raw json.RawMessage, schemas *schemaCache) (t Tool, key itemKey, err error) {
	var mt mcp.Tool
	if key, err = decodeItem(raw, &mt); err != nil {
		return t, key, err
	}
	key.Name = mt.Name
	t.MCP, t.PluginName = &mt, mt.Name
	if err := checkName(mt.Name); err != nil {
		return t, key, err
	}
	// The schemas as listed, to compile: the same members the decoding
	// into mt picked.
	var rawSchemas struct {
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
		Execution    *struct {
			TaskSupport *string `json:"taskSupport"`
		} `json:"execution"`
	}
	if err := json.Unmarshal(raw, &rawSchemas); err != nil {
		return t, key, at(unmarshalPointer(err), fmt.Errorf("invalid: %w", err))
	}
	if x := rawSchemas.Execution; x != nil && x.TaskSupport != nil {
		switch *x.TaskSupport {
		case abi.TaskForbidden:
		case abi.TaskOptional, abi.TaskRequired:
			t.TaskSupport = *x.TaskSupport
		default:
			return t, key, at("/execution/taskSupport", fmt.Errorf("execution.taskSupport %s is not %q, %q or %q",
				ShowName(*x.TaskSupport), abi.TaskForbidden, abi.TaskOptional, abi.TaskRequired))
		}
	}
	if m, ok := mt.InputSchema.(map[string]any); !ok || m["type"] != "object" {
		if mt.InputSchema == nil {
			return t, key, at("/inputSchema", errors.New(`inputSchema: missing (a tool needs an object schema, at least {"type": "object"})`))
		}
		if !ok {
			return t, key, at("/inputSchema", errors.New(`inputSchema: must be a JSON Schema with "type": "object"`))
		}
		return t, key, at("/inputSchema/type", errors.New(`inputSchema: must be a JSON Schema with "type": "object"`))
	}
	if t.Input, err = schemas.compile(rawSchemas.InputSchema); err != nil {
		return t, key, under("/inputSchema", "inputSchema", err)
	}
	if mt.OutputSchema != nil {
		if t.Output, err = schemas.compile(rawSchemas.OutputSchema); err != nil {
			return t, key, under("/outputSchema", "outputSchema", err)
		}
	}
	if err := encodeSchemas(&mt); err != nil {
		return t, key, err
	}
	return t, key, nil
}

// encodeSchemas replaces a checked tool's decoded schemas by their
// encoding, made once: every tools/list page encodes every tool it holds,
// and a schema kept as a map is encoded again each time, its keys sorted
// anew (a third of the server's work for a page of 100 tools,
// BENCHMARKS.md). The bytes are those json.Marshal gives the map, so what
// clients see, and the lock file's fingerprints, do not change.
func encodeSchemas(mt *mcp.Tool) error {
	in, err := json.Marshal(mt.InputSchema)
	if err != nil {
		return fmt.Errorf("inputSchema: %w", err)
	}
	mt.InputSchema = json.RawMessage(in)
	if mt.OutputSchema != nil {
		out, err := json.Marshal(mt.OutputSchema)
		if err != nil {
			return fmt.Errorf("outputSchema: %w", err)
		}
		mt.OutputSchema = json.RawMessage(out)
	}
	return nil
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
	params.Meta = nil // sent once, in context._meta
	res, err := callTool(ctx, p, &params, req.Params.Meta, req.ClientCapabilities())
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

// callTool calls call_tool and decodes its result, with the resultType
// a plugin may set: "task" asks to run the call as a task (ErrRunAsTask),
// "complete" and "input_required" say what the result shows anyway and
// are dropped (the host sets resultType for the clients that know it),
// anything else is the plugin's error.
func callTool(ctx context.Context, p Caller, params *mcp.CallToolParamsRaw, meta map[string]any, caps *mcp.ClientCapabilities) (*mcp.CallToolResult, error) {
	in, err := envelope(params, meta, caps, nil)
	if err == nil {
		task, _ := ctx.Value(taskKey{}).(*abi.TaskContext)
		in, err = withTask(in, task)
	}
	if err != nil {
		return nil, RPCError(err)
	}
	in = withTraceContext(ctx, in)
	out, err := p.Call(ctx, abi.ExportCallTool, in)
	if err != nil {
		return nil, RPCError(err)
	}
	var res mcp.CallToolResult
	if err := decodeResult(abi.ExportCallTool, out, &res); err != nil {
		return nil, RPCError(fmt.Errorf("plugin %q: %w", p.Name(), err))
	}
	if !bytes.Contains(out, []byte(`"resultType"`)) {
		return &res, nil
	}
	var kind struct {
		ResultType string `json:"resultType"`
	}
	_ = json.Unmarshal(out, &kind) // decoded above: valid JSON
	switch kind.ResultType {
	case "", "complete", "input_required":
		// A copy of the exported fields: go-sdk's decoding kept the
		// plugin's resultType in the result, to be sent on.
		return &mcp.CallToolResult{Meta: res.Meta, Content: res.Content, StructuredContent: res.StructuredContent,
			IsError: res.IsError, InputRequests: res.InputRequests, RequestState: res.RequestState}, nil
	case abi.ResultTypeTask:
		return nil, ErrRunAsTask
	default:
		return nil, RPCError(fmt.Errorf("plugin %q: call_tool returned resultType %q (a plugin sets none, or %q to run the call as a task)", p.Name(), clip.Text(kind.ResultType, 64), abi.ResultTypeTask))
	}
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
		return fmt.Errorf("tool %q: structuredContent does not match its outputSchema: %s", tool.MCP.Name, shorten(plainValidationError(err.Error(), "property")))
	}
	return nil
}

// invoke calls export with request in the ABI envelope and decodes the
// plugin's output as R. Errors are JSON-RPC errors for the client.
func invoke[R any](ctx context.Context, p Caller, export string, request any, meta map[string]any, caps *mcp.ClientCapabilities, match *TemplateMatch) (*R, error) {
	in, err := envelope(request, meta, caps, match)
	if err != nil {
		return nil, RPCError(err)
	}
	in = withTraceContext(ctx, in)
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
	in, err := envelope(nil, nil, nil, nil)
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
		return nil, fmt.Errorf("tool %q: invalid arguments: %s", tool.MCP.Name, shorten(plainValidationError(err.Error(), "argument")))
	}
	if err := tool.Input.CheckKeyCase(args); err != nil {
		return nil, fmt.Errorf("tool %q: invalid arguments: %s", tool.MCP.Name, shorten(err.Error()))
	}
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return json.RawMessage("{}"), nil
	}
	return raw, nil
}

// maxErrorText bounds a validation error handed to a client: jsonschema-go
// prints the value it checks in its errors, and joins those of every anyOf
// branch.
const maxErrorText = 8 << 10

// shorten cuts a validation error's text to maxErrorText.
func shorten(msg string) string {
	if len(msg) <= maxErrorText {
		return msg
	}
	cut := maxErrorText
	for cut > 0 && msg[cut]&0xC0 == 0x80 { // not inside a UTF-8 sequence
		cut--
	}
	return fmt.Sprintf("%s… (%d more bytes)", msg[:cut], len(msg)-cut)
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

// CompileSchema compiles an input schema the host itself declares (a
// built-in tool's), as a plugin's is compiled when listed.
func CompileSchema(raw json.RawMessage) (*Schema, error) { return newSchemaCache().compile(raw) }

// CheckArguments is the check CallTool makes before a plugin sees a
// call's arguments, for a tool the host serves itself: raw validated
// against tool.Input, returned as JSON (an empty object when absent), or
// the error a client gets (as a tool result with isError).
func CheckArguments(tool Tool, raw json.RawMessage) (json.RawMessage, error) {
	return checkArguments(tool, raw)
}
