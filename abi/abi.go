// Package abi is the contract between mcphost and its WebAssembly plugins.
//
// A plugin is an Extism plugin. The host calls its exports with a UTF-8 JSON
// envelope ([Input]) and reads back an MCP result object. Payloads use the
// Model Context Protocol's own JSON shapes, so the MCP specification documents
// every field; the types here are the subset a plugin needs, kept free of any
// dependency beyond the standard library so that plugin SDKs and the host can
// share them. ABI.md beside this file is the normative description.
package abi

import "encoding/json"

// Version is the major version of the ABI described by this package. The
// host refuses a plugin that declares a major version it does not know.
const Version = 1

// VersionExport is the name of the export through which a plugin declares its
// ABI version: a Wasm function taking no parameters and returning an i32.
const VersionExport = "mcphost_abi_version"

// Names of the exports a plugin may provide. Each takes an [Input] and
// outputs the MCP result named in its comment.
const (
	ExportListTools             = "list_tools"              // -> ListToolsResult
	ExportCallTool              = "call_tool"               // CallToolParams -> CallToolResult
	ExportListResources         = "list_resources"          // -> ListResourcesResult
	ExportListResourceTemplates = "list_resource_templates" // -> ListResourceTemplatesResult
	ExportReadResource          = "read_resource"           // ReadResourceParams -> ReadResourceResult
	ExportListPrompts           = "list_prompts"            // -> ListPromptsResult
	ExportGetPrompt             = "get_prompt"              // GetPromptParams -> GetPromptResult
	ExportComplete              = "complete"                // CompleteParams -> CompleteResult
)

// JSON-RPC error codes a plugin may report through [Error]: these, and any
// other code in the JSON-RPC server-error range -32099..-32000.
const (
	CodeInvalidParams    = -32602 // the request's parameters are wrong (unknown name, bad argument)
	CodeInternalError    = -32603 // the plugin failed
	CodeResourceNotFound = -32002 // read_resource: no such URI
	// CodeMissingClientCapability: the request needs a client capability
	// (e.g. sampling) the client did not declare; Data names it.
	CodeMissingClientCapability = -32021
)

// Input is the envelope passed to every export. List calls carry only
// Context; the others carry the MCP request params in Request, less their
// _meta, which is Context.Meta (each value is sent once; ABI.md §3).
type Input struct {
	Request json.RawMessage `json:"request,omitempty"`
	Context CallContext     `json:"context"`
}

// CallContext describes the client request a call serves.
type CallContext struct {
	// ID identifies the call (a number). The host does not see the
	// client's JSON-RPC id; this one is the host's own, for logs. It is
	// always present, as hyper-mcp's plugins require.
	ID json.RawMessage `json:"id,omitempty"`
	// Meta is the request's _meta object (e.g. progressToken); always
	// present, {} when the request has none. The client capabilities a
	// 2026-07-28 request carries in it are in ClientCapabilities instead.
	Meta map[string]any `json:"_meta"`
	// ClientCapabilities are the capabilities the client declared (MCP's
	// ClientCapabilities object), so a plugin can ask only for input the
	// client can give (sampling, elicitation, roots).
	ClientCapabilities json.RawMessage `json:"clientCapabilities,omitempty"`
	// URITemplate, in a read_resource call, is the plugin's resource
	// template (as it listed it) that the requested URI matched; absent
	// when the URI is one of its resources.
	URITemplate string `json:"uriTemplate,omitempty"`
	// URIVariables are the values of URITemplate's variables in the URI
	// (RFC 6570): a string, an array of strings (an exploded variable's
	// items) or an object of strings (an exploded variable's name=value
	// pairs); a variable the URI leaves undefined is absent.
	URIVariables map[string]any `json:"uriVariables,omitempty"`
	// Task, in a call_tool call of a tool that declares task support
	// (Tool.Execution), says how the call relates to a task: the host may
	// run it as one (TaskContext.Allowed), or it runs as one (ID).
	// Absent otherwise. ABI.md §15.
	Task *TaskContext `json:"task,omitempty"`
	// TraceParent and TraceState are the W3C trace context of the host's
	// span for the request, when the host records traces: a plugin that
	// logs or calls out can carry them (ABI.md §16). Absent otherwise.
	TraceParent string `json:"traceparent,omitempty"`
	TraceState  string `json:"tracestate,omitempty"`
}

// TaskContext is CallContext.Task (ABI.md §15).
type TaskContext struct {
	// Allowed: the call is synchronous and the host would run it as a
	// task if the result asks it to (ResultTypeTask): the client declared
	// the Tasks extension and the tool supports tasks.
	Allowed bool `json:"allowed,omitempty"`
	// ID is set when the call runs as a task: the task's id, which the
	// client polls. The call may take until the task's deadline.
	ID string `json:"id,omitempty"`
	// Deadline, with ID, is when the task's run is stopped (RFC 3339).
	Deadline string `json:"deadline,omitempty"`
}

