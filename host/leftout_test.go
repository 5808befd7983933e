package host_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/testutil"
)

// leftOutConfig serves testdata/plugins/leftout three times: buggy.wasm as
// "buggy", hostile.wasm as "hostile" (tool prefix h_) and flips.wasm as
// "flips" (tool prefix f_).
const leftOutConfig = `
[server]
watch = false
lock_file = "off"
[server.metrics]
enabled = true

[[plugin]]
name = "buggy"
path = "buggy.wasm"

[[plugin]]
name = "hostile"
path = "hostile.wasm"
prefix = "h_"

[[plugin]]
name = "flips"
path = "flips.wasm"
prefix = "f_"
`

// pluginInfo returns what h says of its plugin name.
func pluginInfo(t *testing.T, h *host.Host, name string) host.PluginInfo {
	t.Helper()
	for _, p := range h.Plugins() {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no plugin %q", name)
	return host.PluginInfo{}
}

// Issue 25 item 6: a plugin caught hiding text (U+202E, U+200B, tag
// characters) or offering a look-alike name is hostile, not buggy: serve
// leaves it out whole, its good tool and prompt too, while a buggy plugin
// loses only its bad items. A reload that makes a plugin hostile removes it
// and tells clients (tools/list_changed); one that mends it brings it back.
// The host says what it left out, item by item with the JSON Pointer of
// the fault (PluginInfo, which validate, plugin test and inspect report),
// and in its metrics.
func TestServeLeavesAHostilePluginOutWholeAndABuggyItemAlone(t *testing.T) {
	buggy := testutil.GoPlugin(t, "testdata/plugins/leftout")
	hostile := testutil.GoPlugin(t, "testdata/plugins/leftout", "hostile")
	dir := t.TempDir()
	copyFile(t, buggy, filepath.Join(dir, "buggy.wasm"))
	copyFile(t, hostile, filepath.Join(dir, "hostile.wasm"))
	copyFile(t, buggy, filepath.Join(dir, "flips.wasm"))
	cfgPath := filepath.Join(dir, "mcphost.toml")
	if err := os.WriteFile(cfgPath, []byte(leftOutConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := host.LoadConfig(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	h, err := host.New(t.Context(), cfg, host.Options{Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Debug, Output: logs})})
	if err != nil {
		t.Fatal(err)
	}
	changed := make(chan struct{}, 100)
	serverT, clientT := mcp.NewInMemoryTransports()
	ss, err := h.Server().Connect(t.Context(), serverT, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "leftout-test", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	})
	cs, err := client.Connect(t.Context(), clientT, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
		if err := h.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
		if t.Failed() {
			t.Logf("host log:\n%s", logs.String())
		}
	})
	served := func() (tools, prompts []string) {
		t.Helper()
		for tool, err := range cs.Tools(t.Context(), nil) {
			if err != nil {
				t.Fatal(err)
			}
			tools = append(tools, tool.Name)
		}
		for p, err := range cs.Prompts(t.Context(), nil) {
			if err != nil {
				t.Fatal(err)
			}
			prompts = append(prompts, p.Name)
		}
		slices.Sort(tools)
		return tools, prompts
	}
	metrics := func() string {
		rec := httptest.NewRecorder()
		h.OpsHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		return rec.Body.String()
	}

	// The buggy plugins keep their good tool; the hostile one has nothing.
	tools, prompts := served()
	if !slices.Equal(tools, []string{"f_fine", "fine"}) || !slices.Equal(prompts, []string{"fine_prompt"}) {
		t.Errorf("served tools %v, prompts %v; want f_fine and fine, fine_prompt (and nothing of the hostile plugin)", tools, prompts)
	}
	if _, text := callText(t, cs, "fine", map[string]any{}); text != "fine" {
		t.Errorf("fine = %q", text)
	}
	if res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "h_fine", Arguments: map[string]any{}}); err == nil && !res.IsError {
		t.Error("the hostile plugin's tool h_fine answered")
	}

	// What each plugin lost, and where.
	type fault struct {
		name, pointer string
		hostile       bool
	}
	bugs := []fault{
		{strings.Repeat("n", 10_000), "/name", false}, {"read file", "/name", false}, {"../etc/passwd", "/name", false},
		{"", "/name", false}, {"long_description", "/description", false}, {"lookahead", "/inputSchema/properties/x/pattern", false},
		{"not_an_object", "/inputSchema/type", false}, {"null_schema", "/inputSchema", false},
	}
	tricks := []fault{
		{"r\u0435ad_file", "/name", true}, {"rlo", "/description", true}, {"zwsp", "/title", true}, {"tags", "/description", true},
		{"h_fine", "", false}, {"fine_prompt", "", false}, // left out with their plugin
	}
	check := func(p host.PluginInfo, want []fault, hostile bool) {
		t.Helper()
		if p.Hostile != hostile {
			t.Errorf("plugin %s: Hostile = %v, want %v", p.Name, p.Hostile, hostile)
		}
		var got []fault
		for _, l := range p.LeftOut {
			got = append(got, fault{l.Name, l.Pointer, l.Hostile})
			if l.Reason == "" || l.Kind == "" {
				t.Errorf("plugin %s: %+v does not say what and why", p.Name, l)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("plugin %s left out:\n%+v\nwant\n%+v", p.Name, got, want)
		}
	}
	check(pluginInfo(t, h, "buggy"), bugs, false)
	check(pluginInfo(t, h, "hostile"), append(slices.Clone(bugs), tricks...), true)
	// flips lists fine_prompt too, which buggy, listed first, serves.
	check(pluginInfo(t, h, "flips"), append(slices.Clone(bugs), fault{"fine_prompt", "", false}), false)
	wantLogged(t, &started{log: logs},
		`plugin hides text or offers look-alike names: leaving the whole plugin out: plugin=hostile`,
		`list_tools: tool #10: name \"r\\u0435ad_file\" is a look-alike: it mixes Latin and Cyrillic letters (U+0435 at byte 1)`,
		`list_tools: tool \"rlo\": string at \"/description\" has an invisible or control character U+202E`,
		`plugin=buggy error="list_tools: tool \"lookahead\": inputSchema: not a valid JSON Schema: at \"/properties/x/pattern\"`,
	)
	m := metrics()
	for _, want := range []string{`mcphost_plugin_hostile{plugin="hostile"} 1`, `mcphost_plugin_hostile{plugin="buggy"} 0`,
		`mcphost_plugin_items_left_out{plugin="buggy"} 8`, `mcphost_plugin_items_left_out{plugin="hostile"} 14`} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}

	// A reload that makes flips hostile takes its tool away, and says so.
	copyFile(t, hostile, filepath.Join(dir, "flips.wasm"))
	if err := h.Reload(t.Context()); err != nil {
		t.Fatalf("Reload: %v", err)
	}
	select {
	case <-changed:
	case <-time.After(20 * time.Second):
		t.Fatal("no tools/list_changed after flips turned hostile")
	}
	if tools, _ := served(); !slices.Equal(tools, []string{"fine"}) {
		t.Errorf("after flips turned hostile, tools %v; want only fine", tools)
	}
	if p := pluginInfo(t, h, "flips"); !p.Hostile {
		t.Error("flips is not reported hostile after the reload")
	}
	if m := metrics(); !strings.Contains(m, `mcphost_plugin_hostile{plugin="flips"} 1`) {
		t.Error(`/metrics lacks mcphost_plugin_hostile{plugin="flips"} 1`)
	}
	wantLogged(t, &started{log: logs}, `leaving the whole plugin out: plugin=flips`)

	// Mended, it is judged afresh: its good tool is back.
	copyFile(t, buggy, filepath.Join(dir, "flips.wasm"))
	if err := h.Reload(t.Context()); err != nil {
		t.Fatalf("Reload: %v", err)
	}
	select {
	case <-changed:
	case <-time.After(20 * time.Second):
		t.Fatal("no tools/list_changed after flips was mended")
	}
	if tools, _ := served(); !slices.Equal(tools, []string{"f_fine", "fine"}) {
		t.Errorf("after flips was mended, tools %v; want f_fine and fine", tools)
	}
	if p := pluginInfo(t, h, "flips"); p.Hostile {
		t.Error("flips is still reported hostile once mended")
	}
}
