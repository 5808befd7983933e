package sdk

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/abi"
)

// call runs export on r with input and returns the output, failing the test
// on a protocol error.
func call(t *testing.T, r *registry, export, input string) string {
	t.Helper()
	out, perr := r.dispatch(export, []byte(input))
	if perr != nil {
		t.Fatalf("%s %s: protocol error %+v", export, input, perr)
	}
	return string(out)
}

// callErr runs export on r with input and returns its protocol error,
// failing the test if there is none.
func callErr(t *testing.T, r *registry, export, input string) *abi.Error {
	t.Helper()
	out, perr := r.dispatch(export, []byte(input))
	if perr == nil {
		t.Fatalf("%s %s: got %s, want a protocol error", export, input, out)
	}
	return perr
}

func toolCall(name, args string) string {
	return `{"request":{"name":"` + name + `","arguments":` + args + `},"context":{"id":3,"_meta":{"progressToken":"tok"}}}`
}

func jsonEq(t *testing.T, got, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("output %q is not JSON: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad want %q: %v", want, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

var objSchema = json.RawMessage(`{"type":"object"}`)

func TestEmptyListsAreArrays(t *testing.T) {
	r := newRegistry()
	for export, want := range map[string]string{
		abi.ExportListTools:             `{"tools":[]}`,
		abi.ExportListResources:         `{"resources":[]}`,
		abi.ExportListResourceTemplates: `{"resourceTemplates":[]}`,
		abi.ExportListPrompts:           `{"prompts":[]}`,
	} {
		for _, in := range []string{`{"context":{}}`, ``} {
			if got := call(t, r, export, in); got != want {
				t.Errorf("%s(%q) = %s, want %s", export, in, got, want)
			}
		}
	}
	jsonEq(t, call(t, r, abi.ExportComplete, `{"request":{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":""}},"context":{}}`),
		`{"completion":{"values":[]}}`)
}

func TestToolDispatch(t *testing.T) {
	r := newRegistry()
	var gotCtx *Context
	r.addTool(abi.Tool{Name: "echo", InputSchema: objSchema}, func(ctx *Context, args json.RawMessage) (*abi.CallToolResult, error) {
		gotCtx = ctx
		var in struct{ Text string }
		if err := json.Unmarshal(args, &in); err != nil {
			return nil, err
		}
		return TextResult(in.Text), nil
	})
	r.addTool(abi.Tool{Name: "fail"}, func(*Context, json.RawMessage) (*abi.CallToolResult, error) {
		return nil, errors.New("it broke")
	})
	r.addTool(abi.Tool{Name: "proto"}, func(*Context, json.RawMessage) (*abi.CallToolResult, error) {
		return nil, fmt.Errorf("wrapped: %w", InvalidParams("bad %s", "thing"))
	})
	r.addTool(abi.Tool{Name: "nothing"}, func(*Context, json.RawMessage) (*abi.CallToolResult, error) {
		return nil, nil
	})
	r.addTool(abi.Tool{Name: "boom"}, func(*Context, json.RawMessage) (*abi.CallToolResult, error) {
		var m map[string]int
		m["x"] = 1 // nil map write: a runtime panic
		return nil, nil
	})

	jsonEq(t, call(t, r, abi.ExportListTools, `{"context":{}}`),
		`{"tools":[{"name":"echo","inputSchema":{"type":"object"}},{"name":"fail","inputSchema":{"type":"object"}},{"name":"proto","inputSchema":{"type":"object"}},{"name":"nothing","inputSchema":{"type":"object"}},{"name":"boom","inputSchema":{"type":"object"}}]}`)

	jsonEq(t, call(t, r, abi.ExportCallTool, toolCall("echo", `{"text":"hi"}`)), `{"content":[{"type":"text","text":"hi"}]}`)
	if string(gotCtx.RequestID()) != "3" || gotCtx.ProgressToken() != "tok" || gotCtx.Meta()["progressToken"] != "tok" {
		t.Errorf("context = id %s, meta %v", gotCtx.RequestID(), gotCtx.Meta())
	}
	// Missing and null arguments reach the handler as {}.
	for _, in := range []string{`{"request":{"name":"echo"},"context":{}}`, toolCall("echo", "null")} {
		jsonEq(t, call(t, r, abi.ExportCallTool, in), `{"content":[{"type":"text"}]}`)
	}
	jsonEq(t, call(t, r, abi.ExportCallTool, toolCall("fail", `{}`)), `{"content":[{"type":"text","text":"it broke"}],"isError":true}`)
	jsonEq(t, call(t, r, abi.ExportCallTool, toolCall("nothing", `{}`)), `{"content":[]}`)

	if e := callErr(t, r, abi.ExportCallTool, toolCall("proto", `{}`)); e.Code != abi.CodeInvalidParams || e.Message != "bad thing" {
		t.Errorf("proto: %+v", e)
	}
	if e := callErr(t, r, abi.ExportCallTool, toolCall("boom", `{}`)); e.Code != abi.CodeInternalError || !strings.Contains(e.Message, "panic: assignment to entry in nil map") {
		t.Errorf("boom: %+v", e)
	}
	if e := callErr(t, r, abi.ExportCallTool, toolCall("nope", `{}`)); e.Code != abi.CodeInvalidParams || e.Message != "unknown tool: nope" {
		t.Errorf("unknown tool: %+v", e)
	}
	for _, in := range []string{`{`, `{"context":{}}`, `{"request":null,"context":{}}`, `{"request":[1],"context":{}}`, `[]`} {
		if e := callErr(t, r, abi.ExportCallTool, in); e.Code != abi.CodeInvalidParams {
			t.Errorf("call_tool(%s): %+v", in, e)
		}
	}
}

func TestTypedTool(t *testing.T) {
	type in struct{ A, B float64 }
	type out struct {
		Sum float64 `json:"sum"`
	}
	r := newRegistry()
	r.addTool(abi.Tool{Name: "add"}, typedHandler(func(_ *Context, i in) (out, error) { return out{i.A + i.B}, nil }))
	r.addTool(abi.Tool{Name: "void"}, typedHandler(func(_ *Context, i in) (struct{}, error) { return struct{}{}, nil }))
	r.addTool(abi.Tool{Name: "raw"}, typedHandler(func(_ *Context, i in) (*abi.CallToolResult, error) { return TextResult("raw"), nil }))
	r.addTool(abi.Tool{Name: "err"}, typedHandler(func(_ *Context, i in) (out, error) { return out{}, errors.New("no") }))

	jsonEq(t, call(t, r, abi.ExportCallTool, toolCall("add", `{"A":1,"B":2.5}`)),
		`{"content":[{"type":"text","text":"{\"sum\":3.5}"}],"structuredContent":{"sum":3.5}}`)
	jsonEq(t, call(t, r, abi.ExportCallTool, toolCall("void", `{}`)), `{"content":[]}`)
	jsonEq(t, call(t, r, abi.ExportCallTool, toolCall("raw", `{}`)), `{"content":[{"type":"text","text":"raw"}]}`)
	jsonEq(t, call(t, r, abi.ExportCallTool, toolCall("err", `{}`)), `{"content":[{"type":"text","text":"no"}],"isError":true}`)
	got := call(t, r, abi.ExportCallTool, toolCall("add", `{"A":"x"}`))
	if !strings.Contains(got, `"isError":true`) || !strings.Contains(got, "invalid arguments") {
		t.Errorf("bad arguments: %s", got)
	}
}

func TestAddToolPanics(t *testing.T) {
	h := func(*Context, json.RawMessage) (*abi.CallToolResult, error) { return nil, nil }
	for name, tool := range map[string]abi.Tool{
		"empty name":        {InputSchema: objSchema},
		"invalid JSON":      {Name: "x", InputSchema: json.RawMessage(`{"type":`)},
		"not an object":     {Name: "x", InputSchema: json.RawMessage(`[]`)},
		"null":              {Name: "x", InputSchema: json.RawMessage(`null`)},
		"type not object":   {Name: "x", InputSchema: json.RawMessage(`{"type":"string"}`)},
		"bad output schema": {Name: "x", OutputSchema: json.RawMessage(`{"type":"array"}`)},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			newRegistry().addTool(tool, h)
		})
	}
	t.Run("duplicate", func(t *testing.T) {
		r := newRegistry()
		r.addTool(abi.Tool{Name: "x"}, h)
		defer func() {
			if v := recover(); v == nil || !strings.Contains(fmt.Sprint(v), `duplicate tool name "x"`) {
				t.Errorf("panic = %v", v)
			}
		}()
		r.addTool(abi.Tool{Name: "x"}, h)
	})
}

