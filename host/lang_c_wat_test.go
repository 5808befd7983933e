package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/internal/plugin"
	"github.com/mcphost/mcphost/internal/testutil"
)

// The plugins written in C (plugins/c) and in hand-written WAT (plugins/wat)
// are tested as committed: their .wasm files are built by their build.sh,
// which CI runs with --check, so these tests need neither toolchain.

// committedWasm returns the path of an example plugin's committed build,
// plugins/<name>/<name>.wasm.
func committedWasm(t *testing.T, name string) string {
	t.Helper()
	path := filepath.Join(testutil.RepoRoot(t), "plugins", name, name+".wasm")
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("%v (build it with plugins/%s/build.sh)", err, name)
	}
	return path
}

// cwatHost starts a host serving only the committed plugin name.
func cwatHost(t *testing.T, name string) *host.Host {
	t.Helper()
	h, _ := newHost(t, fmt.Sprintf(`
[server]
watch = false
[[plugin]]
name = %s
path = %s
timeout = "10s"
`, strconv.Quote(name), strconv.Quote(committedWasm(t, name))))
	return h
}

// cwatRaw loads the committed plugin name on its own with plugin.Load, as
// the host does (its host functions, input_read and output_write among
// them), with its memory capped at 4 MiB and one instance, so that a test
// can hand its exports inputs the host never would.
func cwatRaw(t *testing.T, name string) *plugin.Plugin {
	t.Helper()
	wasm, err := os.ReadFile(committedWasm(t, name))
	if err != nil {
		t.Fatal(err)
	}
	p, err := plugin.Load(t.Context(), plugin.Options{Name: name, Wasm: wasm, Timeout: 10 * time.Second,
		MemoryMB: 4, MaxInstances: 1, MaxOutputBytes: 4 << 20, Logger: hclog.NewNullLogger()})
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	t.Cleanup(func() { p.Close(context.Background()) })
	if v := p.ABIVersion(); v != 1 {
		t.Errorf("%s declares ABI version %d, want 1", name, v)
	}
	return p
}

// cwatError is the JSON a plugin sets with error_set (ABI.md §4).
type cwatError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// cwatCall calls export with input and classifies the outcome: the output
// (a JSON object) on success, or the plugin's ABI error. Anything else — a
// trap, a non-JSON error, a failure without error_set, an output that is
// not a JSON object — fails the test.
func cwatCall(t *testing.T, p *plugin.Plugin, export string, input []byte) (map[string]any, *cwatError) {
	t.Helper()
	out, err := p.Call(t.Context(), export, input)
	if err != nil {
		var e *abi.Error
		if !errors.As(err, &e) || e.Message == "" {
			t.Fatalf("%s(%.200q): error %v: not the ABI's JSON error", export, input, err)
		}
		return nil, &cwatError{Code: e.Code, Message: e.Message}
	}
	var obj map[string]any
	if json.Unmarshal(out, &obj) != nil {
		t.Fatalf("%s(%.200q): output %.200q is not a JSON object", export, input, out)
	}
	return obj, nil
}

