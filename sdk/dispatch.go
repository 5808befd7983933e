package sdk

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/mcphost/mcphost/abi"
)

// maxCompletionValues is the most values MCP allows in one completion.
const maxCompletionValues = 100

// dispatch serves one call of the export named export with input, returning
// the output or the protocol error to report. It never panics.
func (r *registry) dispatch(export string, input []byte) (out []byte, perr *abi.Error) {
	defer func() {
		if v := recover(); v != nil {
			out, perr = nil, &abi.Error{Code: abi.CodeInternalError, Message: fmt.Sprint("panic: ", v)}
		}
	}()
	var in envelope
	if len(input) > 0 {
		if err := decodeEnvelope(input, &in); err != nil {
			return nil, invalidParams("malformed input: " + err.Error())
		}
	}
	ctx := &r.ctx
	ctx.reset(&in)
	var res any
	switch export {
	case abi.ExportListTools:
		res, perr = r.listTools()
	case abi.ExportCallTool:
		res, perr = r.callTool(ctx, in.Request)
	case abi.ExportListResources:
		res, perr = r.listResources()
	case abi.ExportListResourceTemplates:
		res, perr = r.listTemplates()
	case abi.ExportReadResource:
		res, perr = r.readResource(ctx, in.Request)
	case abi.ExportListPrompts:
		res, perr = r.listPrompts()
	case abi.ExportGetPrompt:
		res, perr = r.getPrompt(ctx, in.Request)
	case abi.ExportComplete:
		res, perr = r.completion(ctx, in.Request)
	default:
		return nil, &abi.Error{Code: abi.CodeInternalError, Message: "sdk: unknown export " + export}
	}
	if perr != nil {
		return nil, perr
	}
	if tr, ok := res.(callToolJSON); ok {
		if b, ok := encodeTextResult(tr); ok {
			return b, nil
		}
	}
	b, err := json.Marshal(res)
	if err != nil {
		return nil, &abi.Error{Code: abi.CodeInternalError, Message: "marshal result: " + err.Error()}
	}
	return b, nil
}

// bothInputAndContent is the error for a handler result that asks for
// input and yet carries content, which MCP forbids.
func bothInputAndContent(what string) *abi.Error {
	return &abi.Error{Code: abi.CodeInternalError, Message: "sdk: " + what + " together with inputRequests; a result that asks for input has no content"}
}

func invalidParams(msg string) *abi.Error {
	return &abi.Error{Code: abi.CodeInvalidParams, Message: msg}
}

// decodeRequest decodes the request params of a call into p.
func decodeRequest(req json.RawMessage, p any) *abi.Error {
	if len(req) == 0 || string(req) == "null" {
		return invalidParams("missing request")
	}
	if err := json.Unmarshal(req, p); err != nil {
		return invalidParams("malformed request: " + err.Error())
	}
	return nil
}

// protocolError returns err as a protocol error: err's own *abi.Error if it
// is one, else an error with code and err's text.
func protocolError(err error, code int) *abi.Error {
	var ae *abi.Error
	if errors.As(err, &ae) && ae != nil {
		return ae
	}
	return &abi.Error{Code: code, Message: err.Error()}
}

func (r *registry) listTools() (any, *abi.Error) {
	res := abi.ListToolsResult{Tools: make([]abi.Tool, 0, len(r.tools))}
	for _, t := range r.tools {
		res.Tools = append(res.Tools, t.def)
	}
	return res, nil
}

// callToolJSON marshals a CallToolResult with "content" always present, as
// MCP requires of a complete result (abi.CallToolResult omits an empty
// one). A result that asks for input is marshalled as it is, without
// content: go-sdk refuses a result with both.
type callToolJSON struct {
	*abi.CallToolResult
	Content []abi.Content `json:"content"`
}

func (r *registry) callTool(ctx *Context, req json.RawMessage) (any, *abi.Error) {
	if len(req) == 0 || string(req) == "null" {
		return nil, invalidParams("missing request")
	}
	var p toolCallParams
	if err := decodeToolCall(req, &p); err != nil {
		return nil, invalidParams("malformed request: " + err.Error())
	}
	t := r.toolIndex[p.Name]
	if t == nil {
		return nil, invalidParams("unknown tool: " + p.Name)
	}
	ctx.withParams(p.Meta, p.InputResponses, p.RequestState)
	args := p.Arguments
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	res, err := t.h(ctx, args)
	if err != nil {
		var ae *abi.Error
		if errors.As(err, &ae) && ae != nil {
			return nil, ae
		}
		res = ToolError("%s", err.Error())
	}
	if res == nil {
		res = &abi.CallToolResult{}
	}
	if res.ResultType != "" {
		// RunAsTask: marshalled as it is, without content.
		return res, nil
	}
	if len(res.InputRequests) > 0 {
		if len(res.Content) > 0 || res.StructuredContent != nil {
			return nil, bothInputAndContent("tool " + strconv.Quote(p.Name) + " returned content")
		}
		return res, nil
	}
	content := res.Content
	if content == nil {
		content = []abi.Content{}
	}
	return callToolJSON{CallToolResult: res, Content: content}, nil
}

func (r *registry) listResources() (any, *abi.Error) {
	res := abi.ListResourcesResult{Resources: make([]abi.Resource, 0, len(r.resources))}
	for _, rs := range r.resources {
		res.Resources = append(res.Resources, rs.def)
	}
	return res, nil
}