// ResultTypeTask, as CallToolResult.ResultType, asks the host to run the
// call as a task: it creates the task, answers the client with it, and
// calls call_tool again with the same request under CallContext.Task.ID.
const ResultTypeTask = "task"

// The values of ToolExecution.TaskSupport.
const (
	// TaskForbidden (or no Execution): the tool never runs as a task.
	TaskForbidden = "forbidden"
	// TaskOptional: the tool may run as a task when the client supports
	// them, and runs synchronously for a client that does not.
	TaskOptional = "optional"
	// TaskRequired: the tool runs only as a task; a client without the
	// Tasks extension is refused before the plugin is called.
	TaskRequired = "required"
)

// ToolExecution says how a tool may be run (Tool.Execution).
type ToolExecution struct {
	// TaskSupport is TaskForbidden, TaskOptional or TaskRequired.
	TaskSupport string `json:"taskSupport,omitempty"`
}

// Error is the JSON a plugin sets as its Extism error to report a
// protocol-level failure (unknown tool, invalid params, unknown resource).
// A tool that ran and failed returns a CallToolResult with IsError instead.
// An error that is not this JSON is reported to the client as an internal
// error carrying the text.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Error implements the error interface.
func (e *Error) Error() string { return e.Message }

// Annotations are MCP content and resource annotations.
type Annotations struct {
	Audience     []string `json:"audience,omitempty"`
	Priority     *float64 `json:"priority,omitempty"`
	LastModified string   `json:"lastModified,omitempty"`
}

// Content is one MCP content block: type "text", "image", "audio",
// "resource_link" or "resource" (embedded).
type Content struct {
	Type        string            `json:"type"`
	Text        string            `json:"text,omitempty"`
	Data        []byte            `json:"data,omitempty"` // base64 in JSON; image and audio
	MimeType    string            `json:"mimeType,omitempty"`
	URI         string            `json:"uri,omitempty"`  // resource_link
	Name        string            `json:"name,omitempty"` // resource_link
	Title       string            `json:"title,omitempty"`
	Description string            `json:"description,omitempty"`
	Size        *int64            `json:"size,omitempty"`
	Resource    *ResourceContents `json:"resource,omitempty"` // resource
	Annotations *Annotations      `json:"annotations,omitempty"`
	Meta        map[string]any    `json:"_meta,omitempty"`
}

// ToolAnnotations are hints about a tool's behaviour.
type ToolAnnotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    bool   `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  bool   `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// Tool describes a tool a plugin offers. InputSchema must be a JSON Schema
// object with "type": "object".
type Tool struct {
	Name         string           `json:"name"`
	Title        string           `json:"title,omitempty"`
	Description  string           `json:"description,omitempty"`
	InputSchema  json.RawMessage  `json:"inputSchema"`
	OutputSchema json.RawMessage  `json:"outputSchema,omitempty"`
	Annotations  *ToolAnnotations `json:"annotations,omitempty"`
	// Execution, when present, says whether the tool may run as a task of
	// the Tasks extension (ABI.md §15).
	Execution *ToolExecution `json:"execution,omitempty"`
	Meta      map[string]any `json:"_meta,omitempty"`
}

// ListToolsResult is the output of list_tools.
type ListToolsResult struct {
	Tools []Tool `json:"tools"`
}

// CallToolParams is the request of call_tool. The host has already checked
// Arguments against the tool's input schema.
type CallToolParams struct {
	Name           string                     `json:"name"`
	Arguments      json.RawMessage            `json:"arguments,omitempty"`
	Meta           map[string]any             `json:"_meta,omitempty"`
	InputResponses map[string]json.RawMessage `json:"inputResponses,omitempty"`
	RequestState   string                     `json:"requestState,omitempty"`
}

// CallToolResult is the output of call_tool.
type CallToolResult struct {
	Content           []Content                  `json:"content,omitempty"`
	StructuredContent any                        `json:"structuredContent,omitempty"`
	IsError           bool                       `json:"isError,omitempty"`
	InputRequests     map[string]json.RawMessage `json:"inputRequests,omitempty"`
	RequestState      string                     `json:"requestState,omitempty"`
	// ResultType is empty for a result, or ResultTypeTask to ask the host
	// to run the call as a task (only when CallContext.Task.Allowed; the
	// other fields are then ignored).
	ResultType string         `json:"resultType,omitempty"`
	Meta       map[string]any `json:"_meta,omitempty"`
}