func TestResources(t *testing.T) {
	r := newRegistry()
	r.addResource(abi.Resource{URI: "mem://readme", Name: "readme", MimeType: "text/markdown"},
		func(ctx *Context, uri string) (*abi.ReadResourceResult, error) {
			return &abi.ReadResourceResult{Contents: []abi.ResourceContents{{Text: "# hi"}}}, nil
		})
	r.addTemplate(abi.ResourceTemplate{URITemplate: "mem://users/{id}/files/{+path}", Name: "file"},
		func(ctx *Context, uri string) (*abi.ReadResourceResult, error) {
			if ctx.URIVar("id") == "ghost" {
				return nil, ResourceNotFound(uri)
			}
			if ctx.URIVar("id") == "broken" {
				return nil, errors.New("disk on fire")
			}
			return &abi.ReadResourceResult{Contents: []abi.ResourceContents{
				TextContents("", "text/plain", ctx.URIVar("id")+"|"+ctx.URIVar("path")),
			}}, nil
		})
	r.addTemplate(abi.ResourceTemplate{URITemplate: "mem://users/{id}", Name: "user"},
		func(ctx *Context, uri string) (*abi.ReadResourceResult, error) {
			return &abi.ReadResourceResult{Contents: []abi.ResourceContents{BlobContents(uri, "", []byte{1, 2})}}, nil
		})
	r.addTemplate(abi.ResourceTemplate{URITemplate: "mem://empty", Name: "empty"},
		func(ctx *Context, uri string) (*abi.ReadResourceResult, error) { return nil, nil })

	jsonEq(t, call(t, r, abi.ExportListResources, `{"context":{}}`),
		`{"resources":[{"uri":"mem://readme","name":"readme","mimeType":"text/markdown"}]}`)
	jsonEq(t, call(t, r, abi.ExportListResourceTemplates, `{"context":{}}`),
		`{"resourceTemplates":[{"uriTemplate":"mem://users/{id}/files/{+path}","name":"file"},{"uriTemplate":"mem://users/{id}","name":"user"},{"uriTemplate":"mem://empty","name":"empty"}]}`)

	read := func(uri string) string { return `{"request":{"uri":"` + uri + `"},"context":{}}` }
	jsonEq(t, call(t, r, abi.ExportReadResource, read("mem://readme")),
		`{"contents":[{"uri":"mem://readme","mimeType":"text/markdown","text":"# hi"}]}`)
	jsonEq(t, call(t, r, abi.ExportReadResource, read("mem://users/a%20b/files/x/y.txt")),
		`{"contents":[{"uri":"mem://users/a%20b/files/x/y.txt","mimeType":"text/plain","text":"a b|x/y.txt"}]}`)
	jsonEq(t, call(t, r, abi.ExportReadResource, read("mem://users/7")),
		`{"contents":[{"uri":"mem://users/7","blob":"AQI="}]}`)
	jsonEq(t, call(t, r, abi.ExportReadResource, read("mem://empty")), `{"contents":[]}`)

	for _, uri := range []string{"mem://nope", "mem://users/7/x", "mem://users/ghost/files/f"} {
		e := callErr(t, r, abi.ExportReadResource, read(uri))
		if e.Code != abi.CodeResourceNotFound || string(e.Data) != `{"uri":"`+uri+`"}` {
			t.Errorf("read %s: %+v", uri, e)
		}
	}
	if e := callErr(t, r, abi.ExportReadResource, read("mem://users/broken/files/f")); e.Code != abi.CodeInternalError || e.Message != "disk on fire" {
		t.Errorf("broken: %+v", e)
	}
}

