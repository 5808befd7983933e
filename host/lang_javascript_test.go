package host_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
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
// client: a text result with the plugin's config, structured content, a
// thrown error as a tool error naming the JavaScript file and line, a
// resource, a template, a prompt and completions.
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

	ctx := t.Context()
	if r, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "hello://about"}); err != nil || len(r.Contents) != 1 ||
		r.Contents[0].Text != "hello://about: mcphost's example plugin in JavaScript" || r.Contents[0].MIMEType != "text/plain" {
		t.Errorf("read hello://about = %+v, %v", r, err)
	}
	if r, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "hello://greeting/fr"}); err != nil || len(r.Contents) != 1 || r.Contents[0].Text != "Bonjour" {
		t.Errorf("read hello://greeting/fr = %+v, %v", r, err)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "hello://greeting/xx"}); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("read hello://greeting/xx: %v, want resource not found", err)
	}
	p, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "introduce", Arguments: map[string]string{"name": "Ada", "lang": "de"}})
	if err != nil || len(p.Messages) != 1 {
		t.Fatalf("get introduce = %+v, %v", p, err)
	}
	if tc, ok := p.Messages[0].Content.(*mcp.TextContent); !ok || tc.Text != `Introduce Ada in one sentence, starting with "Hallo".` {
		t.Errorf("introduce = %+v", p.Messages[0].Content)
	}
	for _, ref := range []*mcp.CompleteReference{{Type: "ref/prompt", Name: "introduce"}, {Type: "ref/resource", URI: "hello://greeting/{lang}"}} {
		c, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: "lang", Value: "e"}})
		if err != nil || strings.Join(c.Completion.Values, ",") != "en,es" {
			t.Errorf("complete lang e of %s = %+v, %v; want en,es", ref.Name+ref.URI, c, err)
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
		{"h_recurse", "raise stack_kb"},
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

// resourcesJS registers a resource, a template with completions, a prompt
// with completions, and a resource and a prompt that fail.
const resourcesJS = `import { McpServer, McpError, ResourceTemplate } from "mcphost";
const s = new McpServer();
s.registerResource("readme", "docs://readme", { title: "Read me", mimeType: "text/markdown" },
  async (uri) => "# read me at " + uri.href);
s.registerResource("logo", "docs://logo", { mimeType: "image/png" }, () => new Uint8Array([137, 80, 78, 71]));
s.registerResource("note", new ResourceTemplate("note://{id}", {
  complete: { id: (value) => ["alpha", "beta", "gamma"].filter((v) => v.startsWith(value)) },
}), { description: "a note by id" }, (uri, { id }, ctx) => {
  if (id === "missing") throw new McpError(-32002, "resource not found", { uri: uri.href });
  return { contents: [{ text: "note " + id }] };
});
s.registerResource("broken", "docs://broken", () => { throw new Error("cannot read"); });
s.registerPrompt("review", {
  title: "Review",
  description: "Reviews code",
  argsSchema: { type: "object", properties: { code: { type: "string", description: "the code" }, lang: { type: "string" } }, required: ["code"] },
  complete: { lang: (value, { arguments: args }) => ["go", "js", "rust"].filter((l) => l.startsWith(value)).concat(args.code ? [] : ["none"]) },
}, ({ code, lang }) => ({ messages: [{ role: "user", content: { type: "text", text: "Review this " + (lang ?? "?") + ": " + code } }] }));
s.registerPrompt("hello", { arguments: [{ name: "who", required: true }] }, ({ who }) => "Say hello to " + who);
`

// TestJSResourcesPromptsCompletions: a JavaScript plugin's resources,
// templates, prompts and completions through a go-sdk client, and a plugin
// with tools only offering none of them.
func TestJSResourcesPromptsCompletions(t *testing.T) {
	h, _ := newHost(t, fmt.Sprintf(`
[server]
watch = false
[[plugin]]
name = "res"
path = %s
timeout = "10s"
[[plugin]]
name = "tools"
path = %s
timeout = "10s"
`, strconv.Quote(jsPlugin(t, resourcesJS)), strconv.Quote(jsPlugin(t, `import { McpServer } from "mcphost";
new McpServer().registerTool("only", { description: "a tool" }, () => "only");`))))
	cs := connect(t, h, nil, "")
	ctx := t.Context()

	list, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range list.Resources {
		uris = append(uris, r.URI+"|"+r.Name+"|"+r.Title+"|"+r.MIMEType)
	}
	if got, want := strings.Join(uris, ","), "docs://broken|broken||,docs://logo|logo||image/png,docs://readme|readme|Read me|text/markdown"; got != want {
		t.Errorf("resources = %s, want %s", got, want)
	}
	tmpls, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tmpls.ResourceTemplates) != 1 || tmpls.ResourceTemplates[0].URITemplate != "note://{id}" || tmpls.ResourceTemplates[0].Description != "a note by id" {
		t.Errorf("templates = %+v, want note://{id}", tmpls.ResourceTemplates)
	}

	read := func(uri string) (*mcp.ReadResourceResult, error) {
		return cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	}
	if res, err := read("docs://readme"); err != nil || len(res.Contents) != 1 || res.Contents[0].Text != "# read me at docs://readme" ||
		res.Contents[0].URI != "docs://readme" || res.Contents[0].MIMEType != "text/markdown" {
		t.Errorf("read docs://readme = %+v, %v", res, err)
	}
	if res, err := read("docs://logo"); err != nil || len(res.Contents) != 1 || string(res.Contents[0].Blob) != "\x89PNG" || res.Contents[0].MIMEType != "image/png" {
		t.Errorf("read docs://logo = %+v, %v", res, err)
	}
	if res, err := read("note://beta"); err != nil || len(res.Contents) != 1 || res.Contents[0].Text != "note beta" || res.Contents[0].URI != "note://beta" {
		t.Errorf("read note://beta = %+v, %v", res, err)
	}
	if _, err := read("note://missing"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("read note://missing: %v, want resource not found", err)
	}
	if _, err := read("docs://broken"); err == nil || !strings.Contains(err.Error(), "Error: cannot read") {
		t.Errorf("read docs://broken: %v, want the error thrown", err)
	}

	prompts, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range prompts.Prompts {
		var args []string
		for _, a := range p.Arguments {
			args = append(args, fmt.Sprintf("%s:%v:%s", a.Name, a.Required, a.Description))
		}
		names = append(names, p.Name+"("+strings.Join(args, ";")+")")
	}
	if got, want := strings.Join(names, ","), "hello(who:true:),review(code:true:the code;lang:false:)"; got != want {
		t.Errorf("prompts = %s, want %s", got, want)
	}
	pr, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "review", Arguments: map[string]string{"code": "x := 1", "lang": "go"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(pr.Messages) != 1 || pr.Description != "Reviews code" {
		t.Fatalf("get review = %+v", pr)
	}
	if tc, ok := pr.Messages[0].Content.(*mcp.TextContent); !ok || tc.Text != "Review this go: x := 1" || pr.Messages[0].Role != "user" {
		t.Errorf("get review message = %+v", pr.Messages[0])
	}
	pr, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "hello", Arguments: map[string]string{"who": "Ada"}})
	if err != nil || len(pr.Messages) != 1 {
		t.Fatalf("get hello = %+v, %v", pr, err)
	}
	if tc, ok := pr.Messages[0].Content.(*mcp.TextContent); !ok || tc.Text != "Say hello to Ada" {
		t.Errorf("get hello message = %+v", pr.Messages[0])
	}

	complete := func(ref *mcp.CompleteReference, arg, value string, args map[string]string) []string {
		t.Helper()
		p := &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: arg, Value: value}}
		if args != nil {
			p.Context = &mcp.CompleteContext{Arguments: args}
		}
		res, err := cs.Complete(ctx, p)
		if err != nil {
			t.Fatalf("complete %s %s: %v", ref.Name+ref.URI, arg, err)
		}
		return res.Completion.Values
	}
	if got := complete(&mcp.CompleteReference{Type: "ref/resource", URI: "note://{id}"}, "id", "b", nil); strings.Join(got, ",") != "beta" {
		t.Errorf("complete note id b = %v, want [beta]", got)
	}
	if got := complete(&mcp.CompleteReference{Type: "ref/prompt", Name: "review"}, "lang", "", map[string]string{"code": "x"}); strings.Join(got, ",") != "go,js,rust" {
		t.Errorf("complete review lang = %v, want [go js rust]", got)
	}
	if got := complete(&mcp.CompleteReference{Type: "ref/prompt", Name: "review"}, "lang", "r", nil); strings.Join(got, ",") != "rust,none" {
		t.Errorf("complete review lang r without code = %v, want [rust none]", got)
	}
	if got := complete(&mcp.CompleteReference{Type: "ref/prompt", Name: "hello"}, "who", "A", nil); len(got) != 0 {
		t.Errorf("complete hello who = %v, want none (no completer)", got)
	}

	// The tools-only plugin: its tool, and nothing else from it.
	if res, text := callText(t, cs, "only", map[string]any{}); res.IsError || text != "only" {
		t.Errorf("only = %q (isError %v)", text, res.IsError)
	}
}