// Resource describes a concrete resource.
type Resource struct {
	URI         string         `json:"uri"`
	Name        string         `json:"name"`
	Title       string         `json:"title,omitempty"`
	Description string         `json:"description,omitempty"`
	MimeType    string         `json:"mimeType,omitempty"`
	Size        *int64         `json:"size,omitempty"`
	Annotations *Annotations   `json:"annotations,omitempty"`
	Meta        map[string]any `json:"_meta,omitempty"`
}

// ListResourcesResult is the output of list_resources.
type ListResourcesResult struct {
	Resources []Resource `json:"resources"`
}

// ResourceTemplate describes a family of resources by an RFC 6570 URI template.
type ResourceTemplate struct {
	URITemplate string         `json:"uriTemplate"`
	Name        string         `json:"name"`
	Title       string         `json:"title,omitempty"`
	Description string         `json:"description,omitempty"`
	MimeType    string         `json:"mimeType,omitempty"`
	Annotations *Annotations   `json:"annotations,omitempty"`
	Meta        map[string]any `json:"_meta,omitempty"`
}

// ListResourceTemplatesResult is the output of list_resource_templates.
type ListResourceTemplatesResult struct {
	ResourceTemplates []ResourceTemplate `json:"resourceTemplates"`
}

// ReadResourceParams is the request of read_resource.
type ReadResourceParams struct {
	URI            string                     `json:"uri"`
	Meta           map[string]any             `json:"_meta,omitempty"`
	InputResponses map[string]json.RawMessage `json:"inputResponses,omitempty"`
	RequestState   string                     `json:"requestState,omitempty"`
}

// ResourceContents is the content of a resource: Text or Blob (base64 in JSON).
type ResourceContents struct {
	URI      string         `json:"uri"`
	MimeType string         `json:"mimeType,omitempty"`
	Text     string         `json:"text,omitempty"`
	Blob     []byte         `json:"blob,omitempty"`
	Meta     map[string]any `json:"_meta,omitempty"`
}

// ReadResourceResult is the output of read_resource.
type ReadResourceResult struct {
	Contents      []ResourceContents         `json:"contents,omitempty"`
	InputRequests map[string]json.RawMessage `json:"inputRequests,omitempty"`
	RequestState  string                     `json:"requestState,omitempty"`
}

// PromptArgument describes one argument of a prompt.
type PromptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// Prompt describes a prompt template.
type Prompt struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
	Meta        map[string]any   `json:"_meta,omitempty"`
}

// ListPromptsResult is the output of list_prompts.
type ListPromptsResult struct {
	Prompts []Prompt `json:"prompts"`
}

// GetPromptParams is the request of get_prompt. The host has already checked
// that every required argument is present.
type GetPromptParams struct {
	Name           string                     `json:"name"`
	Arguments      map[string]string          `json:"arguments,omitempty"`
	Meta           map[string]any             `json:"_meta,omitempty"`
	InputResponses map[string]json.RawMessage `json:"inputResponses,omitempty"`
	RequestState   string                     `json:"requestState,omitempty"`
}

// PromptMessage is one message of a prompt.
type PromptMessage struct {
	Role    string  `json:"role"` // "user" or "assistant"
	Content Content `json:"content"`
}

// GetPromptResult is the output of get_prompt.
type GetPromptResult struct {
	Description   string                     `json:"description,omitempty"`
	Messages      []PromptMessage            `json:"messages,omitempty"`
	InputRequests map[string]json.RawMessage `json:"inputRequests,omitempty"`
	RequestState  string                     `json:"requestState,omitempty"`
}

// CompleteReference names what is being completed: {"type": "ref/prompt",
// "name": …} or {"type": "ref/resource", "uri": …}.
type CompleteReference struct {
	Type string `json:"type"`
	Name string `json:"name,omitempty"`
	URI  string `json:"uri,omitempty"`
}

// CompleteArgument is the argument being completed and its partial value.
type CompleteArgument struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// CompleteContext holds the values of arguments already resolved.
type CompleteContext struct {
	Arguments map[string]string `json:"arguments,omitempty"`
}

// CompleteParams is the request of complete.
type CompleteParams struct {
	Ref      CompleteReference `json:"ref"`
	Argument CompleteArgument  `json:"argument"`
	Context  *CompleteContext  `json:"context,omitempty"`
}

// Completion lists candidate values.
type Completion struct {
	Values  []string `json:"values"`
	Total   int      `json:"total,omitempty"`
	HasMore bool     `json:"hasMore,omitempty"`
}

// CompleteResult is the output of complete.
type CompleteResult struct {
	Completion Completion `json:"completion"`
}