// The host sends the template the URI matched and its variables' values;
// the SDK dispatches to that template with those values. Without them (an
// older host) it matches the URI itself, every RFC 6570 form included.
func TestTemplateValues(t *testing.T) {
	r := newRegistry()
	seen := func(ctx *Context, uri string) (*abi.ReadResourceResult, error) {
		b, err := json.Marshal(map[string]any{"vars": ctx.URIVars(), "path": ctx.URIValue("path"), "keys": ctx.URIValue("keys")})
		if err != nil {
			return nil, err
		}
		return &abi.ReadResourceResult{Contents: []abi.ResourceContents{TextContents("", "", string(b))}}, nil
	}
	r.addTemplate(abi.ResourceTemplate{URITemplate: "note://{id}", Name: "note"}, seen)
	r.addTemplate(abi.ResourceTemplate{URITemplate: "https://{host}/x{?q}", Name: "x"}, seen)
	r.addTemplate(abi.ResourceTemplate{URITemplate: "file://{/path*}{?keys*}", Name: "file"}, seen)
	text := func(in string) string {
		t.Helper()
		var res abi.ReadResourceResult
		if err := json.Unmarshal([]byte(call(t, r, abi.ExportReadResource, in)), &res); err != nil || len(res.Contents) != 1 {
			t.Fatalf("read %s: %s", in, call(t, r, abi.ExportReadResource, in))
		}
		return res.Contents[0].Text
	}
	for _, c := range []struct{ in, want string }{
		// The host's values, even where the SDK would read the URI otherwise.
		{`{"request":{"uri":"note://7"},"context":{"uriTemplate":"note://{id}","uriVariables":{"id":"from the host"}}}`,
			`{"keys":null,"path":null,"vars":{"id":"from the host"}}`},
		{`{"request":{"uri":"file:///a/b"},"context":{"uriTemplate":"file://{/path*}{?keys*}","uriVariables":{"path":["a","b"],"keys":{"k":"v"}}}}`,
			`{"keys":{"k":"v"},"path":["a","b"],"vars":{"keys":"k,v","path":"a,b"}}`},
		// No values from the host: the SDK matches.
		{`{"request":{"uri":"note://a%20b"},"context":{}}`, `{"keys":null,"path":null,"vars":{"id":"a b"}}`},
		{`{"request":{"uri":"https://example.com/x?q=hi"},"context":{}}`, `{"keys":null,"path":null,"vars":{"host":"example.com","q":"hi"}}`},
		{`{"request":{"uri":"https://example.com/x"},"context":{}}`, `{"keys":null,"path":null,"vars":{"host":"example.com"}}`},
		{`{"request":{"uri":"file:///a/b?x=1"},"context":{}}`, `{"keys":{"x":"1"},"path":["a","b"],"vars":{"keys":"x,1","path":"a,b"}}`},
		// A template the host names that is not registered: the SDK matches.
		{`{"request":{"uri":"note://9"},"context":{"uriTemplate":"gone://{id}","uriVariables":{"id":"x"}}}`, `{"keys":null,"path":null,"vars":{"id":"9"}}`},
	} {
		if got := text(c.in); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.in, got, c.want)
		}
	}
	for _, bad := range []string{"", "x://{a", "x://a}", "x://{}", "x://{a..b}", "x://{=a}"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("AddResourceTemplate(%q) did not panic", bad)
				}
			}()
			newRegistry().addTemplate(abi.ResourceTemplate{URITemplate: bad, Name: "n"}, seen)
		}()
	}
}