// cwatMalformed are inputs no host sends: every export that reads its input
// must refuse them with an error, not trap.
var cwatMalformed = []string{
	``, ` `, `{`, `}`, `[]`, `null`, `"request"`, `{"request"`, `{"request":`, `{"request":}`,
	`{"request":5}`, `{"request":"x"}`, `{"request":[1,2]}`, `{"request":{}`, `{"request":{"name"`,
	`{"request":{"name":}}`, `{"request":{"name":"`, `{"request":{"name":"\`, `{"request":{"name":"\u12"}}`,
	`{"request":{"name":"a` + "\x00" + `"}}`, `{"request":{"uri":"c://fib/1","name":"fib_explain","arguments":{"n":"1"}}} x`,
	`{"request":{"uri":1e,"name":-,"arguments":{"n":tru}}}`, `{"request":{,}}`, `{"request":{"a":1,}}`,
	`{"request":` + strings.Repeat("[", 100000), `{"request":` + strings.Repeat(`{"a":`, 5000) + `1` + strings.Repeat("}", 5000) + `}`,
	"\xff\xfe{}", `{"request":{"name":"fib_explain","arguments":{"n":"1"}}}` + strings.Repeat(" ", 10) + `,`,
}

// cwatFuzz calls export with n random mutations of each seed and checks that
// every call ends in an output or the ABI's error, never a trap.
func cwatFuzz(t *testing.T, p *plugin.Plugin, export string, n int, seeds ...string) {
	t.Helper()
	r := rand.New(rand.NewPCG(1, uint64(len(export))))
	alphabet := []byte(`{}[]":,\u0123456789abcdefnrtl-+.eE ` + "\x00\x7f\xc3\xa9")
	for _, seed := range seeds {
		for range n {
			b := []byte(seed)
			for range 1 + r.IntN(4) {
				i := r.IntN(len(b) + 1)
				switch r.IntN(4) {
				case 0: // insert
					b = append(b[:i], append([]byte{alphabet[r.IntN(len(alphabet))]}, b[i:]...)...)
				case 1: // delete
					if i < len(b) {
						b = append(b[:i], b[i+1:]...)
					}
				case 2: // replace
					if i < len(b) {
						b[i] = alphabet[r.IntN(len(alphabet))]
					}
				case 3: // truncate
					b = b[:i]
				}
			}
			cwatCall(t, p, export, b)
		}
	}
}

func TestWATPluginTools(t *testing.T) {
	cs := connect(t, cwatHost(t, "wat"), nil, "")
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	if !reflect.DeepEqual(names, []string{"envelope", "ping"}) && !reflect.DeepEqual(names, []string{"ping", "envelope"}) {
		t.Errorf("tools/list = %v, want ping and envelope", names)
	}

	if res, text := callText(t, cs, "ping", map[string]any{}); res.IsError || text != "pong" {
		t.Errorf("ping = %q (isError %v), want pong", text, res.IsError)
	}
	// ping's schema forbids arguments; the host refuses them before the plugin.
	if res, _ := callText(t, cs, "ping", map[string]any{"x": 1}); !res.IsError {
		t.Error("ping with an argument its schema forbids succeeded")
	}

	// envelope returns what it received: the request (arguments and _meta
	// included, JSON escapes intact) and the context.
	args := map[string]any{"text": "a \"quoted\" \\ back\nslash\ttab \x01 é ✓", "n": 42.5, "list": []any{true, nil}}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "envelope", Arguments: args, Meta: mcp.Meta{"progressToken": "tok-7"}})
	if err != nil || res.IsError || len(res.Content) != 1 {
		t.Fatalf("envelope = %+v, %v", res, err)
	}
	var env struct {
		Request struct {
			Name      string         `json:"name"`
			Arguments map[string]any `json:"arguments"`
		} `json:"request"`
		Context struct {
			Meta               map[string]any `json:"_meta"`
			ClientCapabilities map[string]any `json:"clientCapabilities"`
		} `json:"context"`
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if err := json.Unmarshal([]byte(text), &env); err != nil {
		t.Fatalf("envelope text is not JSON: %v\n%s", err, text)
	}
	if env.Request.Name != "envelope" || !reflect.DeepEqual(env.Request.Arguments, args) {
		t.Errorf("envelope: request = %+v, want name envelope and arguments %v", env.Request, args)
	}
	if env.Context.Meta["progressToken"] != "tok-7" || env.Context.ClientCapabilities == nil {
		t.Errorf("envelope: context = %+v, want _meta.progressToken and clientCapabilities", env.Context)
	}

	// Unknown names never reach the plugin through the host...
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "pong", Arguments: map[string]any{}}); err == nil || rpcCode(t, err) != jsonrpc.CodeInvalidParams {
		t.Errorf("unknown tool: %v, want -32602", err)
	}
}

