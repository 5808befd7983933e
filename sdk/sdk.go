package sdk

import (
	"encoding/json"
	"reflect"
	"strconv"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/abi/uritemplate"
)

// ToolHandler runs a tool. args is the JSON object of the call's arguments
// ("{}" when the client sent none), already checked by the host against the
// tool's input schema.
//
// A nil error with a nil result is an empty successful result. A plain error
// becomes a result with isError set and the error's text as its content. An
// error that is (or wraps) an [*abi.Error] is reported as a protocol error
// with that code instead.
type ToolHandler func(ctx *Context, args json.RawMessage) (*abi.CallToolResult, error)

// ResourceHandler reads the resource at uri. Contents with an empty URI get
// uri, and with an empty MimeType the MIME type the resource or template was
// registered with. An [*abi.Error] is reported with its code; any other
// error as an internal error (-32603).
type ResourceHandler func(ctx *Context, uri string) (*abi.ReadResourceResult, error)

// PromptHandler renders a prompt from its arguments (never nil; every
// argument declared required is present). An [*abi.Error] is reported with
// its code; any other error as an internal error (-32603).
type PromptHandler func(ctx *Context, args map[string]string) (*abi.GetPromptResult, error)

// CompletionHandler suggests values for a prompt argument or a resource
// template variable. At most 100 values are sent; the SDK truncates a longer
// list and sets HasMore.
type CompletionHandler func(ctx *Context, p abi.CompleteParams) (*abi.CompleteResult, error)

type tool struct {
	def abi.Tool
	h   ToolHandler
}

type resource struct {
	def abi.Resource
	h   ResourceHandler
}

type template struct {
	def abi.ResourceTemplate
	t   *uritemplate.Template
	h   ResourceHandler
}

type prompt struct {
	def abi.Prompt
	h   PromptHandler
}

// registry holds what a plugin contributes. The package has one, std; tests
// build their own.
type registry struct {
	tools     []*tool
	toolIndex map[string]*tool

	resources     []*resource
	resourceIndex map[string]*resource
	templates     []*template

	prompts     []*prompt
	promptIndex map[string]*prompt

	complete CompletionHandler

	ctx Context // the context of the call being dispatched
}

func newRegistry() *registry {
	return &registry{
		toolIndex:     map[string]*tool{},
		resourceIndex: map[string]*resource{},
		promptIndex:   map[string]*prompt{},
	}
}

var std = newRegistry()

// AddTool registers a tool. It panics (at init, so the mistake shows at the
// first load) on an empty or duplicate name, a nil handler, or an
// InputSchema or OutputSchema that is not a JSON object with
// "type": "object", as MCP requires; an empty InputSchema means
// {"type":"object"}.
func AddTool(t abi.Tool, h ToolHandler) { std.addTool(t, h) }

// AddTypedTool registers a tool whose arguments are decoded into In.
//
// The handler's Out decides the result: struct{} gives an empty successful
// result; *abi.CallToolResult is sent as it is; any other type is marshalled
// to JSON and sent both as structuredContent and as one text content holding
// the same JSON (for clients that ignore structured content). Such an Out
// should marshal to a JSON object. Arguments that do not decode into In give
// a tool error (isError), as the MCP specification asks for input
// validation failures. Errors are treated as for [ToolHandler].
//
// An empty t.InputSchema is derived from In, and an empty t.OutputSchema
// from Out when Out is a struct or a pointer to one ([SchemaFor] says how),
// as go-sdk's mcp.AddTool does; the host then checks arguments and
// structured results against them. It panics (at registration) when In is
// not an object type or either cannot be encoded.
func AddTypedTool[In, Out any](t abi.Tool, h func(ctx *Context, in In) (Out, error)) {
	if len(t.InputSchema) == 0 {
		t.InputSchema = mustObjectSchema[In](t.Name, "InputSchema")
	}
	if len(t.OutputSchema) == 0 {
		switch ot := reflect.TypeFor[Out](); {
		case ot == reflect.TypeFor[struct{}](), ot == reflect.TypeFor[*abi.CallToolResult]():
		case ot.Kind() == reflect.Struct || ot.Kind() == reflect.Pointer && ot.Elem().Kind() == reflect.Struct:
			t.OutputSchema = mustObjectSchema[Out](t.Name, "OutputSchema")
		}
	}
	std.addTool(t, typedHandler(h))
}

// mustObjectSchema derives T's schema for a tool; a pointer's "null" is
// dropped, since MCP asks for an object.
func mustObjectSchema[T any](tool, what string) json.RawMessage {
	b, err := SchemaFor[T]()
	if err == nil {
		var s map[string]any
		if err = json.Unmarshal(b, &s); err == nil {
			if types, ok := s["type"].([]any); ok && len(types) == 2 && types[1] == "null" {
				s["type"] = types[0]
			}
			b, err = json.Marshal(s)
		}
	}
	if err != nil {
		panic("sdk: AddTypedTool " + strconv.Quote(tool) + ": derive " + what + ": " + err.Error())
	}
	return b
}

