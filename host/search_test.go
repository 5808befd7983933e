package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/testutil"
)

// connectTo connects a go-sdk client speaking version to server in memory.
func connectTo(t *testing.T, server *mcp.Server, version string) *mcp.ClientSession {
	t.Helper()
	serverT, clientT := mcp.NewInMemoryTransports()
	ss, err := server.Connect(t.Context(), serverT, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "search-test", Version: "1"}, nil).
		Connect(t.Context(), clientT, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
}

// searchResult is search_tools' structuredContent.
type searchResult struct {
	Tools []struct {
		Name         string          `json:"name"`
		Title        string          `json:"title"`
		Description  string          `json:"description"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
		Annotations  map[string]any  `json:"annotations"`
	} `json:"tools"`
}

// search calls search_tools and returns what it found, by name; it fails
// the test on an error or a text that says something else than the
// structuredContent.
func search(t *testing.T, cs *mcp.ClientSession, args map[string]any) (searchResult, []string) {
	t.Helper()
	res, text := callText(t, cs, "search_tools", args)
	if res.IsError {
		t.Fatalf("search_tools %v: %s", args, text)
	}
	structured, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var found, fromText searchResult
	if err := json.Unmarshal(structured, &found); err != nil {
		t.Fatalf("structuredContent %s: %v", structured, err)
	}
	if err := json.Unmarshal([]byte(text), &fromText); err != nil || len(fromText.Tools) != len(found.Tools) {
		t.Fatalf("text %q is not the structuredContent %s (%v)", text, structured, err)
	}
	var names []string
	for _, tool := range found.Tools {
		names = append(names, tool.Name)
	}
	return found, names
}

// callThrough calls name with args through call_tool.
func callThrough(t *testing.T, cs *mcp.ClientSession, name string, args any) (*mcp.CallToolResult, string, error) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "call_tool", Arguments: map[string]any{"name": name, "arguments": args}})
	if err != nil {
		return nil, "", err
	}
	var texts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	return res, strings.Join(texts, "\n"), nil
}

// searchVerbs and searchNouns make the generated tools' names and
// descriptions: 10 verbs a plugin, one noun a plugin.
var (
	searchVerbs = []string{"get", "list", "create", "update", "delete", "search", "send", "read", "archive", "sync"}
	searchNouns = []string{"issue", "file", "email", "calendar_event", "repository", "ticket", "invoice", "user", "channel", "document"}
)

// hundredPluginsSearchConfig serves plugins/hello and 99 generated WAT
// plugins of 10 tools each (svc00_get_issue … svc98_sync_document: tiny
// modules, quick to compile under -race, which 100 Go plugins are not),
// 994 tools from 100 plugins, with an audit log and the search profile
// "all" over every tool.
func hundredPluginsSearchConfig(t *testing.T, auditFile string) string {
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "[server]\nwatch = false\ncache_dir = %q\n[server.audit]\nfile = %q\n", testutil.CompilationCacheDir(t), auditFile)
	fmt.Fprintf(&cfg, "[[plugin]]\nname = \"hello\"\npath = %q\n", testutil.GoPlugin(t, "plugins/hello"))
	for i := range 99 {
		noun := searchNouns[i%len(searchNouns)]
		var tools []string
		for _, verb := range searchVerbs {
			tools = append(tools, fmt.Sprintf(`{"name":"%s_%s","title":"%s %s","description":"%s a %s of service %d.","inputSchema":{"type":"object","properties":{"id":{"type":"string","description":"The %s's id."}}},"annotations":{"readOnlyHint":%t}}`,
				verb, noun, verb, strings.ReplaceAll(noun, "_", " "), verb, strings.ReplaceAll(noun, "_", " "), i, noun, verb == "get" || verb == "list"))
		}
		p := testutil.WATPlugin{Tools: `{"tools":[` + strings.Join(tools, ",") + `]}`}
		fmt.Fprintf(&cfg, "[[plugin]]\nname = \"svc%02d\"\npath = %q\nprefix = \"svc%02d_\"\n", i, p.Build(t), i)
	}
	cfg.WriteString("[[profile]]\nname = \"all\"\ntools = [\"*\"]\nsearch = true\n")
	return cfg.String()
}

// TestSearchProfileFindsAndCallsAmongAThousandTools (issue 31): a search
// profile over ~1,000 tools of 100 plugins lists two tools; search_tools
// ranks them and returns whole definitions; call_tool calls one as a
// direct call would, with the same schema check and the same errors, and
// the audit log names the tool called and the profile.
func TestSearchProfileFindsAndCallsAmongAThousandTools(t *testing.T) {
	auditFile := filepath.Join(t.TempDir(), "audit.jsonl")
	h, _ := newHost(t, hundredPluginsSearchConfig(t, auditFile))
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			cs := connectTo(t, h.ProfileServer("all"), version)
			direct := connectTo(t, h.Server(), version)
			if got := profileTools(t, cs); !slices.Equal(got, []string{"call_tool", "search_tools"}) {
				t.Fatalf("tools of a search profile = %v, want call_tool and search_tools", got)
			}

			found, names := search(t, cs, map[string]any{"query": "create calendar event svc43", "limit": 5})
			if len(names) != 5 || names[0] != "svc43_create_calendar_event" {
				t.Fatalf("search create calendar event svc43 = %v, want svc43_create_calendar_event first of 5", names)
			}
			first := found.Tools[0]
			if first.Title != "create calendar event" || first.Description != "create a calendar event of service 43." ||
				!strings.Contains(string(first.InputSchema), `"id"`) || first.Annotations["readOnlyHint"] != false {
				t.Errorf("svc43_create_calendar_event's definition is not whole: %+v", first)
			}
			if _, names := search(t, cs, map[string]any{"query": "invoices"}); len(names) != 10 {
				t.Errorf("default limit: %d tools, want 10", len(names))
			}
			if _, names := search(t, cs, map[string]any{"query": "echo text", "limit": 1}); !slices.Equal(names, []string{"echo"}) {
				t.Errorf("search echo text = %v, want [echo]", names)
			}
			if _, names := search(t, cs, map[string]any{"query": "zebra"}); len(names) != 0 {
				t.Errorf("search zebra = %v, want nothing", names)
			}
			for _, bad := range []struct {
				args map[string]any
				want string
			}{
				{map[string]any{"query": "tool", "limit": 51}, `tool "search_tools": invalid arguments:`},
				{map[string]any{"query": ""}, `tool "search_tools": invalid arguments:`},
				{map[string]any{}, `tool "search_tools": invalid arguments: missing required arguments: ["query"]`},
			} {
				if res, text := callText(t, cs, "search_tools", bad.args); !res.IsError || !strings.Contains(text, bad.want) {
					t.Errorf("search_tools %v = %q, want an error with %q", bad.args, text, bad.want)
				}
			}

			// call_tool is the direct call: result, schema check, errors.
			if res, text, err := callThrough(t, cs, "echo", map[string]any{"text": "hi"}); err != nil || res.IsError || text != "hi" {
				t.Errorf("call_tool echo = %q, %v", text, err)
			}
			if res, text, err := callThrough(t, cs, "svc07_get_user", map[string]any{"id": "u1"}); err != nil || res.IsError {
				t.Errorf("call_tool svc07_get_user = %q, %v", text, err)
			}
			bad := map[string]any{"text": "hi", "loud": true}
			_, want := callText(t, direct, "echo", bad)
			if res, text, err := callThrough(t, cs, "echo", bad); err != nil || !res.IsError || text != want || !strings.Contains(text, "invalid arguments") {
				t.Errorf("call_tool with bad arguments = %q, %v; the direct call says %q", text, err, want)
			}
			_, directErr := direct.CallTool(t.Context(), &mcp.CallToolParams{Name: "nope", Arguments: map[string]any{}})
			for _, name := range []string{"nope", "call_tool", "search_tools"} {
				_, _, err := callThrough(t, cs, name, map[string]any{})
				if err == nil || directErr == nil || !strings.Contains(err.Error(), fmt.Sprintf("unknown tool %q", name)) {
					t.Errorf("call_tool %s: %v, want unknown tool (a direct call of nope: %v)", name, err, directErr)
				}
			}
			for args, want := range map[string]string{
				`{}`:                    `tool "call_tool": invalid arguments: missing required arguments: ["name"]`,
				`{"name":"echo","x":1}`: `unexpected argument "x"`,
				`{"name":7}`:            `argument "name" must be a tool's name`,
			} {
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "call_tool", Arguments: json.RawMessage(args)})
				if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, want) {
					t.Errorf("call_tool %s = %+v, %v; want an error with %q", args, res, err, want)
				}
			}
		})
	}

	// The audit log names the tool called, its plugin and the profile.
	data, err := os.ReadFile(auditFile)
	if err != nil {
		t.Fatal(err)
	}
	var sawCall bool
	for line := range strings.Lines(string(data)) {
		var e map[string]any
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		if e["name"] == "echo" && e["profile"] == "all" && e["plugin"] == "hello" && e["outcome"] == "ok" {
			sawCall = true
		}
		if e["name"] == "call_tool" && e["outcome"] == "ok" {
			t.Errorf("audit line names call_tool for a call it made: %s", line)
		}
	}
	if !sawCall {
		t.Errorf("no audit line names echo in profile all:\n%s", data)
	}
	if infos := h.Profiles(); len(infos) != 1 || !infos[0].Search || len(infos[0].Tools) != 994 {
		t.Errorf("Profiles() = %d profiles, search %v, %d tools", len(infos), len(infos) > 0 && infos[0].Search, len(infos[0].Tools))
	}
}