func TestPrompts(t *testing.T) {
	r := newRegistry()
	r.addPrompt(abi.Prompt{Name: "review", Arguments: []abi.PromptArgument{{Name: "code", Required: true}, {Name: "style"}}},
		func(ctx *Context, args map[string]string) (*abi.GetPromptResult, error) {
			if args["style"] == "bad" {
				return nil, errors.New("no such style")
			}
			return &abi.GetPromptResult{Messages: []abi.PromptMessage{UserMessage(Text("Review " + args["code"]))}}, nil
		})
	r.addPrompt(abi.Prompt{Name: "empty"}, func(ctx *Context, args map[string]string) (*abi.GetPromptResult, error) {
		if args == nil {
			t.Error("nil args")
		}
		return nil, nil
	})
	jsonEq(t, call(t, r, abi.ExportListPrompts, `{"context":{}}`),
		`{"prompts":[{"name":"review","arguments":[{"name":"code","required":true},{"name":"style"}]},{"name":"empty"}]}`)
	jsonEq(t, call(t, r, abi.ExportGetPrompt, `{"request":{"name":"review","arguments":{"code":"x := 1"}},"context":{}}`),
		`{"messages":[{"role":"user","content":{"type":"text","text":"Review x := 1"}}]}`)
	jsonEq(t, call(t, r, abi.ExportGetPrompt, `{"request":{"name":"empty"},"context":{}}`), `{"messages":[]}`)
	if e := callErr(t, r, abi.ExportGetPrompt, `{"request":{"name":"review"},"context":{}}`); e.Code != abi.CodeInvalidParams {
		t.Errorf("missing argument: %+v", e)
	}
	if e := callErr(t, r, abi.ExportGetPrompt, `{"request":{"name":"nope"},"context":{}}`); e.Code != abi.CodeInvalidParams || e.Message != "unknown prompt: nope" {
		t.Errorf("unknown prompt: %+v", e)
	}
	if e := callErr(t, r, abi.ExportGetPrompt, `{"request":{"name":"review","arguments":{"code":"c","style":"bad"}},"context":{}}`); e.Code != abi.CodeInternalError {
		t.Errorf("handler error: %+v", e)
	}
}

