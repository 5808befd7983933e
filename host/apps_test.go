package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/testutil"
)

// uiConfig is a config serving testdata/plugins/ui; extra is added to its
// [[plugin]] table (grants, config).
func uiConfig(t testing.TB, extra string) string {
	return fmt.Sprintf("[server]\nwatch = false\n[[plugin]]\nname = \"ui\"\npath = %q\ntimeout = \"5s\"\n%s", testutil.GoPlugin(t, "testdata/plugins/ui"), extra)
}

// uiRead is a read_resource result of the ui plugin's app whose page may
// reach what csp says (a JSON object), for its config.
func uiRead(csp, text string) string {
	return fmt.Sprintf(`{"contents":[{"uri":"ui://test/app","mimeType":"text/html;profile=mcp-app","text":%q,"_meta":{"ui":{"csp":%s}}}]}`, text, csp)
}

// uiClient is a client that renders MCP Apps: it declares the extension.
var uiClient = &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{
	Extensions: map[string]any{"io.modelcontextprotocol/ui": map[string]any{"mimeTypes": []string{"text/html;profile=mcp-app"}}},
}}

// TestAppPassesThrough: a plugin's app reaches a go-sdk client as the
// plugin made it: the host declares the extension, the tool's _meta.ui
// (link and visibility), the resource's listing and its page with its
// _meta.ui (CSP within allowed_hosts) arrive intact, and the plugin is
// handed the client's extension capabilities, in both protocol
// generations.
func TestAppPassesThrough(t *testing.T) {
	h, _ := newHost(t, uiConfig(t, `allowed_hosts = ["api.example.com"]`))
	for _, version := range versions {
		t.Run(version, func(t *testing.T) {
			cs := connect(t, h, uiClient, version)
			if ext := cs.InitializeResult().Capabilities.Extensions["io.modelcontextprotocol/ui"]; ext == nil {
				t.Errorf("the server does not declare io.modelcontextprotocol/ui: %v", cs.InitializeResult().Capabilities.Extensions)
			}
			tools, err := cs.ListTools(t.Context(), nil)
			if err != nil || len(tools.Tools) != 1 {
				t.Fatalf("tools/list = %v, %v", tools, err)
			}
			if got, _ := json.Marshal(tools.Tools[0].Meta); string(got) != `{"ui":{"resourceUri":"ui://test/app","visibility":["model","app"]}}` {
				t.Errorf("tool _meta = %s", got)
			}
			resources, err := cs.ListResources(t.Context(), nil)
			if err != nil || len(resources.Resources) != 1 {
				t.Fatalf("resources/list = %v, %v", resources, err)
			}
			if r := resources.Resources[0]; r.URI != "ui://test/app" || r.MIMEType != "text/html;profile=mcp-app" || r.Meta["ui"] == nil {
				t.Errorf("resource = %+v", r)
			}
			read, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "ui://test/app"})
			if err != nil {
				t.Fatal(err)
			}
			c := read.Contents[0]
			if got, _ := json.Marshal(c.Meta); c.Text != "<!doctype html><p>app</p>" || c.MIMEType != "text/html;profile=mcp-app" ||
				string(got) != `{"ui":{"csp":{"connectDomains":["https://api.example.com"]},"prefersBorder":true}}` {
				t.Errorf("read = %+v (_meta %s)", c, got)
			}
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "show"})
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(res.StructuredContent)
			if !strings.Contains(string(got), `"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}`) {
				t.Errorf("the plugin was handed the client capabilities %s", got)
			}
		})
	}
	apps := h.Plugins()[0].Apps
	if len(apps) != 1 || apps[0].URI != "ui://test/app" || !slices.Equal(apps[0].Tools, []string{"show"}) ||
		!slices.Equal(apps[0].Sources, []string{"connectDomains https://api.example.com"}) || len(apps[0].Ungranted) != 0 {
		t.Errorf("Plugins()[0].Apps = %+v", apps)
	}
}