func typedHandler[In, Out any](h func(ctx *Context, in In) (Out, error)) ToolHandler {
	// decodeArgs with In's plan looked up once, here.
	decode := decodeArgs
	if t := reflect.TypeFor[In](); fastArgs && t.Kind() == reflect.Struct {
		decode = planArgs(t).decode
	}
	return func(ctx *Context, args json.RawMessage) (*abi.CallToolResult, error) {
		var in In
		if err := decode(args, &in); err != nil {
			return ToolError("invalid arguments: %v", err), nil
		}
		out, err := h(ctx, in)
		if err != nil {
			return nil, err
		}
		switch o := any(out).(type) {
		case struct{}:
			return &abi.CallToolResult{}, nil
		case *abi.CallToolResult:
			return o, nil
		}
		b, err := json.Marshal(out)
		if err != nil {
			return nil, &abi.Error{Code: abi.CodeInternalError, Message: "marshal tool output: " + err.Error()}
		}
		return &abi.CallToolResult{
			Content:           []abi.Content{Text(string(b))},
			StructuredContent: json.RawMessage(b),
		}, nil
	}
}

// AddResource registers a concrete resource. It panics on an empty or
// duplicate URI or an empty name.
func AddResource(r abi.Resource, h ResourceHandler) { std.addResource(r, h) }

// AddResourceTemplate registers a family of resources. The URI template is
// any RFC 6570 template (levels 1 to 4: {var}, {+var}, {#var}, {.var},
// {/var}, {;var}, {?var}, {&var}, several variables, explode * and prefix
// :N); a read_resource whose URI matches it is dispatched to h with the
// values of the variables in [Context.URIVars] and [Context.URIValue]. The
// host (mcphost) matches the URI and sends the values; under a host that
// does not, the SDK matches it itself, the same way. A variable the URI
// leaves undefined is absent ("note://{id}" matches "note://" with no
// id): check what a handler needs. Concrete resources are matched first,
// then templates in the order they were added. It panics on a template
// that is not RFC 6570, an empty name, or a template added twice.
func AddResourceTemplate(t abi.ResourceTemplate, h ResourceHandler) { std.addTemplate(t, h) }

// AddPrompt registers a prompt. It panics on an empty or duplicate name.
func AddPrompt(p abi.Prompt, h PromptHandler) { std.addPrompt(p, h) }

// SetCompletion sets the handler of completion requests. Without one, every
// completion request gets an empty list of values.
func SetCompletion(h CompletionHandler) { std.complete = h }

func (r *registry) addTool(t abi.Tool, h ToolHandler) {
	if t.Name == "" {
		panic("sdk: AddTool: empty tool name")
	}
	if h == nil {
		panic("sdk: AddTool " + strconv.Quote(t.Name) + ": nil handler")
	}
	if _, dup := r.toolIndex[t.Name]; dup {
		panic("sdk: AddTool: duplicate tool name " + strconv.Quote(t.Name))
	}
	if len(t.InputSchema) == 0 {
		t.InputSchema = json.RawMessage(`{"type":"object"}`)
	}
	if err := checkSchema(t.InputSchema); err != "" {
		panic("sdk: AddTool " + strconv.Quote(t.Name) + ": InputSchema " + err)
	}
	if len(t.OutputSchema) > 0 {
		if err := checkSchema(t.OutputSchema); err != "" {
			panic("sdk: AddTool " + strconv.Quote(t.Name) + ": OutputSchema " + err)
		}
	}
	tl := &tool{def: t, h: h}
	r.tools = append(r.tools, tl)
	r.toolIndex[t.Name] = tl
}

// checkSchema returns why s is not a JSON Schema of an object (which MCP
// asks of both input and output schemas), or "".
func checkSchema(s json.RawMessage) string {
	var v map[string]json.RawMessage
	if err := json.Unmarshal(s, &v); err != nil || v == nil {
		return "is not a JSON object"
	}
	var typ string
	if json.Unmarshal(v["type"], &typ) != nil || typ != "object" {
		return `must have "type": "object"`
	}
	return ""
}

func (r *registry) addResource(res abi.Resource, h ResourceHandler) {
	if res.URI == "" {
		panic("sdk: AddResource: empty URI")
	}
	if res.Name == "" {
		panic("sdk: AddResource " + strconv.Quote(res.URI) + ": empty name")
	}
	if h == nil {
		panic("sdk: AddResource " + strconv.Quote(res.URI) + ": nil handler")
	}
	if _, dup := r.resourceIndex[res.URI]; dup {
		panic("sdk: AddResource: duplicate URI " + strconv.Quote(res.URI))
	}
	rs := &resource{def: res, h: h}
	r.resources = append(r.resources, rs)
	r.resourceIndex[res.URI] = rs
}

func (r *registry) addTemplate(t abi.ResourceTemplate, h ResourceHandler) {
	q := strconv.Quote(t.URITemplate)
	if t.Name == "" {
		panic("sdk: AddResourceTemplate " + q + ": empty name")
	}
	if h == nil {
		panic("sdk: AddResourceTemplate " + q + ": nil handler")
	}
	for _, o := range r.templates {
		if o.def.URITemplate == t.URITemplate {
			panic("sdk: AddResourceTemplate: duplicate template " + q)
		}
	}
	ut, err := uritemplate.Parse(t.URITemplate)
	if err != nil {
		panic("sdk: AddResourceTemplate " + q + ": " + err.Error())
	}
	r.templates = append(r.templates, &template{def: t, t: ut, h: h})
}

func (r *registry) addPrompt(p abi.Prompt, h PromptHandler) {
	if p.Name == "" {
		panic("sdk: AddPrompt: empty prompt name")
	}
	if h == nil {
		panic("sdk: AddPrompt " + strconv.Quote(p.Name) + ": nil handler")
	}
	if _, dup := r.promptIndex[p.Name]; dup {
		panic("sdk: AddPrompt: duplicate prompt name " + strconv.Quote(p.Name))
	}
	pr := &prompt{def: p, h: h}
	r.prompts = append(r.prompts, pr)
	r.promptIndex[p.Name] = pr
}