// fetchJS fetches from the URL its tools are given.
const fetchJS = `import { McpServer } from "mcphost";
const s = new McpServer();
const args = { type: "object", properties: { url: { type: "string" } }, required: ["url"] };
s.registerTool("get", { inputSchema: args }, async ({ url }) => {
  const r = await fetch(url, { headers: { "X-Test": "js" } });
  const body = await r.json();
  return { status: r.status, ok: r.ok, type: r.headers.get("content-type"), body };
});
s.registerTool("post", { inputSchema: args }, async ({ url }) => {
  const r = await fetch(url, { method: "POST", headers: new Headers([["Content-Type", "text/plain"]]), body: "héllo" });
  return r.status + " " + (await r.text());
});
s.registerTool("caught", { inputSchema: args }, async ({ url }) => {
  try {
    await fetch(url);
    return "fetched";
  } catch (err) {
    return err.name + ": " + err.message;
  }
});
s.registerTool("uncaught", { inputSchema: args }, async ({ url }) => (await fetch(url)).text());
`

// TestJSFetch: fetch over the host's http_request, with the plugin's
// grants: a GET and a POST to a loopback server the plugin may reach, and
// requests the grants refuse rejecting with the host's reason.
func TestJSFetch(t *testing.T) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch r.Method {
		case http.MethodGet:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"path":%q,"test":%q}`, r.URL.Path, r.Header.Get("X-Test"))
		default:
			w.WriteHeader(http.StatusCreated)
			fmt.Fprintf(w, "%s %s %s", r.Method, r.Header.Get("Content-Type"), body)
		}
	}))
	t.Cleanup(api.Close)
	h, _ := newHost(t, fmt.Sprintf(`