// TestSearchProfileScopes (issue 31): a tool the token's scopes do not
// reach is not found by search_tools, and call_tool is refused before
// go-sdk (HTTP 403 insufficient_scope, audited as denied) as the direct
// call is; with the scope, both work.
func TestSearchProfileScopes(t *testing.T) {
	f := newAuthFixture(t, `
[[profile]]
name = "s"
plugins = ["hello"]
search = true
`)
	connect := func(t *testing.T, path, scope string) *mcp.ClientSession {
		t.Helper()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "search-auth", Version: "1"}, nil).Connect(t.Context(), &mcp.StreamableClientTransport{
			Endpoint:   f.endpoint + path,
			HTTPClient: &http.Client{Transport: bearer{f.token(t, f.endpoint, scope, time.Hour), http.DefaultTransport}},
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	cs := connect(t, "/s", "mcp")
	if _, names := search(t, cs, map[string]any{"query": "add numbers sum"}); slices.Contains(names, "add") {
		t.Errorf("search without scope math found add: %v", names)
	}
	if _, names := search(t, cs, map[string]any{"query": "echo text"}); !slices.Contains(names, "echo") {
		t.Errorf("search found no echo: %v", names)
	}
	_, _, throughErr := callThrough(t, cs, "add", map[string]any{"a": 1, "b": 2})
	_, directErr := connect(t, "", "mcp").CallTool(t.Context(), &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 1, "b": 2}})
	if throughErr == nil || directErr == nil || throughErr.Error() != directErr.Error() || !strings.Contains(throughErr.Error(), "Forbidden") {
		t.Errorf("add without scope math through call_tool: %v; direct: %v; want the same 403", throughErr, directErr)
	}

	cs = connect(t, "/s", "mcp math")
	if _, names := search(t, cs, map[string]any{"query": "add"}); len(names) == 0 || names[0] != "add" {
		t.Errorf("search add with scope math = %v", names)
	}
	if res, text, err := callThrough(t, cs, "add", map[string]any{"a": 1, "b": 2}); err != nil || res.IsError || !strings.Contains(text, "3") {
		t.Errorf("add through call_tool with scope math = %q, %v", text, err)
	}

	data, err := os.ReadFile(f.auditFile)
	if err != nil {
		t.Fatal(err)
	}
	var denied bool
	for line := range strings.Lines(string(data)) {
		if strings.Contains(line, `"name":"add"`) && strings.Contains(line, `"outcome":"denied"`) && strings.Contains(line, `"profile":"s"`) {
			denied = true
		}
	}
	if !denied {
		t.Errorf("no denied audit line for add through profile s:\n%s", data)
	}
}