// TestWATPluginOwnChecks calls the WAT plugin directly with inputs the host
// never sends: its unknown-tool error, and a scanner that finds
// request.name and nothing else.
func TestWATPluginOwnChecks(t *testing.T) {
	p := cwatRaw(t, "wat")
	for _, tc := range []struct{ in, want string }{
		{`{"request":{"name":"nope","arguments":{}}}`, `unknown tool "nope"`},
		{`{"request":{"name":"pin\"g"}}`, `unknown tool "pin\"g"`},
		{`{"request":{"name":"p\u0069ng"}}`, `unknown tool "p\u0069ng"`}, // not decoded: not ping
		{`{"request":{"arguments":{"name":"ping"},"name":"nope"}}`, `unknown tool "nope"`},
		{`{"context":{"name":"ping"},"request":{"name":"x` + "\x01" + `"}}`, "unknown tool \"x\x01\""}, // escaped as \u0001 in the error's JSON
		{`{"request":{"arguments":{"name":"ping"}}}`, `call_tool: the input has no request.name`},
	} {
		_, e := cwatCall(t, p, "call_tool", []byte(tc.in))
		if e == nil || e.Code != -32602 || e.Message != tc.want {
			t.Errorf("call_tool(%s) = %+v, want -32602 %q", tc.in, e, tc.want)
		}
	}
	// request.name is found wherever it is, whatever comes before it.
	out, e := cwatCall(t, p, "call_tool", []byte(` { "context" : {"a":[1,{"name":"envelope"}]} , "request" : { "_meta":{"x":"}"}, "name" : "ping" } } `))
	if e != nil || fmt.Sprint(out["content"]) != "[map[text:pong type:text]]" {
		t.Errorf("call_tool(ping after context) = %v, %+v", out, e)
	}
	for _, in := range cwatMalformed {
		if _, e := cwatCall(t, p, "call_tool", []byte(in)); e == nil {
			t.Errorf("call_tool(%.60q) succeeded", in)
		}
	}
	cwatFuzz(t, p, "call_tool", 300, `{"request":{"name":"envelope","arguments":{"a":"\"x\\"}},"context":{"_meta":{"progressToken":1}}}`,
		`{"request":{"name":"ping"}}`)
}

// cwatFib returns F(n) in decimal.
func cwatFib(n int) string {
	a, b := big.NewInt(0), big.NewInt(1)
	for range n {
		a.Add(a, b)
		a, b = b, a
	}
	return a.String()
}

func TestCPluginResourceTemplate(t *testing.T) {
	cs := connect(t, cwatHost(t, "c"), nil, "")
	templates, err := cs.ListResourceTemplates(t.Context(), nil)
	if err != nil || len(templates.ResourceTemplates) != 1 {
		t.Fatalf("resources/templates/list = %+v, %v", templates, err)
	}
	if tm := templates.ResourceTemplates[0]; tm.URITemplate != "c://fib/{n}" || tm.Name != "fibonacci" || tm.MIMEType != "text/plain" {
		t.Errorf("template = %+v", tm)
	}
	for _, n := range []int{0, 1, 2, 10, 93, 94, 100, 1000, 10000} {
		uri := fmt.Sprintf("c://fib/%d", n)
		res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
		if err != nil || len(res.Contents) != 1 {
			t.Fatalf("read %s = %+v, %v", uri, res, err)
		}
		c := res.Contents[0]
		if want := cwatFib(n); c.URI != uri || c.MIMEType != "text/plain" || c.Text != want {
			t.Errorf("read %s = {uri %q, mimeType %q, text %.40q (%d bytes)}, want text %.40q (%d bytes)", uri, c.URI, c.MIMEType, c.Text, len(c.Text), want, len(want))
		}
	}
	if res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "c://fib/007"}); err != nil || res.Contents[0].Text != "13" || res.Contents[0].URI != "c://fib/007" {
		t.Errorf("read c://fib/007 = %+v, %v", res, err)
	}
	for _, bad := range []string{"abc", "10001", "-1", "1.5", "99999999999999999999", "%31"} {
		_, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "c://fib/" + bad})
		if err == nil || rpcCode(t, err) != jsonrpc.CodeInvalidParams || !strings.Contains(err.Error(), `got "`+bad+`"`) {
			t.Errorf("read c://fib/%s: %v, want -32602 quoting %q", bad, err, bad)
		}
	}
	if _, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "c://nothing"}); err == nil || rpcCode(t, err) != mcp.CodeResourceNotFound {
		t.Errorf("read c://nothing: %v, want %d", err, mcp.CodeResourceNotFound)
	}
}