[server]
watch = false
[[plugin]]
name = "fetch"
path = %[1]s
timeout = "10s"
allowed_hosts = ["127.0.0.1"]
allow_private_network = true
[[plugin]]
name = "nogrant"
path = %[1]s
prefix = "no_"
timeout = "10s"
allowed_hosts = ["127.0.0.1"]
`, strconv.Quote(jsPlugin(t, fetchJS))))
	cs := connect(t, h, nil, "")
	res, text := callText(t, cs, "get", map[string]any{"url": api.URL + "/x"})
	if want := `{"status":200,"ok":true,"type":"application/json","body":{"path":"/x","test":"js"}}`; res.IsError || text != want {
		t.Errorf("get = %s (isError %v), want %s", text, res.IsError, want)
	}
	if res, text := callText(t, cs, "post", map[string]any{"url": api.URL}); res.IsError || text != "201 POST text/plain héllo" {
		t.Errorf("post = %q (isError %v)", text, res.IsError)
	}
	// A host allowed_hosts does not grant, and a loopback address without
	// allow_private_network: the promise rejects with the host's reason.
	for _, c := range []struct{ tool, url, want string }{
		{"caught", "http://example.com/", "TypeError: fetch GET http://example.com/: "},
		{"no_caught", api.URL, "TypeError: fetch GET " + api.URL + ": "},
	} {
		res, text := callText(t, cs, c.tool, map[string]any{"url": c.url})
		if res.IsError || !strings.HasPrefix(text, c.want) || len(text) == len(c.want) {
			t.Errorf("%s %s = %q (isError %v), want %q and the reason", c.tool, c.url, text, res.IsError, c.want)
		}
		t.Logf("%s %s: %s", c.tool, c.url, text)
	}
	if res, text := callText(t, cs, "uncaught", map[string]any{"url": "http://example.com/"}); !res.IsError || !strings.Contains(text, "TypeError: fetch GET http://example.com/") {
		t.Errorf("uncaught = %q (isError %v), want a tool error naming the refused fetch", text, res.IsError)
	}
}

// askingJS asks the client from a tool, a prompt and a resource.
const askingJS = `import { McpServer } from "mcphost";
const s = new McpServer();
s.registerTool("survey", { description: "asks the user, then the model" }, async (args, ctx) => {
  const who = await ctx.elicit({ message: "Who are you?", requestedSchema: { type: "object", properties: { name: { type: "string" } } } });
  if (who.action !== "accept") return "declined";
  const [capital, roots] = await Promise.all([
    ctx.sample({ messages: [{ role: "user", content: { type: "text", text: "Capital of France?" } }], maxTokens: 10 }),
    ctx.listRoots(),
  ]);
  return who.content.name + " " + capital.content.text + " " + roots.roots.map((r) => r.uri).join(",");
});
s.registerPrompt("ask", { description: "asks the user" }, async (args, ctx) => {
  const a = await ctx.elicit({ message: "Topic?", requestedSchema: { type: "object", properties: { name: { type: "string" } } } });
  return "Write about " + a.content.name;
});
s.registerResource("asked", "ask://me", async (uri, ctx) => {
  const a = await ctx.elicit({ message: "Content?", requestedSchema: { type: "object", properties: { name: { type: "string" } } } });
  return "content " + a.content.name;
});
`

// TestJSAsksTheClient: ctx.elicit, ctx.sample and ctx.listRoots in a tool,
// a prompt and a resource, through multi-round-trip results (ABI.md §8),
// for a client the host asks and one that retries itself; questions asked
// together go in one round.
func TestJSAsksTheClient(t *testing.T) {
	h, _ := newHost(t, fmt.Sprintf(`