// TestSearchProfileHoldsAChangedTool (issue 31): under on_change =
// "refuse" a tool whose definition changed is held out of the search
// profile too: search does not find it, call_tool does not call it.
func TestSearchProfileHoldsAChangedTool(t *testing.T) {
	f := newReloadFixture(t, false)
	f.writeConfig(t, fmt.Sprintf(versionedConfig, false)+"on_change = \"refuse\"\n[[profile]]\nname = \"s\"\nplugins = [\"versioned\"]\nsearch = true\n")
	if err := f.host.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	cs := connectTo(t, f.host.ProfileServer("s"), "2025-11-25")
	if _, names := search(t, cs, map[string]any{"query": "version"}); !slices.Equal(names, []string{"version"}) {
		t.Fatalf("search version before the update = %v", names)
	}
	if res, _, err := callThrough(t, cs, "version", map[string]any{}); err != nil || res.IsError {
		t.Fatalf("version through call_tool before the update: %v", err)
	}

	copyFile(t, testutil.GoPlugin(t, "testdata/plugins/versioned", "v2"), filepath.Join(f.dir, "versioned.wasm"))
	if err := f.host.Reload(context.Background()); err == nil || !strings.Contains(err.Error(), "tool version") {
		t.Fatalf("reload with a changed definition = %v", err)
	}
	if _, names := search(t, cs, map[string]any{"query": "version added"}); len(names) != 0 {
		t.Errorf("search finds held-out tools: %v", names)
	}
	_, directErr := f.session.CallTool(t.Context(), &mcp.CallToolParams{Name: "version", Arguments: map[string]any{}})
	_, _, err := callThrough(t, cs, "version", map[string]any{})
	if err == nil || directErr == nil || !strings.Contains(err.Error(), `unknown tool "version"`) {
		t.Errorf("held-out version through call_tool: %v (direct: %v), want unknown tool", err, directErr)
	}
	if got := profileTools(t, cs); !slices.Equal(got, []string{"call_tool", "search_tools"}) {
		t.Errorf("tools of the search profile after the reload = %v", got)
	}
}