func TestCPluginPrompt(t *testing.T) {
	cs := connect(t, cwatHost(t, "c"), nil, "")
	prompts, err := cs.ListPrompts(t.Context(), nil)
	if err != nil || len(prompts.Prompts) != 1 {
		t.Fatalf("prompts/list = %+v, %v", prompts, err)
	}
	if p := prompts.Prompts[0]; p.Name != "fib_explain" || len(p.Arguments) != 1 || p.Arguments[0].Name != "n" || !p.Arguments[0].Required {
		t.Errorf("prompt = %+v", p)
	}

	res, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "fib_explain", Arguments: map[string]string{"n": "12"}})
	if err != nil || len(res.Messages) != 2 {
		t.Fatalf("prompts/get = %+v, %v", res, err)
	}
	if res.Description != "Explain F(12)" {
		t.Errorf("description = %q", res.Description)
	}
	emb, ok := res.Messages[0].Content.(*mcp.EmbeddedResource)
	if !ok || res.Messages[0].Role != "user" || emb.Resource.URI != "c://fib/12" || emb.Resource.Text != "144" {
		t.Errorf("first message = %+v, want the embedded resource c://fib/12 = 144", res.Messages[0].Content)
	}
	text, ok := res.Messages[1].Content.(*mcp.TextContent)
	if !ok || !strings.Contains(text.Text, "F(12)") || !strings.Contains(text.Text, "it has 3 digits") {
		t.Errorf("second message = %+v", res.Messages[1].Content)
	}
	one, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "fib_explain", Arguments: map[string]string{"n": "1"}})
	if err != nil || !strings.Contains(one.Messages[1].Content.(*mcp.TextContent).Text, "it has 1 digit.") {
		t.Errorf("fib_explain n=1 = %+v, %v", one, err)
	}

	for _, bad := range []string{"twelve", "", "10001", "1 2", `"`} {
		_, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "fib_explain", Arguments: map[string]string{"n": bad}})
		if err == nil || rpcCode(t, err) != jsonrpc.CodeInvalidParams || !strings.Contains(err.Error(), `argument "n"`) {
			t.Errorf("fib_explain n=%q: %v, want -32602 about argument \"n\"", bad, err)
		}
	}
	if _, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "fib_explain"}); err == nil || rpcCode(t, err) != jsonrpc.CodeInvalidParams {
		t.Errorf("fib_explain without n: %v, want -32602", err)
	}
}

