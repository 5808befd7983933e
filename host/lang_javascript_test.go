package host_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
)

// JavaScript plugins (sdk/js) run in the committed engine
// (host/internal/jsengine/engine.wasm, built by its build.sh, which CI runs with
// --check): these tests make each plugin from it and a source, as
// plugins/js-hello/build.sh does, so they need no C toolchain.

// jsPlugin writes the engine with source in its mcphost.js section to a
// file of the test's and returns its path.
func jsPlugin(t *testing.T, source string) string {
	t.Helper()
	wasm, err := host.BuildJSPlugin([]byte(source))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "plugin.wasm")
	if err := os.WriteFile(path, wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestJSHello: the committed example plugins/js-hello through a go-sdk
// client: a text result with the plugin's config, structured content, and
// a thrown error as a tool error naming the JavaScript file and line.
func TestJSHello(t *testing.T) {
	h, _ := newHost(t, fmt.Sprintf(`
[server]
watch = false
[[plugin]]
name = "js"
path = %s
timeout = "10s"
config = { greeting = "Howdy" }
`, strconv.Quote(committedWasm(t, "js-hello"))))
	cs := connect(t, h, nil, "")
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	if got := strings.Join(names, ","); got != "add,fail,greet" {
		t.Errorf("tools = %s, want add,fail,greet", got)
	}
	if res, text := callText(t, cs, "greet", map[string]any{"name": "Ada"}); res.IsError || text != "Howdy, Ada!" {
		t.Errorf("greet = %q (isError %v), want \"Howdy, Ada!\"", text, res.IsError)
	}
	res, text := callText(t, cs, "add", map[string]any{"a": 2, "b": 40})
	if res.IsError || text != `{"sum":42}` {
		t.Errorf("add = %q (isError %v), want {\"sum\":42}", text, res.IsError)
	}
	if sc, ok := res.StructuredContent.(map[string]any); !ok || sc["sum"] != 42.0 {
		t.Errorf("add structuredContent = %#v, want {sum: 42}", res.StructuredContent)
	}
	res, text = callText(t, cs, "fail", map[string]any{})
	if !res.IsError || !strings.Contains(text, "Error: it failed on purpose") || !strings.Contains(text, "(at main.js:38:13)") {
		t.Errorf("fail = %q (isError %v), want the error and where main.js throws it (main.js:38:13, through the positions plugin build appends)", text, res.IsError)
	}

	// A resource, a template, a prompt, and completion of both.
	if rs, err := cs.ListResources(t.Context(), nil); err != nil || len(rs.Resources) != 1 || rs.Resources[0].URI != "js-hello://about" || rs.Resources[0].MIMEType != "text/markdown" {
		t.Errorf("resources/list = %+v, %v", rs, err)
	}
	about, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "js-hello://about"})
	if err != nil || len(about.Contents) != 1 || !strings.HasPrefix(about.Contents[0].Text, "# js-hello") || about.Contents[0].MIMEType != "text/markdown" {
		t.Errorf("read js-hello://about = %+v, %v", about, err)
	}
	if ts, err := cs.ListResourceTemplates(t.Context(), nil); err != nil || len(ts.ResourceTemplates) != 1 || ts.ResourceTemplates[0].URITemplate != "js-hello://colors/{name}" {
		t.Errorf("resources/templates/list = %+v, %v", ts, err)
	}
	color, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "js-hello://colors/indigo"})
	if err != nil || len(color.Contents) != 1 || color.Contents[0].Text != `{"name":"indigo","index":4,"known":true}` {
		t.Errorf("read js-hello://colors/indigo = %+v, %v", color, err)
	}
	if _, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "js-hello://nothing"}); err == nil {
		t.Error("reading an unknown resource did not fail")
	}
	prompt, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "describe_color", Arguments: map[string]string{"color": "azure"}})
	if err != nil || len(prompt.Messages) != 1 || prompt.Messages[0].Role != "user" || prompt.Messages[0].Content.(*mcp.TextContent).Text != "Describe the color azure in one sentence." {
		t.Errorf("prompts/get describe_color = %+v, %v", prompt, err)
	}
	if _, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "describe_color"}); err == nil || !strings.Contains(err.Error(), "missing required argument") {
		t.Errorf("prompts/get without its argument: %v", err)
	}
	for _, ref := range []*mcp.CompleteReference{
		{Type: "ref/prompt", Name: "describe_color"},
		{Type: "ref/resource", URI: "js-hello://colors/{name}"},
	} {
		argName := "color"
		if ref.Type == "ref/resource" {
			argName = "name"
		}
		res, err := cs.Complete(t.Context(), &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: argName, Value: "a"}})
		if err != nil || strings.Join(res.Completion.Values, ",") != "amber,azure" || res.Completion.Total != 2 {
			t.Errorf("complete %s %s = %+v, %v", ref.Type, argName, res, err)
		}
	}
}