func TestCompletion(t *testing.T) {
	r := newRegistry()
	r.complete = func(ctx *Context, p abi.CompleteParams) (*abi.CompleteResult, error) {
		if p.Ref.Name != "review" {
			return nil, InvalidParams("unknown prompt %s", p.Ref.Name)
		}
		var vals []string
		for i := range 150 {
			vals = append(vals, p.Argument.Value+fmt.Sprint(i))
		}
		return &abi.CompleteResult{Completion: abi.Completion{Values: vals}}, nil
	}
	out := call(t, r, abi.ExportComplete, `{"request":{"ref":{"type":"ref/prompt","name":"review"},"argument":{"name":"style","value":"s"}},"context":{}}`)
	var res abi.CompleteResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if c := res.Completion; len(c.Values) != 100 || !c.HasMore || c.Total != 150 || c.Values[0] != "s0" {
		t.Errorf("completion = %d values, hasMore %v, total %d", len(c.Values), c.HasMore, c.Total)
	}
	if e := callErr(t, r, abi.ExportComplete, `{"request":{"ref":{"type":"ref/prompt","name":"x"},"argument":{"name":"a","value":""}},"context":{}}`); e.Code != abi.CodeInvalidParams {
		t.Errorf("error: %+v", e)
	}
}

func TestContextFromParams(t *testing.T) {
	r := newRegistry()
	var got *Context
	r.addTool(abi.Tool{Name: "t"}, func(ctx *Context, _ json.RawMessage) (*abi.CallToolResult, error) {
		got = ctx
		return nil, nil
	})
	call(t, r, abi.ExportCallTool, `{"request":{"name":"t","_meta":{"progressToken":5},"inputResponses":{"q":{"action":"accept"}},"requestState":"st"},"context":{}}`)
	if got.ProgressToken() != float64(5) || got.RequestState() != "st" || string(got.InputResponses()["q"]) != `{"action":"accept"}` || got.RequestID() != nil {
		t.Errorf("context = %+v", got)
	}
}

// TestContextIsResetBetweenCalls: the SDK reuses one Context for all calls,
// so nothing of a call's context (its _meta, decoded or not, capabilities,
// answers, state) may reach the next call's handler.
func TestContextIsResetBetweenCalls(t *testing.T) {
	r := newRegistry()
	type seen struct {
		id            string
		meta, caps    map[string]any
		responses     map[string]json.RawMessage
		state         string
		progressToken any
	}
	var got []seen
	r.addTool(abi.Tool{Name: "t"}, func(ctx *Context, _ json.RawMessage) (*abi.CallToolResult, error) {
		got = append(got, seen{string(ctx.RequestID()), ctx.Meta(), ctx.ClientCapabilities(),
			ctx.InputResponses(), ctx.RequestState(), ctx.ProgressToken()})
		return nil, nil
	})
	call(t, r, abi.ExportCallTool, `{"request":{"name":"t","inputResponses":{"q":{"action":"accept"}},"requestState":"st"},"context":{"id":1,"_meta":{"progressToken":5},"clientCapabilities":{"sampling":{}}}}`)
	call(t, r, abi.ExportCallTool, `{"request":{"name":"t"},"context":{}}`)
	if len(got) != 2 || got[0].progressToken != float64(5) || got[0].caps["sampling"] == nil {
		t.Fatalf("first call saw %+v", got)
	}
	if second := got[1]; second.id != "" || second.meta != nil || second.caps != nil || second.responses != nil ||
		second.state != "" || second.progressToken != nil {
		t.Errorf("second call saw the first call's context: %+v", second)
	}
}