func TestCPluginCompletion(t *testing.T) {
	cs := connect(t, cwatHost(t, "c"), nil, "")
	// want lists 0..10000 starting with prefix, and their count.
	want := func(prefix string) ([]string, int) {
		var all []string
		for k := 0; k <= 10000; k++ {
			if s := strconv.Itoa(k); strings.HasPrefix(s, prefix) {
				all = append(all, s)
			}
		}
		return all[:min(len(all), 100)], len(all)
	}
	for _, tc := range []struct {
		ref   *mcp.CompleteReference
		value string
	}{
		{&mcp.CompleteReference{Type: "ref/prompt", Name: "fib_explain"}, "12"},
		{&mcp.CompleteReference{Type: "ref/prompt", Name: "fib_explain"}, ""},
		{&mcp.CompleteReference{Type: "ref/resource", URI: "c://fib/{n}"}, "999"},
		{&mcp.CompleteReference{Type: "ref/resource", URI: "c://fib/{n}"}, "10000"},
	} {
		res, err := cs.Complete(t.Context(), &mcp.CompleteParams{Ref: tc.ref, Argument: mcp.CompleteParamsArgument{Name: "n", Value: tc.value}})
		if err != nil {
			t.Fatalf("complete %+v %q: %v", tc.ref, tc.value, err)
		}
		values, total := want(tc.value)
		if got := res.Completion; !reflect.DeepEqual(got.Values, values) || got.Total != total || got.HasMore != (total > 100) {
			t.Errorf("complete %q = %d values %v… total %d hasMore %v; want %d values, total %d", tc.value, len(got.Values), got.Values[:min(len(got.Values), 5)], got.Total, got.HasMore, len(values), total)
		}
	}
	for _, value := range []string{"x", "123456", "1-"} {
		res, err := cs.Complete(t.Context(), &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "fib_explain"}, Argument: mcp.CompleteParamsArgument{Name: "n", Value: value}})
		if err != nil || len(res.Completion.Values) != 0 {
			t.Errorf("complete %q = %+v, %v; want no values", value, res, err)
		}
	}
}

// TestCPluginRefusesMalformedInput hands the C plugin's exports inputs no
// host sends: each must end in the ABI's -32602 error or a JSON result,
// never a trap, and the instance must keep serving.
func TestCPluginRefusesMalformedInput(t *testing.T) {
	p := cwatRaw(t, "c")
	valid := map[string]string{
		"read_resource": `{"request":{"uri":"c://fib/30"},"context":{}}`,
		"get_prompt":    `{"request":{"name":"fib_explain","arguments":{"n":"30"}},"context":{"_meta":{"progressToken":"t"}}}`,
		"complete":      `{"request":{"ref":{"type":"ref/prompt","name":"fib_explain"},"argument":{"name":"n","value":"3"}},"context":{}}`,
	}
	for export, seed := range valid {
		if _, e := cwatCall(t, p, export, []byte(seed)); e != nil {
			t.Fatalf("%s(%s) = %+v", export, seed, e)
		}
		for _, in := range cwatMalformed {
			if _, e := cwatCall(t, p, export, []byte(in)); e == nil || e.Code != -32602 {
				t.Errorf("%s(%.60q) = %+v, want -32602", export, in, e)
			}
		}
		cwatFuzz(t, p, export, 300, seed)
	}
	// Escapes are decoded: \u0031\u0030 is "10", a surrogate pair is one
	// character, a lone surrogate is refused as a number.
	for _, tc := range []struct{ in, want string }{
		{`{"request":{"uri":"c:\/\/fib\/\u0031\u0030"}}`, "55"},
		{`{"request":{"\u0075ri":"c://fib/11"}}`, "89"},
	} {
		out, e := cwatCall(t, p, "read_resource", []byte(tc.in))
		if e != nil || !strings.Contains(fmt.Sprint(out), "text:"+tc.want+" ") {
			t.Errorf("read_resource(%s) = %v, %+v; want text %s", tc.in, out, e, tc.want)
		}
	}
	_, e := cwatCall(t, p, "read_resource", []byte(`{"request":{"uri":"c://fib/\ud83d\ude00\ud800"}}`))
	if e == nil || e.Message != `c://fib/{n}: n must be a whole number from 0 to 10000, got "😀�"` {
		t.Errorf("read_resource(emoji, lone surrogate) = %+v", e)
	}
	// Memory does not grow with calls (each releases the previous one's):
	// this would need far more than the 4 MiB the instance has.
	for range 1000 {
		cwatCall(t, p, "get_prompt", []byte(`{"request":{"name":"fib_explain","arguments":{"n":"5000"}}}`))
	}
}