// TestJSPluginsShareOneCompiledModule: two JavaScript plugins with
// different sources on the same engine compile once (the host drops the
// mcphost.js section before compiling), and each still runs its own code.
func TestJSPluginsShareOneCompiledModule(t *testing.T) {
	one := jsPlugin(t, `import { McpServer } from "mcphost";
new McpServer().registerTool("which", { description: "which plugin" }, () => "one");`)
	two := jsPlugin(t, `import { McpServer } from "mcphost";
const s = new McpServer();
s.registerTool("which", { description: "which plugin" }, () => "two");
s.registerTool("extra", { description: "only in two" }, () => "extra");`)
	s := start(t, fmt.Sprintf(`
[server.metrics]
enabled = true
[[plugin]]
name = "one"
path = %s
prefix = "one_"
idle_timeout = "0"
[[plugin]]
name = "two"
path = %s
prefix = "two_"
idle_timeout = "0"
`, strconv.Quote(one), strconv.Quote(two)))
	for name, want := range map[string]string{"one_which": "one", "two_which": "two", "two_extra": "extra"} {
		if res, text := callText(t, s.session, name, map[string]any{}); res.IsError || text != want {
			t.Errorf("%s = %q (isError %v), want %q", name, text, res.IsError, want)
		}
	}
	if v := metric(t, s.host, "mcphost_code_modules"); v != 1 {
		t.Errorf("mcphost_code_modules = %v for two JavaScript plugins, want 1", v)
	}
	if v := metric(t, s.host, "mcphost_code_loads_total"); v != 1 {
		t.Errorf("mcphost_code_loads_total = %v for two JavaScript plugins, want 1 (one compile)", v)
	}
}

// hostileJS is a JavaScript plugin whose tools try to escape the sandbox's
// limits, and one that behaves.
const hostileJS = `import { McpServer } from "mcphost";
const s = new McpServer();
s.registerTool("ok", { description: "behaves" }, () => "ok");
s.registerTool("loop", { description: "never returns" }, () => { while (true) {} });
s.registerTool("async_loop", { description: "never returns, after an await" }, async () => { await null; for (;;) {} });
s.registerTool("alloc", { description: "allocates until refused" }, () => {
  const keep = [];
  for (let i = 0; ; i++) keep.push(new Array(1 << 16).fill(i));
});
s.registerTool("string_bomb", { description: "doubles a string until refused" }, () => {
  let x = "x";
  for (;;) x += x;
});
s.registerTool("recurse", { description: "recurses without end" }, () => {
  function deeper(n) { return deeper(n + 1) + 1; }
  return deeper(0);
});
s.registerTool("nest", { description: "parses JSON nested 100,000 deep" }, () =>
  JSON.stringify(JSON.parse("[".repeat(100000) + "]".repeat(100000))));
s.registerTool("huge", { description: "returns more than the output cap" }, () => "y".repeat(1 << 20));
s.registerTool("never", { description: "awaits a promise nothing settles" }, () => new Promise(() => {}));
`