// TestSearchProfileRefusesABuiltinName (issue 31): a tool named like one
// of a search profile's own tools would be ambiguous; the host refuses to
// start, naming it and the way out.
func TestSearchProfileRefusesABuiltinName(t *testing.T) {
	p := testutil.WATPlugin{Tools: `{"tools":[{"name":"call_tool","inputSchema":{"type":"object"}},{"name":"other","inputSchema":{"type":"object"}}]}`}
	cfgText := fmt.Sprintf("[server]\nwatch = false\n[[plugin]]\nname = \"w\"\npath = %q\n[[profile]]\nname = \"s\"\nplugins = [\"w\"]\nsearch = true\n", p.Build(t))
	cfg, err := host.LoadConfig(testutil.WriteConfig(t, cfgText))
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.New(t.Context(), cfg, host.Options{})
	if err == nil {
		h.Close(context.Background())
		t.Fatal("a search profile with a tool named call_tool started")
	}
	if want := `profile "s": search: tool "call_tool" of plugin "w" has the name of one of the profile's built-in tools`; !strings.Contains(err.Error(), want) {
		t.Errorf("error = %v\nwant it to contain %s", err, want)
	}
	// Renamed in the profile, it is served.
	cfg, err = host.LoadConfig(testutil.WriteConfig(t, cfgText+"rename = { call_tool = \"w_call\" }\n"))
	if err != nil {
		t.Fatal(err)
	}
	h, err = host.New(t.Context(), cfg, host.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	if infos := h.Profiles(); len(infos) != 1 || !slices.Equal(infos[0].Tools, []string{"other", "w_call"}) || len(infos[0].Problems) != 0 {
		t.Errorf("Profiles() = %+v", infos)
	}
}

// TestProfileTaskRoundsUseTheProfilesNames: a task created through a
// profile runs its rounds on the tool as that profile names it — renamed,
// or called through call_tool — not as /mcp does.
func TestProfileTaskRoundsUseTheProfilesNames(t *testing.T) {
	cfg := tasksConfig(t, "", "") + `
[[profile]]
name = "renamed"
tools = ["slow_compute"]
rename = { slow_compute = "compute" }
[[profile]]
name = "s"
plugins = ["everything"]
search = true
`
	_, c, _ := serveTasks(t, cfg)
	base := c.endpoint
	c.endpoint = base + "/renamed"
	if done := c.await(c.startTask("compute", map[string]any{"seconds": 0.01, "label": "r"}), ""); done["status"] != "completed" {
		t.Errorf("a task of a renamed tool = %v, want completed", done)
	}
	c.endpoint = base + "/s"
	_, a := c.call("tools/call", "call_tool", map[string]any{"name": "call_tool", "arguments": map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": 0.01}}})
	id, _ := a.Result["taskId"].(string)
	if a.Error != nil || a.Result["resultType"] != "task" || id == "" {
		t.Fatalf("slow_compute through call_tool = %+v, want a task", a)
	}
	if done := c.await(id, ""); done["status"] != "completed" {
		t.Errorf("a task through call_tool = %v, want completed", done)
	}
}

// TestSearchProfileCarriesProgressAndRounds: through call_tool the tool
// gets the request's progress token, and asks the client for input (a
// multi-round trip) as a direct call does, for both kinds of client.
func TestSearchProfileCarriesProgressAndRounds(t *testing.T) {
	h, _ := newHost(t, `
[server]
watch = false
[[plugin]]
name = "everything"
path = "`+testutil.GoPlugin(t, "plugins/everything")+`"
timeout = "10s"
[[profile]]
name = "s"
plugins = ["everything"]
search = true
`)
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			progress := make(chan *mcp.ProgressNotificationParams, 20)
			serverT, clientT := mcp.NewInMemoryTransports()
			ss, err := h.ProfileServer("s").Connect(t.Context(), serverT, nil)
			if err != nil {
				t.Fatal(err)
			}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "search-rounds", Version: "1"}, &mcp.ClientOptions{
				ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
					progress <- req.Params
				},
				CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
					return &mcp.CreateMessageResult{Role: "assistant", Model: "test-model", Content: &mcp.TextContent{Text: "Paris"}}, nil
				},
			}).Connect(t.Context(), clientT, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cs.Close(); ss.Wait() })

			params := &mcp.CallToolParams{Name: "call_tool", Arguments: map[string]any{"name": "test_tool_with_progress", "arguments": map[string]any{}}}
			params.SetProgressToken("tok-9")
			if res, err := cs.CallTool(t.Context(), params); err != nil || res.IsError {
				t.Fatalf("test_tool_with_progress through call_tool: %v %+v", err, res)
			}
			select {
			case p := <-progress:
				if p.ProgressToken != "tok-9" {
					t.Errorf("progress = %+v", p)
				}
			case <-time.After(60 * time.Second):
				t.Fatal("no progress notification through call_tool")
			}
			res, text, err := callThrough(t, cs, "test_sampling", map[string]any{"prompt": "Capital of France?"})
			if err != nil || res.IsError || text != "LLM response: Paris" {
				t.Errorf("test_sampling through call_tool = %q, %v", text, err)
			}
		})
	}
}