// TestAppFaultsRefuseThePluginAtLoad: an app whose CSP reaches outside
// the plugin's allowed_hosts, whose CSP is malformed, that a tool links to
// without the plugin serving it, or that is not a page, refuses the whole
// plugin at load, and the error names the plugin, the resource (or tool)
// and the source at fault.
func TestAppFaultsRefuseThePluginAtLoad(t *testing.T) {
	for _, c := range []struct {
		name, extra string
		want        []string
	}{
		{"no grant", ``, []string{`"ui"`, `"ui://test/app"`, `connectDomains`, `"https://api.example.com" is outside the plugin's grants`, "allowed_hosts none"}},
		{"another host", `allowed_hosts = ["api.example.com"]` + "\n" + `config = { read = '` + uiRead(`{"connectDomains":["https://api.example.com"],"resourceDomains":["https://cdn.evil.example"]}`, "x") + `' }`,
			[]string{`"ui://test/app"`, "resourceDomains", `"https://cdn.evil.example"`, `allowed_hosts ["api.example.com"]`}},
		{"wider wildcard", `allowed_hosts = ["api.example.com"]` + "\n" + `config = { read = '` + uiRead(`{"connectDomains":["https://*.example.com"]}`, "x") + `' }`,
			[]string{`"https://*.example.com"`, "every subdomain"}},
		{"private", `allowed_hosts = ["localhost"]` + "\n" + `config = { read = '` + uiRead(`{"connectDomains":["http://localhost:8080"]}`, "x") + `' }`,
			[]string{`"http://localhost:8080"`, "allow_private_network"}},
		{"listed CSP", `allowed_hosts = ["api.example.com"]` + "\n" + `config = { resources = '[{"uri":"ui://test/app","name":"app","_meta":{"ui":{"csp":{"frameDomains":["https://frames.example"]}}}}]' }`,
			[]string{"list_resources: _meta.ui.csp.frameDomains", `"https://frames.example"`}},
		{"directive injection", `allowed_hosts = ["api.example.com"]` + "\n" + `config = { read = '` + uiRead(`{"connectDomains":["https://api.example.com; script-src *"]}`, "x") + `' }`,
			[]string{`"https://api.example.com; script-src *"`, "could end the CSP directive"}},
		{"scheme alone", `allowed_hosts = ["*"]` + "\n" + `config = { read = '` + uiRead(`{"resourceDomains":["https:"]}`, "x") + `' }`,
			[]string{`"https:" is not an origin`}},
		{"unknown directive", `allowed_hosts = ["api.example.com"]` + "\n" + `config = { read = '` + uiRead(`{"workerDomains":["https://api.example.com"]}`, "x") + `' }`,
			[]string{`"workerDomains" is not a directive this host checks`}},
		{"missing app", `allowed_hosts = ["api.example.com"]` + "\n" + `config = { tools = '[{"name":"show","inputSchema":{"type":"object"},"_meta":{"ui":{"resourceUri":"ui://test/other"}}}]' }`,
			[]string{`tool "show" links to "ui://test/other"`, "does not list"}},
		{"flat link", `allowed_hosts = ["api.example.com"]` + "\n" + `config = { tools = '[{"name":"show","inputSchema":{"type":"object"},"_meta":{"ui/resourceUri":"ui://test/gone"}}]' }`,
			[]string{`tool "show" links to "ui://test/gone"`}},
		{"template", `allowed_hosts = ["api.example.com"]` + "\n" + `config = { templates = '[{"uriTemplate":"ui://test/{page}","name":"pages"}]' }`,
			[]string{`resource template "ui://test/{page}" makes ui:// URIs`}},
		{"not a page", `allowed_hosts = ["api.example.com"]` + "\n" + `config = { read = '{"contents":[{"uri":"ui://test/app","mimeType":"text/html","text":"x"}]}' }`,
			[]string{`MIME type "text/html"`}},
		{"hidden text", `allowed_hosts = ["api.example.com"]` + "\n" + `config = { read = '{"contents":[{"uri":"ui://test/app","mimeType":"text/html;profile=mcp-app","text":"x","_meta":{"ui":{"domain":"a\u202eb"}}}]}' }`,
			[]string{"invisible or control character U+202E"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := host.LoadConfig(testutil.WriteConfig(t, uiConfig(t, c.extra)))
			if err != nil {
				t.Fatal(err)
			}
			h, err := host.New(t.Context(), cfg, host.Options{})
			if err == nil {
				h.Close(context.Background())
				t.Fatal("the plugin loaded")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not say %s:\n%v", w, err)
				}
			}
			if !strings.Contains(err.Error(), `load plugin "ui"`) {
				t.Errorf("error does not name the plugin: %v", err)
			}
		})
	}
}