// TestJSHostile: hostile JavaScript is stopped by the sandbox's limits —
// the deadline, the memory cap, QuickJS's stack limit, the output cap —
// each call failing with a message naming the cause, while the plugin's
// well-behaved tool and another plugin keep serving.
func TestJSHostile(t *testing.T) {
	h, _ := newHost(t, fmt.Sprintf(`
[server]
watch = false
[[plugin]]
name = "hostile"
path = %s
prefix = "h_"
timeout = "1s"
memory_mb = 32
max_output_kb = 256
breaker_failures = 100
[[plugin]]
name = "js"
path = %s
timeout = "10s"
`, strconv.Quote(jsPlugin(t, hostileJS)), strconv.Quote(committedWasm(t, "js-hello"))))
	cs := connect(t, h, nil, "")
	for _, c := range []struct {
		tool string
		want string // in the JSON-RPC error's message, or the tool error's text
	}{
		{"h_loop", "timeout"},
		{"h_async_loop", "timeout"},
		{"h_alloc", "out of memory"},
		{"h_string_bomb", "string too long"},
		{"h_nest", "stack"},
		{"h_recurse", "stack"},
		{"h_huge", "max_output_kb"},
		{"h_never", "never settled"},
	} {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: c.tool, Arguments: map[string]any{}})
		var msg string
		switch {
		case err != nil:
			msg = err.Error()
		case res.IsError:
			for _, content := range res.Content {
				if tc, ok := content.(*mcp.TextContent); ok {
					msg += tc.Text
				}
			}
		default:
			t.Errorf("%s succeeded: %+v", c.tool, res)
			continue
		}
		if !strings.Contains(msg, c.want) {
			t.Errorf("%s failed with %q, want it to say %q", c.tool, msg, c.want)
		}
		t.Logf("%s: %.300s", c.tool, msg)
		if res, text := callText(t, cs, "h_ok", map[string]any{}); res.IsError || text != "ok" {
			t.Errorf("h_ok after %s = %q (isError %v)", c.tool, text, res.IsError)
		}
		if res, text := callText(t, cs, "greet", map[string]any{"name": "Ada"}); res.IsError || text != "Hello, Ada!" {
			t.Errorf("greet after %s = %q (isError %v)", c.tool, text, res.IsError)
		}
	}
}

// TestTSHello serves plugins/ts-hello, TypeScript in two files, through a
// real client: structured output, an McpError refusing a request, and a
// thrown error naming the .ts file and line it was thrown at.
func TestTSHello(t *testing.T) {
	h, _ := newHost(t, fmt.Sprintf("[server]\nwatch = false\n[[plugin]]\nname = \"ts\"\npath = %s\n", strconv.Quote(committedWasm(t, "ts-hello"))))
	cs := connect(t, h, nil, "")
	res, _ := callText(t, cs, "count_words", map[string]any{"text": "the cat and the hat and the bat", "top": 2})
	sc, ok := res.StructuredContent.(map[string]any)
	if res.IsError || !ok || sc["words"] != 8.0 || sc["distinct"] != 5.0 || fmt.Sprint(sc["top"]) != "[map[count:3 word:the] map[count:2 word:and]]" {
		t.Errorf("count_words = %+v", res)
	}
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "count_words", Arguments: map[string]any{"text": strings.Repeat("x", 1_000_001)}}); err == nil ||
		!strings.Contains(err.Error(), "at most 1,000,000 characters") {
		t.Errorf("count_words of a text too long: %v, want the McpError", err)
	}
	if res, text := callText(t, cs, "divide", map[string]any{"a": 1, "b": 4}); res.IsError || text != "0.25" {
		t.Errorf("divide 1/4 = %q", text)
	}
	res, text := callText(t, cs, "divide", map[string]any{"a": 1, "b": 0})
	if !res.IsError || !strings.Contains(text, "RangeError: division by zero") || !strings.Contains(text, "(at src/words.ts:23:15)") {
		t.Errorf("divide by zero = %q (isError %v), want the RangeError where words.ts throws it (src/words.ts:23:15)", text, res.IsError)
	}
}
