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
	"time"

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
		msg, failed := failureText(res, err)
		if !failed {
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

// evalJS evaluates the JavaScript expression of its argument (awaited)
// and returns the result's JSON; a thrown error is a tool error.
const evalJS = `import { McpServer } from "mcphost";
const s = new McpServer();
s.registerTool("eval", { inputSchema: { type: "object", properties: { expr: { type: "string" } }, required: ["expr"] } },
  async ({ expr }) => JSON.stringify(await (new Function("return (async () => (" + expr + "))()"))()));
`

// TestJSGlobals: the web platform's globals a TypeScript server expects
// (web.js: timers, TextEncoder/TextDecoder, URL/URLSearchParams, crypto,
// structuredClone, AbortController/AbortSignal, Event/EventTarget) behave
// as in browsers and Node, evaluated in a plugin through a real client;
// Node's own (process, require) are not there. Two instances draw
// different random bytes.
func TestJSGlobals(t *testing.T) {
	path := strconv.Quote(jsPlugin(t, evalJS))
	h, _ := newHost(t, fmt.Sprintf(`
[server]
watch = false
[[plugin]]
name = "g"
path = %[1]s
timeout = "10s"
[[plugin]]
name = "g2"
path = %[1]s
prefix = "g2_"
timeout = "10s"
`, path))
	cs := connect(t, h, nil, "")
	for _, c := range []struct{ expr, want string }{
		// Timers: order by due time, then by when they were set; a
		// callback's microtasks run before the next timer; clearTimeout,
		// setInterval, arguments, Node's Timeout converting to its id.
		{`await new Promise((r) => { const o = []; setTimeout(() => o.push(2), 20); setTimeout(() => o.push(1), 10); setTimeout(() => { o.push(3); r(o); }, 30); })`, `[1,2,3]`},
		{`await new Promise((r) => { const o = []; setTimeout(() => { o.push("a"); queueMicrotask(() => o.push("m")); }, 0); setTimeout(() => { o.push("b"); r(o); }, 0); })`, `["a","m","b"]`},
		{`await new Promise((r) => { const o = []; const t = setTimeout(() => o.push("no"), 5); clearTimeout(t); const u = setTimeout(() => o.push("no"), 5); clearTimeout(+u); setTimeout(() => r(o), 10); })`, `[]`},
		{`await new Promise((r) => { let n = 0; const i = setInterval(() => { if (++n === 3) { clearInterval(i); r(n); } }, 1); })`, `3`},
		{`await new Promise((r) => setTimeout((a, b) => r(a + b), 0, 2, 3))`, `5`},
		{`[typeof +setTimeout(() => {}), typeof setTimeout(() => {}).unref().refresh]`, `["number","function"]`},
		{`await (async () => { const t0 = performance.now(); await new Promise((r) => setTimeout(r, 50)); return performance.now() - t0 >= 50; })()`, `true`},
		{`(() => { try { setTimeout("code", 1); } catch (e) { return e.name; } })()`, `"TypeError"`},

		// TextEncoder, TextDecoder (UTF-8: BOM, invalid sequences, fatal,
		// streaming), encodeInto.
		{`Array.from(new TextEncoder().encode("hé€😀"))`, `[104,195,169,226,130,172,240,159,152,128]`},
		{`Array.from(new TextEncoder().encode("\uD800"))`, `[239,191,189]`},
		{`new TextDecoder().decode(new Uint8Array([0xEF, 0xBB, 0xBF, 104, 105]))`, `"hi"`},
		{`new TextDecoder("utf-8", { ignoreBOM: true }).decode(new Uint8Array([0xEF, 0xBB, 0xBF, 104])).length`, `2`},
		{`new TextDecoder().decode(new Uint8Array([0x61, 0xF0, 0x9F, 0x98, 0x62, 0xFF, 0xED, 0xA0, 0x80]).buffer)`, "\"a\ufffdb\ufffd\ufffd\ufffd\ufffd\""},
		{`(() => { try { new TextDecoder("utf8", { fatal: true }).decode(new Uint8Array([0xC3])); } catch (e) { return e.name; } })()`, `"TypeError"`},
		{`(() => { const d = new TextDecoder(); return d.decode(new Uint8Array([0xE2, 0x82]), { stream: true }) + d.decode(new Uint8Array([0xAC])); })()`, `"€"`},
		{`new TextEncoder().encodeInto("a€b", new Uint8Array(3))`, `{"read":1,"written":1}`},
		{`(() => { try { new TextDecoder("latin1"); } catch (e) { return e.name; } })()`, `"RangeError"`},

		// URL: parsing with a base, lower-cased hosts, default ports
		// elided, dot segments, percent-encoding, IPv4 and IPv6, opaque
		// paths, file URLs, Punycode, setters, canParse.
		{`new URL("HTTP://User:Pa ss@EXAMPLE.com:80/a/./b/../c?x=1 2#f g").href`, `"http://User:Pa%20ss@example.com/a/c?x=1%202#f%20g"`},
		{`new URL("../d?q", "https://h.example/a/b/c").href`, `"https://h.example/a/d?q"`},
		{`new URL("//other.example/x", "https://h.example/a").href`, `"https://other.example/x"`},
		{`(u => [u.origin, u.protocol, u.port, u.host, u.hostname, u.pathname, u.search, u.hash])(new URL("https://example.com:8443/p?q=1#h"))`, `["https://example.com:8443","https:","8443","example.com:8443","example.com","/p","?q=1","#h"]`},
		{`new URL("http://[2001:DB8:0:0:0:0:0:1]:8080/").host`, `"[2001:db8::1]:8080"`},
		{`new URL("http://[::ffff:192.168.0.1]/").hostname`, `"[::ffff:c0a8:1]"`},
		{`new URL("http://0x7f.1/").hostname`, `"127.0.0.1"`},
		{`(u => [u.protocol, u.pathname, u.origin, u.host])(new URL("mailto:Ada@Example.com"))`, `["mailto:","Ada@Example.com","null",""]`},
		{`new URL("foo://Host/a/../b").href`, `"foo://Host/b"`},
		{`new URL("file:///C:/a/../b").href`, `"file:///C:/b"`},
		{`new URL("ws://e.com:80/x").href + " " + new URL("wss://e.com:443").href`, `"ws://e.com/x wss://e.com/"`},
		{`new URL("http://Bücher.example/").hostname`, `"xn--bcher-kva.example"`},
		{`[URL.canParse("nope"), URL.canParse("/x", "http://a"), URL.canParse("http://exa mple.com"), URL.canParse("http://[::1")]`, `[false,true,false,false]`},
		{`(() => { try { new URL("http://"); } catch (e) { return e.name; } })()`, `"TypeError"`},
		{`(u => { u.pathname = "/a b"; u.search = "?k=v"; u.hash = "x"; u.port = "80"; u.hostname = "Other.example"; return u.href; })(new URL("http://example.com:81/"))`, `"http://other.example/a%20b?k=v#x"`},
		{`(u => { u.protocol = "https"; u.host = "h.example:443"; u.username = "me"; return u.href; })(new URL("http://e.com/"))`, `"https://me@h.example/"`},
		{`(u => { u.searchParams.append("b", "2 3"); u.searchParams.set("a", "x&y"); return u.href; })(new URL("http://e.com/?a=1"))`, `"http://e.com/?a=x%26y&b=2+3"`},
		{`(u => { const p = u.searchParams; u.search = "?z=9"; return [p.get("z"), p.get("a"), u.search]; })(new URL("http://e.com/?a=1"))`, `["9",null,"?z=9"]`},
		{`JSON.stringify({ u: new URL("http://e.com") })`, `"{\"u\":\"http://e.com/\"}"`},

		// URLSearchParams.
		{`new URLSearchParams("?a=1&b=2+3&a=%C3%A9").getAll("a")`, `["1","é"]`},
		{`new URLSearchParams({ x: "1", y: "two words&more" }).toString()`, `"x=1&y=two+words%26more"`},
		{`(p => { p.sort(); p.delete("c"); return [...p]; })(new URLSearchParams([["c", "3"], ["b", "2"], ["a", "1"]]))`, `[["a","1"],["b","2"]]`},
		{`(p => [p.has("a"), p.has("z"), p.size, [...p.keys()], [...p.values()], p.get("z")])(new URLSearchParams("a=1&b=2"))`, `[true,false,2,["a","b"],["1","2"],null]`},
		{`(() => { const o = []; new URLSearchParams("a=1&b=2").forEach((v, k) => o.push(k + v)); return o; })()`, `["a1","b2"]`},
		{`(p => { p.set("a", "9"); return p.toString(); })(new URLSearchParams("a=1&b=2&a=3"))`, `"a=9&b=2"`},

		// crypto.
		{`crypto.getRandomValues(new Uint8Array(32)).some((x) => x !== 0)`, `true`},
		{`/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(crypto.randomUUID())`, `true`},
		{`(() => { try { crypto.getRandomValues(new Float64Array(2)); } catch (e) { return e.name; } })()`, `"TypeMismatchError"`},
		{`(() => { try { crypto.getRandomValues(new Uint8Array(65537)); } catch (e) { return e.name; } })()`, `"QuotaExceededError"`},
		{`typeof crypto.subtle`, `"undefined"`},

		// structuredClone.
		{`(() => { const o = { d: new Date(0), m: new Map([[1, { x: 1 }]]), s: new Set([1, 2]), r: /a/gi, b: new Uint8Array([1, 2]), arr: [1, [2]], e: new RangeError("r") }; o.self = o; const c = structuredClone(o); return [c !== o, c.self === c, c.d.getTime(), c.m.get(1).x, [...c.s], c.r.flags, Array.from(c.b), c.arr[1][0], c.m.get(1) !== o.m.get(1), c.e instanceof RangeError, c.e.message]; })()`, `[true,true,0,1,[1,2],"gi",[1,2],2,true,true,"r"]`},
		{`(() => { const buf = new ArrayBuffer(4); const c = structuredClone([new Uint8Array(buf), new Uint16Array(buf, 2)]); c[0][2] = 7; return [c[0].buffer === c[1].buffer, c[1][0]]; })()`, `[true,7]`},
		{`(() => { try { structuredClone({ f() {} }); } catch (e) { return e.name; } })()`, `"DataCloneError"`},
		{`(() => { try { structuredClone(Symbol("s")); } catch (e) { return e.name; } })()`, `"DataCloneError"`},

		// AbortController, AbortSignal (on the timers), EventTarget; fetch
		// with a signal aborted already rejects before the request.
		{`(() => { const c = new AbortController(); const o = []; c.signal.onabort = () => o.push("on"); c.signal.addEventListener("abort", (e) => o.push(e.type)); c.abort("why"); c.abort("again"); return [c.signal.aborted, c.signal.reason, o]; })()`, `[true,"why",["on","abort"]]`},
		{`(() => { const c = new AbortController(); c.abort(); try { c.signal.throwIfAborted(); } catch (e) { return [e.name, e instanceof DOMException]; } })()`, `["AbortError",true]`},
		{`[AbortSignal.abort().aborted, new AbortController().signal.aborted, AbortSignal.any([AbortSignal.abort(1)]).reason]`, `[true,false,1]`},
		{`await new Promise((r) => { const s = AbortSignal.timeout(10); s.addEventListener("abort", () => r([s.aborted, s.reason.name])); })`, `[true,"TimeoutError"]`},
		{`await fetch("http://example.com/", { signal: AbortSignal.abort() }).then(() => "fetched", (e) => e.name)`, `"AbortError"`},
		{`(() => { const t = new EventTarget(); let n = 0; t.addEventListener("x", () => n++, { once: true }); t.dispatchEvent(new Event("x")); t.dispatchEvent(new Event("x")); return n; })()`, `1`},

		// What exists beside them, and what does not.
		{`[typeof queueMicrotask, typeof atob, typeof performance.now, typeof DOMException, typeof fetch]`, `["function","function","function","function","function"]`},
		{`[typeof process, typeof require, typeof setImmediate, typeof Buffer]`, `["undefined","undefined","undefined","undefined"]`},
	} {
		res, text := callText(t, cs, "eval", map[string]any{"expr": c.expr})
		if res.IsError || text != c.want {
			t.Errorf("%s\n = %s (isError %v)\nwant %s", c.expr, text, res.IsError, c.want)
		}
	}

	// Two instances (two plugins on the same module) draw different random
	// bytes: the sandbox's random_get is the host's crypto/rand.
	uuid := `crypto.randomUUID()`
	_, a := callText(t, cs, "eval", map[string]any{"expr": uuid})
	_, b := callText(t, cs, "g2_eval", map[string]any{"expr": uuid})
	if a == b || len(a) != 38 {
		t.Errorf("randomUUID in two instances = %s and %s, want two different UUIDs", a, b)
	}
}

// timersJS uses timers well and badly.
const timersJS = `import { McpServer } from "mcphost";
const s = new McpServer();
const ms = { type: "object", properties: { ms: { type: "number" } }, required: ["ms"] };
s.registerTool("ok", { description: "behaves" }, () => "ok");
s.registerTool("sleep", { inputSchema: ms }, async ({ ms }) => {
  await new Promise((r) => setTimeout(r, ms));
  return "slept";
});
s.registerTool("interval", { description: "ticks until the deadline" }, () => new Promise(() => setInterval(() => {}, 5)));
s.registerTool("storm", { description: "1,000 intervals of 1 ms until the deadline" }, () => new Promise(() => {
  for (let i = 0; i < 1000; i++) setInterval(() => {}, 1);
}));
const n = { type: "object", properties: { n: { type: "integer" } }, required: ["n"] };
s.registerTool("many", { inputSchema: n }, ({ n }) => new Promise((resolve, reject) => {
  // n timers of 0 to 19 ms: those of one delay must fire in the order set.
  const last = new Array(20).fill(-1);
  let fired = 0;
  for (let i = 0; i < n; i++) {
    setTimeout(() => {
      if (last[i % 20] > i) reject(new Error("timer " + last[i % 20] + " fired before " + i));
      last[i % 20] = i;
      if (++fired === n) resolve(n);
    }, i % 20);
  }
}));
s.registerTool("throws", { description: "a timer's callback throws" }, () => new Promise(() => {
  setTimeout(() => { throw new Error("boom in a timer"); }, 1);
}));
s.registerTool("leave", { description: "returns with a timer set" }, () => {
  setTimeout(() => { globalThis.leaked = true; }, 0);
  setInterval(() => { globalThis.leaked = true; }, 1);
  return "left";
});
s.registerTool("leaked", { description: "did a timer of an earlier call fire?" }, async () => {
  await new Promise((r) => setTimeout(r, 20));
  return String(globalThis.leaked);
});
`

// TestJSTimersDeadlineAndHostile: a timer's wait is real (a 50 ms sleep
// takes at least 50 ms, through the glue's WASI sleep on the host's
// clock) and bounded by the call's deadline (a 60 s sleep under a 1 s
// timeout fails with the deadline); intervals until the deadline, 1,000
// of them, 100,000 timers and a throwing callback (a tool error naming
// its place) end cleanly, and the next call is unaffected; 10,000 timers
// fire in order; timers left when a call ends never fire.
func TestJSTimersDeadlineAndHostile(t *testing.T) {
	h, _ := newHost(t, fmt.Sprintf(`
[server]
watch = false
[[plugin]]
name = "timers"
path = %[1]s
timeout = "1s"
max_instances = 1
breaker_failures = 100
[[plugin]]
name = "long"
path = %[1]s
prefix = "long_"
timeout = "60s"
`, strconv.Quote(jsPlugin(t, timersJS))))
	cs := connect(t, h, nil, "")
	start := time.Now()
	if res, text := callText(t, cs, "sleep", map[string]any{"ms": 50}); res.IsError || text != "slept" {
		t.Errorf("sleep 50 = %q (isError %v)", text, res.IsError)
	}
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Errorf("sleep 50 took %v, want at least 50 ms", d)
	}
	for _, c := range []struct{ tool, want string }{
		{"sleep", "timeout"},
		{"interval", "timeout"},
		{"storm", "timeout"},
		{"throws", "Error: boom in a timer (at plugin.js:"},
	} {
		args := map[string]any{}
		if c.tool == "sleep" {
			args["ms"] = 60_000
		}
		start := time.Now()
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: c.tool, Arguments: args})
		msg, failed := failureText(res, err)
		if !failed {
			t.Errorf("%s succeeded: %+v", c.tool, res)
			continue
		}
		if !strings.Contains(msg, c.want) {
			t.Errorf("%s failed with %q, want it to say %q", c.tool, msg, c.want)
		}
		t.Logf("%s (%v): %.200s", c.tool, time.Since(start).Round(time.Millisecond), msg)
		if res, text := callText(t, cs, "ok", map[string]any{}); res.IsError || text != "ok" {
			t.Errorf("ok after %s = %q (isError %v)", c.tool, text, res.IsError)
		}
	}
	if res, text := callText(t, cs, "long_many", map[string]any{"n": 10_000}); res.IsError || text != "10000" {
		t.Errorf("long_many 10,000 = %.200q (isError %v), want 10000", text, res.IsError)
	}
	// 100,000 timers under a 1 s timeout: all fired, or the call stopped
	// at its deadline (how far it gets depends on the machine); either way
	// the next call is served.
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "many", Arguments: map[string]any{"n": 100_000}})
	switch {
	case err != nil && strings.Contains(err.Error(), "timeout"):
		t.Logf("many 100,000: %v", err)
	case err != nil:
		t.Errorf("many 100,000: %v, want 100000 or the timeout", err)
	default:
		if tc, ok := res.Content[0].(*mcp.TextContent); res.IsError || !ok || tc.Text != "100000" {
			t.Errorf("many 100,000 = %+v, want 100000 or the timeout", res.Content)
		}
	}
	if res, text := callText(t, cs, "ok", map[string]any{}); res.IsError || text != "ok" {
		t.Errorf("ok after 100,000 timers = %q (isError %v)", text, res.IsError)
	}
	if res, text := callText(t, cs, "leave", map[string]any{}); res.IsError || text != "left" {
		t.Errorf("leave = %q (isError %v)", text, res.IsError)
	}
	if res, text := callText(t, cs, "leaked", map[string]any{}); res.IsError || text != "undefined" {
		t.Errorf("leaked = %q (isError %v), want undefined: the timers of an ended call must not fire", text, res.IsError)
	}
}

// failureText is how a call failed: the JSON-RPC error's message, or the
// text of a tool error; failed is false for a call that succeeded.
func failureText(res *mcp.CallToolResult, err error) (msg string, failed bool) {
	if err != nil {
		return err.Error(), true
	}
	if !res.IsError {
		return "", false
	}
	for _, content := range res.Content {
		if tc, ok := content.(*mcp.TextContent); ok {
			msg += tc.Text
		}
	}
	return msg, true
}