// TestAppChangedAtReadIsRefused: a plugin whose page, read by a client,
// carries another _meta.ui than the one checked at load (here one that
// reaches further) gets the read refused; the page does not reach the
// client.
func TestAppChangedAtReadIsRefused(t *testing.T) {
	switched := uiRead(`{"connectDomains":["https://api.example.com","https://exfil.example"]}`, "x")
	h, _ := newHost(t, uiConfig(t, `allowed_hosts = ["api.example.com"]`+"\n"+`config = { read_switched = '`+switched+`' }`))
	cs := connect(t, h, uiClient, "")
	if _, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "ui://test/app"}); err != nil {
		t.Fatalf("the page as loaded: %v", err)
	}
	res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "ui://test/app", Meta: mcp.Meta{"switch": true}})
	if err == nil {
		t.Fatalf("the changed page was served: %+v", res.Contents[0])
	}
	for _, w := range []string{`plugin "ui"`, `"ui://test/app"`, "differs from the one checked when the plugin was loaded", "exfil.example", "refused"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error does not say %s: %v", w, err)
		}
	}
}

// TestAppReloadOutsideGrantKeepsTheOldGeneration: a reload whose plugin's
// page now reaches outside its grants fails and leaves the old generation
// serving its page.
func TestAppReloadOutsideGrantKeepsTheOldGeneration(t *testing.T) {
	path := testutil.WriteConfig(t, uiConfig(t, `allowed_hosts = ["api.example.com"]`))
	h, _ := newHostFromFile(t, path)
	cs := connect(t, h, uiClient, "")
	if err := os.WriteFile(path, []byte(uiConfig(t, `allowed_hosts = ["api.example.com"]`+"\n"+`config = { read = '`+uiRead(`{"connectDomains":["https://exfil.example"]}`, "y")+`' }`)), 0o644); err != nil {
		t.Fatal(err)
	}
	err := h.Reload(t.Context())
	if err == nil || !strings.Contains(err.Error(), `"https://exfil.example" is outside the plugin's grants`) {
		t.Fatalf("reload = %v, want the refusal naming the source", err)
	}
	read, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "ui://test/app"})
	if err != nil || read.Contents[0].Text != "<!doctype html><p>app</p>" {
		t.Fatalf("after the refused reload: %v, %v", read, err)
	}
}