func (r *registry) listTemplates() (any, *abi.Error) {
	res := abi.ListResourceTemplatesResult{ResourceTemplates: make([]abi.ResourceTemplate, 0, len(r.templates))}
	for _, t := range r.templates {
		res.ResourceTemplates = append(res.ResourceTemplates, t.def)
	}
	return res, nil
}

// readResourceJSON marshals a ReadResourceResult with "contents" always
// present, as MCP requires.
type readResourceJSON struct {
	*abi.ReadResourceResult
	Contents []abi.ResourceContents `json:"contents"`
}

func (r *registry) readResource(ctx *Context, req json.RawMessage) (any, *abi.Error) {
	var p struct {
		abi.ReadResourceParams
		Meta json.RawMessage `json:"_meta,omitempty"` // decoded if a handler asks
	}
	if e := decodeRequest(req, &p); e != nil {
		return nil, e
	}
	ctx.withParams(p.Meta, p.InputResponses, p.RequestState)
	var (
		h    ResourceHandler
		mime string
	)
	if rs := r.resourceIndex[p.URI]; rs != nil {
		h, mime = rs.h, rs.def.MimeType
	} else if t := r.hostTemplate(ctx); t != nil {
		// The host matched the URI against this template: its values are
		// the host's.
		h, mime = t.h, t.def.MimeType
		ctx.setHostURIValues()
	} else {
		for _, t := range r.templates {
			if vars, ok := t.t.Match(p.URI); ok {
				h, mime, ctx.uriValues = t.h, t.def.MimeType, vars
				break
			}
		}
	}
	if h == nil {
		return nil, ResourceNotFound(p.URI)
	}
	res, err := h(ctx, p.URI)
	if err != nil {
		return nil, protocolError(err, abi.CodeInternalError)
	}
	if res == nil {
		res = &abi.ReadResourceResult{}
	}
	if len(res.InputRequests) > 0 {
		if len(res.Contents) > 0 {
			return nil, bothInputAndContent("resource " + strconv.Quote(p.URI) + " returned contents")
		}
		return res, nil
	}
	contents := res.Contents
	if contents == nil {
		contents = []abi.ResourceContents{}
	}
	for i := range contents {
		if contents[i].URI == "" {
			contents[i].URI = p.URI
		}
		if contents[i].MimeType == "" {
			contents[i].MimeType = mime
		}
	}
	return readResourceJSON{ReadResourceResult: res, Contents: contents}, nil
}

// hostTemplate returns the registered template the host says the URI
// matched, or nil when the host says none (an older host, or a resource)
// or names one not registered.
func (r *registry) hostTemplate(ctx *Context) *template {
	if ctx.hostTemplate == "" {
		return nil
	}
	for _, t := range r.templates {
		if t.def.URITemplate == ctx.hostTemplate {
			return t
		}
	}
	return nil
}

func (r *registry) listPrompts() (any, *abi.Error) {
	res := abi.ListPromptsResult{Prompts: make([]abi.Prompt, 0, len(r.prompts))}
	for _, p := range r.prompts {
		res.Prompts = append(res.Prompts, p.def)
	}
	return res, nil
}

// getPromptJSON marshals a GetPromptResult with "messages" always present,
// as MCP requires.
type getPromptJSON struct {
	*abi.GetPromptResult
	Messages []abi.PromptMessage `json:"messages"`
}

func (r *registry) getPrompt(ctx *Context, req json.RawMessage) (any, *abi.Error) {
	var p struct {
		abi.GetPromptParams
		Meta json.RawMessage `json:"_meta,omitempty"` // decoded if a handler asks
	}
	if e := decodeRequest(req, &p); e != nil {
		return nil, e
	}
	pr := r.promptIndex[p.Name]
	if pr == nil {
		return nil, invalidParams("unknown prompt: " + p.Name)
	}
	ctx.withParams(p.Meta, p.InputResponses, p.RequestState)
	args := p.Arguments
	if args == nil {
		args = map[string]string{}
	}
	for _, a := range pr.def.Arguments {
		if _, ok := args[a.Name]; a.Required && !ok {
			return nil, invalidParams("prompt " + p.Name + ": missing required argument " + a.Name)
		}
	}
	res, err := pr.h(ctx, args)
	if err != nil {
		return nil, protocolError(err, abi.CodeInternalError)
	}
	if res == nil {
		res = &abi.GetPromptResult{}
	}
	if len(res.InputRequests) > 0 {
		if len(res.Messages) > 0 {
			return nil, bothInputAndContent("prompt " + strconv.Quote(p.Name) + " returned messages")
		}
		return res, nil
	}
	msgs := res.Messages
	if msgs == nil {
		msgs = []abi.PromptMessage{}
	}
	return getPromptJSON{GetPromptResult: res, Messages: msgs}, nil
}

func (r *registry) completion(ctx *Context, req json.RawMessage) (any, *abi.Error) {
	var p abi.CompleteParams // whole: the handler gets it
	if e := decodeRequest(req, &p); e != nil {
		return nil, e
	}
	var res *abi.CompleteResult
	if r.complete != nil {
		var err error
		res, err = r.complete(ctx, p)
		if err != nil {
			return nil, protocolError(err, abi.CodeInternalError)
		}
	}
	if res == nil {
		res = &abi.CompleteResult{}
	}
	c := &res.Completion
	if c.Values == nil {
		c.Values = []string{}
	}
	if len(c.Values) > maxCompletionValues {
		if c.Total < len(c.Values) {
			c.Total = len(c.Values)
		}
		c.Values, c.HasMore = c.Values[:maxCompletionValues], true
	}
	return res, nil
}