[server]
watch = false
[[plugin]]
name = "asking"
path = %s
timeout = "10s"
`, strconv.Quote(jsPlugin(t, askingJS))))
	for _, version := range versions {
		t.Run(version, func(t *testing.T) {
			var mu sync.Mutex
			var asked []string
			note := func(s string) {
				mu.Lock()
				asked = append(asked, s)
				mu.Unlock()
			}
			client := mcp.NewClient(&mcp.Implementation{Name: "js-asks", Version: "1"}, &mcp.ClientOptions{
				ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					note("elicit " + req.Params.Message)
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
				},
				CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
					note("sample")
					return &mcp.CreateMessageResult{Role: "assistant", Model: "test", Content: &mcp.TextContent{Text: "Paris"}}, nil
				},
			})
			client.AddRoots(&mcp.Root{URI: "file:///home/ada"})
			serverT, clientT := mcp.NewInMemoryTransports()
			ss, err := h.Server().Connect(t.Context(), serverT, nil)
			if err != nil {
				t.Fatal(err)
			}
			cs, err := client.Connect(t.Context(), clientT, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cs.Close(); ss.Wait() })

			if res, text := callText(t, cs, "survey", map[string]any{}); res.IsError || text != "Ada Paris file:///home/ada" {
				t.Errorf("survey = %q (isError %v), want \"Ada Paris file:///home/ada\"", text, res.IsError)
			}
			mu.Lock()
			if got := strings.Join(asked, ";"); got != "elicit Who are you?;sample" {
				t.Errorf("the client was asked %q, want the elicitation once, then the sampling once", got)
			}
			asked = nil
			mu.Unlock()
			p, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "ask"})
			if err != nil || len(p.Messages) != 1 {
				t.Fatalf("get ask = %+v, %v", p, err)
			}
			if tc, ok := p.Messages[0].Content.(*mcp.TextContent); !ok || tc.Text != "Write about Ada" {
				t.Errorf("ask = %+v", p.Messages[0].Content)
			}
			r, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "ask://me"})
			if err != nil || len(r.Contents) != 1 || r.Contents[0].Text != "content Ada" {
				t.Errorf("read ask://me = %+v, %v", r, err)
			}

			// A client that declared none of it: the tool call ends as a
			// tool error saying so.
			bare := connect(t, h, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}, version)
			res, err := bare.CallTool(t.Context(), &mcp.CallToolParams{Name: "survey", Arguments: map[string]any{}})
			if err == nil && !res.IsError {
				t.Errorf("survey for a client without elicitation succeeded: %+v", res)
			}
			if err == nil {
				if tc, ok := res.Content[0].(*mcp.TextContent); !ok || !strings.Contains(tc.Text, "elicitation") {
					t.Errorf("survey for a client without elicitation: %+v, want a tool error naming elicitation", res.Content[0])
				} else {
					t.Logf("survey without elicitation: %s", tc.Text)
				}
			}
		})
	}
}

// TestJSRecursionDepthFollowsStackKB: how deep a JavaScript recursion goes
// is set by stack_kb, as docs/typescript.md says: 50 calls fit the
// default, 1,000 do not and fail naming stack_kb, and 1,000 fit
// stack_kb = 131072.
func TestJSRecursionDepthFollowsStackKB(t *testing.T) {
	path := strconv.Quote(jsPlugin(t, `import { McpServer } from "mcphost";
const s = new McpServer();
s.registerTool("depth", { inputSchema: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] } }, ({ n }) => {
  function deeper(k) { return k === 0 ? 0 : deeper(k - 1) + 1; }
  return String(deeper(n));
});
`))
	h, _ := newHost(t, fmt.Sprintf(`
[server]
watch = false
[[plugin]]
name = "shallow"
path = %s
prefix = "shallow_"
[[plugin]]
name = "deep"
path = %s
prefix = "deep_"
stack_kb = 131072
`, path, path))
	cs := connect(t, h, nil, "")
	for _, c := range []struct {
		tool string
		n    int
		want string // the text, or in the error
	}{
		{"shallow_depth", 50, "50"},
		{"shallow_depth", 1000, "raise stack_kb"},
		{"deep_depth", 1000, "1000"},
	} {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: c.tool, Arguments: map[string]any{"n": c.n}})
		var got string
		if err != nil {
			got = err.Error()
		} else if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			got = tc.Text
		}
		if !strings.Contains(got, c.want) {
			t.Errorf("%s %d = %q, want %q in it", c.tool, c.n, got, c.want)
		}
	}
}