// TestAppChangeIsARugPull: a plugin whose page changes (same listing, same
// tool) is a changed definition for the lock file: under
// on_change = "refuse" the app is held out until accepted.
func TestAppChangeIsARugPull(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mcphost.toml")
	write := func(text string) {
		t.Helper()
		extra := `allowed_hosts = ["api.example.com"]` + "\n" + `on_change = "refuse"` + "\n" + `config = { read = '` + uiRead(`{"connectDomains":["https://api.example.com"]}`, text) + `' }`
		if err := os.WriteFile(path, []byte(uiConfig(t, extra)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("<p>first</p>")
	cfg, err := host.LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	h, err := host.New(t.Context(), cfg, host.Options{Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Debug, Output: logs})})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	cs := connect(t, h, uiClient, "")
	write("<p>second</p>")
	err = h.Reload(t.Context())
	if err == nil || !strings.Contains(err.Error(), "resource ui://test/app") {
		t.Fatalf("reload with a changed page = %v, want the change named", err)
	}
	if _, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "ui://test/app"}); err == nil {
		t.Error("the changed app is served before it is accepted")
	}
	if err := h.Accept("ui"); err != nil {
		t.Fatal(err)
	}
	if err := h.Reload(t.Context()); err != nil {
		t.Fatalf("reload after accept: %v", err)
	}
	read, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "ui://test/app"})
	if err != nil || read.Contents[0].Text != "<p>second</p>" {
		t.Fatalf("after accept: %v, %v", read, err)
	}
}

// TestDiceExampleServesItsApp: plugins/dice, with no grants, links
// roll_dice to its app and serves the page; the tool answers every client
// with text and structured content.
func TestDiceExampleServesItsApp(t *testing.T) {
	h, _ := newHost(t, fmt.Sprintf("[server]\nwatch = false\n[[plugin]]\nname = \"dice\"\npath = %q\nmemory_mb = 64\n", testutil.GoPlugin(t, "plugins/dice")))
	cs := connect(t, h, nil, "")
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil || len(tools.Tools) != 1 {
		t.Fatalf("tools/list = %v, %v", tools, err)
	}
	if got, _ := json.Marshal(tools.Tools[0].Meta); string(got) != `{"ui":{"resourceUri":"ui://dice/app.html"}}` {
		t.Errorf("roll_dice _meta = %s", got)
	}
	res, text := callText(t, cs, "roll_dice", map[string]any{"count": 2, "sides": 2})
	if res.IsError || !strings.HasPrefix(text, "2d2: ") {
		t.Errorf("roll_dice = %q (isError %v)", text, res.IsError)
	}
	read, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "ui://dice/app.html"})
	if err != nil {
		t.Fatal(err)
	}
	if c := read.Contents[0]; c.MIMEType != "text/html;profile=mcp-app" || !strings.Contains(c.Text, `request("ui/initialize"`) {
		t.Errorf("the app = %s, %d bytes", c.MIMEType, len(c.Text))
	}
	if apps := h.Plugins()[0].Apps; len(apps) != 1 || len(apps[0].Sources) != 0 || !slices.Equal(apps[0].Tools, []string{"roll_dice"}) {
		t.Errorf("Apps = %+v", apps)
	}
}

// TestAppFromAShippedDescription: a module that ships its description
// (plugins/dice, as `make plugins` builds it) is listed from it, its app
// checked from the read recorded there (no compile, no activation); the
// first read of the page activates the plugin, which checks the recorded
// read against the module's own, and serves it.
func TestAppFromAShippedDescription(t *testing.T) {
	dir := shippedDir(t, describeModule(t, testutil.GoPlugin(t, "plugins/dice")), false)
	h := startIn(t, dir)
	defer h.close()
	if !strings.Contains(h.log.String(), "described from its description the module ships") {
		t.Fatalf("not listed from the shipped description:\n%s", h.log)
	}
	if apps := h.host.Plugins()[0].Apps; len(apps) != 1 || apps[0].URI != "ui://dice/app.html" {
		t.Errorf("Apps = %+v", apps)
	}
	if v := metric(t, h.host, activationsMetric); v != 0 {
		t.Fatalf("%v activations before any call, want 0", v)
	}
	read, err := h.session.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "ui://dice/app.html"})
	if err != nil || !strings.Contains(read.Contents[0].Text, "ui/initialize") {
		t.Fatalf("read the page: %v", err)
	}
	if strings.Contains(h.log.String(), "does not list what its module's description says") {
		t.Errorf("the first activation found the description stale:\n%s", h.log)
	}
}
